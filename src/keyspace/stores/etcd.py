"""``EtcdStore``: an etcd 3.4+ cluster as an ordered byte store, over gRPC.

``EtcdStore("etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379")`` opens one gRPC
channel whose target lists every member; calls are balanced over the members that
are up, and a call that meets ``UNAVAILABLE`` or ``DEADLINE_EXCEEDED`` (a member
down, a leader election) is retried with backoff within a bounded budget when it is
safe to repeat. URL options: ``?timeout=2`` (seconds per gRPC call),
``&retry_budget=15`` (seconds one operation may spend retrying), ``&max_attempts=60``;
the same names are keyword arguments of the constructor.

What each operation costs and guarantees:

- ``get``: one linearizable ``Range``. ``scan``: ``Range`` pages of about 1 MiB
  (``limit`` and "continue after the last key"), all read at the revision of the
  first page, so one scan is a consistent view however long it runs. A reverse scan
  makes etcd sort the remaining range on every page (O(range) server work a page).
- ``put`` / ``delete`` / ``delete_range``: one request each (``delete_range`` is
  etcd's native ``DeleteRange``). Retried when the outcome is unknown: repeating
  them leaves the same state.
- ``write(ops)``: ONE etcd ``Txn``, so all-or-nothing. Repeated keys are merged to the
  last operation per key first (etcd rejects a key twice in one txn). More than 128
  operations, or a request over etcd's 1.5 MiB, raises ``TransactionTooLarge``: an
  atomic batch is never split. Like ``put``, it is retried when the outcome is
  unknown.
- ``put_many(items)``: bulk loading, NOT atomic as a whole — transactions of at most
  128 puts and 1.5 MiB each, about 30 times faster than single puts.
- ``snapshot()``: reads at one fixed etcd revision (MVCC), no server-side state.
  Fails with ``StoreError`` if the cluster compacts that revision away meanwhile.
- ``transaction()``: reads at one fixed revision, taken at the first read, overlaid
  with the transaction's own writes; commit is ONE ``Txn`` guarded by compares: every
  key read must still have the ``mod_revision`` it had (0 if it was absent), and no
  key in a scanned range may have been written after the snapshot revision. If one
  was, nothing is written and :class:`TransactionConflict` is raised: run the whole
  transaction again. Blind writes (keys written, never read) are not guarded: last
  writer wins, as with ``put``. Over 128 operations or 128 compares (one per key
  read plus one per scanned range) raises ``TransactionTooLarge``. If the commit
  meets an unknown outcome (a member died mid-call), the written keys are re-read
  before the commit is retried; when the outcome still cannot be established,
  :class:`CommitOutcomeUnknown` is raised.

Key prefix: ``etcd://hosts/some%2Fprefix`` (the URL's path, percent-encoded bytes)
stores every key under that etcd key prefix and shows the store only the keys under
it, prefix removed — several isolated stores in one cluster.

Keys: etcd refuses the empty key, so without a prefix ``capabilities.empty_keys`` is
false: writing ``b""`` (put, delete, in a batch or a transaction) raises
``InvalidKey`` and ``get(b"")`` is ``None``; under a prefix the empty key is fine.
There is no separate key limit, but a request (key, value and framing) must fit in
etcd's 1.5 MiB: ``capabilities.max_key_size`` is that less 128 bytes and the prefix.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .._bytes import prefix_end
from ..errors import (
    CommitOutcomeUnknown,
    InvalidKey,
    KeyTooLarge,
    StoreClosed,
    StoreError,
    TransactionTooLarge,
    show_bytes,
)
from ._base import Capabilities, Op, ReadView, Store
from ._etcd_access import EtcdAccess
from ._etcd_proto import kv_pb2 as pb
from ._etcd_rpc import (
    MAX_REQUEST_BYTES,
    MAX_TXN_OPS,
    REQUEST_OVERHEAD,
    EtcdConnection,
    EtcdOptions,
    EtcdUnavailable,
    ResponseTooLarge,
    parse_etcd_url,
    redact_url,
)
from ._etcd_watch import EtcdWatch
from ._events import StoreWatch
from ._overlay import OverlayTransaction, Range, ops_apply

if TYPE_CHECKING:
    from ._etcd_aio import AsyncEtcdStore

__all__ = ["CommitOutcomeUnknown", "EtcdStore", "TransactionConflict"]

MAX_KEY_SIZE = MAX_REQUEST_BYTES - 128
"""Largest key (with an empty value): etcd's 1.5 MiB request limit less framing."""

