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
import weakref
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import partial
from itertools import chain, islice
from operator import itemgetter
from types import TracebackType
from typing import Any

from sortedcontainers import SortedList, SortedSet

from ..errors import KeyspaceError, StoreClosed, StoreError
from ._base import Op, ReadView, WriteView, as_ops, checked_pages, limited
from ._translated import PutSlot, ended_call, translated

PairLog: Any
try:  # the optional C put log (setup.py builds it when it can)
    from ._pairs_accel import PairLog
except ImportError:  # pragma: no cover - puts then go to the dict of pending puts at once
    PairLog = None

__all__ = ["Apply", "OverlayTransaction", "Range", "RangeSet", "TransactionGate", "ops_apply"]

Range = tuple[bytes, bytes | None]
"""A half-open byte range ``[start, stop)``; ``stop=None`` is the end of the keyspace."""

Apply = Callable[[list[Range], list[bytes], Collection[bytes], Collection[bytes]], None]
"""A store's atomic write, all or nothing: ``apply(ranges, deletes, keys, values)``
deletes every range, then the keys ``deletes``, then stores ``values[i]`` at
``keys[i]`` in order (a key may come more than once: its last value wins; a key of
``deletes`` is not among ``keys``). ``keys`` and ``values`` are of equal length and
iterated once each, side by side."""


def ops_apply(apply: Callable[[list[Range], list[Op]], None]) -> Apply:
    """An :data:`Apply` that calls ``apply(ranges, ops)`` with one list of ops
    (``(key, None)`` deletes first, then the puts, one per key), for engines that
    take them so."""

    def split(
        ranges: list[Range], deletes: list[bytes], keys: Collection[bytes], values: Collection[bytes]
    ) -> None:
        apply(ranges, as_ops(deletes, dict(zip(keys, values, strict=True))))

    return split


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

    def copy(self) -> RangeSet:
        """The ranges as they are now (O(1): :meth:`add` replaces the lists)."""
        copy = RangeSet()
        copy._starts, copy._stops = self._starts, self._stops
        return copy

    def ranges(self) -> list[Range]:
        """The ranges in ascending order."""
        return list(zip(self._starts, self._stops, strict=True))

    def gaps(self, start: bytes, stop: bytes | None) -> list[Range]:
        """The parts of ``[start, stop)`` that no range covers, in ascending order
        (none: all of it is covered). Cost: one bisect, then O(ranges inside)."""
        if stop is not None and stop <= start:
            return []
        starts, stops = self._starts, self._stops
        out: list[Range] = []
        low = start
        at = max(bisect_right(starts, start) - 1, 0)
        for s, e in zip(starts[at:], stops[at:], strict=True):
            if stop is not None and s >= stop:
                break
            if e is not None and e <= low:
                continue
            if s > low:
                out.append((low, s))
            if e is None:
                return out
            low = e
            if stop is not None and low >= stop:
                return out
        out.append((low, stop))
        return out


class _Pending(dict[bytes, bytes]):
    """A transaction's pending puts; weakly referenceable, so that a ``put``
    made of a proxy's ``__setitem__`` fails once the transaction has dropped it."""

    __slots__ = ("__weakref__",)


_proxy_setitem: Any = vars(weakref.ProxyType)["__setitem__"]


