"""``MemoryStore``: an in-memory ordered store, the reference for every other adapter.

URL: ``memory:``. Data lives in a ``sortedcontainers.SortedDict`` and is gone at
``close()``. Snapshots are copy-on-write: taking one is O(1); the first write while
any snapshot (or running scan) still reads the current map copies it once, O(n).
Transactions are the generic overlay transaction over such a snapshot. A snapshot's
scans read the map in pages and check before each page that the snapshot is still
open, so a scan read on after its block raises
:class:`~keyspace.errors.StoreClosed` instead of reading a map the store may have
written since.

Not thread-safe, except that transactions run one at a time: share a
``MemoryStore`` between threads behind a lock, or write through transactions only.
Each write itself (a put, a delete, an atomic batch, a range delete, a
transaction's commit) holds the feed's lock while it changes the map and reports
the change, so writes from several threads are applied and reported in one order;
a snapshot, a scan or a seeker takes the map (and a count reads it) under that
lock too, so none sees half of a batch or a commit made in another thread.

Watching (``capabilities.watch == "native"``): every write goes through this
object, so :meth:`MemoryStore.watch` sees every change (a :class:`LocalFeed`);
it keeps no history, so a watch starts now. Watchers get the changes in the
order the map took them, which is their revision order, and the last change of
a key they get is its value in the map.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter

from sortedcontainers import SortedDict

from ..errors import StoreClosed
from ._base import (
    PAGE_FIRST,
    PAGE_MOST,
    BatchedWrites,
    Capabilities,
    ReadView,
    Releasable,
    Seeker,
    Store,
    limited,
    pages_by_range,
)
from ._events import LocalFeed, StoreWatch
from ._overlay import OverlayTransaction, Range, TransactionGate

__all__ = ["MemoryStore"]

_first = itemgetter(0)


def _scan(
    data: SortedDict[bytes, bytes],
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
) -> Iterator[tuple[bytes, bytes]]:
    keys = data.irange(start, stop, inclusive=(True, False), reverse=reverse)
    keys = limited(keys, limit)
    for key in keys:
        yield key, data[key]


def _key_pages(
    data: SortedDict[bytes, bytes],
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    check: Callable[[], object],
) -> Iterator[list[bytes]]:
    """The keys of ``[start, stop)`` (at most ``limit``) as slices of the map's
    sorted keys of :data:`PAGE_FIRST` keys, then four times more up to
    :data:`PAGE_MOST`, ``check()`` called before each is read. The positions are
    found once (two bisections), so ``data`` must not change meanwhile (a pinned
    map never does). Cost per page: one ``check``, one O(log n) slice; per key, a
    copy of its reference."""
    lo = data.bisect_left(start)
    hi = len(data) if stop is None else data.bisect_left(stop)
    if limit is not None:
        if reverse:
            lo = max(lo, hi - max(limit, 0))
        else:
            hi = min(hi, lo + max(limit, 0))
    keys = data.keys()
    size = PAGE_FIRST
    while lo < hi:
        check()
        if reverse:
            page = keys[max(lo, hi - size) : hi]
            page.reverse()
            hi -= len(page)
        else:
            page = keys[lo : min(hi, lo + size)]
            lo += len(page)
        yield page
        if size < PAGE_MOST:
            size *= 4


def _pages(
    data: SortedDict[bytes, bytes],
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    check: Callable[[], object],
) -> Iterator[list[tuple[bytes, bytes]]]:
    """The items of ``[start, stop)`` in the pages of :func:`_key_pages`
    (``check()`` before each): a page of keys, then their values looked up in one
    C loop."""
    get = data.__getitem__
    for keys in _key_pages(data, start, stop, reverse, limit, check):
        yield list(zip(keys, map(get, keys), strict=True))


def _count(data: SortedDict[bytes, bytes], start: bytes, stop: bytes | None) -> int:
    """Keys in ``[start, stop)``: two bisections."""
    if stop is not None and stop <= start:
        return 0
    end = len(data) if stop is None else data.bisect_left(stop)
    return max(end - data.bisect_left(start), 0)


class _SortedSeeker(Seeker):
    """Seeks one generation of the map (pinned: writes meanwhile copy it), one
    bisection per seek; ``end`` unpins it. ``check`` (a snapshot's) is called
    before each seek: it raises once the snapshot has ended, when the map is no
    longer pinned for it."""

    __slots__ = ("_check", "_data", "_end", "_stop")

    def __init__(
        self,
        data: SortedDict[bytes, bytes],
        stop: bytes | None,
        end: Callable[[], None] | None,
        check: Callable[[], object] | None = None,
    ) -> None:
        self._data: SortedDict[bytes, bytes] | None = data
        self._stop = stop
        self._end = end
        self._check = check

    def seek(self, start: bytes) -> bytes | None:
        data = self._data
        if data is None:
            raise StoreClosed("this seeker has been released")
        if self._check is not None:
            self._check()
        at = data.bisect_left(start)
        if at >= len(data):
            return None
        key: bytes = data.keys()[at]
        stop = self._stop
        return key if stop is None or key < stop else None

    def release(self) -> None:
        self._data = None
        end, self._end = self._end, None
        if end is not None:
            end()


class _Snapshot(Releasable, ReadView):
    """A read-only view of one generation of the store's map (``kind``: what it is
    to its user, "snapshot" or "transaction", for the error once it has ended).

    Its scans read the map in pages (slices of its sorted keys: 16, then four
    times more up to 1024) and check before each page that the view is still
    open: once it has ended (the map is no longer pinned for it, and the store
    may write it in place), a scan begun before raises
    :class:`~keyspace.errors.StoreClosed` at its next page instead of reading the
    map as it is then; so do its reads once the store is closed. ``read_pages``
    gives those pages. Cost: two bisections,
    then one check and one slice per page; per item, one dict lookup (none for
    keys alone) and no Python code."""

    __slots__ = ("_data", "_kind", "_open", "_store")

    def __init__(self, store: MemoryStore, kind: str = "snapshot") -> None:
        self._store = store
        self._data = store._pin()
        self._kind = kind
        self._open = True

    def _live(self) -> SortedDict[bytes, bytes]:
        if not self._open or self._store._data is None:  # ended, or the store closed
            raise StoreClosed(f"this {self._kind} of {self._store.url} has ended")
        return self._data

    def get(self, key: bytes) -> bytes | None:
        if not self._open or self._store._data is None:
            raise StoreClosed(f"this {self._kind} of {self._store.url} has ended")
        return self._data.get(key)

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The checked pages of the map (:func:`pages_by_range`; their only errors
        are this view's own)."""
        return pages_by_range(
            self, self._range_pages, ranges, reverse, limit, keys_only, cut, self._range_key_pages
        )

    def _range_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        return _pages(self._live(), start, stop, reverse, limit, self._live)

    def _range_key_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[bytes]]:
        return _key_pages(self._live(), start, stop, reverse, limit, self._live)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return chain.from_iterable(_pages(self._live(), start, stop, reverse, limit, self._live))

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """Two bisections (``without``: the keys tested, as the default does)."""
        if without is not None:
            return super().count(start, stop, without)
        return _count(self._live(), start, stop)

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One bisection of the snapshot's map per seek; a seek after the snapshot
        ended raises :class:`~keyspace.errors.StoreClosed`."""
        return _SortedSeeker(self._live(), stop, None, self._live)

    def release(self) -> None:
        """End the snapshot. Idempotent."""
        if self._open:
            self._open = False
            self._store._unpin(self._data)


class MemoryStore(BatchedWrites, Store):
    """An ordered byte store in memory (``memory:``); the reference adapter.

    Point operations are O(log n); a scan costs one O(log n) seek, then O(1) per item.
    A scan reads the map as it was when the scan started, even if the store is
    written while it runs.
    """

    capabilities = Capabilities(
        max_key_size=None,
        empty_keys=True,
        atomic_batch=True,
        native_delete_range=True,
        snapshots=True,
        persistent=False,
        multi_process=False,
        serialized_transactions=False,
        watch="native",
    )

    def __init__(self, url: str = "memory:") -> None:
        self.url = url
        self._data: SortedDict[bytes, bytes] | None = SortedDict()
        self._gate = TransactionGate(url)
        self._pins = 0  # live views reading the current map; a write first copies it
        self._feed = LocalFeed()
        self._lock = self._feed.lock  # held by each write while it applies and reports a change

    # -- copy-on-write -------------------------------------------------------

    def _live(self) -> SortedDict[bytes, bytes]:
        data = self._data
        if data is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return data

    def _writable(self) -> SortedDict[bytes, bytes]:
        data = self._live()
        if self._pins:
            data = self._data = data.copy()
            self._pins = 0
        return data

    def _pin(self) -> SortedDict[bytes, bytes]:
        """The current map, counted as read by one more view (under the write lock:
        a write in flight has finished, and the next one copies the map first)."""
        with self._lock:
            data = self._live()
            self._pins += 1
            return data

    def _unpin(self, data: SortedDict[bytes, bytes]) -> None:
        with self._lock:
            if data is self._data:
                self._pins -= 1

    # -- reads ---------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        return self._live().get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._pinned_scan(self._pin(), start, stop, reverse, limit)

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """Two bisections: O(log n), under the write lock (never half a batch);
        ``without``: the keys tested, as the default does."""
        if without is not None:
            return super().count(start, stop, without)
        with self._lock:
            return _count(self._live(), start, stop)

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """Seeks the map as it is now (a write meanwhile copies it first); a seek
        after the store was closed raises :class:`~keyspace.errors.StoreClosed`."""
        data = self._pin()
        return _SortedSeeker(data, stop, lambda: self._unpin(data), self._live)

    def _pinned_scan(
        self,
        data: SortedDict[bytes, bytes],
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[bytes, bytes]]:
        # Pinned when scan() is called; a scan never started leaks one pin, which
        # costs at most one extra copy (the next write resets the count).
        try:
            for item in _scan(data, start, stop, reverse, limit):
                if self._data is None:
                    raise StoreClosed(f"the store {self.url} was closed while this scan ran")
                yield item
        finally:
            self._unpin(data)

    # -- writes --------------------------------------------------------------

    def put(self, key: bytes, value: bytes) -> None:
        with self._lock:
            self._writable()[key] = value
            if self._feed.watches:
                self._feed.publish([(key, value)])

    def delete(self, key: bytes) -> None:
        with self._lock:
            if self._writable().pop(key, None) is not None and self._feed.watches:
                self._feed.publish([(key, None)])

    def _apply(
        self, ranges: list[Range], deletes: list[bytes], keys: Collection[bytes], values: Collection[bytes]
    ) -> None:
        """Delete the ranges, then the keys ``deletes``, then store the pairs in
        order (one ``SortedDict.update``), all at once (the feed's lock held)."""
        with self._lock:
            self._apply_locked(ranges, deletes, keys, values)

    def _apply_locked(
        self, ranges: list[Range], deletes: list[bytes], keys: Collection[bytes], values: Collection[bytes]
    ) -> None:
        data = self._writable()
        changes: dict[bytes, bytes | None] | None = {} if self._feed.watches else None
        for start, stop in ranges:
            for key in list(data.irange(start, stop, inclusive=(True, False))):
                del data[key]
                if changes is not None:
                    changes[key] = None
        for key in deletes:
            if data.pop(key, None) is not None and changes is not None:
                changes[key] = None
        puts = dict(zip(keys, values, strict=True))
        data.update(puts)
        if changes is not None:
            changes.update(puts)
            if changes:
                self._feed.publish(list(changes.items()))

    def watch(
        self, ranges: Sequence[tuple[bytes, bytes | None]], *, start_revision: int | None = None
    ) -> StoreWatch:
        """Changes to keys in ``ranges`` from now on, each once, in order (one
        revision per write or atomic batch). Cost per write while watched: one
        range test per watch and changed key."""
        self._live()
        return self._feed.watch(list(ranges), start_revision)

    # -- views and lifecycle -------------------------------------------------

    def snapshot(self) -> _Snapshot:
        return _Snapshot(self)

    def transaction(self) -> OverlayTransaction:
        """An overlay transaction; transactions of this store run one at a time."""
        return self._gate.begin(self._snapshot_and_release, self._apply)

    def _snapshot_and_release(self) -> tuple[_Snapshot, Callable[[], None]]:
        snap = _Snapshot(self, "transaction")
        return snap, snap.release

    def close(self) -> None:
        with self._lock:  # after a write in flight has reported its change
            self._data = None
            self._feed.close(self.url)

    def __repr__(self) -> str:
        return f"MemoryStore({self.url!r})"
