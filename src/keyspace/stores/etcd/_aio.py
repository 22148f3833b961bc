"""The native asyncio client of :class:`~keyspace.stores.etcd.EtcdStore`, over ``grpc.aio``.

``EtcdStore.asynchronous()`` gives an :class:`AsyncEtcdStore`: the same cluster,
key prefix, deadlines, retry budget, TLS credentials and auth token as the
synchronous store (the channel settings come from :func:`open_channel`, the token
from the same :class:`~keyspace.stores.etcd._auth.TokenKeeper`), and the same
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
from collections.abc import AsyncIterator, Callable, Generator, Iterable
from contextvars import ContextVar
from typing import Any

import grpc
import grpc.aio
from sortedcontainers import SortedDict

from ...errors import EtcdUnavailable, StoreClosed
from .._aio import AsyncStore, AsyncTransaction
from .._base import Store
from .._overlay import Range, RangeSet
from ._plan import (
    Call,
    Pages,
    Step,
    commit_plan,
    commit_steps,
    etcd_bounds,
    key_checker,
    observed,
    point_read,
    point_value,
    put_request,
    revision_request,
    write_request,
)
from ._proto import kv_pb2 as pb
from ._proto import kv_pb2_grpc as pb_grpc
from ._proto import watch_auth_pb2_grpc as wa_grpc
from ._rpc import (
    Backoff,
    EtcdConnection,
    ResponseTooLarge,
    closed_under_call,
    connect_failure,
    is_credentials_failure,
    open_channel,
    retryable,
    translate,
)

__all__ = ["AsyncEtcdStore"]

_BUDGET_END: ContextVar[float | None] = ContextVar("keyspace_etcd_budget_end", default=None)


class _Client:
    """The ``grpc.aio`` channel (one per event loop) and the retry loop of every call:
    the rules of :meth:`EtcdConnection.call`, awaited."""

    def __init__(self, conn: EtcdConnection) -> None:
        self.options = conn.options
        self.target = conn.target
        self.tokens = conn.tokens
        self.closed = False
        self.reached = conn.reached  # whether a member has answered yet (see Backoff)
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
        backoff = Backoff(what, self.options, self.budget_end(), reached=self.reached)
        while True:  # bounded: Backoff raises or gives up after max_attempts or the budget
            self.check_open(what)
            timeout = backoff.attempt_timeout()
            kv = self.stubs()[0]
            try:
                answer = await getattr(kv, method)(request, timeout=timeout, metadata=self.tokens.metadata())
                self.reached = True
                return answer
            except asyncio.CancelledError:
                # grpc.aio cancels the calls of a channel it closes; unless this
                # task itself is being cancelled, that is the store's close
                task = asyncio.current_task()
                if self.closed and task is not None and not task.cancelling():
                    raise closed_under_call(what) from None
                raise
            except grpc.RpcError as exc:
                if self.closed:  # CANCELLED by the channel's close, not by the cluster
                    raise closed_under_call(what) from exc
                self.reached = self.reached or not connect_failure(exc)
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

    def __init__(self, store: Store, conn: EtcdConnection) -> None:
        """``store``: the synchronous store of the cluster (its capabilities, watch
        and close); ``conn``: its connection, whose options, credentials and
        retry rules the asyncio channel takes."""
        self.sync = store
        self._client = _Client(conn)
        self._prefix = conn.options.prefix
        self._check_key = key_checker(self._prefix)
        self._reader = _EtcdView(self, None, track=False, writable=False)
        # whether a commit may be nested: the synchronous store's answer (the same
        # user; its one Status call, where one is needed, blocks once)
        self._may_nest = conn.may_nest

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
        await self._client.call("put", "Put", put_request(self._prefix, self._check_key, key, value))

    async def delete(self, key: bytes) -> None:
        self._client.check_open("delete")
        self._check_key(key)
        await self._client.call("delete", "DeleteRange", pb.DeleteRangeRequest(key=self._prefix + key))

    async def delete_range(self, start: bytes, stop: bytes | None) -> None:
        """One native ``DeleteRange`` of ``[start, stop)``."""
        self._client.check_open("delete_range")
        bounds = etcd_bounds(self._prefix, start, stop)
        if bounds is None:
            return
        key, end = bounds
        await self._client.call("delete_range", "DeleteRange", pb.DeleteRangeRequest(key=key, range_end=end))

    async def write(self, ops: Iterable[tuple[bytes, bytes | None]]) -> None:
        """All ``ops`` as ONE ``Txn`` (repeated keys merged to the last op)."""
        self._client.check_open("write")
        request = write_request(self._prefix, self._check_key, ops)
        if request is not None:
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

    def check_commit(
        self, view: AsyncTransaction | None, ranges: list[Range], ops: list[tuple[bytes, bytes | None]]
    ) -> None:
        """Raise the :class:`~keyspace.errors.TransactionTooLarge` that :meth:`commit`
        of ``ranges`` and ``ops`` in ``view`` (``None``: a transaction that read
        nothing) would raise, with no I/O: its request is built as the commit's,
        with the compares of what ``view`` has read so far."""
        plan = commit_plan(self._prefix, ranges, ops)
        if plan is None:
            return
        if isinstance(view, _EtcdView):
            plan.request(view.points, view.ranges, view._revision or 1, self._may_nest, view.wide)
        else:
            plan.request({}, [], 1, self._may_nest)

    async def commit(
        self, view: _EtcdView, ranges: list[Range], ops: list[tuple[bytes, bytes | None]]
    ) -> None:
        """The guarded commit of :meth:`EtcdStore.transaction`, awaited."""
        client = self._client
        client.check_open("commit")
        plan = commit_plan(self._prefix, ranges, ops)
        if plan is None:
            return
        snapshot = await view.revision()
        request = plan.request(view.points, view.ranges, snapshot, self._may_nest, view.wide)
        budget_end = client.budget_end()
        token = _BUDGET_END.set(budget_end)  # the whole commit, re-reads included
        try:
            steps = commit_steps(
                plan,
                request,
                snapshot,
                max_attempts=client.options.max_attempts,
                retry_budget=client.options.retry_budget,
                budget_end=budget_end,
            )
            await self._drive(steps)
        finally:
            _BUDGET_END.reset(token)

    async def _drive(self, steps: Generator[Step, Any, None]) -> None:
        """Carry out the steps of :func:`commit_steps` with awaited calls and sleeps."""
        reply: Any = None
        error: EtcdUnavailable | None = None
        while True:  # bounded: commit_steps ends within max_attempts and the budget
            try:
                step = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration:
                return
            reply = error = None
            if not isinstance(step, Call):
                await asyncio.sleep(step.seconds)
                continue
            try:
                reply = await self._client.call(step.what, step.method, step.request, retry=step.retry)
            except EtcdUnavailable as exc:
                error = exc


class _EtcdView(AsyncTransaction):
    """Reads at the current revision (``revision=None``, untracked) or at one fixed
    revision; with ``track``, remembers every key read and range scanned for the
    commit's compares; with ``writable``, buffers writes (a transaction)."""

    def __init__(self, store: AsyncEtcdStore, revision: int | None, *, track: bool, writable: bool) -> None:
        self._store = store
        self._client = store._client
        self._prefix = store._prefix
        self._revision = revision
        self._track = track
        self._writable = writable
        self._open = True
        self.points: dict[bytes, int] = {}
        self.ranges: list[tuple[bytes, bytes]] = []  # what each scan has shown
        self.wide: list[tuple[bytes, bytes]] = []  # the whole range each scan asked for
        self._writes: SortedDict[bytes, bytes | None] = SortedDict()
        self._deleted = RangeSet()

    def _check(self, what: str) -> None:
        self._client.check_open(what)
        if not self._open:
            raise StoreClosed(f"{what}: this snapshot or transaction has ended")

    async def revision(self) -> int:
        if self._revision is None:
            response = await self._client.call("revision", "Range", revision_request(self._prefix))
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
        revision = await self.revision() if self._track else (self._revision or 0)
        request = point_read(self._prefix, key, revision)
        if request is None:
            return None  # a key etcd cannot hold is never there
        kvs = (await self._client.call("get", "Range", request)).kvs
        return point_value(kvs, request.key, self.points if self._track else None)

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
        async for key, value in self._gaps(start, stop, reverse):
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
            if not self._open:  # the pending writes taken at the start end with the view too
                self._check("scan")
            yield item
            if left is not None:
                left -= 1
                if left == 0:
                    return

    async def _gaps(
        self, start: bytes, stop: bytes | None, reverse: bool
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        """The stored keys of ``[start, stop)`` outside the ranges this transaction
        deleted (those are neither read nor guarded at its commit)."""
        if not (self._writable and self._deleted):
            async for item in self._base(start, stop, reverse):
                yield item
            return
        gaps = self._deleted.gaps(start, stop)
        for low, high in reversed(gaps) if reverse else gaps:
            async for item in self._base(low, high, reverse):
                yield item

    async def _base(
        self, start: bytes, stop: bytes | None, reverse: bool
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        """The stored keys of ``[start, stop)`` (tracked in a transaction), in pages."""
        bounds = etcd_bounds(self._prefix, start, stop)
        if bounds is None:
            return
        cut = len(self._prefix)
        if self._track:
            self.wide.append(bounds)
            revision: int | None = await self.revision()
        else:
            revision = self._revision
        points, ranges = self.points, self.ranges
        at: int | None = None  # where the part of bounds shown so far is recorded
        pages = Pages(bounds, reverse, None, revision or 0)
        while (request := pages.request()) is not None:  # bounded: see Pages
            self._check("scan")
            try:
                response = await self._client.call("scan", "Range", request)
            except ResponseTooLarge as exc:
                pages.too_large(exc)
                continue
            for kv in pages.take(response):
                key = bytes(kv.key)
                if self._track:
                    points.setdefault(key, int(kv.mod_revision))
                    shown = observed(bounds, key, reverse)
                    if at is None:
                        at = len(ranges)
                        ranges.append(shown)
                    else:
                        ranges[at] = shown
                yield key[cut:], bytes(kv.value)
        if self._track:  # ran to its end: all of bounds was seen
            if at is None:
                ranges.append(bounds)
            else:
                ranges[at] = bounds

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
