"""Reads of the views that read one LMDB transaction (snapshots, write and joined
transactions): their ``scan``, and the keys-only reads (``read_pages`` of keys), ``count``
and ``seeker``, with :func:`count_keys`, which the store's own count uses too.

Keys come from ``cursor.iternext(values=False)``, so no value is copied; a count
reads keys in growing chunks and cuts the last one at ``stop`` with one bisection
(no Python code per key); a seeker keeps one cursor and moves it with
``set_range``. Reads of an environment's unnamed database leave out LMDB's
records of named databases (see :mod:`keyspace.stores.lmdb._records`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any

import lmdb

from ...errors import KeyspaceError, StoreClosed, StoreError
from .._base import (
    PAGE_MOST,
    ReadView,
    Seeker,
    byte_after,
    count_lacking,
    cut_pages,
    key_pages_of,
    pages_in_turn,
    translated_pages,
)
from ._cursor import cursor_keys, cursor_pages, cursor_ranges_pages, cursor_scan, cursor_take
from ._records import RECORD_SIZE, Records, drop_items, name_candidates, records_in

if TYPE_CHECKING:
    from ._parts import LMDBStoreParts

__all__ = ["CursorSeeker", "TxnReads", "count_keys"]

_FIRST_CHUNK = 64
_MAX_CHUNK = 4096
_REPLAYS_MOST = 64
"""Replays a scan reads on from: each one grew the map, so a bound, not a budget."""


def _item_key(item: tuple[bytes, bytes]) -> bytes:
    return item[0]


def _same(key: bytes) -> bytes:
    return key


def count_keys(
    txn: Any,
    start: bytes,
    stop: bytes | None,
    db: Any = None,
    records: Records | None = None,
    without: tuple[int, int] | None = None,
    state: int | None = None,
) -> int:
    """How many keys of ``[start, stop)`` ``txn`` holds (in database ``db``,
    default: the transaction's), read without values by one cursor. Reads chunks
    of 64 keys, four times larger each time up to 4096, and bisects the chunk that
    crosses ``stop``: it reads at most one chunk past ``stop`` and runs no Python
    code per key. With ``records`` (the unnamed database), LMDB's records of
    named databases are not counted: one C pass a chunk finds no key that may be
    one (a key holding a NUL byte never is), or from the first chunk holding one
    on, the items are read in pages that tell them (values are copied: about a
    scan's cost). ``state``: the id of ``txn``, given where it is a read
    transaction (its state never changes); a range read that way and found
    holding no record is remembered for that state (see
    :meth:`Records.clear_in`), so counting it again in a read transaction of the
    same state reads its keys alone, with no C pass a chunk. ``without=(byte, at)``: only the keys
    holding no ``byte`` from their index ``at`` on are counted (see
    ``ReadView.count``), each chunk's tested by
    :func:`~keyspace.stores._base.count_lacking`."""
    records = records_in(records, start, stop)
    if records is not None and state is not None and records.clear_in(state, start, stop):
        records = None  # read in this state before: no record lies in the range
    keys = cursor_keys(txn, start, None, False, None, db)
    counted: Callable[[list[bytes]], int] = len if without is None else partial(_lacking, without)
    total = 0
    size = _FIRST_CHUNK
    while chunk := list(islice(keys, size)):
        if records is not None and name_candidates(chunk, RECORD_SIZE):
            # a key holding no NUL may be a record: from here on, items tell them
            told = _count_told(txn, chunk[0], stop, db, records, without)
            if told[1] and state is not None:
                records.note_clear(state, start, stop)
            return total + told[0]
        if stop is not None and chunk[-1] >= stop:
            total += counted(chunk[: bisect_left(chunk, stop)])
            break
        total += counted(chunk)
        if len(chunk) < size:
            break
        size = min(size * 4, _MAX_CHUNK)
    if records is not None and state is not None:  # read whole: no key of it may be a record
        records.note_clear(state, start, stop)
    return total


def _count_told(
    txn: Any,
    start: bytes,
    stop: bytes | None,
    db: Any,
    records: Records,
    without: tuple[int, int] | None,
) -> tuple[int, bool]:
    """``(count, clear)``: :func:`count_keys` of ``[start, stop)`` read as items,
    LMDB's records left out, and whether the range held none."""
    total = 0
    clear = True
    for page in cursor_pages(txn, start, stop, False, None, db):
        kept = drop_items(records, page)
        if len(kept) != len(page):
            clear = False
        total += len(kept) if without is None else count_lacking(map(_item_key, kept), *without)
    return total, clear


def _lacking(without: tuple[int, int], keys: list[bytes]) -> int:
    return count_lacking(keys, *without)


class CursorSeeker(Seeker):
    """A :class:`Seeker` on one cursor: each seek is one ``set_range``. ``end`` is
    called once on release (the read transaction it owns, if any). With
    ``records`` (the unnamed database), a seek steps over LMDB's records of named
    databases."""

    __slots__ = ("_cursor", "_end", "_records", "_stop", "_translate")

    def __init__(
        self,
        cursor: Any,
        stop: bytes | None,
        translate: Callable[[BaseException, bytes | None], KeyspaceError],
        end: Callable[[], None] | None = None,
        records: Records | None = None,
    ) -> None:
        self._cursor = cursor
        self._stop = stop
        self._translate = translate
        self._end = end
        self._records = records

    def seek(self, start: bytes) -> bytes | None:
        cursor = self._cursor
        if cursor is None:
            raise StoreClosed("this seeker has been released")
        try:
            if not cursor.set_range(start):
                return None
            key: bytes = cursor.key()
            records = self._records
            while (
                0 not in key  # first: a database's name holds no NUL, a tuple scheme's key does
                and records is not None
                and len(cursor.value()) == RECORD_SIZE
                and records.is_record(key, cursor.value())
            ):
                if not cursor.next():
                    return None
                key = cursor.key()
        except lmdb.Error as exc:
            raise self._translate(exc, None) from exc
        stop = self._stop
        return key if stop is None or key < stop else None

    def release(self) -> None:
        self._cursor = None
        end, self._end = self._end, None
        if end is not None:
            end()


class TxnReads:
    """``scan``, ``read_pages`` (keys only too), ``count`` and ``seeker`` of a view
    that reads one LMDB transaction: the view gives :meth:`_keys_txn` (its transaction and
    database) and ``translate``."""

    __slots__ = ()
    _store: LMDBStoreParts  # each view's slot: the store it reads
    _fixed_state = False
    """Whether the view's transaction reads one state for good (a read
    transaction: a snapshot), which a count may remember facts of."""

    def _keys_txn(self) -> tuple[Any, Any]:
        raise NotImplementedError

    def _replays(self) -> bool:
        """Whether the view may go on in a new LMDB transaction holding what the
        old one held (a write transaction that grows a full map and replays its
        writes): its scans then read on from there. A snapshot never does."""
        return False

    def _held_txn(self) -> tuple[Any, Any] | None:
        """:meth:`_keys_txn` where the view reads that LMDB transaction for good (a
        cursor of it may be read on later), ``None`` where it may go on in a new
        one (:meth:`_replays`). Views override it with one frame."""
        return None if self._replays() else self._keys_txn()

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        raise NotImplementedError

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The pages of cursors of the view's transaction, where it reads one LMDB
        transaction for good: a read of at most :data:`PAGE_MOST` items is one
        page read now (:func:`cursor_take` range by range, no frame between
        for one range); a longer one gives the pages of one cursor
        (:func:`cursor_pages`), or for several ranges of one cursor that seeks
        each in turn, as they are read; errors translated. Where the view may go
        on in a new transaction (:meth:`_replays`), the contract's default,
        through :meth:`scan` (which notes the read for a replay); keys only, the
        keys of one cursor per range (:meth:`_keys`: no value copied) in pages."""
        view: ReadView = self  # type: ignore[assignment]  # a ReadView in every class it serves
        if keys_only:
            read = pages_in_turn(self._key_pairs, ranges, reverse, limit)
            return cut_pages(read, cut) if cut else read
        held = self._held_txn()
        if held is None:
            return ReadView.read_pages(view, ranges, reverse, limit, keys_only, cut)
        txn, db = held
        store = self._store
        try:
            if limit is not None and limit <= PAGE_MOST:  # one page, read now and cut, range by range
                is_record = store._is_record
                if len(ranges) == 1:
                    start, stop = ranges[0]
                    page = cursor_take(txn, db, start, stop, limit, reverse, cut, is_record, RECORD_SIZE)
                else:
                    page = []
                    for start, stop in ranges:
                        page += cursor_take(
                            txn, db, start, stop, limit - len(page), reverse, cut, is_record, RECORD_SIZE
                        )
                        if len(page) >= limit:
                            break
                return [page] if page else []
            records = store._records
            if len(ranges) == 1:
                start, stop = ranges[0]
                return cursor_pages(txn, start, stop, reverse, limit, db, records, self.translate, cut)
            return translated_pages(
                cursor_ranges_pages(txn, ranges, reverse, limit, db, records, cut), self.translate
            )
        except KeyspaceError:
            raise
        except Exception as exc:
            raise self.translate(exc) from exc

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Items of the view's transaction as it is when ``scan`` is called, read
        when iterated (one cursor, see :func:`cursor_scan`), errors translated."""
        txn, db = self._keys_txn()
        return self._items(txn, start, stop, reverse, limit, db)

    def _items(
        self, txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, db: Any
    ) -> Iterator[tuple[bytes, bytes]]:
        records = self._store._records
        if self._replays():

            def read(
                txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, db: Any
            ) -> Iterator[tuple[bytes, bytes]]:
                return cursor_scan(txn, db, records, start, stop, reverse, limit)

            yield from self._resumed(read, _item_key, txn, start, stop, reverse, limit, db)
            return
        try:
            yield from cursor_scan(txn, db, records, start, stop, reverse, limit)
        except lmdb.Error as exc:
            raise self.translate(exc) from exc

    def _resumed(
        self,
        read: Callable[..., Iterator[Any]],
        key_of: Callable[[Any], bytes],
        txn: Any,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        db: Any,
    ) -> Iterator[Any]:
        """``read(txn, start, stop, reverse, limit, db)`` (items or keys; ``key_of``
        gives an element's key), read on past the last element given, in the
        view's new transaction, each time the view replays its writes on one
        (:meth:`_replays`): the rest of the range as the transaction holds it.
        Costs a Python step per element; a replaying transaction is one that began
        with little free map space."""
        for _replay in range(_REPLAYS_MOST):
            try:
                for element in read(txn, start, stop, reverse, limit, db):
                    yield element
                    if reverse:
                        stop = key_of(element)
                    else:
                        start = key_of(element) + b"\x00"
                    if limit is not None:
                        limit -= 1
                return
            except lmdb.Error as exc:
                now, _ = self._keys_txn()
                if now is None or now is txn:
                    raise self.translate(exc) from exc
                txn = now  # the same writes, replayed on a new transaction: read on there
        raise StoreError(f"a scan met more than {_REPLAYS_MOST} replays of its transaction")

    def _key_pairs(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        """The keys of ``[start, stop)`` as keys-only pages (``(key, b"")``)."""
        return key_pages_of(self._keys(start, stop, reverse, limit))

    def _keys(self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> Iterator[bytes]:
        """The keys of ``[start, stop)`` read by one cursor of the view's
        transaction (no value copied), read on in a replayed transaction,
        errors translated."""
        txn, db = self._keys_txn()
        records = self._store._records
        if self._replays():
            read = cursor_keys if records is None else partial(cursor_keys, records=records)
            return self._resumed(read, _same, txn, start, stop, reverse, limit, db)
        try:
            keys = cursor_keys(txn, start, stop, reverse, limit, db, records)
        except lmdb.Error as exc:  # the view has ended: its transaction is gone
            raise self.translate(exc) from exc
        return self._translated(keys)

    def _translated(self, keys: Iterator[bytes]) -> Iterator[bytes]:
        try:
            yield from keys
        except lmdb.Error as exc:
            raise self.translate(exc) from exc

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        return self._counted(start, stop, None if without is None else byte_after(*without))

    def _counted(self, start: bytes, stop: bytes | None, without: tuple[int, int] | None) -> int:
        """:func:`count_keys` of ``[start, stop)`` (``without``: its filter) in this
        view's transaction."""
        if stop is not None and stop <= start:
            return 0
        txn, db = self._keys_txn()
        try:
            state = txn.id() if self._fixed_state else None
            return count_keys(txn, start, stop, db, self._store._records, without, state)
        except lmdb.Error as exc:
            raise self.translate(exc) from exc

    def seeker(self, stop: bytes | None = None) -> Seeker:
        txn, db = self._keys_txn()
        try:
            cursor = txn.cursor(db)
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        return CursorSeeker(cursor, stop, self.translate, None, self._store._records)
