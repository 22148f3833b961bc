"""The one generic transaction for engines without native transactions.

An :class:`OverlayTransaction` reads from a snapshot of the store taken when it
begins, overlaid with its own pending writes (puts, deletes and range deletes), and
commits by handing everything to the store's ``apply`` function, which the engine
turns into ONE atomic write batch. Nothing reaches the engine before commit, so a
discarded transaction costs nothing to undo.

Transactions of one store made through :class:`TransactionGate` run one at a time
(memory, LevelDB, RocksDB): the next one takes its snapshot only when the previous
one has committed or been discarded, so a read-modify-write in a transaction never
loses another transaction's update. Writes made outside transactions are not held
back: a commit applies the transaction's writes over whatever the store holds by
then (last writer wins, key by key).
"""

from __future__ import annotations

import heapq
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from operator import itemgetter
from types import TracebackType

from sortedcontainers import SortedDict

from ..errors import StoreClosed, StoreError
from ._base import Op, ReadView, WriteView

__all__ = ["Apply", "OverlayTransaction", "Range", "RangeSet", "TransactionGate"]

Range = tuple[bytes, bytes | None]
"""A half-open byte range ``[start, stop)``; ``stop=None`` is the end of the keyspace."""

Apply = Callable[[list[Range], list[Op]], None]
"""A store's atomic write: delete every range, then apply the ops, all or nothing."""

_first = itemgetter(0)


class RangeSet:
    """Disjoint, sorted half-open byte ranges; membership is one bisect."""

    __slots__ = ("_starts", "_stops")

    def __init__(self) -> None:
        self._starts: list[bytes] = []
        self._stops: list[bytes | None] = []

    def __bool__(self) -> bool:
        return bool(self._starts)

    def add(self, start: bytes, stop: bytes | None) -> None:
        """Add ``[start, stop)``, merging with overlapping or touching ranges.

        Cost: O(number of ranges)."""
        if stop is not None and stop <= start:
            return
        starts, stops = [], []
        for s, e in zip(self._starts, self._stops, strict=True):
            touches = (e is None or e >= start) and (stop is None or s <= stop)
            if touches:
                start = min(start, s)
                stop = None if e is None or stop is None else max(stop, e)
            else:
                starts.append(s)
                stops.append(e)
        at = bisect_right(starts, start)
        starts.insert(at, start)
        stops.insert(at, stop)
        self._starts, self._stops = starts, stops

    def __contains__(self, key: bytes) -> bool:
        at = bisect_right(self._starts, key) - 1
        if at < 0:
            return False
        stop = self._stops[at]
        return stop is None or key < stop

    def ranges(self) -> list[Range]:
        """The ranges in ascending order."""
        return list(zip(self._starts, self._stops, strict=True))