_TO_END = b"\x00"
"""etcd's ``range_end`` meaning "every key from ``key`` on"."""
_FIRST_KEY = b"\x00"
"""The smallest key etcd can hold (it refuses the empty key)."""
_PAGE_BYTES = 1 << 20
_PAGE_MAX = 4096
_PAGE_FIRST = 256


class TransactionConflict(StoreError):
    """A transaction's commit found that a key or range it read had changed since its
    snapshot revision. Nothing was written; run the transaction again."""


def _bounds(prefix: bytes, start: bytes, stop: bytes | None) -> tuple[bytes, bytes] | None:
    """``[start, stop)`` under ``prefix`` as etcd's ``(key, range_end)``, or ``None``
    when the range is empty. The one place where store ranges become etcd ranges."""
    low = prefix + start or _FIRST_KEY
    if stop is None:
        end = prefix_end(prefix) if prefix else None
        return low, _TO_END if end is None else end
    high = prefix + stop
    if high <= low:
        return None
    return low, high


def probe_key(prefix: bytes) -> bytes:
    """The one etcd key whose (count-only) read tells a snapshot or transaction the
    current revision: the store's prefix, or ``00`` without one. A user restricted
    by etcd roles needs read permission on it (``keyspace grant`` gives it)."""
    return prefix or _FIRST_KEY


def _request_size(request: pb.TxnRequest | pb.PutRequest) -> int:
    return request.ByteSize() + REQUEST_OVERHEAD


def _put_op(key: bytes, value: bytes) -> pb.RequestOp:
    return pb.RequestOp(request_put=pb.PutRequest(key=key, value=value))


def _delete_op(key: bytes, range_end: bytes = b"") -> pb.RequestOp:
    return pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=key, range_end=range_end))


def _range_op(key: bytes) -> pb.RequestOp:
    return pb.RequestOp(request_range=pb.RangeRequest(key=key))


