"""What the etcd clients send and how they read the answers, without any I/O.

The synchronous :class:`~keyspace.stores.etcd.EtcdStore` and its asyncio client
(:mod:`keyspace.stores.etcd._aio`) make the same requests and follow the same rules;
only how a call is made (blocking, or awaited) differs. Everything else lives here
once:

- :func:`etcd_bounds`, the one place where store ranges become etcd ranges;
- :func:`put_request`, :func:`write_request`: the checks and the request of a write;
- :func:`point_read`: the request of one linearizable get;
- :class:`Pages`: the page sizes and continuation of one ``Range`` scan;
- :func:`commit_plan` and :func:`commit_steps`: a transaction's guarded ``Txn``, and
  the steps of sending it (retries, re-reads after an unknown outcome) as a
  generator that a client drives with its own calls and sleeps.
"""

from __future__ import annotations

import bisect
import functools
import random
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._bytes import prefix_end
from ...errors import (
    CommitOutcomeUnknown,
    EtcdUnavailable,
    InvalidKey,
    KeyTooLarge,
    TransactionConflict,
    TransactionTooLarge,
    show_bytes,
)
from .._base import Op
from .._overlay import Range
from ._proto import kv_pb2 as pb
from ._rpc import MAX_REQUEST_BYTES, MAX_TXN_OPS, REQUEST_OVERHEAD, ResponseTooLarge

MAX_KEY_SIZE = MAX_REQUEST_BYTES - 128
"""Largest key (with an empty value): etcd's 1.5 MiB request limit less framing."""

_TO_END = b"\x00"
"""etcd's ``range_end`` meaning "every key from ``key`` on"."""
FIRST_KEY = b"\x00"
"""The smallest key etcd can hold (it refuses the empty key)."""
PAGE_BYTES = 1 << 20
PAGE_MAX = 4096
PAGE_FIRST = 256


def etcd_bounds(prefix: bytes, start: bytes, stop: bytes | None) -> tuple[bytes, bytes] | None:
    """``[start, stop)`` under ``prefix`` as etcd's ``(key, range_end)``, or ``None``
    when the range is empty. The one place where store ranges become etcd ranges.

    A bound longer than any etcd key (:data:`MAX_KEY_SIZE`) is sent as the bound
    that holds the same keys: a key no longer than ``L`` bytes is at or past a
    longer bound ``b`` exactly when it is at or past ``prefix_end(b[:L])``. So no
    request carries a bound etcd could not take."""
    low = _within(prefix + start)
    if low is None:
        return None
    low = low or FIRST_KEY
    high = None if stop is None else _within(prefix + stop)
    if high is None:  # no stop, or one past every key
        end = prefix_end(prefix) if prefix else None
        return low, _TO_END if end is None else end
    if high <= low:
        return None
    return low, high


def _within(bound: bytes) -> bytes | None:
    """``bound``, or where it is longer than any etcd key, the shortest bound that
    holds the same keys (:func:`etcd_bounds`): ``prefix_end`` of its first
    :data:`MAX_KEY_SIZE` bytes; ``None`` when no etcd key reaches it."""
    return bound if len(bound) <= MAX_KEY_SIZE else prefix_end(bound[:MAX_KEY_SIZE])


def observed(bounds: tuple[bytes, bytes], last: bytes, reverse: bool) -> tuple[bytes, bytes]:
    """The part of a scan of ``bounds`` (etcd ``(key, range_end)``) that a
    transaction has seen once the scan yielded the etcd key ``last``: from the
    start up to and including ``last`` (a reverse scan: from ``last`` to the end).
    Its commit guards that part only: a key written past it was never read, so a
    scan stopped early (a limit, a first key looked for, a loop broken) does not
    conflict with writes further on. A scan that ran to its end has seen all of
    ``bounds``."""
    low, end = bounds
    return (last, end) if reverse else (low, last + b"\x00")


def probe_key(prefix: bytes) -> bytes:
    """The one etcd key whose (count-only) read tells a snapshot or transaction the
    current revision: the store's prefix, or ``00`` without one. A user restricted
    by etcd roles needs read permission on it (``keyspace grant`` gives it)."""
    return prefix or FIRST_KEY


