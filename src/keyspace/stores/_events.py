"""Change streams of stores: what :meth:`Store.watch` returns.

A :class:`StoreWatch` delivers :class:`StoreEvent` objects (bytes only, like every
store interface) in revision order, each exactly once. A producer (an engine's
reader thread) calls :meth:`StoreWatch._push` with the events of one commit
(queued as one item) and :meth:`StoreWatch._fail`; the consumer iterates, or
calls :meth:`StoreWatch.get` with a timeout. Events wait in an in-memory
queue between the two, unbounded where the engine pushes them (a consumer that
stops reading makes it grow); a producer that reads a log kept in the store
(the change log's) reads no further while many wait, and is told through
:meth:`StoreWatch._taken` when the consumer takes them. :meth:`StoreWatch.close`
ends the stream.

A commit's events reach the consumer together: once :meth:`StoreWatch.get`
has handed out an event, the rest of its commit is already here, so a
``get(0)`` that finds nothing is between two commits (what a durable feed's
batches of whole commits rely on).
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from .._closing import Closing
from ..errors import InvalidArgument, StoreClosed

__all__ = ["LocalFeed", "StoreEvent", "StoreWatch", "check_start_revision", "check_timeout"]


def check_timeout(timeout: object) -> None:
    """Refuse a wait that is neither ``None`` (no limit) nor a finite number of
    seconds of 0 or more (:class:`~keyspace.errors.InvalidArgument`)."""
    if timeout is None:
        return
    if type(timeout) not in (int, float) or not 0 <= timeout < _LONGEST_WAIT:  # type: ignore[operator]
        raise InvalidArgument(
            f"timeout={timeout!r} must be None (no limit) or a number of seconds from 0 to "
            f"{_LONGEST_WAIT:.0f} (a bool, NaN or infinity is none)"
        )


_LONGEST_WAIT = float(threading.TIMEOUT_MAX)


def check_start_revision(start_revision: object) -> None:
    """Refuse a ``start_revision`` of a watch that is neither ``None`` nor an int of
    1 or more (:class:`~keyspace.errors.InvalidArgument`), before a watch is made."""
    if start_revision is not None and (type(start_revision) is not int or start_revision < 1):
        raise InvalidArgument(
            f"start_revision={start_revision!r} must be an int of 1 or more (a store revision), "
            "or None (from now)"
        )


@dataclass(frozen=True, slots=True)
class StoreEvent:
    """One change: ``kind`` is ``"put"`` or ``"delete"``; ``value`` is ``None`` for a
    delete; ``revision`` is the store revision that made the change (several events
    share one revision when one atomic batch made them)."""

    kind: Literal["put", "delete"]
    key: bytes
    value: bytes | None
    revision: int


_END = object()


class StoreWatch(Closing):
    """The consumer side of a change stream (iterator, context manager)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._batch: deque[StoreEvent] = deque()  # the rest of the commit being handed out
        self._closed = threading.Event()
        self._failed: BaseException | None = None
        self.revision = 0
        """The revision of the last event handed to the consumer (0: none yet)."""
        self._listeners: list[Callable[[], object]] = []
        self._ending = threading.Lock()
        self._ended = False  # a failure is queued: the stream ends there

    # -- producer side ---------------------------------------------------------

    def _push(self, events: list[StoreEvent]) -> None:
        """Queue the events of one commit, in order, as one item (nothing for none;
        the list is queued as it is)."""
        if events:
            self._queue.put(events)
            self._notify()

    def _push_commits(self, events: Iterable[StoreEvent]) -> None:
        """Queue ``events`` (ascending revisions) one commit at a time: each run of
        one revision as one item (:meth:`_push`)."""
        commit: list[StoreEvent] = []
        for event in events:
            if commit and commit[-1].revision != event.revision:
                self._push(commit)
                commit = []
            commit.append(event)
        self._push(commit)

    def _fail(self, error: BaseException) -> None:
        """End the stream with ``error``: the consumer gets the events queued before
        it, then the error. Only the first failure counts (a store's close and a
        reader that sees its connection go may both end the stream)."""
        with self._ending:
            if self._ended:
                return
            self._ended = True
        self._queue.put(error)
        self._notify()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()

    def listen(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback()`` (from the producer's thread) after each item is
        queued and when the watch closes: how an event loop learns, without a
        waiting thread, that :meth:`get` has something. Returns a function that
        removes the listener. The callback must be quick and must not write to
        the store: on the memory store it runs inside the write that made the
        event, under the store's write lock (another thread's write waits)."""
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    def _cancel(self) -> None:
        """Stop the producer (engines override)."""

    def _taken(self) -> None:
        """After the consumer took a commit's events from the queue: a producer
        that reads no further while many wait (the change log's) is told here,
        without blocking (engines override)."""

    # -- consumer side ---------------------------------------------------------

    def wait_started(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until every change committed from now on is
        certain to be reported; True when it is. Immediate unless the engine sets
        the watch up remotely (etcd)."""
        return True

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def error(self) -> BaseException | None:
        """The error that ended the stream, once the consumer has reached it
        (:class:`~keyspace.errors.StoreClosed` when the store was closed under the
        watch); ``None`` while it runs and after :meth:`close`."""
        return self._failed

    def get(self, timeout: float | None = None) -> StoreEvent | None:
        """The next event, waiting at most ``timeout`` seconds (``None``: until one
        comes); ``None`` when the time ran out. Raises the error that ended the
        stream (e.g. :class:`~keyspace.errors.WatchCompacted`), or
        :class:`~keyspace.errors.StoreClosed` after :meth:`close`."""
        check_timeout(timeout)
        return self._take(timeout)

    def _take(self, timeout: float | None) -> StoreEvent | None:
        """:meth:`get` of a ``timeout`` known to be good (a scope watch's, which
        checked its own once)."""
        if self._failed is not None:
            raise self._failed
        if self._closed.is_set():
            raise StoreClosed("this watch has been closed")
        batch = self._batch
        if not batch:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                return None
            if item is _END:
                raise StoreClosed("this watch has been closed")
            if isinstance(item, BaseException):
                self._failed = item
                self._closed.set()
                self._cancel()
                raise item
            assert isinstance(item, list)
            batch.extend(item)
            self._taken()
        event = batch.popleft()
        self.revision = event.revision
        return event

    def __iter__(self) -> Iterator[StoreEvent]:
        return self

    def __next__(self) -> StoreEvent:
        """The next event, waiting as long as it takes; iteration ends when the watch
        is closed (from another thread too), and raises the error that ended the
        stream otherwise (:class:`~keyspace.errors.StoreClosed` once the store was
        closed under it, on every engine)."""
        try:
            event = self.get()
        except StoreClosed:
            if self._failed is None:
                raise StopIteration from None
            raise
        assert event is not None
        return event

    def close(self) -> None:
        """End the stream and release the connection. Idempotent."""
        if not self._closed.is_set():
            self._closed.set()
            self._cancel()
            self._queue.put(_END)
            self._notify()


class _LocalWatch(StoreWatch):
    """A watch fed by a :class:`LocalFeed` (in this process, no thread)."""

    def __init__(self, feed: LocalFeed, ranges: list[tuple[bytes, bytes | None]]) -> None:
        super().__init__()
        self._feed = feed
        self._ranges = ranges

    def _offer(self, changes: list[tuple[bytes, bytes | None]], revision: int) -> None:
        ranges = self._ranges
        self._push(
            [
                StoreEvent("put" if value is not None else "delete", key, value, revision)
                for key, value in changes
                if any(start <= key and (stop is None or key < stop) for start, stop in ranges)
            ]
        )

    def _cancel(self) -> None:
        self._feed._drop(self)


class LocalFeed:
    """The change feed of a store whose every write goes through one Python object
    (``MemoryStore``): the adapter holds :attr:`lock` while it applies a change and
    calls :meth:`publish` with it, and :meth:`watch` hands out streams. Keeps no
    history: a watch starts now, and any ``start_revision`` raises
    :class:`~keyspace.errors.WatchCompacted`. Revisions count the changes made
    while something watches. Cost without watchers: one truth test per write."""

    def __init__(self) -> None:
        self.revision = 0
        self.watches: list[_LocalWatch] = []
        self.lock = threading.RLock()
        """Held by the adapter around each change and its :meth:`publish`, so that
        the order in which changes are applied, the order of their revisions and
        the order in which watchers get them are one order (reentrant: a
        listener called by :meth:`publish` may close its watch)."""

    def publish(self, changes: list[tuple[bytes, bytes | None]]) -> None:
        """One atomic change (one new revision): puts ``(key, value)``, deletes
        ``(key, None)`` of keys that existed. Its revision is given and its events
        queued under :attr:`lock` (taken here too, for an adapter that does not
        hold it: then only the events of its changes are in one order)."""
        if not changes:
            return
        with self.lock:
            self.revision += 1
            revision = self.revision
            for watch in list(self.watches):
                watch._offer(changes, revision)

    def watch(self, ranges: list[tuple[bytes, bytes | None]], start_revision: int | None) -> StoreWatch:
        from ..errors import WatchCompacted

        check_start_revision(start_revision)
        with self.lock:
            if start_revision is not None:
                raise WatchCompacted(
                    f"watch: this store keeps no history, so it cannot replay from revision "
                    f"{start_revision}: watch from now (start_revision=None)",
                    start_revision,
                    self.revision + 1,
                )
            watch = _LocalWatch(self, list(ranges))
            self.watches.append(watch)
        return watch

    def close(self, url: str) -> None:
        """The store ``url`` closed: end every watch with
        :class:`~keyspace.errors.StoreClosed` (as a closed etcd channel does), so a
        consumer waiting on one wakes up instead of waiting forever."""
        with self.lock:
            watches, self.watches = self.watches, []
        for watch in watches:
            watch._fail(StoreClosed(f"the store {url} was closed while this watch ran"))

    def _drop(self, watch: _LocalWatch) -> None:
        with self.lock:
            if watch in self.watches:
                self.watches.remove(watch)