class _Reader(ReadView):
    """Reads through an :class:`EtcdConnection`, at the current revision (``None``)
    or at a fixed one. With ``track``, remembers what was read for commit compares."""

    def __init__(self, conn: EtcdConnection, revision: int | None, *, track: bool = False) -> None:
        self._conn = conn
        self._prefix = conn.options.prefix
        self._limit = MAX_KEY_SIZE - len(self._prefix)
        self._revision = revision
        self._track = track
        self._ended = False
        self.points: dict[bytes, int] = {}
        """etcd keys read -> their ``mod_revision`` at the snapshot (0: absent)."""
        self.ranges: list[tuple[bytes, bytes]] = []
        """Scanned ranges as etcd ``(key, range_end)``."""

    def _check(self, what: str) -> None:
        self._conn.check_open(what)
        if self._ended:
            raise StoreClosed(f"{what}: this snapshot or transaction has ended")

    def revision(self) -> int:
        """The revision reads are pinned to; a tracked reader takes it lazily."""
        if self._revision is None:
            response = self._conn.call(
                "revision",
                self._conn.kv.Range,
                pb.RangeRequest(key=probe_key(self._prefix), count_only=True),
            )
            self._revision = int(response.header.revision)
        return self._revision

    def get(self, key: bytes) -> bytes | None:
        """One linearizable ``Range`` of ``key``. Cost: one round trip."""
        self._check("get")
        full = self._prefix + key
        if not full or len(key) > self._limit:
            return None  # a key etcd cannot hold is never there
        revision = self.revision() if self._track else (self._revision or 0)
        response = self._conn.call("get", self._conn.kv.Range, pb.RangeRequest(key=full, revision=revision))
        kvs = response.kvs
        if self._track:
            self.points[full] = int(kvs[0].mod_revision) if kvs else 0
        return bytes(kvs[0].value) if kvs else None

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Pages of ``Range`` at one revision; see the module docstring for costs."""
        self._check("scan")
        bounds = _bounds(self._prefix, start, stop)
        if bounds is None or (limit is not None and limit <= 0):
            return iter(())
        cut = len(self._prefix)
        if self._track:
            self.ranges.append(bounds)
            return self._tracked(self._pages(bounds, reverse, limit, self.revision()), cut)
        return (
            (bytes(kv.key)[cut:], bytes(kv.value))
            for kv in self._pages(bounds, reverse, limit, self._revision)
        )

    def _tracked(self, kvs: Iterator[pb.KeyValue], cut: int) -> Iterator[tuple[bytes, bytes]]:
        points = self.points
        for kv in kvs:
            key = bytes(kv.key)
            points.setdefault(key, int(kv.mod_revision))
            yield key[cut:], bytes(kv.value)

    def _pages(
        self, bounds: tuple[bytes, bytes], reverse: bool, limit: int | None, revision: int | None
    ) -> Iterator[pb.KeyValue]:
        low, end = bounds
        remaining = limit
        page = _PAGE_FIRST
        rev = revision or 0
        order = pb.RangeRequest.DESCEND if reverse else pb.RangeRequest.NONE
        while True:  # each pass yields >= 1 key or returns: bounded by the range's size
            self._check("scan")
            count = page if remaining is None else min(page, remaining)
            request = pb.RangeRequest(key=low, range_end=end, limit=count, revision=rev, sort_order=order)
            try:
                response = self._conn.call("scan", self._conn.kv.Range, request)
            except ResponseTooLarge:
                if page == 1:
                    raise
                page = max(1, page // 4)
                continue
            if rev == 0:
                rev = int(response.header.revision)
            kvs = response.kvs
            if not kvs:
                return
            size = 0
            for kv in kvs:
                size += len(kv.key) + len(kv.value)
                yield kv
            if remaining is not None:
                remaining -= len(kvs)
                if remaining <= 0:
                    return
            if not response.more:
                return
            last = bytes(kvs[-1].key)
            if reverse:
                if last <= low:
                    return
                end = last
            else:
                low = last + b"\x00"
            page = max(1, min(_PAGE_MAX, _PAGE_BYTES * len(kvs) // max(size, 1)))

    def end(self) -> None:
        self._ended = True

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


def _check_size(request: pb.TxnRequest | pb.PutRequest, what: str) -> None:
    size = _request_size(request)
    if size > MAX_REQUEST_BYTES:
        raise TransactionTooLarge(
            f"{what}: the request would be {size} bytes; etcd accepts at most "
            f"{MAX_REQUEST_BYTES} bytes per request (keys, values and framing together)"
        )


def _key_checker(prefix: bytes) -> Callable[[bytes], None]:
    """The key check of a store with ``prefix``: the empty key only under a prefix,
    and at most ``MAX_KEY_SIZE - len(prefix)`` bytes."""
    limit = MAX_KEY_SIZE - len(prefix)

    def check(key: bytes) -> None:
        if not key and not prefix:
            raise InvalidKey("etcd cannot store the empty key b'' (open the store with a key prefix)")
        if len(key) > limit:
            raise KeyTooLarge(f"key {show_bytes(key)} is {len(key)} bytes; the limit here is {limit} bytes")

    return check


def _split_ranges(prefix: bytes, ranges: list[Range], puts: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Delete ranges as etcd ``(key, range_end)``, with holes at the put keys (etcd
    rejects a put inside a range deleted in the same txn). ``puts`` is sorted."""
    out: list[tuple[bytes, bytes]] = []
    for start, stop in ranges:
        low = start
        for key in puts:
            if key < low or (stop is not None and key >= stop):
                continue
            piece = _bounds(prefix, low, key)
            if piece is not None:
                out.append(piece)
            low = key + b"\x00"
        piece = _bounds(prefix, low, stop)
        if piece is not None:
            out.append(piece)
    return out