def revision_request(prefix: bytes) -> pb.RangeRequest:
    """The count-only read whose answer's header holds the current revision."""
    return pb.RangeRequest(key=probe_key(prefix), count_only=True)


def key_checker(prefix: bytes) -> Callable[[bytes], None]:
    """The key check of a store with ``prefix``: the empty key only under a prefix,
    and at most ``MAX_KEY_SIZE - len(prefix)`` bytes."""
    limit = MAX_KEY_SIZE - len(prefix)

    def check(key: bytes) -> None:
        if not key and not prefix:
            raise InvalidKey("etcd cannot store the empty key b'' (open the store with a key prefix)")
        if len(key) > limit:
            raise KeyTooLarge(f"key {show_bytes(key)} is {len(key)} bytes; the limit here is {limit} bytes")

    return check


def check_size(request: pb.TxnRequest | pb.PutRequest, what: str) -> None:
    """:class:`TransactionTooLarge` when ``request`` is over etcd's request limit."""
    size = request.ByteSize() + REQUEST_OVERHEAD
    if size > MAX_REQUEST_BYTES:
        raise TransactionTooLarge(
            f"{what}: the request would be {size} bytes; etcd accepts at most "
            f"{MAX_REQUEST_BYTES} bytes per request (keys, values and framing together)"
        )


def put_op(key: bytes, value: bytes, lease: int = 0) -> pb.RequestOp:
    """A put of ``key`` (attached to the lease ``lease``: etcd deletes it when the
    lease expires; 0: none, which detaches a lease the key had)."""
    return pb.RequestOp(request_put=pb.PutRequest(key=key, value=value, lease=lease))


def delete_op(key: bytes, range_end: bytes = b"") -> pb.RequestOp:
    return pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=key, range_end=range_end))


def put_request(prefix: bytes, check_key: Callable[[bytes], None], key: bytes, value: bytes) -> pb.PutRequest:
    """The checked ``Put`` of ``key`` (:class:`InvalidKey`, :class:`KeyTooLarge`,
    :class:`TransactionTooLarge`)."""
    check_key(key)
    request = pb.PutRequest(key=prefix + key, value=value)
    check_size(request, "put")
    return request


def write_request(
    prefix: bytes, check_key: Callable[[bytes], None], ops: Iterable[Op]
) -> pb.TxnRequest | None:
    """``ops`` as ONE ``Txn`` (``None`` when there are none): repeated keys merged to
    the last operation per key first (etcd rejects a key twice in one txn); more
    than 128 operations or over 1.5 MiB is :class:`TransactionTooLarge`, since an
    atomic batch is never split."""
    merged: dict[bytes, bytes | None] = {}
    for key, value in ops:
        check_key(key)
        merged[key] = value
    if not merged:
        return None
    if len(merged) > MAX_TXN_OPS:
        raise TransactionTooLarge(
            f"write: a batch of {len(merged)} operations (after merging repeated keys) is over "
            f"etcd's limit of {MAX_TXN_OPS} per transaction; an atomic batch is never split "
            "(use put_many for a non-atomic bulk load)"
        )
    request = pb.TxnRequest(
        success=[delete_op(prefix + k) if v is None else put_op(prefix + k, v) for k, v in merged.items()]
    )
    check_size(request, "write")
    return request


def point_read(prefix: bytes, key: bytes, revision: int) -> pb.RangeRequest | None:
    """The ``Range`` of one key at ``revision`` (0: the current one), or ``None`` for
    a key etcd cannot hold (it is never there)."""
    full = prefix + key
    if not full or len(key) > MAX_KEY_SIZE - len(prefix):
        return None
    return pb.RangeRequest(key=full, revision=revision)


def point_value(kvs: Sequence[pb.KeyValue], key: bytes, points: dict[bytes, int] | None) -> bytes | None:
    """The value in the reply ``kvs`` of the :func:`point_read` of the etcd key
    ``key`` (``None``: absent). A tracked read (``points``) records the key's
    ``mod_revision`` there (0: absent), for the commit's compares."""
    if points is not None:
        points[key] = int(kvs[0].mod_revision) if kvs else 0
    return bytes(kvs[0].value) if kvs else None


