"""``keyspace.aio``: the asyncio face of keyspace.

::

    ks = await keyspace.aio.open("etcd://h1:2379,h2:2379")
    users = ks.scope("tenant1", "users")
    await users.put(b"alice", b"{...}")          # or: await users.set(...)
    value = await users.get(b"alice")
    async for key, value in users.items(start=b"a", limit=10): ...
    async with ks.transaction() as tx:
        n = await tx.scope("counters").get(b"n", b"0")
        await tx.scope("counters").put(b"n", b"%d" % (int(n) + 1))
    await ks.close()

Same semantics and same errors as the synchronous API, whose code does the
encoding and the checks: one mechanism for every engine.

- **I/O** goes through the store's async contract
  (:class:`~keyspace.stores._aio.AsyncStore`). On etcd that is a native
  ``grpc.aio`` client: no thread, every call a coroutine on the loop; the etcd
  transaction semantics are the synchronous store's (reads at one revision,
  writes buffered, one ``Txn`` guarded by the revisions of what was read; a lost
  race raises ``TransactionConflict``: run the transaction again). Every other
  engine runs its synchronous calls in a bounded pool of worker threads
  (:class:`~keyspace.stores._aio.ThreadedStore`): ONE thread and one transaction
  at a time for LMDB, SQLite, LevelDB, RocksDB and memory (other tasks' writes
  wait for it, their reads go on), ``workers`` threads (default 8) for engines
  that serve concurrent clients without locking.
- **What a scope does** (key and value codecs, the catalog's checks: scheme record
  checked and written inside the first write's atomic batch, ScopeHash registry,
  leaf/branch layout) is the synchronous :class:`~keyspace.Scope` code, run over
  views that do no I/O and replayed as its reads arrive (:mod:`keyspace.aio._plan`).
  A point operation costs one round trip (plus the sync code run twice); a first
  write of a path adds the catalog's reads, inside the same transaction.

Ranged reads (``items``, ``keys``, ``values``, ``subtree``) stream: etcd ``Range``
pages, or ``chunk`` items per worker call (default 256). ``watch`` gives the
synchronous :class:`~keyspace.ScopeWatch`, which is also an async iterator.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Self, TypeVar

from .. import keyspace as _sync
from .._blocks import AsyncBlock
from .._scope_structure import decoded_key_codec as _decoded_key_codec
from .._update_pairs import pair_list
from .._watch import ScopeWatch
from ..catalog import Catalog
from ..codecs import Codec, resolve_codec
from ..errors import InvalidArgument, StoreClosed
from ..keyspace import Keyspace
from ..schemes._base import Path, Scheme
from ..schemes._layouts import Layout
from ..scope import Scope, check_range_arguments
from ..stores._aio import DEFAULT_CHUNK, AsyncStore, async_store, to_the_end
from ..stores._aio import AsyncTransaction as _StoreTransaction
from ..stores._base import ReadView
from ._plan import Hub, PlanSnapshot, PlanStore, PlanView

__all__ = ["AsyncKeyspace", "AsyncScope", "AsyncTransaction", "open"]

T = TypeVar("T")


_MISSING: Any = object()


class _Context:
    """What the scopes of one async keyspace, or of one of its transactions, share:
    the hub that runs their operations, the plan view and catalog their
    synchronous scopes use, and the caller's transaction (``None`` outside)."""

    def __init__(
        self,
        aks: AsyncKeyspace,
        view: ReadView,
        catalog: Catalog,
        tx: _StoreTransaction | None,
    ) -> None:
        self.aks = aks
        self.hub = aks._hub
        self.view = view
        self.catalog = catalog
        self.tx = tx

    def check(self) -> None:
        if self.aks._closed:
            raise StoreClosed("the async keyspace has been closed")

    async def run(self, operation: Callable[[Catalog], T]) -> T:
        """``operation(state)`` as a plan (:meth:`Hub.run`); ``state``: the catalog
        state its synchronous scopes use."""
        self.check()
        return await self.hub.run(operation, self.catalog, self.tx)