def _covered(key: bytes, ranges: list[Range]) -> bool:
    return any(start <= key and (stop is None or key < stop) for start, stop in ranges)


class EtcdStore(Store):
    """An etcd 3.4+ cluster as an ordered byte store (see the module docstring)."""

    def __init__(
        self,
        url: str = "etcd://127.0.0.1:2379",
        *,
        timeout: float | None = None,
        retry_budget: float | None = None,
        max_attempts: int | None = None,
        user: str | None = None,
        password: str | None = None,
        cacert: str | None = None,
        cert: str | None = None,
        key: str | None = None,
    ) -> None:
        """Connect to the cluster named by ``url``. Without credentials or TLS no
        request is sent until first use.

        ``timeout``: seconds per gRPC call (default 2); ``retry_budget``: seconds one
        operation may spend on retries (default 15); ``max_attempts``: calls one
        operation may make (default 60). ``user``/``password`` (or the URL's
        ``user:password@``): authenticate now, one ``Authenticate`` call; the token is
        renewed when etcd says it expired. ``cacert`` (PEM of the members' CA),
        ``cert``/``key`` (a client certificate): TLS, checked now with one call.
        A refused password or certificate raises :class:`AuthenticationFailed` here,
        after one attempt. ``ValueError`` for a malformed URL or an unreadable file.
        """
        options = parse_etcd_url(
            url,
            timeout=timeout,
            retry_budget=retry_budget,
            max_attempts=max_attempts,
            user=user,
            password=password,
            cacert=cacert,
            cert=cert,
            key=key,
        )
        self.url = redact_url(url)
        """The URL with any password replaced by ``***`` (it appears in messages)."""
        self._prefix = prefix = options.prefix
        self._check_key = _key_checker(prefix)
        self.capabilities = Capabilities(
            max_key_size=MAX_KEY_SIZE - len(prefix),
            empty_keys=bool(prefix),
            atomic_batch=True,
            native_delete_range=True,
            snapshots=True,
            persistent=True,
            multi_process=True,
            max_batch_ops=MAX_TXN_OPS,
            max_value_size=MAX_KEY_SIZE - len(prefix),
            serialized_transactions=False,
            guarded_reads=True,
            watch="native",
            access_control=True,
        )
        self._conn = EtcdConnection(options)
        self._reader = _Reader(self._conn, None)
        try:
            self._conn.open_check()
        except BaseException:
            self._conn.close()
            raise

    @property
    def options(self) -> EtcdOptions:
        """The parsed endpoints, key prefix, deadlines and retry budget."""
        return self._conn.options

    # -- reads ---------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        return self._reader.get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._reader.scan(start, stop, reverse=reverse, limit=limit)

    def scan_prefix(
        self, prefix: bytes, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        """Every key starting with ``prefix`` (its range end from :func:`prefix_end`)."""
        return self.scan(prefix, prefix_end(prefix), reverse=reverse, limit=limit)

    # -- writes --------------------------------------------------------------

    def put(self, key: bytes, value: bytes) -> None:
        """One ``Put``; retried on an unknown outcome (repeating it is harmless)."""
        self._conn.check_open("put")
        self._check_key(key)
        request = pb.PutRequest(key=self._prefix + key, value=value)
        _check_size(request, "put")
        self._conn.call("put", self._conn.kv.Put, request)

    def delete(self, key: bytes) -> None:
        """One ``DeleteRange`` of ``key``; a missing key is not an error."""
        self._conn.check_open("delete")
        self._check_key(key)
        self._conn.call("delete", self._conn.kv.DeleteRange, pb.DeleteRangeRequest(key=self._prefix + key))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        """One native ``DeleteRange`` of ``[start, stop)``."""
        self._conn.check_open("delete_range")
        bounds = _bounds(self._prefix, start, stop)
        if bounds is None:
            return
        key, end = bounds
        self._conn.call(
            "delete_range", self._conn.kv.DeleteRange, pb.DeleteRangeRequest(key=key, range_end=end)
        )

    def write(self, ops: Iterable[Op]) -> None:
        """All ``ops`` as ONE etcd ``Txn`` (see the module docstring)."""
        self._conn.check_open("write")
        merged: dict[bytes, bytes | None] = {}
        for key, value in ops:
            self._check_key(key)
            merged[key] = value
        if not merged:
            return
        if len(merged) > MAX_TXN_OPS:
            raise TransactionTooLarge(
                f"write: a batch of {len(merged)} operations (after merging repeated keys) is over "
                f"etcd's limit of {MAX_TXN_OPS} per transaction; an atomic batch is never split "
                "(use put_many for a non-atomic bulk load)"
            )
        p = self._prefix
        request = pb.TxnRequest(
            success=[_delete_op(p + k) if v is None else _put_op(p + k, v) for k, v in merged.items()]
        )
        _check_size(request, "write")
        self._conn.call("write", self._conn.kv.Txn, request)

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """Store many pairs in transactions of at most 128 puts and 1.5 MiB each.

        NOT atomic as a whole: each transaction is, and if one fails the earlier
        ones stay applied. A key repeated within the stream ends with its last value.
        Returns the number of pairs read from ``items``. Cost: one round trip per
        transaction.
        """
        self._conn.check_open("put_many")
        batch: dict[bytes, bytes] = {}
        size = REQUEST_OVERHEAD
        count = 0
        for key, value in items:
            self._check_key(key)
            full = self._prefix + key
            op_size = _put_op(full, value).ByteSize() + 4
            if batch and (full in batch or len(batch) >= MAX_TXN_OPS or size + op_size > MAX_REQUEST_BYTES):
                self._flush(batch)
                batch, size = {}, REQUEST_OVERHEAD
            batch[full] = value
            size += op_size
            count += 1
        if batch:
            self._flush(batch)
        return count

    def _flush(self, batch: dict[bytes, bytes]) -> None:
        request = pb.TxnRequest(success=[_put_op(k, v) for k, v in batch.items()])
        _check_size(request, "put_many")
        self._conn.call("put_many", self._conn.kv.Txn, request)

    # -- snapshots and transactions -----------------------------------------

    def snapshot(self) -> _Reader:
        """A read-only view at the current revision (one round trip to learn it)."""
        self._conn.check_open("snapshot")
        reader = _Reader(self._conn, None)
        reader.revision()
        return reader

    def transaction(self) -> OverlayTransaction:
        """A read-write transaction committed as one guarded ``Txn`` (module docstring).
        Beginning costs one round trip (to learn the snapshot revision)."""
        self._conn.check_open("transaction")
        base = _Reader(self._conn, None, track=True)
        base.revision()

        def apply(ranges: list[Range], ops: list[Op]) -> None:
            base.end()
            with self._conn.budget():  # the whole commit, re-reads and retries included
                self._commit(base, ranges, ops)

        return OverlayTransaction(base, ops_apply(apply), base.end, self._check_key)

    def _commit(self, base: _Reader, ranges: list[Range], ops: list[Op]) -> None:
        self._conn.check_open("commit")
        p = self._prefix
        puts = sorted(k for k, v in ops if v is not None)
        values = {p + k: v for k, v in ops if v is not None}
        deletes = [p + k for k, v in ops if v is None and not _covered(k, ranges)]
        cleared = _split_ranges(p, ranges, puts)
        success = [_put_op(k, v) for k, v in values.items()]
        success += [_delete_op(k) for k in deletes]
        success += [_delete_op(k, end) for k, end in cleared]
        if not success:
            return
        snapshot = base.revision()
        compares = [
            pb.Compare(result=pb.Compare.EQUAL, target=pb.Compare.MOD, key=k, mod_revision=rev)
            for k, rev in base.points.items()
        ]
        compares += [
            pb.Compare(
                result=pb.Compare.LESS,
                target=pb.Compare.MOD,
                key=k,
                range_end=end,
                mod_revision=snapshot + 1,
            )
            for k, end in base.ranges
        ]
        if len(success) > MAX_TXN_OPS or len(compares) > MAX_TXN_OPS:
            raise TransactionTooLarge(
                f"commit: the transaction needs {len(success)} operations and {len(compares)} compares "
                f"(one per key read, one per range scanned); etcd accepts at most {MAX_TXN_OPS} of each "
                "per transaction"
            )
        request = pb.TxnRequest(compare=compares, success=success)
        _check_size(request, "commit")
        if not compares:  # blind writes: as safe to repeat as write(ops)
            try:
                self._conn.call("commit", self._conn.kv.Txn, request)
            except CommitOutcomeUnknown:
                raise
            except EtcdUnavailable as exc:
                raise CommitOutcomeUnknown(
                    f"commit: the etcd cluster gave no answer within the retry budget of "
                    f"{self._conn.options.retry_budget} s; the transaction may or may not have been "
                    f"applied: {exc}"
                ) from exc
            return
        self._guarded_commit(request, values, deletes, cleared, snapshot)

    def _guarded_commit(
        self,
        request: pb.TxnRequest,
        values: dict[bytes, bytes],
        deletes: list[bytes],
        cleared: list[tuple[bytes, bytes]],
        snapshot: int,
    ) -> None:
        """Send the guarded Txn; after an unknown outcome, re-read before retrying.
        Bounded by the retry budget and ``max_attempts``."""
        with self._conn.budget() as budget_end:
            self._guarded_attempts(request, values, deletes, cleared, snapshot, budget_end)

    def _guarded_attempts(
        self,
        request: pb.TxnRequest,
        values: dict[bytes, bytes],
        deletes: list[bytes],
        cleared: list[tuple[bytes, bytes]],
        snapshot: int,
        budget_end: float,
    ) -> None:
        opts = self._conn.options
        uncertain: EtcdUnavailable | None = None
        delay = 0.05
        for _attempt in range(opts.max_attempts):
            try:
                response = self._conn.call("commit", self._conn.kv.Txn, request, retry=False)
            except EtcdUnavailable as exc:
                uncertain = exc
                pause = delay * (0.5 + random.random())
                delay = min(delay * 2, 1.0)
                if time.monotonic() + pause >= budget_end:
                    break
                time.sleep(pause)
                try:
                    if values and self._applied(values, deletes, cleared, snapshot):
                        return
                except EtcdUnavailable:
                    continue
                continue
            if response.succeeded:
                return
            if uncertain is not None:
                try:
                    applied = self._applied(values, deletes, cleared, snapshot)
                except EtcdUnavailable as exc:
                    raise CommitOutcomeUnknown(
                        f"commit: a first attempt met an unknown outcome and the re-read failed: {exc}"
                    ) from exc
                if applied:
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
            f"commit: the etcd cluster gave no answer within {opts.retry_budget} s; the "
            "transaction may or may not have been applied"
        ) from uncertain

    def _applied(
        self,
        values: dict[bytes, bytes],
        deletes: list[bytes],
        cleared: list[tuple[bytes, bytes]],
        snapshot: int,
    ) -> bool:
        """Whether etcd shows this transaction's effect: every put key holds its value,
        all written at ONE revision after the snapshot (a Txn writes all its keys at
        one revision), and every deleted key and range is empty. Cost: one read-only
        Txn (point reads, and a one-key read per deleted range)."""
        keys = list(values) + deletes
        reads = [_range_op(k) for k in keys]
        reads += [
            pb.RequestOp(
                request_range=pb.RangeRequest(key=k, range_end=end, limit=len(values) + 1, keys_only=True)
            )
            for k, end in cleared
        ]
        response = self._conn.call("commit check", self._conn.kv.Txn, pb.TxnRequest(success=reads))
        results = [r.response_range.kvs for r in response.responses]
        revisions: set[int] = set()
        for key, kvs in zip(keys, results, strict=False):
            if key in values:
                if not kvs or bytes(kvs[0].value) != values[key]:
                    return False
                revisions.add(int(kvs[0].mod_revision))
            elif kvs:
                return False
        if len(revisions) > 1 or (revisions and min(revisions) <= snapshot):
            return False
        return all(bytes(kv.key) in values for kvs in results[len(keys) :] for kv in kvs)

    # -- watch and access control (etcd's Watch and Auth services) -------------

    def watch(
        self, ranges: Sequence[tuple[bytes, bytes | None]], *, start_revision: int | None = None
    ) -> StoreWatch:
        """Changes to keys in ``ranges`` from ``start_revision`` on (default: from
        now), each once, in revision order, as one native etcd Watch over the ranges'
        hull (events outside ``ranges`` are dropped here). After a member failure or
        a reconnect the watch resumes after the last revision delivered. A start
        revision compacted away raises :class:`~keyspace.errors.WatchCompacted`.
        Cost: one stream and one reader thread per watch."""
        self._conn.check_open("watch")
        wanted = [(start, stop) for start, stop in ranges]
        if not wanted:
            raise ValueError("watch needs at least one range")
        low = min(start for start, _ in wanted)
        stops = [stop for _, stop in wanted]
        high = None if None in stops else max(s for s in stops if s is not None)
        hull = _bounds(self._prefix, low, high)
        if start_revision is None:
            # "now" is the cluster's revision read linearizably: a stream served by a
            # member that lags would otherwise start before writes already acknowledged
            # and replay them as new events
            response = self._conn.call(
                "watch", self._conn.kv.Range, pb.RangeRequest(key=probe_key(self._prefix), count_only=True)
            )
            start_revision = int(response.header.revision) + 1
        return EtcdWatch(self._conn, hull, len(self._prefix), wanted, start_revision)

    def etcd_range(self, start: bytes, stop: bytes | None) -> tuple[bytes, bytes] | None:
        """The etcd ``(key, range_end)`` of the store range ``[start, stop)`` (the
        store's key prefix applied), or ``None`` when it is empty."""
        return _bounds(self._prefix, start, stop)

    def probe_key(self) -> bytes:
        """The etcd key a snapshot or transaction reads (count only) to learn the
        current revision; restricted users need read permission on it."""
        return probe_key(self._prefix)

    def etcd_key(self, key: bytes) -> bytes:
        """The etcd key of the store key ``key`` (the store's prefix applied)."""
        return self._prefix + key

    def asynchronous(self) -> AsyncEtcdStore:
        """A native asyncio client (``grpc.aio``, no thread) of the same cluster, with
        these options and credentials (see :mod:`keyspace.stores._etcd_aio`)."""
        from ._etcd_aio import AsyncEtcdStore

        return AsyncEtcdStore(self)

    def access(self) -> EtcdAccess:
        """etcd's users, roles and permissions, through this store's connection
        (needs root credentials once auth is enabled)."""
        return EtcdAccess(self._conn)

    # -- lifecycle -----------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """``Maintenance.Status`` of whichever member answers: its etcd version,
        member id, leader id and the current revision."""
        response = self._conn.call("status", self._conn.maintenance.Status, pb.StatusRequest())
        return {
            "version": response.version,
            "member_id": int(response.header.member_id),
            "leader": int(response.leader),
            "revision": int(response.header.revision),
            "raft_term": int(response.header.raft_term),
        }

    def close(self) -> None:
        """Close the channel. Idempotent; later calls raise ``StoreClosed``."""
        self._conn.close()

    def __repr__(self) -> str:
        state = " closed" if self._conn.closed else ""
        return f"<EtcdStore {self.url!r} target={self._conn.target!r}{state}>"
