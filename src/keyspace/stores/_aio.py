"""The asyncio store contract, and its one generic adapter over a synchronous store.

:class:`AsyncStore` is what :mod:`keyspace.aio` does its I/O through: ``get``,
``scan`` (an async iterator), ``put``, ``delete``, ``delete_range``, ``write``
(one atomic batch), ``begin()`` (a read-write :class:`AsyncTransaction`:
``commit`` or ``discard``) and ``begin_snapshot()``. Keys and values are bytes,
with the semantics and errors of :class:`~keyspace.stores.Store`.

:func:`async_store` picks the adapter: a store that offers a native asyncio
client (``store.asynchronous()``, etcd's over ``grpc.aio``) gets it, with no
thread; every other store gets :class:`ThreadedStore`, which runs each call in a
bounded pool of worker threads so that the event loop never blocks:

- engines whose transactions exclude other writers or that are bound to one
  process (LMDB, SQLite, LevelDB, RocksDB, memory): ONE worker thread, so every
  engine call happens on the same thread (LMDB's transactions need that), and a
  transaction holds an :class:`asyncio.Lock` from ``begin`` to its end: other
  tasks' writes wait for it (as other writers wait in the synchronous API), their
  reads go on and see the committed state;
- engines that serve concurrent clients without locking: ``workers`` threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any, TypeVar

from ..errors import InvalidArgument, StoreClosed, TransactionTooLarge, show_bytes
from ._base import Capabilities, Op, ReadView, Store, WriteView, limit_checked

__all__ = [
    "AsyncStore",
    "AsyncTransaction",
    "AsyncView",
    "ThreadedStore",
    "async_store",
]

T = TypeVar("T")
DEFAULT_WORKERS = 8
DEFAULT_CHUNK = 256


class AsyncView(ABC):
    """Reads: a store, a snapshot or a transaction. Every ``scan`` refuses a
    negative ``limit`` when called
    (:func:`~keyspace.stores._base.limit_checked`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        limit_checked(cls)

    @abstractmethod
    async def get(self, key: bytes) -> bytes | None:
        """The value at ``key``, or ``None``."""

    @abstractmethod
    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        """``(key, value)`` of the keys in ``[start, stop)`` in byte order (descending
        when ``reverse``), at most ``limit``."""


class AsyncWriteView(AsyncView):
    """Reads and writes: a store or a transaction."""

    @abstractmethod
    async def put(self, key: bytes, value: bytes) -> None: ...

    @abstractmethod
    async def delete(self, key: bytes) -> None: ...

    @abstractmethod
    async def delete_range(self, start: bytes, stop: bytes | None) -> None: ...


class AsyncTransaction(AsyncWriteView):
    """A transaction (or, from ``begin_snapshot``, a read-only snapshot): end it with
    :meth:`commit` or :meth:`discard`."""

    @abstractmethod
    async def commit(self) -> None:
        """Apply every write atomically (the store's errors: a conflict, a batch too
        large, an unknown outcome) and end the transaction."""

    @abstractmethod
    async def discard(self) -> None:
        """Drop the writes and end the transaction. Idempotent."""


class AsyncStore(AsyncWriteView):
    """An ordered byte store for asyncio code (module docstring)."""

    sync: Store
    """The synchronous store of the same engine (capabilities, watch, close)."""
    threads: int
    """How many worker threads run this store's calls (0: native asyncio)."""
    runner: _Runner | None = None
    """The worker pool and transaction lock of a threaded store (``None``: native
    asyncio, nothing serialized)."""

    @property
    def capabilities(self) -> Capabilities:
        return self.sync.capabilities

    @property
    def url(self) -> str:
        return self.sync.url

    def check_commit(
        self, view: AsyncTransaction | None, ranges: list[tuple[bytes, bytes | None]], ops: list[Op]
    ) -> None:
        """Raise the :class:`~keyspace.errors.TransactionTooLarge` a commit of
        ``ranges`` deleted and ``ops`` in ``view`` (``None``: a transaction that read
        nothing) would raise, with no I/O, so that an operation is refused before
        anything of it is sent. Here: over the engine's ``max_batch_ops``; an engine
        that sizes its commits otherwise (etcd) builds the commit's request."""
        limit = self.capabilities.max_batch_ops
        if limit is not None and len(ranges) + len(ops) > limit:
            raise TransactionTooLarge(
                f"commit: the transaction needs {len(ranges) + len(ops)} operations; "
                f"{self.url} accepts at most {limit} per transaction"
            )

    @abstractmethod
    async def write(self, ops: Iterable[Op]) -> None:
        """Puts ``(key, value)`` and deletes ``(key, None)`` as one atomic batch."""

    @abstractmethod
    async def begin(self) -> AsyncTransaction:
        """A read-write transaction (consistent reads, atomic commit)."""

    @abstractmethod
    async def begin_snapshot(self) -> AsyncTransaction:
        """A read-only view of the store as it is now (writes raise)."""

    @abstractmethod
    async def close(self, closing: Callable[[], None] | None = None) -> None:
        """Release the async side (channel, worker threads) and close the synchronous
        side with ``closing`` (default: the store's ``close``; a keyspace passes its
        own, which may leave a shared store open), run where the engine needs it.
        Idempotent; later calls raise :class:`StoreClosed`."""


def async_store(
    store: Store,
    *,
    workers: int | None = None,
    chunk: int = DEFAULT_CHUNK,
    pool: ThreadPoolExecutor | None = None,
) -> AsyncStore:
    """The async face of ``store``: its native client when it has one
    (``store.asynchronous()``), else a :class:`ThreadedStore` (``pool``: the one
    thread an engine bound to a thread was opened on)."""
    _check_counts(workers, chunk)
    native: Callable[[], AsyncStore] | None = getattr(store, "asynchronous", None)
    if native is not None:
        return native()
    return ThreadedStore(store, workers=workers, chunk=chunk, pool=pool)


class _Runner:
    """The worker pool of one threaded store, and the lock that serializes
    transactions on engines that need it."""

    def __init__(self, workers: int, serialized: bool, pool: ThreadPoolExecutor | None) -> None:
        self.workers = workers
        self.serialized = serialized
        self.pool = pool or ThreadPoolExecutor(max_workers=workers, thread_name_prefix="keyspace-aio")
        self.closed = False
        self._lock: asyncio.Lock | None = None
        self.holder: asyncio.Task[Any] | None = None

    def lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def holds(self) -> bool:
        return self.holder is not None and self.holder is asyncio.current_task()

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker; on a serialized engine a write waits
        while another task's transaction holds the store."""
        if self.serialized and not self.holds():
            async with self.lock():
                return await self.run_held(function, *args)
        return await self.run_held(function, *args)

    async def run_held(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker, without the lock (reads, and the calls of
        the transaction that holds it)."""
        if self.closed:
            raise StoreClosed("the async keyspace has been closed")
        call = functools.partial(function, *args)
        return await asyncio.get_running_loop().run_in_executor(self.pool, call)

    async def acquire(self) -> bool:
        """Hold the store for one transaction (serialized engines); True when this
        call took the lock (and its transaction must release it)."""
        if not self.serialized or self.holds():
            return False
        await self.lock().acquire()
        self.holder = asyncio.current_task()
        return True

    def release(self) -> None:
        self.holder = None
        self.lock().release()


async def to_the_end(work: Coroutine[Any, Any, T], lend: _Runner | None = None) -> T:
    """Await ``work`` run as a task of its own, to its end even when the caller is
    cancelled meanwhile (a timeout): a commit, or an operation's several writes,
    is never cut part-way. Once it has ended, its own error is raised, else the
    caller's cancellation, else its result. ``lend``: a serialized store's runner
    whose hold the caller has; the task holds it while the caller waits."""
    me = asyncio.current_task()
    task = asyncio.ensure_future(work)
    lent = lend if lend is not None and lend.holds() else None
    if lent is not None:
        lent.holder = task
    cancelled = False
    try:
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.cancelled():
                    raise
                cancelled = True
    finally:
        if lent is not None and lent.holder is task:
            lent.holder = me
    result = task.result()
    if cancelled:
        raise asyncio.CancelledError
    return result


async def _pages(
    runner: _Runner, make: Callable[[], Iterator[tuple[bytes, bytes]]], chunk: int
) -> AsyncIterator[tuple[bytes, bytes]]:
    """A synchronous scan made and read in a worker, ``chunk`` items per call."""
    iterator: Iterator[tuple[bytes, bytes]] | None = None

    def next_chunk() -> list[tuple[bytes, bytes]]:
        nonlocal iterator
        if iterator is None:
            iterator = make()
        return list(islice(iterator, chunk))

    while True:
        items = await runner.run_held(next_chunk)
        for item in items:
            yield item
        if len(items) < chunk:
            return


class _ThreadedView(AsyncTransaction):
    """A synchronous view (the store, a transaction or a snapshot) driven from the
    loop through the runner."""

    def __init__(
        self,
        view: ReadView,
        runner: _Runner,
        chunk: int,
        manager: AbstractContextManager[Any] | None = None,
        locked: bool = False,
    ) -> None:
        self.view = view
        self._run = runner
        self._chunk = chunk
        self._manager = manager
        self._locked = locked
        # the store's own writes wait for a transaction; a transaction's do not
        self._write = runner.run if manager is None else runner.run_held

    async def get(self, key: bytes) -> bytes | None:
        return await self._run.run_held(self.view.get, key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> AsyncIterator[tuple[bytes, bytes]]:
        view = self.view
        return _pages(self._run, lambda: view.scan(start, stop, reverse=reverse, limit=limit), self._chunk)

    def _writer(self) -> WriteView:
        if not isinstance(self.view, WriteView):
            raise StoreClosed("a snapshot is read-only")
        return self.view

    async def put(self, key: bytes, value: bytes) -> None:
        await self._write(self._writer().put, key, value)

    async def delete(self, key: bytes) -> None:
        await self._write(self._writer().delete, key)

    async def delete_range(self, start: bytes, stop: bytes | None) -> None:
        await self._write(self._writer().delete_range, start, stop)

    async def commit(self) -> None:
        await self._end(None)

    async def discard(self) -> None:
        await self._end(_Discarded())

    async def _end(self, exc: BaseException | None) -> None:
        """Commit or discard in the worker, to the end even when the caller is
        cancelled meanwhile (a cancelled call still queued would never run, and
        leave the engine's transaction open, the store held, for good); the
        cancellation is raised once the transaction has ended."""
        manager, self._manager = self._manager, None
        if manager is None:
            return
        try:
            await to_the_end(
                self._run.run_held(manager.__exit__, None if exc is None else type(exc), exc, None)
            )
        finally:
            if self._locked:
                self._locked = False
                self._run.release()


class _Discarded(Exception):
    """What a discarded transaction's context manager is told (it only discards)."""


_ABANDONED: set[asyncio.Future[None]] = set()  # cleanups running (a reference keeps each alive)


async def _abandon(
    runner: _Runner, opening: asyncio.Future[tuple[AbstractContextManager[Any], ReadView]], locked: bool
) -> None:
    """End the view ``opening`` opens, whose caller is gone; then release the store."""
    try:
        try:
            manager, _ = await opening
        except BaseException:
            return  # nothing was opened
        exc = _Discarded()
        with contextlib.suppress(Exception):
            await runner.run_held(manager.__exit__, type(exc), exc, None)
    finally:
        if locked:
            runner.release()


def _check_counts(workers: Any, chunk: Any) -> None:
    """Refuse a ``workers`` (other than ``None``) or ``chunk`` that is not an int of
    at least 1 with :class:`InvalidArgument` naming it (``True`` is an int to
    Python, not a count)."""
    for name, value in (("workers", 1 if workers is None else workers), ("chunk", chunk)):
        if type(value) is not int or value < 1:
            raise InvalidArgument(f"{name} must be an int of at least 1, not {show_bytes(value)}")


class ThreadedStore(_ThreadedView, AsyncStore):
    """Any synchronous store, each call in a bounded pool of worker threads (module
    docstring). ``workers`` applies to engines that serve concurrent clients without
    locking (default 8); the others get one thread. ``chunk``: items per worker call
    of a scan (both checked by :func:`async_store`, which makes it)."""

    def __init__(
        self,
        store: Store,
        *,
        workers: int | None = None,
        chunk: int = DEFAULT_CHUNK,
        pool: ThreadPoolExecutor | None = None,
    ) -> None:
        caps = store.capabilities
        shared = caps.multi_process and not caps.serialized_transactions
        count = (DEFAULT_WORKERS if workers is None else workers) if shared else 1
        runner = _Runner(count, serialized=not shared, pool=None if shared else pool)
        super().__init__(store, runner, chunk)
        self.sync = store
        self.threads = count
        self.runner = runner

    async def write(self, ops: Iterable[Op]) -> None:
        await self._run.run(self.sync.write, list(ops))

    async def begin(self) -> AsyncTransaction:
        locked = await self._run.acquire()
        return await self._open(self.sync.transaction, locked)

    async def begin_snapshot(self) -> AsyncTransaction:
        return await self._open(self.sync.snapshot, False)  # a snapshot excludes no writer: no lock

    async def _open(self, make: Callable[[], AbstractContextManager[Any]], locked: bool) -> AsyncTransaction:
        """The view of ``make()`` (a transaction or snapshot manager), made and entered
        in a worker (where the engine's calls belong; a memory store's transaction
        waits there for another thread's). When the caller is cancelled (a timeout)
        while the worker opens it, the view is ended as soon as it is open, and the
        store held until then: an abandoned transaction would otherwise hold the
        store (or its one transaction slot) forever."""
        runner = self._run

        def open_view() -> tuple[AbstractContextManager[Any], ReadView]:
            manager = make()
            return manager, manager.__enter__()

        opening = asyncio.ensure_future(runner.run_held(open_view))
        try:
            manager, view = await asyncio.shield(opening)
        except BaseException:
            if opening.done() and (opening.cancelled() or opening.exception() is not None):
                if locked:
                    runner.release()
            else:
                ending = asyncio.ensure_future(_abandon(runner, opening, locked))
                _ABANDONED.add(ending)
                ending.add_done_callback(_ABANDONED.discard)
            raise
        return _ThreadedView(view, runner, self._chunk, manager, locked)

    async def close(self, closing: Callable[[], None] | None = None) -> None:
        """Close the store (``closing``: the keyspace's close, default the store's)
        in a worker, without waiting for a transaction another task holds: as the
        synchronous close, it ends that transaction, whose next operation raises
        :class:`StoreClosed`. Then stop the workers."""
        runner = self._run
        if runner.closed:
            return
        await runner.run_held(closing or self.sync.close)
        runner.closed = True
        await asyncio.get_running_loop().run_in_executor(None, functools.partial(runner.pool.shutdown, True))