class Pages:
    """The ``Range`` pages of one scan of ``bounds`` (an etcd ``(key, range_end)``):
    the first of 256 keys, then about 1 MiB each (at most 4096 keys), every one at
    the revision of the first (``revision`` 0: the first page's), continuing after
    the last key, up to ``limit`` keys in all.

    A client loops: ``request()`` (``None``: the scan is over), its call, then
    ``take(response)`` for the page's keys, or ``too_large(exc)`` when the answer
    was over the channel's limit (the page shrinks; at one key ``exc`` is raised).
    Bounded: every page taken yields at least one key or ends the scan."""

    __slots__ = ("_end", "_keys_only", "_low", "_order", "_page", "_remaining", "_reverse", "revision")

    def __init__(
        self,
        bounds: tuple[bytes, bytes],
        reverse: bool,
        limit: int | None,
        revision: int,
        *,
        keys_only: bool = False,
    ) -> None:
        """``keys_only``: the pages hold keys without their values."""
        self._keys_only = keys_only
        self._low, self._end = bounds
        self._reverse = reverse
        self._remaining = limit
        self._page = PAGE_FIRST
        self._order = pb.RangeRequest.DESCEND if reverse else pb.RangeRequest.NONE
        self.revision = revision

    def request(self) -> pb.RangeRequest | None:
        if self._page == 0:
            return None
        count = self._page if self._remaining is None else min(self._page, self._remaining)
        return pb.RangeRequest(
            key=self._low,
            range_end=self._end,
            limit=count,
            revision=self.revision,
            sort_order=self._order,
            keys_only=self._keys_only,
        )

    def too_large(self, exc: ResponseTooLarge) -> None:
        if self._page == 1:
            raise exc
        self._page = max(1, self._page // 4)

    def take(self, response: Any) -> Sequence[pb.KeyValue]:
        if self.revision == 0:
            self.revision = int(response.header.revision)
        kvs: Sequence[pb.KeyValue] = response.kvs
        self._page = 0  # over, unless the checks below find more to read
        if not kvs:
            return kvs
        if self._remaining is not None:
            self._remaining -= len(kvs)
            if self._remaining <= 0:
                return kvs
        if not response.more:
            return kvs
        last = bytes(kvs[-1].key)
        if self._reverse:
            if last <= self._low:
                return kvs
            self._end = last
        else:
            self._low = last + b"\x00"
        size = sum(len(kv.key) + len(kv.value) for kv in kvs)
        self._page = max(1, min(PAGE_MAX, PAGE_BYTES * len(kvs) // max(size, 1)))
        return kvs


def _covered(key: bytes, ranges: list[Range]) -> bool:
    return any(start <= key and (stop is None or key < stop) for start, stop in ranges)


def _split_ranges(prefix: bytes, ranges: list[Range], puts: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Delete ranges as etcd ``(key, range_end)``, with holes at the put keys (etcd
    rejects a put inside a range deleted in the same txn). ``puts`` is sorted."""
    out: list[tuple[bytes, bytes]] = []
    for start, stop in ranges:
        low = start
        for key in puts:
            if key < low or (stop is not None and key >= stop):
                continue
            piece = etcd_bounds(prefix, low, key)
            if piece is not None:
                out.append(piece)
            low = key + b"\x00"
        piece = etcd_bounds(prefix, low, stop)
        if piece is not None:
            out.append(piece)
    return out


@dataclass(frozen=True)
class CommitPlan:
    """A transaction's writes as one etcd ``Txn``: ``success`` (its operations),
    ``values`` (etcd key -> value put), ``deletes`` (etcd keys deleted one by one)
    and ``cleared`` (etcd ranges deleted, with holes at the put keys)."""

    success: list[pb.RequestOp]
    values: dict[bytes, bytes]
    deletes: list[bytes]
    cleared: list[tuple[bytes, bytes]]
    deleted: list[tuple[bytes, bytes]] = field(default_factory=list)
    """The ranges the transaction deleted, as etcd ranges, whole (``cleared`` is
    them less the put keys): what :func:`guard_compares` may join scanned ranges
    across."""

    def request(
        self,
        points: dict[bytes, int],
        scanned: list[tuple[bytes, bytes]],
        snapshot: int,
        nest: Callable[[], bool] | None = None,
        wide: Sequence[tuple[bytes, bytes]] | None = None,
    ) -> pb.TxnRequest:
        """The guarded ``Txn``: every key read must still have the ``mod_revision`` it
        had (``points``, 0 for absent), and no key of a ``scanned`` range may have
        been written after ``snapshot`` (:func:`guard_compares`: overlapping ranges
        as one compare, an absent key inside one as none; ``wide``, the whole
        ranges of the scans, where the exact compares do not fit). Deletes beyond what one
        level holds are nested (:func:`nest_ops`), so a delete of any number of
        ranges is one ``Txn``, where ``nest`` (asked only then) allows it. Over 128
        puts or compares, operations that cannot be nested beside the compares (or
        that may not be), or 1.5 MiB, is :class:`TransactionTooLarge`."""
        compares = guard_compares(
            points, scanned, snapshot, self.deleted, wide, lambda n: nest_ops(self.success, n) is not None
        )
        puts = len(self.values)
        if puts > MAX_TXN_OPS or len(compares) > MAX_TXN_OPS:
            raise TransactionTooLarge(
                f"commit: the transaction needs {len(self.success)} operations ({puts} puts) and "
                f"{len(compares)} compares (one per key read, one per range scanned); etcd accepts at "
                f"most {MAX_TXN_OPS} puts and {MAX_TXN_OPS} compares per transaction"
            )
        if max(len(self.success), len(compares)) > MAX_TXN_OPS and nest is not None and not nest():
            raise TransactionTooLarge(
                f"commit: the transaction needs {len(self.success)} operations; etcd accepts at most "
                f"{MAX_TXN_OPS} per transaction, and this etcd server does not check the key permissions "
                "of nested transactions (GHSA-rfx7-8w68-q57q, fixed in 3.4.42, 3.5.28 and 3.6.9), so a "
                "restricted user's commit is never nested"
            )
        success = nest_ops(self.success, len(compares))
        if success is None:
            raise TransactionTooLarge(
                f"commit: the transaction needs {len(self.success)} operations beside {len(compares)} "
                f"compares; etcd accepts at most {MAX_TXN_OPS} of each per transaction level, and "
                "nested transactions cannot hold that many here"
            )
        request = pb.TxnRequest(compare=compares, success=success)
        check_size(request, "commit")
        return request

    def check_request(self) -> pb.TxnRequest:
        """The read-only ``Txn`` that :meth:`outcome` reads: the put and deleted keys,
        and of every deleted range the key written last (``keys_only``, sorted by
        ``mod_revision``, one key), nested as the commit's operations are when there
        are more than one level holds."""
        reads = [pb.RequestOp(request_range=pb.RangeRequest(key=k)) for k in [*self.values, *self.deletes]]
        reads += [
            pb.RequestOp(
                request_range=pb.RangeRequest(
                    key=k,
                    range_end=end,
                    limit=1,
                    keys_only=True,
                    sort_order=pb.RangeRequest.DESCEND,
                    sort_target=pb.RangeRequest.MOD,
                )
            )
            for k, end in self.cleared
        ]
        return pb.TxnRequest(success=nest_ops(reads, 0) or reads)

    def outcome(self, response: Any, snapshot: int) -> str:
        """What the answer to :meth:`check_request` shows of this commit:

        - ``APPLIED``: every put key holds its value, all written at ONE revision
          after the snapshot (a Txn writes all its keys at one revision), and every
          deleted key and range is empty;
        - ``CHANGED``: otherwise, a key it writes or deletes (or one of a range it
          deletes) was written after the snapshot by another client: whether this
          commit was applied before that write cannot be told, and sending it again
          could undo that later write;
        - ``NOT_APPLIED``: otherwise (nothing it writes was written since the
          snapshot, so it was not applied: sending it again is safe)."""
        keys = [*self.values, *self.deletes]
        results = [r.response_range.kvs for r in flat_responses(response.responses)]
        revisions: set[int] = set()
        ours = True
        changed = False
        for key, kvs in zip(keys, results, strict=False):
            if kvs and int(kvs[0].mod_revision) > snapshot:
                changed = True
            if key in self.values:
                if not kvs or bytes(kvs[0].value) != self.values[key]:
                    ours = False
                else:
                    revisions.add(int(kvs[0].mod_revision))
            elif kvs:
                ours = False
        for kvs in results[len(keys) :]:  # the put keys are never in a deleted range
            if kvs:
                ours = False
                changed = changed or int(kvs[0].mod_revision) > snapshot
        if ours and len(revisions) <= 1 and not (revisions and min(revisions) <= snapshot):
            return APPLIED
        return CHANGED if changed else NOT_APPLIED

    def applied(self, response: Any, snapshot: int) -> bool:
        """Whether the answer to :meth:`check_request` shows this commit's effect
        (:meth:`outcome` is ``APPLIED``)."""
        return self.outcome(response, snapshot) == APPLIED


APPLIED = "applied"
CHANGED = "changed"
NOT_APPLIED = "not applied"
"""The answers of :meth:`CommitPlan.outcome`."""


MAX_NESTING = 3
"""Levels of nested transactions :func:`nest_ops` uses at most (each level holds
what etcd leaves it: 128 less the operations or compares of the levels above)."""


@functools.cache
def _capacity(budget: int, depth: int) -> int:
    """Most operations one level with ``budget`` operations to spend holds, with at
    most ``depth`` levels of nested transactions below it."""
    best = budget
    if depth > 0:
        for k in range(1, budget):
            best = max(best, k * _capacity(budget - k, depth - 1))
    return best


def nest_ops(ops: list[pb.RequestOp], floor: int) -> list[pb.RequestOp] | None:
    """``ops`` as the operations of one top-level ``Txn`` that also holds ``floor``
    compares, nested where they are more than etcd's 128 per transaction; ``None``
    when they cannot be.

    etcd counts a transaction's compares and operations level by level: a level
    may hold ``max(compares, operations)`` of at most what its parent leaves it
    (128 at the top, then 128 less the parent's count, and so on down). A nested
    transaction without compares always runs its operations, and the whole tree is
    ONE ``Txn``: one revision, all or nothing, under the top-level compares."""
    if max(len(ops), floor) <= MAX_TXN_OPS:
        return ops
    return _nest(ops, MAX_TXN_OPS, floor, MAX_NESTING)


def _nest(ops: list[pb.RequestOp], budget: int, floor: int, depth: int) -> list[pb.RequestOp] | None:
    if max(len(ops), floor) <= budget:
        return ops
    for levels in range(depth):  # the shallowest tree that holds them
        for k in range(1, budget + 1):
            used = max(k, floor)
            if used > budget or k >= len(ops):
                break
            left = budget - used
            if k * _capacity(left, levels) < len(ops):
                continue
            size = -(-len(ops) // k)
            nested: list[pb.RequestOp] = []
            for i in range(0, len(ops), size):
                child = _nest(ops[i : i + size], left, 0, levels)
                if child is None:  # pragma: no cover - the capacity says every piece fits
                    return None
                nested.append(pb.RequestOp(request_txn=pb.TxnRequest(success=child)))
            return nested
    return None


def flat_responses(responses: Iterable[Any]) -> Iterator[Any]:
    """The responses of a ``Txn`` built by :func:`nest_ops`, nested ones in order."""
    for response in responses:
        if response.WhichOneof("response") == "response_txn":
            yield from flat_responses(response.response_txn.responses)
        else:
            yield response


def _ends(end: bytes) -> bytes | None:
    """An etcd ``range_end`` as a stop (``None``: to the end of the keys)."""
    return None if end == _TO_END else end


def _merge(
    ranges: list[tuple[bytes, bytes]], bridges: list[tuple[bytes, bytes | None]]
) -> list[tuple[bytes, bytes | None]]:
    """``ranges`` (etcd ``(key, range_end)``) as sorted stops, those that overlap or
    touch merged, and those whose gap lies inside one of ``bridges`` joined."""
    merged: list[tuple[bytes, bytes | None]] = []
    for low, end in sorted(ranges):
        stop = _ends(end)
        if merged:
            last_low, last_stop = merged[-1]
            if (
                last_stop is None
                or low <= last_stop
                or any(b_low <= last_stop and (b_stop is None or low <= b_stop) for b_low, b_stop in bridges)
            ):
                merged[-1] = (last_low, None if last_stop is None or stop is None else max(last_stop, stop))
                continue
        merged.append((low, stop))
    return merged


def guard_compares(
    points: dict[bytes, int],
    scanned: list[tuple[bytes, bytes]],
    snapshot: int,
    deleted: Sequence[tuple[bytes, bytes]] = (),
    wide: Sequence[tuple[bytes, bytes]] | None = None,
    fits: Callable[[int], bool] | None = None,
) -> list[pb.Compare]:
    """The compares guarding what a transaction read at ``snapshot``, each kept
    exactly: scanned ranges that overlap or touch merge into one "no key written
    after the snapshot" compare (the same keys, the same condition), and a key read
    as absent inside such a range needs no compare of its own (were it there now, it
    was written after the snapshot, which the range's compare refuses). A key read
    as present keeps its ``mod_revision`` compare: a range compare cannot see a key
    deleted since.

    ``scanned`` holds what each scan has shown (:func:`observed`); ``wide`` (where
    given) the whole ranges those scans asked for, and ``deleted`` the ranges the
    transaction deletes (a scan reads only outside them). Where the exact compares
    would be over etcd's 128, the whole ranges are guarded instead (scans stopped
    early merge more), then also joined across the deleted ranges: fewer compares,
    at the price of a conflict with a write the transaction never read (in a range
    it asked for, or one it deletes anyway), never a conflict missed. Each range
    guarded is one the transaction read or deletes, so a user restricted by etcd
    roles may compare it. ``fits(n)``: whether the commit's operations fit beside
    ``n`` compares (more compares leave nested transactions less room)."""
    candidates = [_merge(scanned, [])]
    if wide is not None:
        candidates.append(_merge([*scanned, *wide], []))
    if deleted:
        candidates.append(_merge([*scanned, *(wide or ())], [(low, _ends(end)) for low, end in deleted]))
    compares: list[pb.Compare] = []
    for merged in candidates:
        compares = _compares(points, merged, snapshot)
        if len(compares) <= MAX_TXN_OPS and (fits is None or fits(len(compares))):
            break
    return compares


def _compares(
    points: dict[bytes, int], merged: list[tuple[bytes, bytes | None]], snapshot: int
) -> list[pb.Compare]:
    """The compares of :func:`guard_compares` with the guarded ranges ``merged``."""
    lows = [low for low, _ in merged]

    def covered(key: bytes) -> bool:
        at = bisect.bisect_right(lows, key) - 1
        if at < 0:
            return False
        low, stop = merged[at]
        return low <= key and (stop is None or key < stop)

    compares = [
        pb.Compare(result=pb.Compare.EQUAL, target=pb.Compare.MOD, key=k, mod_revision=rev)
        for k, rev in points.items()
        if rev or not covered(k)
    ]
    compares += [
        pb.Compare(
            result=pb.Compare.LESS,
            target=pb.Compare.MOD,
            key=low,
            range_end=_TO_END if stop is None else stop,
            mod_revision=snapshot + 1,
        )
        for low, stop in merged
    ]
    return compares


def commit_plan(
    prefix: bytes, ranges: list[Range], ops: list[Op], leases: dict[bytes, int] | None = None
) -> CommitPlan | None:
    """The writes of a transaction (``ranges`` deleted, then ``ops``, at most one
    per key) as etcd operations, or ``None`` when it wrote nothing. ``leases``:
    the lease each of some put keys is attached to (:attr:`EtcdTransaction.leases`)."""
    puts = sorted(k for k, v in ops if v is not None)
    values = {prefix + k: v for k, v in ops if v is not None}
    deletes = [prefix + k for k, v in ops if v is None and not _covered(k, ranges)]
    cleared = _split_ranges(prefix, ranges, puts)
    if leases:
        cut = len(prefix)
        success = [put_op(k, v, leases.get(k[cut:], 0)) for k, v in values.items()]
    else:
        success = [put_op(k, v) for k, v in values.items()]
    success += [delete_op(k) for k in deletes]
    success += [delete_op(k, end) for k, end in cleared]
    if not success:
        return None
    deleted = [bounds for start, stop in ranges if (bounds := etcd_bounds(prefix, start, stop)) is not None]
    return CommitPlan(success, values, deletes, cleared, deleted)


@dataclass(frozen=True)
class Call:
    """A step of :func:`commit_steps`: call ``KV.<method>(request)``; with ``retry``
    the client's own retries apply, without it one attempt."""

    what: str
    method: str
    request: Any
    retry: bool = True


@dataclass(frozen=True)
class Sleep:
    """A step of :func:`commit_steps`: wait ``seconds`` before the next step."""

    seconds: float


Step = Call | Sleep
"""What a client does next for :func:`commit_steps`."""


def commit_steps(
    plan: CommitPlan,
    request: pb.TxnRequest,
    snapshot: int,
    *,
    max_attempts: int,
    retry_budget: float,
    budget_end: float,
) -> Generator[Step, Any, None]:
    """The steps of sending a commit's ``request``, as a generator a client drives:
    it performs each :class:`Call` (sending back the answer, or throwing the
    :class:`EtcdUnavailable` it raised) and each :class:`Sleep`, until the
    generator returns (committed) or raises.

    The ``Txn`` is sent one attempt at a time, guarded or blind (no compares):
    after an unknown outcome the written keys are re-read (:meth:`CommitPlan.outcome`)
    and it is sent again only once a re-read answered that nothing it writes was
    written since the snapshot: a retry of an applied commit would fail its own
    compares, or, where it writes keys it did not read, undo another client's
    later write of them (such a write found is :class:`CommitOutcomeUnknown`); a
    cluster that stays unavailable makes it :class:`CommitOutcomeUnknown` too.
    A failed compare is :class:`TransactionConflict`, unless an earlier
    attempt may have been applied and the re-read cannot tell: then
    :class:`CommitOutcomeUnknown`. Bounded by ``max_attempts`` and ``budget_end``
    (``time.monotonic()`` seconds); the error of a cluster that stayed unavailable
    says which bound stopped it, after how many sends and how long."""
    uncertain: EtcdUnavailable | None = None
    checked = True  # whether the last unknown outcome has been re-read since
    delay = 0.05
    started = time.monotonic()
    sent = 0
    stop = f"max_attempts={max_attempts} reached"
    for _attempt in range(max_attempts):
        if not checked:  # never sent again before a re-read says it is safe
            pause = delay * (0.5 + random.random())
            delay = min(delay * 2, 1.0)
            if time.monotonic() + pause >= budget_end:
                stop = f"retry_budget={retry_budget} s left no time for another attempt"
                break
            yield Sleep(pause)
            try:
                check = yield Call("commit check", "Txn", plan.check_request())
            except EtcdUnavailable:
                continue
            found = plan.outcome(check, snapshot)
            if found == APPLIED and plan.values:
                return
            if found == CHANGED:
                # another client wrote what this commit writes: were the commit
                # applied before that write, sending it again would undo it
                raise CommitOutcomeUnknown(
                    "commit: a first attempt met an unknown outcome, and a key it writes or "
                    "deletes was written since by another client; whether it was applied "
                    "cannot be told, and it is not sent again (that could undo the later write)"
                ) from uncertain
            checked = True
        try:
            sent += 1
            response = yield Call("commit", "Txn", request, retry=False)
        except EtcdUnavailable as exc:
            uncertain = exc
            checked = False
            continue
        if response.succeeded:
            return
        if uncertain is not None:
            try:
                check = yield Call("commit check", "Txn", plan.check_request())
            except EtcdUnavailable as exc:
                raise CommitOutcomeUnknown(
                    f"commit: a first attempt met an unknown outcome and the re-read failed: {exc}"
                ) from exc
            if plan.applied(check, snapshot):
                return
            raise CommitOutcomeUnknown(
                "commit: a first attempt met an unknown outcome and a retry found the keys it "
                "read changed; re-reading the written keys could not tell whether it was applied"
            ) from uncertain
        raise TransactionConflict(
            f"commit: a key or range this transaction read was written after its snapshot "
            f"(revision {snapshot}); nothing was written, run the transaction again"
        )
    raise CommitOutcomeUnknown(
        f"commit: the etcd cluster gave no answer to {sent} sends of the commit in "
        f"{time.monotonic() - started:.1f} s ({stop}); the transaction may or may not have "
        f"been applied: {uncertain}"
    ) from uncertain
