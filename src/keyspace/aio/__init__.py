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

Same semantics and same errors as the synchronous API, which does the work: every
call runs the synchronous operation in a **bounded pool of worker threads** owned
by the keyspace, so the event loop never blocks on I/O. This holds for every
engine, etcd included (its gRPC calls release the GIL in the worker; a native
``grpc.aio`` client is not used). The pool's size follows the store's
capabilities:

- engines whose transactions exclude other writers or that are bound to one
  process (LMDB, SQLite, LevelDB, RocksDB, memory): ONE worker thread, so every
  engine call of the keyspace happens on the same thread (LMDB's transactions
  need that), and an :class:`asyncio.Lock` lets one transaction run at a time;
  while it runs, other tasks' writes wait for it (as other writers wait in the
  synchronous API) and their reads go on, seeing the committed state;
- engines that serve many clients at once without locking (etcd): ``workers``
  threads (default 8); transactions run concurrently and optimistically, and a
  commit that lost a race raises the store's conflict error (etcd's
  ``TransactionConflict``): run the transaction again.

Ranged reads (``items``, ``keys``, ``values``, ``subtree``) fetch ``chunk`` items
per worker call (default 256). ``watch`` gives the synchronous
:class:`~keyspace.ScopeWatch`, which is also an async iterator.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from types import TracebackType
from typing import Any, Self, TypeVar

from .. import keyspace as _sync
from .._watch import ScopeWatch
from ..codecs import Codec
from ..errors import StoreClosed
from ..keyspace import Keyspace, Transaction
from ..schemes._base import Path
from ..scope import Scope

__all__ = ["AsyncKeyspace", "AsyncScope", "AsyncTransaction", "open"]

T = TypeVar("T")
_CodecArg = str | Codec | None
_MISSING: Any = object()
DEFAULT_WORKERS = 8
DEFAULT_CHUNK = 256


