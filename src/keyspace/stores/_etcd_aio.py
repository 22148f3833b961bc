"""The native asyncio client of :class:`~keyspace.stores.etcd.EtcdStore`, over ``grpc.aio``.

``EtcdStore.asynchronous()`` gives an :class:`AsyncEtcdStore`: the same cluster,
key prefix, deadlines, retry budget, TLS credentials and auth token as the
synchronous store (the channel settings come from :func:`open_channel`, the token
from the same :class:`~keyspace.stores._etcd_auth.TokenKeeper`), and the same
operations with the same costs, guarantees and errors (see
:mod:`keyspace.stores.etcd`): ``get`` one linearizable ``Range``; ``scan`` pages of
``Range`` at the revision of the first page; ``put``/``delete``/``delete_range``
one request each; ``write`` ONE ``Txn``; a transaction reads at one revision,
buffers its writes and commits ONE ``Txn`` guarded by the ``mod_revision`` of every
key read and every range scanned (:class:`TransactionConflict`,
:class:`CommitOutcomeUnknown`, :class:`TransactionTooLarge`).

No thread is used: every call is a coroutine on the running event loop. A channel
belongs to one event loop, so the client opens one per loop it is used from.
"""

from __future__ import annotations

import asyncio
import gc
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import grpc
import grpc.aio
from sortedcontainers import SortedDict

from ..errors import CommitOutcomeUnknown, EtcdUnavailable, StoreClosed, TransactionTooLarge
from ._aio import AsyncStore, AsyncTransaction
from ._etcd_proto import kv_pb2 as pb
from ._etcd_proto import kv_pb2_grpc as pb_grpc
from ._etcd_proto import watch_auth_pb2_grpc as wa_grpc
from ._etcd_rpc import (
    MAX_TXN_OPS,
    Backoff,
    ResponseTooLarge,
    is_credentials_failure,
    open_channel,
    retryable,
    translate,
)
from ._overlay import Range, RangeSet

if TYPE_CHECKING:
    from .etcd import EtcdStore

__all__ = ["AsyncEtcdStore"]

_BUDGET_END: ContextVar[float | None] = ContextVar("keyspace_etcd_budget_end", default=None)