class OverlayTransaction(WriteView):
    """A read-write transaction over a snapshot: reads see the snapshot plus this
    transaction's own writes; commit hands all writes to ``apply`` at once.

    Use as a context manager: a clean exit commits, an exception discards. Reads cost
    one dictionary lookup more than the snapshot's; scans merge the snapshot's scan
    with the pending writes in O(1) per item.

    ``check`` validates a key before it is accepted (size limits), so a bad key fails
    at ``put`` time, not at commit. ``done`` is called once the transaction has
    ended, after its commit was applied (or failed) or it was discarded.
    """

    __slots__ = ("_apply", "_base", "_check", "_deleted", "_done", "_open", "_release", "_writes")

    def __init__(
        self,
        base: ReadView,
        apply: Apply,
        release: Callable[[], None],
        check: Callable[[bytes], None] | None = None,
        done: Callable[[], None] | None = None,
    ) -> None:
        self._done = done
        self._base = base
        self._apply = apply
        self._release = release
        self._check = check
        self._writes: SortedDict[bytes, bytes | None] = SortedDict()
        self._deleted = RangeSet()
        self._open = True

    # -- reads ---------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        writes = self._writes
        if key in writes:
            return writes[key]
        if self._deleted and key in self._deleted:
            return None
        return self._base.get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if limit is not None and limit <= 0:
            return iter(())
        items = self._merged(start, stop, reverse)
        return items if limit is None else islice(items, limit)

    def _merged(self, start: bytes, stop: bytes | None, reverse: bool) -> Iterator[tuple[bytes, bytes]]:
        writes = self._writes
        deleted = self._deleted
        base = self._base.scan(start, stop, reverse=reverse)
        if writes or deleted:
            base = (item for item in base if item[0] not in writes and not (deleted and item[0] in deleted))
        if not writes:
            return base
        keys = writes.irange(start, stop, inclusive=(True, False), reverse=reverse)
        # A snapshot of the pending values, so writes during the scan do not disturb it.
        own = [(k, v) for k in keys if (v := writes[k]) is not None]
        if not own:
            return base
        return heapq.merge(base, own, key=_first, reverse=reverse)

    # -- writes --------------------------------------------------------------

    def put(self, key: bytes, value: bytes) -> None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if self._check is not None:
            self._check(key)
        self._writes[key] = value

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """Add every pair to the pending writes: one ``SortedDict.update`` (a sort in
        C when the batch is large against what is pending, else one insort each)."""
        if not self._open:
            raise StoreClosed("this transaction has ended")
        pairs = dict(items)
        if self._check is not None:
            for key in pairs:
                self._check(key)
        self._writes.update(pairs)
        return len(pairs)

    def delete(self, key: bytes) -> None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if self._check is not None:
            self._check(key)
        self._writes[key] = None

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if stop is not None and stop <= start:
            return
        writes = self._writes
        for key in list(writes.irange(start, stop, inclusive=(True, False))):
            del writes[key]
        self._deleted.add(start, stop)

    # -- lifecycle -----------------------------------------------------------

    def commit(self) -> None:
        """Apply every pending write as one atomic batch and end the transaction."""
        if not self._open:
            raise StoreClosed("this transaction has ended")
        self._finish()
        try:
            ops: list[Op] = list(self._writes.items())
            ranges = self._deleted.ranges()
            if ops or ranges:
                self._apply(ranges, ops)
        finally:
            if self._done is not None:
                self._done()

    def discard(self) -> None:
        """Drop every pending write and end the transaction. Idempotent."""
        if self._open:
            self._finish()
            if self._done is not None:
                self._done()

    def _finish(self) -> None:
        self._open = False
        self._release()

    def __enter__(self) -> OverlayTransaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


class TransactionGate:
    """Lets one overlay transaction of a store run at a time, across threads.

    :meth:`begin` waits until no other transaction of the store is open, then takes
    the snapshot and returns the transaction; its commit or discard opens the gate
    again. A second transaction begun in the thread that holds the gate raises
    :class:`~keyspace.errors.StoreError` instead of waiting for itself forever.
    Cost: one uncontended lock acquire and release per transaction.
    """

    __slots__ = ("_lock", "_owner", "_url")

    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._owner: int | None = None

    def begin(
        self,
        snapshot: Callable[[], tuple[ReadView, Callable[[], None]]],
        apply: Apply,
        check: Callable[[bytes], None] | None = None,
    ) -> OverlayTransaction:
        """An :class:`OverlayTransaction` over the view of ``snapshot()``, taken once
        the gate is held (``snapshot`` returns the view and the function that ends
        it, called when the transaction ends)."""
        me = threading.get_ident()
        if self._owner == me:
            raise StoreError(
                f"a transaction on {self._url} is already open in this thread; transactions of "
                "this store run one at a time, so finish it first"
            )
        self._lock.acquire()
        self._owner = me
        try:
            view, release = snapshot()
        except BaseException:
            self._open()
            raise
        return OverlayTransaction(view, apply, release, check, self._open)

    def _open(self) -> None:
        self._owner = None
        self._lock.release()