class _Runner:
    """The worker pool of one async keyspace, and the lock that serializes
    transactions on engines that need it."""

    def __init__(self, workers: int, serialized: bool, pool: ThreadPoolExecutor | None = None) -> None:
        self.workers = workers
        self.serialized = serialized
        self.pool = pool or ThreadPoolExecutor(max_workers=workers, thread_name_prefix="keyspace-aio")
        self.closed = False
        self._lock: asyncio.Lock | None = None
        self._holder: asyncio.Task[Any] | None = None

    def lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)`` in a worker; on a serialized engine it waits
        while a transaction of another task holds the keyspace."""
        self._check()
        loop = asyncio.get_running_loop()
        call = functools.partial(function, *args, **kwargs)
        if self.serialized and self._holder is not asyncio.current_task():
            async with self.lock():
                return await loop.run_in_executor(self.pool, call)
        return await loop.run_in_executor(self.pool, call)

    async def run_held(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Like :meth:`run` without the lock: a transaction's own calls (which hold
        it) and reads (which never wait for a writer)."""
        self._check()
        call = functools.partial(function, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self.pool, call)

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the keyspace for one transaction (serialized engines only)."""
        if not self.serialized:
            yield
            return
        async with self.lock():
            self._holder = asyncio.current_task()
            try:
                yield
            finally:
                self._holder = None

    def _check(self) -> None:
        if self.closed:
            raise StoreClosed("the async keyspace has been closed")

    def close(self) -> None:
        self.closed = True
        self.pool.shutdown(wait=True)


class AsyncScope:
    """The async view of one :class:`~keyspace.Scope`: the same methods, awaited.
    ``sync`` is the synchronous scope (use it only from a worker thread)."""

    __slots__ = ("_call", "_chunk", "_held", "_read", "_run", "sync")

    def __init__(self, scope: Scope, runner: _Runner, chunk: int, *, held: bool = False) -> None:
        self.sync = scope
        self._run = runner
        self._chunk = chunk
        self._held = held
        self._call = runner.run_held if held else runner.run
        self._read = runner.run_held  # reads never wait for a transaction (MVCC engines)

    @property
    def path(self) -> Path:
        return self.sync.path

    def __repr__(self) -> str:
        return f"<AsyncScope {self.sync.path!r}>"

    def scope(
        self, *more: Any, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> AsyncScope:
        """The child scope at ``path + more`` (no I/O)."""
        return AsyncScope(
            self.sync.scope(*more, key=key, value=value), self._run, self._chunk, held=self._held
        )

    # -- point operations ---------------------------------------------------------

    async def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default``."""
        return await self._read(self.sync.get, key, default)

    async def getitem(self, key: Any) -> Any:
        """The value of ``key``; ``KeyError`` when it is missing (like ``s[key]``)."""
        return await self._read(self.sync.__getitem__, key)

    async def contains(self, key: Any) -> bool:
        return await self._read(self.sync.__contains__, key)

    async def put(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key`` (``s[key] = value``)."""
        await self._call(self.sync.__setitem__, key, value)

    set = put

    async def delete(self, key: Any) -> None:
        """Remove ``key``; ``KeyError`` when it is missing (like ``del s[key]``)."""
        await self._call(self.sync.__delitem__, key)

    async def discard(self, key: Any) -> None:
        """Remove ``key`` if present."""
        await self._call(self.sync.discard, key)

    async def update(self, items: Any) -> None:
        await self._call(self.sync.update, items)

    async def clear(self) -> None:
        await self._call(self.sync.clear)

    async def clear_range(self, *args: Any, **kwargs: Any) -> None:
        await self._call(self.sync.clear_range, *args, **kwargs)

    async def drop(self) -> None:
        await self._call(self.sync.drop)

    async def scopes(self) -> list[Any]:
        return await self._read(self.sync.scopes)

    async def len(self) -> int:
        """The number of own keys (``len(s)``; one scan)."""
        return await self._read(self.sync.__len__)

    # -- ranged reads -----------------------------------------------------------------

    async def _chunks(self, make: Callable[[], Iterator[Any]]) -> AsyncIterator[Any]:
        iterator: Iterator[Any] | None = None
        chunk = self._chunk

        def next_chunk() -> list[Any]:
            nonlocal iterator
            if iterator is None:
                iterator = make()
            return list(islice(iterator, chunk))

        while True:
            items = await self._read(next_chunk)
            for item in items:
                yield item
            if len(items) < chunk:
                return

    def items(self, *args: Any, **kwargs: Any) -> AsyncIterator[tuple[Any, Any]]:
        """``async for key, value in s.items(...)``: the arguments of
        :meth:`Scope.items`; ``chunk`` items per worker call."""
        return self._chunks(lambda: self.sync.items(*args, **kwargs))

    def keys(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        return self._chunks(lambda: self.sync.keys(*args, **kwargs))

    def values(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        return self._chunks(lambda: self.sync.values(*args, **kwargs))

    def subtree(self) -> AsyncIterator[tuple[Path, Any, Any]]:
        return self._chunks(self.sync.subtree)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self.keys()

    # -- changes ----------------------------------------------------------------------

    async def watch(self, *, subtree: bool = False, start_revision: int | None = None) -> ScopeWatch:
        """:meth:`Scope.watch`, made in a worker; iterate it with ``async for``."""
        return await self._read(self.sync.watch, subtree=subtree, start_revision=start_revision)


class AsyncTransaction:
    """The handle of ``async with ks.transaction() as tx``: ``tx.scope(*path)``."""

    def __init__(self, tx: Transaction, runner: _Runner, chunk: int) -> None:
        self.sync = tx
        self._run = runner
        self._chunk = chunk

    def scope(
        self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> AsyncScope:
        return AsyncScope(self.sync.scope(*path, key=key, value=value), self._run, self._chunk, held=True)


class AsyncKeyspace:
    """An open keyspace for asyncio code. Make one with :func:`open`."""

    def __init__(
        self,
        ks: Keyspace,
        *,
        workers: int | None = None,
        chunk: int = DEFAULT_CHUNK,
        _pool: ThreadPoolExecutor | None = None,
    ) -> None:
        """Wrap the open ``ks`` (see the module docstring for ``workers``)."""
        shared = _shares_threads(ks)
        count = (DEFAULT_WORKERS if workers is None else workers) if shared else 1
        if count < 1:
            raise ValueError(f"workers must be at least 1, got {count}")
        if chunk < 1:
            raise ValueError(f"chunk must be at least 1, got {chunk}")
        self.sync = ks
        self._run = _Runner(count, serialized=not shared, pool=None if shared else _pool)
        self._chunk = chunk
        self._closed = False

    @property
    def workers(self) -> int:
        """How many worker threads run this keyspace's engine calls."""
        return self._run.workers

    @property
    def url(self) -> str:
        return self.sync.url

    @property
    def scheme(self) -> Any:
        return self.sync.scheme

    def __repr__(self) -> str:
        return f"AsyncKeyspace({self.sync.url!r}, workers={self.workers})"

    def scope(
        self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> AsyncScope:
        """The async scope at ``path`` (no I/O)."""
        return AsyncScope(self.sync.scope(*path, key=key, value=value), self._run, self._chunk)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncTransaction]:
        """``async with ks.transaction() as tx``: atomic across scopes; commits when
        the block exits normally, discards when it raises (as the sync API)."""
        runner = self._run
        async with runner.exclusive():
            manager = self.sync.transaction()
            tx = await runner.run_held(manager.__enter__)
            try:
                yield AsyncTransaction(tx, runner, self._chunk)
            except BaseException as exc:
                await runner.run_held(manager.__exit__, type(exc), exc, exc.__traceback__)
                raise
            await runner.run_held(manager.__exit__, None, None, None)

    @contextlib.asynccontextmanager
    async def snapshot(self) -> AsyncIterator[AsyncTransaction]:
        """``async with ks.snapshot() as snap``: a read-only consistent view."""
        runner = self._run  # a snapshot excludes no writer: no lock
        manager = self.sync.snapshot()
        snap = await runner.run_held(manager.__enter__)
        try:
            yield AsyncTransaction(snap, runner, self._chunk)
        finally:
            await runner.run_held(manager.__exit__, None, None, None)

    async def close(self) -> None:
        """Close the store (in a worker) and stop the workers. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._run.run(self.sync.close)
        await asyncio.get_running_loop().run_in_executor(None, self._run.close)

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
    errors) run in a worker thread, wrapped as an :class:`AsyncKeyspace`.
    ``workers``: pool size for engines that allow concurrent clients (default 8);
    ``chunk``: items fetched per worker call by ranged reads."""
    loop = asyncio.get_running_loop()
    opener = functools.partial(_sync.open, url_or_path, scheme=scheme, create=create, **options)
    # Opened on what becomes the keyspace's one worker when the engine needs one
    # thread; otherwise this thread is dropped for a pool.
    first = ThreadPoolExecutor(max_workers=1, thread_name_prefix="keyspace-aio")
    try:
        ks = await loop.run_in_executor(first, opener)
    except BaseException:
        first.shutdown(wait=False)
        raise
    if _shares_threads(ks):
        first.shutdown(wait=False)
    try:
        return AsyncKeyspace(ks, workers=workers, chunk=chunk, _pool=first)
    except BaseException:
        ks.close()
        raise


def _shares_threads(ks: Keyspace) -> bool:
    """Whether the engine serves concurrent callers without locking (etcd)."""
    caps = ks.store.capabilities
    return caps.multi_process and not caps.serialized_transactions