class _Client:
    """The ``grpc.aio`` channel (one per event loop) and the retry loop of every call:
    the rules of :meth:`EtcdConnection.call`, awaited."""

    def __init__(self, store: EtcdStore) -> None:
        conn = store._conn
        self.options = conn.options
        self.target = conn.target
        self.tokens = conn.tokens
        self.closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._channel: Any = None
        self._stubs: tuple[Any, Any] | None = None

    def stubs(self) -> tuple[Any, Any]:
        """``(kv, auth)`` stubs on a channel of the running loop."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._stubs is None:
            self._channel = open_channel(grpc.aio, self.target, self.options)
            self._stubs = (
                pb_grpc.KVStub(self._channel),  # type: ignore[no-untyped-call]
                wa_grpc.AuthStub(self._channel),  # type: ignore[no-untyped-call]
            )
            self._loop = loop
        return self._stubs

    def check_open(self, what: str) -> None:
        if self.closed:
            raise StoreClosed(f"{what}: the etcd store has been closed")

    async def close(self) -> None:
        """Close the channel and let it go. grpc's asyncio runtime (and its poller
        thread) lives while any channel object does, and a process that forks with
        it alive hangs its children's gRPC; exceptions that passed through a call
        keep the channel in reference cycles, so they are collected here."""
        self.closed = True
        channel, self._channel, self._stubs = self._channel, None, None
        if channel is not None and self._loop is asyncio.get_running_loop():
            await channel.close()
        del channel
        gc.collect()

    def budget_end(self) -> float:
        end = time.monotonic() + self.options.retry_budget
        outer = _BUDGET_END.get()
        return end if outer is None else min(end, outer)

    async def call(self, what: str, method: str, request: Any, *, retry: bool = True) -> Any:
        """``KV.<method>(request)``, retried like the synchronous client's calls
        (exponential backoff within the retry budget; one token refresh)."""
        backoff = Backoff(what, self.options, self.budget_end())
        while True:  # bounded: Backoff raises or gives up after max_attempts or the budget
            self.check_open(what)
            timeout = backoff.attempt_timeout()
            kv = self.stubs()[0]
            try:
                return await getattr(kv, method)(request, timeout=timeout, metadata=self.tokens.metadata())
            except grpc.RpcError as exc:
                if backoff.renew_token(exc, self.tokens):
                    await self.refresh()
                    continue
                pause = backoff.pause(exc, retry=retry, closed=self.closed)
                if pause is None:
                    raise translate(exc, what, backoff.attempts) from exc
                await asyncio.sleep(pause)

    async def refresh(self) -> None:
        """A new auth token: one ``Authenticate`` call (retried only while the
        cluster is unavailable, within the budget)."""
        stale = self.tokens.metadata()
        opts = self.options
        budget_end = self.budget_end()
        delay = 0.05
        for attempt in range(1, opts.max_attempts + 1):
            auth = self.stubs()[1]
            remaining = budget_end - time.monotonic()
            try:
                response = await auth.Authenticate(
                    self.tokens.request(), timeout=max(0.05, min(opts.timeout, remaining))
                )
            except grpc.RpcError as exc:
                pause = delay * (0.5 + random.random())
                if (
                    retryable(exc)
                    and not is_credentials_failure(exc)
                    and time.monotonic() + pause < budget_end
                ):
                    await asyncio.sleep(pause)
                    delay = min(delay * 2, 1.0)
                    continue
                raise translate(exc, "authenticate", attempt) from exc
            self.tokens.accept(stale, str(response.token))
            return
        raise EtcdUnavailable(f"authenticate: no answer after {opts.max_attempts} attempts")


class AsyncEtcdStore(AsyncStore):
    """The asyncio client of one :class:`EtcdStore` (module docstring)."""

    threads = 0

    def __init__(self, store: EtcdStore) -> None:
        from . import etcd

        self.sync = store
        self._etcd = etcd
        self._client = _Client(store)
        self._prefix = store.options.prefix
        self._check_key = etcd._key_checker(self._prefix)
        self._reader = _EtcdView(self, None, track=False, writable=False)

    # -- reads and writes of the store ---------------------------------------------

    async def get(self, key: bytes) -> bytes | None:
        return await self._reader.get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        return self._reader.scan(start, stop, reverse=reverse, limit=limit)

    async def put(self, key: bytes, value: bytes) -> None:
        """One ``Put``; retried on an unknown outcome (repeating it is harmless)."""
        self._client.check_open("put")
        self._check_key(key)
        request = pb.PutRequest(key=self._prefix + key, value=value)
        self._etcd._check_size(request, "put")
        await self._client.call("put", "Put", request)

    async def delete(self, key: bytes) -> None:
        self._client.check_open("delete")
        self._check_key(key)
        await self._client.call("delete", "DeleteRange", pb.DeleteRangeRequest(key=self._prefix + key))

    async def delete_range(self, start: bytes, stop: bytes | None) -> None:
        """One native ``DeleteRange`` of ``[start, stop)``."""
        self._client.check_open("delete_range")
        bounds = self._etcd._bounds(self._prefix, start, stop)
        if bounds is None:
            return
        key, end = bounds
        await self._client.call("delete_range", "DeleteRange", pb.DeleteRangeRequest(key=key, range_end=end))

    async def write(self, ops: Iterable[tuple[bytes, bytes | None]]) -> None:
        """All ``ops`` as ONE ``Txn`` (repeated keys merged to the last op)."""
        self._client.check_open("write")
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
        p, e = self._prefix, self._etcd
        request = pb.TxnRequest(
            success=[e._delete_op(p + k) if v is None else e._put_op(p + k, v) for k, v in merged.items()]
        )
        e._check_size(request, "write")
        await self._client.call("write", "Txn", request)

    # -- transactions ----------------------------------------------------------------

    async def begin(self) -> AsyncTransaction:
        """A transaction: reads at one revision (taken now, one round trip), writes
        buffered, committed as one guarded ``Txn``."""
        self._client.check_open("transaction")
        tx = _EtcdView(self, None, track=True, writable=True)
        await tx.revision()
        return tx

    async def begin_snapshot(self) -> AsyncTransaction:
        self._client.check_open("snapshot")
        view = _EtcdView(self, None, track=False, writable=False)
        await view.revision()
        return view

    async def close(self, closing: Callable[[], None] | None = None) -> None:
        """Close the asyncio channel, then the synchronous side (``closing``, default
        the synchronous store's ``close``). Idempotent."""
        await self._client.close()
        (closing or self.sync.close)()

    # -- commit ------------------------------------------------------------------------

    async def commit(
        self, view: _EtcdView, ranges: list[Range], ops: list[tuple[bytes, bytes | None]]
    ) -> None:
        """The guarded commit of :meth:`EtcdStore.transaction`, awaited."""
        client, e, p = self._client, self._etcd, self._prefix
        client.check_open("commit")
        puts = sorted(k for k, v in ops if v is not None)
        values = {p + k: v for k, v in ops if v is not None}
        deletes = [p + k for k, v in ops if v is None and not e._covered(k, ranges)]
        cleared = e._split_ranges(p, ranges, puts)
        success = [e._put_op(k, v) for k, v in values.items()]
        success += [e._delete_op(k) for k in deletes]
        success += [e._delete_op(k, end) for k, end in cleared]
        if not success:
            return
        snapshot = await view.revision()
        compares = [
            pb.Compare(result=pb.Compare.EQUAL, target=pb.Compare.MOD, key=k, mod_revision=rev)
            for k, rev in view.points.items()
        ]
        compares += [
            pb.Compare(
                result=pb.Compare.LESS, target=pb.Compare.MOD, key=k, range_end=end, mod_revision=snapshot + 1
            )
            for k, end in view.ranges
        ]
        if len(success) > MAX_TXN_OPS or len(compares) > MAX_TXN_OPS:
            raise TransactionTooLarge(
                f"commit: the transaction needs {len(success)} operations and {len(compares)} compares "
                f"(one per key read, one per range scanned); etcd accepts at most {MAX_TXN_OPS} of each "
                "per transaction"
            )
        request = pb.TxnRequest(compare=compares, success=success)
        e._check_size(request, "commit")
        token = _BUDGET_END.set(client.budget_end())  # the whole commit, re-reads included
        try:
            if not compares:  # blind writes: as safe to repeat as write(ops)
                try:
                    await client.call("commit", "Txn", request)
                except CommitOutcomeUnknown:
                    raise
                except EtcdUnavailable as exc:
                    raise CommitOutcomeUnknown(
                        f"commit: the etcd cluster gave no answer within the retry budget of "
                        f"{client.options.retry_budget} s; the transaction may or may not have been "
                        f"applied: {exc}"
                    ) from exc
                return
            await self._guarded(request, values, deletes, cleared, snapshot)
        finally:
            _BUDGET_END.reset(token)

    async def _guarded(
        self,
        request: pb.TxnRequest,
        values: dict[bytes, bytes],
        deletes: list[bytes],
        cleared: list[tuple[bytes, bytes]],
        snapshot: int,
    ) -> None:
        """Send the guarded Txn; after an unknown outcome re-read before retrying
        (the rules of ``EtcdStore._guarded_attempts``)."""
        client = self._client
        opts = client.options
        budget_end = client.budget_end()
        uncertain: EtcdUnavailable | None = None
        delay = 0.05
        for _attempt in range(opts.max_attempts):
            try:
                response = await client.call("commit", "Txn", request, retry=False)
            except EtcdUnavailable as exc:
                uncertain = exc
                pause = delay * (0.5 + random.random())
                delay = min(delay * 2, 1.0)
                if time.monotonic() + pause >= budget_end:
                    break
                await asyncio.sleep(pause)
                try:
                    if values and await self._applied(values, deletes, cleared, snapshot):
                        return
                except EtcdUnavailable:
                    continue
                continue
            if response.succeeded:
                return
            if uncertain is not None:
                try:
                    applied = await self._applied(values, deletes, cleared, snapshot)
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
            raise self._etcd.TransactionConflict(
                f"commit: a key or range this transaction read was written after its snapshot "
                f"(revision {snapshot}); nothing was written, run the transaction again"
            )
        raise CommitOutcomeUnknown(
            f"commit: the etcd cluster gave no answer within {opts.retry_budget} s; the "
            "transaction may or may not have been applied"
        ) from uncertain

    async def _applied(
        self,
        values: dict[bytes, bytes],
        deletes: list[bytes],
        cleared: list[tuple[bytes, bytes]],
        snapshot: int,
    ) -> bool:
        """Whether etcd shows the commit's effect (``EtcdStore._applied``)."""
        keys = list(values) + deletes
        reads = [self._etcd._range_op(k) for k in keys]
        reads += [
            pb.RequestOp(
                request_range=pb.RangeRequest(key=k, range_end=end, limit=len(values) + 1, keys_only=True)
            )
            for k, end in cleared
        ]
        response = await self._client.call("commit check", "Txn", pb.TxnRequest(success=reads))
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


class _EtcdView(AsyncTransaction):
    """Reads at the current revision (``revision=None``, untracked) or at one fixed
    revision; with ``track``, remembers every key read and range scanned for the
    commit's compares; with ``writable``, buffers writes (a transaction)."""

    def __init__(self, store: AsyncEtcdStore, revision: int | None, *, track: bool, writable: bool) -> None:
        self._store = store
        self._client = store._client
        self._prefix = store._prefix
        self._limit = store._etcd.MAX_KEY_SIZE - len(self._prefix)
        self._revision = revision
        self._track = track
        self._writable = writable
        self._open = True
        self.points: dict[bytes, int] = {}
        self.ranges: list[tuple[bytes, bytes]] = []
        self._writes: SortedDict[bytes, bytes | None] = SortedDict()
        self._deleted = RangeSet()

    def _check(self, what: str) -> None:
        self._client.check_open(what)
        if not self._open:
            raise StoreClosed(f"{what}: this snapshot or transaction has ended")

    async def revision(self) -> int:
        if self._revision is None:
            request = pb.RangeRequest(key=self._store._etcd.probe_key(self._prefix), count_only=True)
            response = await self._client.call("revision", "Range", request)
            self._revision = int(response.header.revision)
        return self._revision

    # -- reads -------------------------------------------------------------------------

    async def get(self, key: bytes) -> bytes | None:
        self._check("get")
        if self._writable:
            if key in self._writes:
                value: bytes | None = self._writes[key]
                return value
            if self._deleted and key in self._deleted:
                return None
        full = self._prefix + key
        if not full or len(key) > self._limit:
            return None  # a key etcd cannot hold is never there
        revision = await self.revision() if self._track else (self._revision or 0)
        response = await self._client.call("get", "Range", pb.RangeRequest(key=full, revision=revision))
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
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        self._check("scan")
        return self._scan(start, stop, reverse, limit)

    async def _scan(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        if limit is not None and limit <= 0:
            return
        own: list[tuple[bytes, bytes]] = []
        writes, deleted = self._writes, self._deleted
        if self._writable and writes:
            keys = writes.irange(start, stop, inclusive=(True, False), reverse=reverse)
            own = [(k, v) for k in keys if (v := writes[k]) is not None]
        left = limit
        at = 0
        async for key, value in self._base(start, stop, reverse):
            if self._writable and (key in writes or (deleted and key in deleted)):
                continue
            while at < len(own) and (own[at][0] > key if reverse else own[at][0] < key):
                yield own[at]
                at += 1
                if left is not None:
                    left -= 1
                    if left == 0:
                        return
            yield key, value
            if left is not None:
                left -= 1
                if left == 0:
                    return
        for item in own[at:]:
            yield item
            if left is not None:
                left -= 1
                if left == 0:
                    return

    async def _base(
        self, start: bytes, stop: bytes | None, reverse: bool
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        """The stored keys of ``[start, stop)`` (tracked in a transaction), in pages."""
        e = self._store._etcd
        bounds = e._bounds(self._prefix, start, stop)
        if bounds is None:
            return
        cut = len(self._prefix)
        if self._track:
            self.ranges.append(bounds)
            revision: int | None = await self.revision()
        else:
            revision = self._revision
        points = self.points
        low, end = bounds
        page = e._PAGE_FIRST
        rev = revision or 0
        order = pb.RangeRequest.DESCEND if reverse else pb.RangeRequest.NONE
        while True:  # each pass yields >= 1 key or returns: bounded by the range's size
            self._check("scan")
            request = pb.RangeRequest(key=low, range_end=end, limit=page, revision=rev, sort_order=order)
            try:
                response = await self._client.call("scan", "Range", request)
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
                key = bytes(kv.key)
                size += len(key) + len(kv.value)
                if self._track:
                    points.setdefault(key, int(kv.mod_revision))
                yield key[cut:], bytes(kv.value)
            if not response.more:
                return
            last = bytes(kvs[-1].key)
            if reverse:
                if last <= low:
                    return
                end = last
            else:
                low = last + b"\x00"
            page = max(1, min(e._PAGE_MAX, e._PAGE_BYTES * len(kvs) // max(size, 1)))

    # -- writes (buffered) -----------------------------------------------------------

    def _writer(self, what: str) -> None:
        self._check(what)
        if not self._writable:
            raise StoreClosed(f"{what}: a snapshot is read-only")

    async def put(self, key: bytes, value: bytes) -> None:
        self._writer("put")
        self._store._check_key(key)
        self._writes[key] = value

    async def delete(self, key: bytes) -> None:
        self._writer("delete")
        self._store._check_key(key)
        self._writes[key] = None

    async def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._writer("delete_range")
        if stop is not None and stop <= start:
            return
        for key in list(self._writes.irange(start, stop, inclusive=(True, False))):
            del self._writes[key]
        self._deleted.add(start, stop)

    async def commit(self) -> None:
        self._check("commit")
        self._open = False
        if not self._writable:
            return
        ops: list[tuple[bytes, bytes | None]] = list(self._writes.items())
        ranges = self._deleted.ranges()
        if ops or ranges:
            await self._store.commit(self, ranges, ops)

    async def discard(self) -> None:
        self._open = False