def _put_refusal(base: ReadView, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
    """The error of a transaction's put: after its end (the pending puts are
    gone, a :class:`ReferenceError`) :class:`~keyspace.errors.StoreClosed`;
    other errors as the snapshot's."""
    if isinstance(exc, ReferenceError):
        return StoreClosed("this transaction has ended")
    return base.translate(exc, key)


class OverlayTransaction(PutSlot, WriteView):
    """A read-write transaction over a snapshot: reads see the snapshot plus this
    transaction's own writes; commit hands all writes to ``apply`` at once.

    Use as a context manager: a clean exit commits, an exception discards.

    Pending puts live in a plain dict. Where the optional C module is built, a
    put is first appended to a log of two lists (``put`` is the log, translated:
    two C calls, no hashing), which joins the dict, in order, when the
    transaction next reads or deletes (O(pairs logged since)); a transaction that
    only puts commits the log as it is, so its keys are never hashed. Without the
    C module a put is one dict store, and ``put`` that store as a C call
    (``__setitem__`` of a weak proxy to the dict, translated). Either way a put
    after the transaction ended meets :class:`ReferenceError`, which
    :meth:`translate` makes :class:`~keyspace.errors.StoreClosed`. Point deletes are kept in a sorted set
    beside the puts, range deletes in a :class:`RangeSet`. A read costs one
    dictionary lookup more than the snapshot's. The pending keys are sorted only
    when a scan needs them: the first scan sorts them once (O(p log p)), later
    scans add the keys put since (O(new log p)); a scan then merges the snapshot's
    scan with the pending writes in its range in O(1) per item, and sees the
    transaction as it was when the scan began. A scan still running when the
    transaction ends raises :class:`~keyspace.errors.StoreClosed` at its next page:
    the snapshot's pages end with the snapshot (released at the end), and the
    pending writes it took are handed out in pages checked the same way
    (:func:`~keyspace.stores._base.checked_pages`).

    ``check`` validates a key before it is accepted (size limits), so a bad key fails
    at ``put`` time, not at commit; with a ``check``, ``put`` is a Python method.
    ``done`` is called once the transaction has ended, after its commit was
    applied (or failed) or it was discarded.
    """

    __slots__ = (
        "_apply",
        "_base",
        "_check",
        "_deleted",
        "_done",
        "_dropped",
        "_index",
        "_log",
        "_open",
        "_puts",
        "_release",
    )

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
        puts = self._puts = _Pending()
        self._dropped: SortedSet[bytes] = SortedSet()
        self._deleted = RangeSet()
        self._index: SortedList[bytes] | None = None
        self._open = True
        self._log = PairLog() if PairLog is not None and check is None else None
        # the put's translation holds the base view, not this transaction: no
        # reference cycle keeps an ended transaction alive
        refusal = partial(_put_refusal, base)
        if check is not None:
            self.put = self._checked_put
        elif self._log is not None:
            self.put = translated(self._log, refusal)
        else:
            self.put = translated(_proxy_setitem.__get__(weakref.proxy(puts)), refusal)

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """After the end, :class:`~keyspace.errors.StoreClosed`; else as its put's
        (:func:`_put_refusal`)."""
        if not self._open:
            return StoreClosed("this transaction has ended")
        return _put_refusal(self._base, exc, key)

    # -- reads ---------------------------------------------------------------

    def _pending(self) -> _Pending:
        """The pending puts, the log joined (in the order it was written)."""
        puts = self._puts
        log = self._log
        if log:
            keys, values = log.take()
            puts.update(zip(keys, values, strict=True))
        return puts

    def _live(self) -> None:
        """Raise :class:`~keyspace.errors.StoreClosed` once the transaction has ended."""
        if not self._open:
            raise StoreClosed("this transaction has ended")

    def get(self, key: bytes) -> bytes | None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        value = self._pending().get(key)
        if value is not None:
            return value
        if (self._dropped and key in self._dropped) or (self._deleted and key in self._deleted):
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
        return limited(items, limit)

    def _sorted(self) -> SortedList[bytes]:
        """The pending put keys in order. Keys only join the dict at its end
        (through ``put`` too) and leave it only through :meth:`delete` and
        :meth:`delete_range`, which keep the index in step: the keys missing from
        the index are the last ``len(puts) - len(index)`` of the dict."""
        puts = self._puts
        index = self._index
        if index is None:
            index = self._index = SortedList(puts)
        elif (new := len(puts) - len(index)) > 0:
            index.update(islice(reversed(puts), new))
        return index

    def _merged(self, start: bytes, stop: bytes | None, reverse: bool) -> Iterator[tuple[bytes, bytes]]:
        # the range deletes as they are now (RangeSet.add replaces, never mutates):
        # the snapshot is read only where they leave gaps, so that what this
        # transaction deleted itself is neither read nor guarded at its commit
        deleted = self._deleted
        if deleted:
            gaps = deleted.gaps(start, stop)
            if reverse:
                gaps.reverse()
            base = self._gap_scans(gaps, reverse)
        else:
            base = self._base.scan(start, stop, reverse=reverse)
        puts = self._pending()
        own: list[tuple[bytes, bytes]] = []
        hidden: set[bytes] = set()
        if puts:
            keys = list(self._sorted().irange(start, stop, inclusive=(True, False), reverse=reverse))
            if keys:
                own = list(zip(keys, map(puts.__getitem__, keys), strict=True))
                hidden.update(keys)
        if self._dropped:
            hidden.update(self._dropped.irange(start, stop, inclusive=(True, False)))
        if hidden:
            base = (item for item in base if item[0] not in hidden)
        if not own:
            return base
        # the pending writes taken now, handed out in pages that end with the transaction
        mine = chain.from_iterable(checked_pages(iter(own), self._live))
        return heapq.merge(base, mine, key=_first, reverse=reverse)

    def _gap_scans(self, gaps: list[Range], reverse: bool) -> Iterator[tuple[bytes, bytes]]:
        """The snapshot's keys in ``gaps`` (in scan order): the first scan starts
        now, as an undivided scan does, the others when the one before is done."""
        if not gaps:
            return iter(())
        first = self._base.scan(gaps[0][0], gaps[0][1], reverse=reverse)
        if len(gaps) == 1:
            return first
        return self._chained(first, gaps[1:], reverse)

    def _chained(
        self, first: Iterator[tuple[bytes, bytes]], rest: list[Range], reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        yield from first
        for low, high in rest:
            yield from self._base.scan(low, high, reverse=reverse)

    # -- writes --------------------------------------------------------------

    def _checked_put(self, key: bytes, value: bytes) -> None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if self._check is not None:
            self._check(key)
        if self._log is not None:
            self._log(key, value)
        else:
            self._puts[key] = value

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """Add every pair to the pending puts (a later pair on the same key wins),
        after the keys are checked where the store checks keys. A batch joins in
        key order (one C sort of its keys): the commit hands the puts over in the
        order they joined, and an ordered engine writes a batch in key order
        faster and lays it out for scans (LevelDB: about 40 % less per key)."""
        if not self._open:
            raise StoreClosed("this transaction has ended")
        pairs = items if isinstance(items, list) else list(items)
        if self._check is not None:
            for key, _ in pairs:
                self._check(key)
        last = dict(pairs)
        keys = sorted(last)
        values = list(map(last.__getitem__, keys))
        if self._log is not None:
            self._log.extend(keys, values)
        else:
            self._puts.update(zip(keys, values, strict=True))
        return len(pairs)

    def delete(self, key: bytes) -> None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if self._check is not None:
            self._check(key)
        puts = self._pending()
        if key in puts:
            if self._index is not None:
                self._sorted().remove(key)
            del puts[key]
        self._dropped.add(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        if not self._open:
            raise StoreClosed("this transaction has ended")
        if stop is not None and stop <= start:
            return
        puts = self._pending()
        if puts:
            index = self._sorted()
            lo = index.bisect_left(start)
            hi = len(index) if stop is None else index.bisect_left(stop)
            for key in index[lo:hi]:
                del puts[key]
            del index[lo:hi]
        dropped = self._dropped
        if dropped:
            for key in list(dropped.irange(start, stop, inclusive=(True, False))):
                dropped.discard(key)
        self._deleted.add(start, stop)

    # -- lifecycle -----------------------------------------------------------

    def commit(self) -> None:
        """Apply every pending write as one atomic batch and end the transaction.
        A key both deleted and put was put after its delete: it is only put. A
        transaction that only put hands its log over as it is, after the puts a
        read had joined (all written before the log's: a key the log puts
        again is written twice in the batch, the later winning), so a read
        among its first writes (a scope's first write checks the store's
        records) does not make a bulk load's puts a dict."""
        if not self._open:
            raise StoreClosed("this transaction has ended")
        keys: Collection[bytes]
        values: Collection[bytes]
        if self._log is not None and not (self._dropped or self._deleted):
            keys, values = self._log.take()
            if self._puts:
                keys = [*self._puts.keys(), *keys]
                values = [*self._puts.values(), *values]
            deletes: list[bytes] = []
        else:
            puts = self._pending()
            keys, values = puts.keys(), puts.values()
            deletes = [k for k in self._dropped if k not in puts]
        ranges = self._deleted.ranges()
        self._finish()
        try:
            if keys or deletes or ranges:
                self._apply(ranges, deletes, keys, values)
        finally:
            del keys, values
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
        if self._check is not None:  # the bound method held this transaction
            self.put = ended_call("this transaction has ended")
        # the one strong reference to the pending dict: put fails from now on
        self._puts = _Pending()
        if self._log is not None:
            self._log.close()
        self._index = None
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