class AsyncScope:
    """The async view of one :class:`~keyspace.Scope`: the same methods, awaited.
    ``sync`` is the synchronous scope of the same path (outside transactions: of
    the synchronous keyspace; use it only where blocking is fine)."""

    __slots__ = ("_ctx", "_key", "_value", "path", "sync")

    def __init__(
        self, ctx: _Context, path: Path, key: Codec, value: Codec, sync: Scope | None = None
    ) -> None:
        self._ctx = ctx
        self.path = path
        self._key = key
        self._value = value
        self.sync = sync if sync is not None else self._make()  # checks the path now

    def _make(self, state: Catalog | None = None) -> Scope:
        """A synchronous scope of this path over the plan views (no I/O), holding the
        catalog ``state`` of one run (default: the context's)."""
        ctx = self._ctx
        state = ctx.catalog if state is None else state
        return Scope(ctx.aks._plan_ks._space, ctx.view, state, self.path, self._key, self._value)

    def __repr__(self) -> str:
        return f"<AsyncScope {self.path!r}>"

    @property
    def keyspace(self) -> AsyncKeyspace:
        """The async keyspace this scope belongs to."""
        return self._ctx.aks

    @property
    def scheme(self) -> Scheme:
        """The keyspace's scheme, as :attr:`Scope.scheme`."""
        return self.sync.scheme

    @property
    def prefix(self) -> bytes:
        """The stored bytes every own key starts with, as :attr:`Scope.prefix`."""
        return self.sync.prefix

    @property
    def layout(self) -> Layout:
        """The compiled layout of this scope's path, as :attr:`Scope.layout`."""
        return self.sync.layout

    async def check_key(self, key: Any) -> None:
        """Raise what ``put(key, value)`` would raise for ``key`` alone, writing
        nothing, as :meth:`Scope.check_key`."""
        await self._run(lambda s: s.check_key(key))

    def scope(
        self, *more: Any, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> AsyncScope:
        """The child scope at ``path + more`` (no I/O). Codecs default to this scope's."""
        return self._ctx.aks._scope(
            self._ctx,
            self.path + more,
            self._key if key is None else resolve_codec(key),
            self._value if value is None else resolve_codec(value),
        )

    async def _run(self, operation: Callable[[Scope], T]) -> T:
        make = self._make
        return await self._ctx.run(lambda state: operation(make(state)))

    def _reads_in_snapshot(self, in_pieces: bool = False) -> bool:
        """Whether a read runs in one snapshot of the store: outside a transaction,
        on an engine with snapshots, where the read is made ``in_pieces`` (several
        requests that must see one state) or the catalog's facts may be removed by
        other writers (:attr:`~keyspace.catalog.Catalog.facts_removable`), so that
        the check of a fact and the read it guards see one state of the store."""
        ctx = self._ctx
        return (
            ctx.tx is None
            and (in_pieces or ctx.catalog.facts_removable)
            and ctx.aks.store.capabilities.snapshots
        )

    @contextlib.asynccontextmanager
    async def _in_snapshot(self) -> AsyncIterator[AsyncScope]:
        """This scope in a new snapshot of the store, released on exit."""
        async with self._ctx.aks.snapshot() as snap:
            yield snap.scope(*self.path, key=self._key, value=self._value)

    async def _read(self, operation: Callable[[Scope], T], in_pieces: bool = False) -> T:
        """``operation``, which only reads, as :meth:`_run`; in one snapshot where
        :meth:`_reads_in_snapshot` says so (cost: a snapshot begun and released)."""
        if self._reads_in_snapshot(in_pieces):
            async with self._in_snapshot() as scope:
                return await scope._run(operation)
        return await self._run(operation)

    # -- point operations ---------------------------------------------------------

    async def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default``. Cost: one point read."""
        return await self._read(lambda s: s.get(key, default))

    async def getitem(self, key: Any) -> Any:
        """The value of ``key``; ``KeyError`` when it is missing (like ``s[key]``)."""
        return await self._read(lambda s: s[key])

    async def contains(self, key: Any) -> bool:
        return await self._read(lambda s: key in s)

    async def put(self, key: Any, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value`` at ``key`` (``s[key] = value``); with ``ttl``, as
        :meth:`Scope.put` with it (a keyspace opened with ``ttl=True``): its own
        commit, run on the keyspace's worker (or a thread); inside an async
        transaction :class:`~keyspace.errors.InvalidArgument` (its writes are
        replayed, and a deadline is taken at the commit of the put itself)."""
        if ttl is None:
            await self._run(lambda s: s.__setitem__(key, value))
            return
        if self._ctx.tx is not None:
            raise InvalidArgument(
                f"put with a ttl in scope {self.path!r} inside an async transaction is not offered: "
                "put it outside the transaction (its own commit)"
            )
        sync = self._ctx.aks.sync.scope(*self.path, key=self._key, value=self._value)
        runner = self._ctx.aks.store.runner
        if runner is None:  # an engine with no thread of its own
            await asyncio.to_thread(sync.put, key, value, ttl=ttl)
            return
        await runner.run(lambda: sync.put(key, value, ttl=ttl))

    set = put

    def expiring(self, ttl: float) -> AsyncExpiringScope:
        """This scope with a default ``ttl`` for its ``put`` and ``update``
        (:meth:`Scope.expiring`); the rest is the scope's own."""
        from .._expiry import check_ttl

        return AsyncExpiringScope(self, check_ttl(ttl))

    async def delete(self, key: Any) -> None:
        """Remove ``key``; ``KeyError`` when it is missing (like ``del s[key]``)."""
        await self._run(lambda s: s.__delitem__(key))

    async def discard(self, key: Any) -> None:
        """Remove ``key`` if present."""
        await self._run(lambda s: s.discard(key))

    async def pop(self, key: Any, default: Any = _MISSING) -> Any:
        """Remove ``key`` and return its value, as :meth:`Scope.pop` (outside a
        transaction, the read and the delete are one transaction)."""
        return await self._run(lambda s: s.pop(key) if default is _MISSING else s.pop(key, default))

    async def setdefault(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, storing ``default`` first when it is missing, as
        :meth:`Scope.setdefault`."""
        return await self._run(lambda s: s.setdefault(key, default))

    async def popitem(self) -> tuple[Any, Any]:
        """Remove and return the last ``(key, value)`` in key order, as
        :meth:`Scope.popitem`; ``KeyError`` when the scope is empty."""
        return await self._run(lambda s: s.popitem())

    async def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Put the pairs of a mapping (or of an iterable of pairs) and of keyword
        arguments, as :meth:`Scope.update`: one atomic batch outside a transaction
        (etcd: one Txn). The pairs are read once, here: the operation may run
        several times before it completes (each run one read further), and an
        iterator read by the first run would be empty for the next."""
        pairs = pair_list(other, kwargs)
        await self._run(lambda s: s.update(pairs))

    async def clear(self) -> None:
        await self._run(lambda s: s.clear())

    async def clear_range(self, *args: Any, **kwargs: Any) -> int:
        """Remove the own keys :meth:`Scope.clear_range` with the same arguments
        removes (``limit``, ``reverse`` included), in one atomic write; how many."""
        return await self._run(lambda s: s.clear_range(*args, **kwargs))

    async def drop(self) -> None:
        """Remove the scope and every scope below it (one native range delete)."""
        await self._run(lambda s: s.drop())

    async def scopes(self) -> list[Any]:
        return await self._read(lambda s: s.scopes())

    async def len(self) -> int:
        """The number of own keys (``len(s)``). Outside a transaction, a count of
        several reads (several own ranges, or a scan read in pages) runs in one
        snapshot of the store, as the synchronous ``len``: it never counts part of
        a batch (so does every read of a scope whose catalog's facts other writers
        may remove: :meth:`_reads_in_snapshot`)."""
        return await self._read(len, self.sync._counted_in_pieces())

    async def stats(self) -> Any:
        """The scope's :class:`~keyspace.ScopeStats` (own and subtree keys and bytes)
        from the counters accounting keeps, as :meth:`Scope.stats`: one point read."""
        return await self._read(lambda s: s.stats())

    async def append(self, value: Any) -> Any:
        """Store ``value`` under a new key that the commit fills in with its place in
        the commit order, and return that key, as :meth:`Scope.append` (a keyspace
        opened with ``changes=True``, or on etcd): one commit, run on the
        keyspace's worker (or a thread).
        Inside an async transaction :class:`~keyspace.errors.InvalidArgument` (its
        writes are replayed, and an appended key is made only at the commit)."""
        if self._ctx.tx is not None:
            raise InvalidArgument(
                f"append of scope {self.path!r} inside an async transaction is not offered: "
                "append outside the transaction (each append is its own commit)"
            )
        sync = self._ctx.aks.sync.scope(*self.path, key=self._key, value=self._value)
        runner = self._ctx.aks.store.runner
        if runner is None:  # an engine with no thread of its own
            return await asyncio.to_thread(sync.append, value)
        return await runner.run(lambda: sync.append(value))

    # -- ranged reads -----------------------------------------------------------------

    def _source(self) -> Any:
        ctx = self._ctx
        return ctx.tx if ctx.tx is not None else ctx.hub.store

    async def _own(
        self,
        start: Any = None,
        stop: Any = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Any = None,
    ) -> AsyncIterator[tuple[Any, bytes]]:
        """``(decoded key, raw value)`` of own keys: :meth:`Scope.items`' ranges
        (checks included), streamed from the async store (from one snapshot where
        :meth:`_reads_in_snapshot` says so, held while the iteration lasts)."""
        if self._reads_in_snapshot():
            async with self._in_snapshot() as scope:
                own = scope._own(
                    start,
                    stop,
                    include_start=include_start,
                    include_stop=include_stop,
                    reverse=reverse,
                    limit=limit,
                    prefix=prefix,
                )
                async for item in own:
                    yield item
            return
        check_range_arguments(include_start, include_stop, reverse, limit)
        sync = self._make()
        ranges = await self._ctx.run(
            lambda state: self._make(state)._stored_ranges(start, stop, include_start, include_stop, prefix)
        )
        if limit is not None and limit <= 0:
            return
        if reverse:
            ranges.reverse()
        source, convert = self._source(), sync._chunk  # the layout's decoder of own stored pairs
        exact = sync._layout.exact  # a limit reaches the store only then
        left = limit
        for lo, hi in ranges:
            page: list[tuple[bytes, bytes]] = []
            async for item in source.scan(lo, hi, reverse=reverse, limit=left if exact else None):
                page.append(item)
                if len(page) < 64:
                    continue
                for decoded in convert(page):
                    yield decoded
                    if left is not None:
                        left -= 1
                        if left == 0:
                            return
                page = []
            for decoded in convert(page) if page else ():
                yield decoded
                if left is not None:
                    left -= 1
                    if left == 0:
                        return

    async def items(self, *args: Any, **kwargs: Any) -> AsyncIterator[tuple[Any, Any]]:
        """``async for key, value in s.items(...)``: the arguments of :meth:`Scope.items`."""
        vdec = self.sync._vdec
        async for key, raw in self._own(*args, **kwargs):
            yield key, (raw if vdec is None else vdec(raw))

    async def keys(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async for key, _ in self._own(*args, **kwargs):
            yield key

    async def values(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        vdec = self.sync._vdec
        async for _, raw in self._own(*args, **kwargs):
            yield raw if vdec is None else vdec(raw)

    async def subtree(self) -> AsyncIterator[tuple[Path, Any, Any]]:
        """``(path, key, value)`` below this scope, as :meth:`Scope.subtree` (from one
        snapshot where :meth:`_reads_in_snapshot` says so)."""
        if self._reads_in_snapshot():
            async with self._in_snapshot() as scope:
                async for item in scope.subtree():
                    yield item
            return
        sync, ctx = self._make(), self._ctx

        def plan(state: Catalog) -> tuple[Callable[[bytes], Any], list[tuple[bytes, bytes | None]]]:
            scope = self._make(state)
            if scope._guard is not None:
                scope._hidden()
            return state.decoder(ctx.view, self.path), state.subtree_ranges(ctx.view, self.path)

        decode, ranges = await ctx.run(plan)
        vdec = sync._vdec
        kdec = _decoded_key_codec(sync.scheme, self._key)
        source = self._source()
        for lo, hi in ranges:
            async for k, v in source.scan(lo, hi):
                path, key = await ctx.run(functools.partial(_decode_with, decode, k))
                if kdec is not None:
                    key = kdec(key)
                yield path, key, (v if vdec is None else vdec(v))

    def __aiter__(self) -> AsyncIterator[Any]:
        return self.keys()

    # -- changes ----------------------------------------------------------------------

    async def watch(self, *, subtree: bool = False, start_revision: int | None = None) -> ScopeWatch:
        """:meth:`Scope.watch`; iterate it with ``async for``."""
        return await self._run(lambda s: s.watch(subtree=subtree, start_revision=start_revision))


def _decode_with(decode: Callable[[bytes], Any], stored: bytes, _state: Catalog) -> Any:
    return decode(stored)


class AsyncExpiringScope:
    """An :class:`AsyncScope` whose ``put`` and ``update`` take a default ``ttl``
    (:meth:`AsyncScope.expiring`): each put its own commit; every other name is
    the scope's."""

    def __init__(self, scope: AsyncScope, ttl: float) -> None:
        self._scope = scope
        self.ttl = ttl

    def __getattr__(self, name: str) -> Any:
        return getattr(self._scope, name)

    def scope(self, *path: Any, **codecs: Any) -> AsyncExpiringScope:
        """The child scope ``path`` with this face's default ``ttl``."""
        return AsyncExpiringScope(self._scope.scope(*path, **codecs), self.ttl)

    async def put(self, key: Any, value: Any, *, ttl: float | None = None) -> None:
        await self._scope.put(key, value, ttl=self.ttl if ttl is None else ttl)

    async def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Each pair put with the default ``ttl``, one commit each."""
        pairs = pair_list(other, kwargs)
        for key, value in pairs:
            await self.put(key, value)


class AsyncTransaction:
    """The handle of ``async with ks.transaction() as tx``: ``tx.scope(*path)``."""

    def __init__(self, ctx: _Context) -> None:
        self._ctx = ctx

    def scope(
        self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> AsyncScope:
        ctx = self._ctx
        return AsyncScope(ctx, tuple(path), *ctx.aks._plan_ks._codecs(key, value))


class AsyncKeyspace:
    """An open keyspace for asyncio code. Make one with :func:`open`, or wrap an open
    synchronous keyspace: ``AsyncKeyspace(ks)`` (closing it closes ``ks``)."""

    def __init__(
        self,
        ks: Keyspace,
        *,
        workers: int | None = None,
        chunk: int = DEFAULT_CHUNK,
        _pool: ThreadPoolExecutor | None = None,
    ) -> None:
        """Wrap the open ``ks`` (see the module docstring for ``workers``, ``chunk``)."""
        store: AsyncStore = async_store(ks.store, workers=workers, chunk=chunk, pool=_pool)
        self.sync = ks
        self.store = store
        """The async store contract this keyspace does its I/O through."""
        self._hub = Hub(store)
        self._plan_ks = ks._over(PlanStore(self._hub, store))  # its kind: catalog and codecs
        self._ctx = _Context(self, self._plan_ks.store, self._plan_ks.catalog, None)
        self._closed = False

    @property
    def workers(self) -> int:
        """How many worker threads run this keyspace's engine calls (0 on etcd: native)."""
        return self.store.threads

    @property
    def url(self) -> str:
        return self.sync.url

    @property
    def scheme(self) -> Scheme:
        """The keyspace's scheme, as :attr:`Keyspace.scheme`."""
        return self.sync.scheme

    def __repr__(self) -> str:
        return f"AsyncKeyspace({self.sync.url!r}, workers={self.workers})"

    def scope(
        self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> AsyncScope:
        """The async scope at ``path`` (no I/O)."""
        return self._scope(self._ctx, tuple(path), *self._plan_ks._codecs(key, value))

    async def scopes(self) -> list[Any]:
        """The direct children of the root that hold data, as
        :meth:`Keyspace.scopes`."""
        return await self.scope().scopes()

    def _scope(self, ctx: _Context, path: Path, key: Codec, value: Codec) -> AsyncScope:
        sync = self.sync.scope(*path, key=key, value=value) if ctx.tx is None else None
        return AsyncScope(ctx, path, key, value, sync)

    def transaction(self) -> AsyncBlock[AsyncTransaction]:
        """``async with ks.transaction() as tx``: atomic across scopes; commits when
        the block exits normally, discards when it raises (as the sync API). An
        attribute asked of ``ks.transaction()`` itself (no ``async with``) raises
        :class:`~keyspace.errors.NotEntered`, which says to use ``async with``."""
        return AsyncBlock(self._transaction, "ks.transaction()")

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[AsyncTransaction]:
        """The block of :meth:`transaction`."""
        self._ctx.check()
        catalog = self._plan_ks.catalog.child()
        tx = await self.store.begin()
        try:
            yield AsyncTransaction(_Context(self, PlanView(self._hub), catalog, tx))
        except BaseException:
            await tx.discard()
            raise
        try:
            await tx.commit()
        finally:
            await tx.discard()
        catalog.commit()

    def snapshot(self) -> AsyncBlock[AsyncTransaction]:
        """``async with ks.snapshot() as snap``: a read-only consistent view. An
        attribute asked of ``ks.snapshot()`` itself (no ``async with``) raises
        :class:`~keyspace.errors.NotEntered`, which says to use ``async with``."""
        return AsyncBlock(self._snapshot, "ks.snapshot()")

    @contextlib.asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[AsyncTransaction]:
        """The block of :meth:`snapshot`."""
        self._ctx.check()
        state = self._plan_ks.catalog.reading()  # before the snapshot: its facts hold there
        view = await self.store.begin_snapshot()
        try:
            yield AsyncTransaction(_Context(self, PlanSnapshot(self._hub), state, view))
        finally:
            await view.discard()

    async def close(self) -> None:
        """Close the store (unless the wrapped keyspace was attached with
        ``close_store=False``) and stop any workers or channel. Idempotent."""
        if self._closed:
            return
        self._closed = True
        # to its end even when this task is cancelled meanwhile (a timeout): a close
        # cut part-way would leave the store open, and a later close() would not retry
        await to_the_end(self.store.close(self.sync.close))  # the keyspace's: a shared store stays open

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


async def open(
    url_or_path: str | os.PathLike[str],
    *,
    scheme: Any = None,
    create: bool = True,
    workers: int | None = None,
    chunk: int = DEFAULT_CHUNK,
    **options: Any,
) -> AsyncKeyspace:
    """``await keyspace.aio.open(url)``: :func:`keyspace.open` (same arguments and
    errors), run in a worker thread (it reads the scheme record), wrapped as an
    :class:`AsyncKeyspace`. ``workers``: pool size for engines that allow
    concurrent clients (default 8); ``chunk``: items per worker call of a scan."""
    loop = asyncio.get_running_loop()
    opener = functools.partial(_sync.open, url_or_path, scheme=scheme, create=create, **options)
    # Opened on what becomes the keyspace's one worker when the engine needs one
    # thread (LMDB: every call on the thread that opened it).
    first = ThreadPoolExecutor(max_workers=1, thread_name_prefix="keyspace-aio")
    try:
        ks = await loop.run_in_executor(first, opener)
    except BaseException:
        first.shutdown(wait=False)
        raise
    try:
        aks = AsyncKeyspace(ks, workers=workers, chunk=chunk, _pool=first)
    except BaseException:
        first.shutdown(wait=False)
        ks.close()
        raise
    runner = getattr(aks.store, "runner", None)
    if runner is None or runner.pool is not first:
        first.shutdown(wait=False)
    return aks
