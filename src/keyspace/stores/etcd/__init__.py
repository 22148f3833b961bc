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
  writer wins, as with ``put``. Deletes beyond the 128 operations one etcd
  transaction level holds go into nested transactions of the same ``Txn`` (still
  one revision, all or nothing): a delete of thousands of ranges commits whole.
  A scan reads (and guards) only outside the ranges the transaction deleted
  itself. Over 128 puts, over 128 compares (one per key read as present, one per
  run of overlapping scanned ranges), deletes that cannot be nested beside the
  compares, or over 1.5 MiB raises ``TransactionTooLarge``. If the commit
  meets an unknown outcome (a member died mid-call; guarded or blind), the written
  keys are re-read before the commit is retried, and it is retried only when none
  of them was written since the snapshot (a retry must never undo another
  client's later write); when the outcome still cannot be established,
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

import time
import weakref
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..._bytes import prefix_end
from ...errors import CommitOutcomeUnknown, EtcdUnavailable, StoreClosed, TransactionConflict
from .._base import (
    Capabilities,
    DelegatedReads,
    Op,
    ReadView,
    Seeker,
    Store,
    cut_pages,
    key_pages_of,
    pages_in_turn,
)
from .._events import StoreWatch, check_start_revision
from .._overlay import OverlayTransaction, Range, ops_apply
from ._access import EtcdAccess
from ._plan import (
    MAX_KEY_SIZE,
    Call,
    Pages,
    Step,
    check_size,
    commit_plan,
    commit_steps,
    etcd_bounds,
    key_checker,
    observed,
    point_read,
    point_value,
    probe_key,
    put_op,
    put_request,
    revision_request,
    write_request,
)
from ._proto import kv_pb2 as pb
from ._rpc import (
    MAX_REQUEST_BYTES,
    MAX_TXN_OPS,
    REQUEST_OVERHEAD,
    EtcdConnection,
    EtcdOptions,
    ResponseTooLarge,
    parse_etcd_url,
    redact_url,
)
from ._watch import EtcdWatch

if TYPE_CHECKING:
    from ._aio import AsyncEtcdStore

__all__ = ["MAX_KEY_SIZE", "CommitOutcomeUnknown", "EtcdStore", "EtcdTransaction", "TransactionConflict"]


class _Reader(ReadView):
    """Reads through an :class:`EtcdConnection`, at the current revision (``None``)
    or at a fixed one. With ``track``, remembers what was read for commit compares."""

    def __init__(self, conn: EtcdConnection, revision: int | None, *, track: bool = False) -> None:
        self._conn = conn
        self._prefix = conn.options.prefix
        self._revision = revision
        self._track = track
        self._ended = False
        self.points: dict[bytes, int] = {}
        """etcd keys read -> their ``mod_revision`` at the snapshot (0: absent)."""
        self.ranges: list[tuple[bytes, bytes]] = []
        """What each scan has shown, as etcd ``(key, range_end)`` (:func:`observed`)."""
        self.wide: list[tuple[bytes, bytes]] = []
        """The whole range each scan asked for, as etcd ``(key, range_end)``."""

    def _check(self, what: str) -> None:
        self._conn.check_open(what)
        if self._ended:
            raise StoreClosed(f"{what}: this snapshot or transaction has ended")

    def revision(self) -> int:
        """The revision reads are pinned to; a tracked reader takes it lazily."""
        if self._revision is None:
            response = self._conn.call("revision", self._conn.kv.Range, revision_request(self._prefix))
            self._revision = int(response.header.revision)
        return self._revision

    def get(self, key: bytes) -> bytes | None:
        """One linearizable ``Range`` of ``key``. Cost: one round trip."""
        self._check("get")
        revision = self.revision() if self._track else (self._revision or 0)
        request = point_read(self._prefix, key, revision)
        if request is None:
            return None  # a key etcd cannot hold is never there
        kvs = self._conn.call("get", self._conn.kv.Range, request).kvs
        return point_value(kvs, request.key, self.points if self._track else None)

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
        bounds = etcd_bounds(self._prefix, start, stop)
        if bounds is None or (limit is not None and limit <= 0):
            return iter(())
        cut = len(self._prefix)
        if self._track:
            self.wide.append(bounds)
            pages = Pages(bounds, reverse, limit, self.revision())
            return self._tracked(self._pages(pages), cut, bounds, reverse, limit)
        pages = Pages(bounds, reverse, limit, self._revision or 0)
        return ((bytes(kv.key)[cut:], bytes(kv.value)) for kv in self._pages(pages))

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The default, through :meth:`scan`; keys only, pages of ``keys_only``
        ranges at one revision (a tracked reader: the default, through
        :meth:`scan`, which records what the commit compares)."""
        if not keys_only or self._track:
            return super().read_pages(ranges, reverse, limit, keys_only, cut)
        read = pages_in_turn(self._key_pairs, ranges, reverse, limit)
        return cut_pages(read, cut) if cut else read

    def _key_pairs(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        self._check("scan")
        bounds = etcd_bounds(self._prefix, start, stop)
        if bounds is None or (limit is not None and limit <= 0):
            return iter(())
        cut = len(self._prefix)
        pages = Pages(bounds, reverse, limit, self._revision or 0, keys_only=True)
        return key_pages_of(bytes(kv.key)[cut:] for kv in self._pages(pages))

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """One ``count_only`` range: one round trip, whatever the count (a tracked
        reader counts its :meth:`scan`, which records what the commit compares;
        ``without``: the keys read and tested, as the default does)."""
        if self._track or without is not None:
            return super().count(start, stop, without)
        self._check("count")
        bounds = etcd_bounds(self._prefix, start, stop)
        if bounds is None:
            return 0
        low, end = bounds
        request = pb.RangeRequest(key=low, range_end=end, count_only=True, revision=self._revision or 0)
        return int(self._conn.call("count", self._conn.kv.Range, request).count)

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """Seeks at one revision (the first seek's, or the snapshot's): one
        ``keys_only`` range of one key per seek (a tracked reader seeks with
        :meth:`scan`, which records what the commit compares)."""
        if self._track:
            return super().seeker(stop)
        self._check("seek")
        return _EtcdSeeker(self, stop)

    def _tracked(
        self,
        kvs: Iterator[pb.KeyValue],
        cut: int,
        bounds: tuple[bytes, bytes],
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """The scan's items, recording what the commit guards: each key yielded,
        and the part of ``bounds`` the scan has shown (see :func:`observed`)."""
        points, ranges = self.points, self.ranges
        at: int | None = None
        seen = 0
        for kv in kvs:
            key = bytes(kv.key)
            points.setdefault(key, int(kv.mod_revision))
            shown = observed(bounds, key, reverse)
            if at is None:
                at = len(ranges)
                ranges.append(shown)
            else:
                ranges[at] = shown
            seen += 1
            yield key[cut:], bytes(kv.value)
        if limit is not None and seen >= limit:
            return  # ended by its limit: what lies past the last key was not read
        if at is None:
            ranges.append(bounds)
        else:
            ranges[at] = bounds

    def _pages(self, pages: Pages) -> Iterator[pb.KeyValue]:
        while (request := pages.request()) is not None:  # bounded: see Pages
            self._check("scan")
            try:
                response = self._conn.call("scan", self._conn.kv.Range, request)
            except ResponseTooLarge as exc:
                pages.too_large(exc)
                continue
            yield from pages.take(response)

    def end(self) -> None:
        self._ended = True

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


class _EtcdSeeker(Seeker):
    """Seeks of an untracked reader, all at one revision: the reader's, else the
    one the first seek read at."""

    __slots__ = ("_open", "_reader", "_revision", "_stop")

    def __init__(self, reader: _Reader, stop: bytes | None) -> None:
        self._reader = reader
        self._stop = stop
        self._revision = reader._revision or 0
        self._open = True

    def seek(self, start: bytes) -> bytes | None:
        if not self._open:
            raise StoreClosed("this seeker has been released")
        reader = self._reader
        reader._check("seek")
        bounds = etcd_bounds(reader._prefix, start, self._stop)
        if bounds is None:
            return None
        low, end = bounds
        request = pb.RangeRequest(key=low, range_end=end, limit=1, keys_only=True, revision=self._revision)
        response = reader._conn.call("seek", reader._conn.kv.Range, request)
        if not self._revision:
            self._revision = int(response.header.revision)
        kvs = response.kvs
        return bytes(kvs[0].key)[len(reader._prefix) :] if kvs else None

    def release(self) -> None:
        self._open = False


class EtcdTransaction(OverlayTransaction):
    """The transaction of :meth:`EtcdStore.transaction`: an
    :class:`~keyspace.stores._overlay.OverlayTransaction` over a tracked reader,
    that also tells the revision its reads are pinned to."""

    __slots__ = ("leases",)

    leases: dict[bytes, int]
    """Put keys attached to an etcd lease at the commit (key -> lease ID, from
    :meth:`EtcdStore.grant_lease`): etcd deletes them when it expires."""

    def snapshot_revision(self) -> int:
        """The etcd revision every read of this transaction sees (learned when it
        began: no call). A commit that writes anything gets a later revision, and
        one whose compares hold saw no write after it to a key it read: so a key
        read here and written by every commit of a kind (the sequencing key of
        ``Scope.append``) makes ``snapshot_revision() + 1`` of such commits grow
        strictly in commit order, and no larger than each one's own revision."""
        base = self._base
        assert isinstance(base, _Reader)
        return base.revision()


class EtcdStore(DelegatedReads, Store):
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
        self._check_key = key_checker(prefix)
        probe = probe_key(prefix)[len(prefix) :]
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
            # the probe key, as a key of this store: every granted user may read it
            reserved=((probe, probe + b"\x00"),),
        )
        self._conn = EtcdConnection(options)
        self._reader = _Reader(self._conn, None)
        self._watches: weakref.WeakSet[EtcdWatch] = weakref.WeakSet()  # ended by close()
        try:
            self._conn.open_check()
        except BaseException:
            self._conn.close()
            raise

    def _reads(self) -> ReadView:
        return self._reader

    @property
    def options(self) -> EtcdOptions:
        """The parsed endpoints, key prefix, deadlines and retry budget."""
        return self._conn.options

    # -- reads ---------------------------------------------------------------

    def scan_prefix(
        self, prefix: bytes, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        """Every key starting with ``prefix`` (its range end from :func:`prefix_end`)."""
        return self.scan(prefix, prefix_end(prefix), reverse=reverse, limit=limit)

    # -- writes --------------------------------------------------------------

    def put(self, key: bytes, value: bytes) -> None:
        """One ``Put``; retried on an unknown outcome (repeating it is harmless)."""
        self._conn.check_open("put")
        self._conn.call("put", self._conn.kv.Put, put_request(self._prefix, self._check_key, key, value))

    def delete(self, key: bytes) -> None:
        """One ``DeleteRange`` of ``key``; a missing key is not an error."""
        self._conn.check_open("delete")
        self._check_key(key)
        self._conn.call("delete", self._conn.kv.DeleteRange, pb.DeleteRangeRequest(key=self._prefix + key))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        """One native ``DeleteRange`` of ``[start, stop)``."""
        self._conn.check_open("delete_range")
        bounds = etcd_bounds(self._prefix, start, stop)
        if bounds is None:
            return
        key, end = bounds
        self._conn.call(
            "delete_range", self._conn.kv.DeleteRange, pb.DeleteRangeRequest(key=key, range_end=end)
        )

    def check_batch(self, ops: Sequence[Op]) -> None:
        """Build the ``Txn`` of ``ops`` as :meth:`write` would, and send nothing: its
        :class:`~keyspace.errors.TransactionTooLarge` (over 128 operations or 1.5
        MiB) before anything is written. A single put is checked as the ``Put``
        :meth:`put` sends."""
        if len(ops) == 1:
            key, value = ops[0]
            if value is not None:
                put_request(self._prefix, self._check_key, key, value)
                return
        write_request(self._prefix, self._check_key, ops)

    def write(self, ops: Iterable[Op]) -> None:
        """All ``ops`` as ONE etcd ``Txn`` (see the module docstring)."""
        self._conn.check_open("write")
        request = write_request(self._prefix, self._check_key, ops)
        if request is not None:
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
            op_size = put_op(full, value).ByteSize() + 4
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
        request = pb.TxnRequest(success=[put_op(k, v) for k, v in batch.items()])
        check_size(request, "put_many")
        self._conn.call("put_many", self._conn.kv.Txn, request)

    # -- snapshots and transactions -----------------------------------------

    def snapshot(self) -> _Reader:
        """A read-only view at the current revision (one round trip to learn it)."""
        self._conn.check_open("snapshot")
        reader = _Reader(self._conn, None)
        reader.revision()
        return reader

    def transaction(self) -> EtcdTransaction:
        """A read-write transaction committed as one guarded ``Txn`` (module docstring).
        Beginning costs one round trip (to learn the snapshot revision, which its
        :meth:`~EtcdTransaction.snapshot_revision` tells)."""
        self._conn.check_open("transaction")
        base = _Reader(self._conn, None, track=True)
        base.revision()
        leases: dict[bytes, int] = {}

        def apply(ranges: list[Range], ops: list[Op]) -> None:
            base.end()
            with self._conn.budget():  # the whole commit, re-reads and retries included
                self._commit(base, ranges, ops, leases)

        tx = EtcdTransaction(base, ops_apply(apply), base.end, self._check_key)
        tx.leases = leases
        return tx

    def grant_lease(self, seconds: int) -> int:
        """A new etcd lease of ``seconds`` (at least 1; etcd may lengthen a short
        one to its minimum), its ID: keys a transaction attaches to it
        (:attr:`EtcdTransaction.leases`) are deleted by etcd when it expires.
        Cost: one round trip (``Lease.LeaseGrant``)."""
        self._conn.check_open("lease grant")
        lease: int = self._conn.call("lease grant", self._conn.lease_grant, max(1, int(seconds)))
        return lease

    def _commit(
        self, base: _Reader, ranges: list[Range], ops: list[Op], leases: dict[bytes, int] | None = None
    ) -> None:
        self._conn.check_open("commit")
        plan = commit_plan(self._prefix, ranges, ops, leases)
        if plan is None:
            return
        snapshot = base.revision()
        request = plan.request(base.points, base.ranges, snapshot, self._conn.may_nest, base.wide)
        opts = self._conn.options
        with self._conn.budget() as budget_end:
            steps = commit_steps(
                plan,
                request,
                snapshot,
                max_attempts=opts.max_attempts,
                retry_budget=opts.retry_budget,
                budget_end=budget_end,
            )
            self._drive(steps)

    def _drive(self, steps: Generator[Step, Any, None]) -> None:
        """Carry out the steps of :func:`commit_steps` with blocking calls and sleeps."""
        reply: Any = None
        error: EtcdUnavailable | None = None
        while True:  # bounded: commit_steps ends within max_attempts and the budget
            try:
                step = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration:
                return
            reply = error = None
            if not isinstance(step, Call):
                time.sleep(step.seconds)
                continue
            try:
                reply = self._conn.call(
                    step.what, getattr(self._conn.kv, step.method), step.request, retry=step.retry
                )
            except EtcdUnavailable as exc:
                error = exc

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
        check_start_revision(start_revision)
        self._conn.check_open("watch")
        wanted = [(start, stop) for start, stop in ranges]
        if not wanted:
            raise ValueError("watch needs at least one range")
        low = min(start for start, _ in wanted)
        stops = [stop for _, stop in wanted]
        high = None if None in stops else max(s for s in stops if s is not None)
        hull = etcd_bounds(self._prefix, low, high)
        if hull is not None and hull[0] == probe_key(self._prefix) and self._conn.restricted():
            # the probe key, which every granted user may read, holds no scope's key
            # (capabilities.reserved): a restricted user's watch from it to the end of
            # the keys would be checked as a watch of that one key by an etcd before
            # 3.5.33, so it starts after it, where the server checks what the user may read
            hull = (hull[0] + b"\x00", hull[1])
        if start_revision is None:
            # "now" is the cluster's revision read linearizably: a stream served by a
            # member that lags would otherwise start before writes already acknowledged
            # and replay them as new events
            response = self._conn.call("watch", self._conn.kv.Range, revision_request(self._prefix))
            start_revision = int(response.header.revision) + 1
        watch = EtcdWatch(self._conn, hull, len(self._prefix), wanted, start_revision, self.url)
        self._watches.add(watch)
        return watch

    def etcd_range(self, start: bytes, stop: bytes | None) -> tuple[bytes, bytes] | None:
        """The etcd ``(key, range_end)`` of the store range ``[start, stop)`` (the
        store's key prefix applied), or ``None`` when it is empty."""
        return etcd_bounds(self._prefix, start, stop)

    def probe_key(self) -> bytes:
        """The etcd key a snapshot or transaction reads (count only) to learn the
        current revision; restricted users need read permission on it."""
        return probe_key(self._prefix)

    def etcd_key(self, key: bytes) -> bytes:
        """The etcd key of the store key ``key`` (the store's prefix applied)."""
        return self._prefix + key

    def asynchronous(self) -> AsyncEtcdStore:
        """A native asyncio client (``grpc.aio``, no thread) of the same cluster, with
        these options and credentials (see :mod:`keyspace.stores.etcd._aio`)."""
        from ._aio import AsyncEtcdStore

        return AsyncEtcdStore(self, self._conn)

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
        """Close the channel and end every watch of this store with ``StoreClosed``
        (as a read of the closed store raises). Idempotent; later calls raise
        ``StoreClosed``."""
        self._conn.close()
        for watch in list(self._watches):
            watch.store_closed()

    def __repr__(self) -> str:
        state = " closed" if self._conn.closed else ""
        return f"<EtcdStore {self.url!r} target={self._conn.target!r}{state}>"
