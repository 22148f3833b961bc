"""Reads and deletes of one LMDB cursor, shared by the store and its views.

:func:`cursor_scan` gives the items of a half-open range as an ``itertools`` chain
over the cursor (no Python code per item), :func:`cursor_keys` its keys alone,
:func:`cursor_page` at most so many of either as one list and :func:`cursor_pages`
the items as pages (both cut at the range's end in C where the optional module is
built, see :mod:`keyspace.stores._take`), :func:`cursor_ranges_pages` the items of
several ranges in turn with one cursor, as pages; :func:`cursor_delete_range` deletes a range
with one cursor. All take the LMDB transaction and, optionally, a named database
of its environment; errors are py-lmdb's own (the caller translates them).
Given ``records`` (reads of an environment's unnamed database), the scans leave
out LMDB's records of named databases and the range delete keeps them (see
:mod:`keyspace.stores.lmdb._records`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import islice, takewhile
from operator import gt, itemgetter, le
from typing import TYPE_CHECKING, Any

from ...errors import KeyspaceError
from .._base import PAGE_FIRST, PAGE_MOST, limited, pages_of
from .._take import take_until, take_until_py
from ._records import RECORD_SIZE, filtered, records_in

if TYPE_CHECKING:
    from ._records import Records

__all__ = [
    "SHORT_SCAN",
    "SHORT_SCAN_MOST",
    "cursor_delete_range",
    "cursor_keys",
    "cursor_page",
    "cursor_pages",
    "cursor_ranges_pages",
    "cursor_scan",
    "cursor_take",
]

SHORT_SCAN = 16
"""A forward scan limited to this many items reads them at once and cuts them at
``stop`` with one binary search, instead of testing every item against ``stop``
(about 85 ns an item): it reads at most this many items past ``stop``."""


SHORT_SCAN_MOST = 64
"""A store scan limited to this many items (the first page of its paged route)
is one page read in one read transaction and one frame (``LMDBStore._short_page``,
its watched reads' ``pages``)."""


def cursor_scan(
    txn: Any,
    db: Any,
    records: Records | None,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
) -> Iterator[tuple[bytes, bytes]]:
    """Items of ``[start, stop)`` read by one cursor (on database ``db``; ``None``:
    the transaction's), as an ``itertools`` chain over ``iternext``/``iterprev``,
    so no Python code runs per item. A scan limited to ``PAGE_MOST`` (1024) items
    or fewer, with the C module: one :func:`cursor_take`, read at once (without
    it, a short forward scan: one list, see :data:`SHORT_SCAN`). The cursor keeps
    ``txn`` alive as long as the chain lives. With ``records``: read ahead in
    chunks of 256 items, each without the records (one C pass a chunk); a short
    scan reads its page as without them and drops the records it holds (one C
    pass), reading on only when records took places of its limit."""
    if limit is not None and take_until is not None and limit <= PAGE_MOST:
        is_record = None if records is None else records.is_record
        return iter(cursor_take(txn, db, start, stop, limit, reverse, 0, is_record, RECORD_SIZE))
    cursor = txn.cursor(db)
    records = records_in(records, start, stop)
    if records is not None:
        return filtered(records, _range_items(cursor, reverse, (start, stop)), limit)
    if not reverse and limit is not None and limit <= SHORT_SCAN:
        if not cursor.set_range(start):
            return iter(())
        page = list(islice(cursor.iternext(), max(limit, 0)))
        if stop is not None and page and page[-1][0] >= stop:
            del page[bisect_left(page, (stop,)) :]  # (stop,) sorts before (stop, value)
        return iter(page)
    items = _range_items(cursor, reverse, (start, stop))
    return limited(items, limit)


def cursor_keys(
    txn: Any,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    db: Any = None,
    records: Records | None = None,
) -> Iterator[bytes]:
    """Keys of ``[start, stop)`` read by one cursor of ``txn`` (database ``db``,
    default: the transaction's), values left unread; an ``itertools`` chain, so no
    Python code runs per key. The cursor keeps ``txn`` alive as long as it lives.
    With ``records``: the keys of :func:`cursor_scan` without the records (values
    are read to tell them: about a scan's cost)."""
    if records_in(records, start, stop) is not None:
        return map(itemgetter(0), cursor_scan(txn, db, records, start, stop, reverse, limit))
    keys, bound = _positioned(txn.cursor(db), reverse, (start, stop), False)
    if keys is None:
        return iter(())
    if bound is not None:
        keys = takewhile(bound.__le__ if reverse else bound.__gt__, keys)
    return limited(keys, limit)


def cursor_page(
    txn: Any, start: bytes, stop: bytes | None, reverse: bool, size: int, db: Any = None, values: bool = True
) -> list[Any]:
    """At most ``size`` items (``values=False``: keys) of ``[start, stop)`` read by
    one cursor of ``txn`` (database ``db``, default: the transaction's), as one
    list. Cost: the engine's steps and, with the C module, one ``memcmp`` an item
    against the range's end (reads no item past it); without it,
    :func:`cursor_scan` or :func:`cursor_keys` read into a list."""
    if take_until is None:
        if values:
            return list(cursor_scan(txn, db, None, start, stop, reverse, size))
        return list(cursor_keys(txn, start, stop, reverse, size, db))
    items, bound = _positioned(txn.cursor(db), reverse, (start, stop), values)
    return [] if items is None else take_until(items, bound, size, reverse)


def cursor_pages(
    txn: Any,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    db: Any = None,
    records: Records | None = None,
    translate: Callable[[BaseException], KeyspaceError] | None = None,
    cut: int = 0,
) -> Iterator[list[tuple[bytes, bytes]]]:
    """The items of :func:`cursor_scan` as the non-empty lists of one cursor that
    :func:`~keyspace.stores._base.pages_of` reads (the views' ``read_pages``):
    with the C module, no Python code per item and no item read past the range.
    Each key without its first ``cut`` bytes; with ``records``, the records
    left out (both in the same C pass); ``translate``: the reads' engine errors
    raised as its answer (one generator does it all)."""
    items, bound = _positioned(txn.cursor(db), reverse, (start, stop), True)
    if items is None:
        return iter(())
    records = records_in(records, start, stop)
    if records is None:
        return pages_of(items, bound, reverse, limit, translate=translate, cut=cut)
    return pages_of(items, bound, reverse, limit, None, translate, cut, records.is_record, RECORD_SIZE)


def cursor_ranges_pages(
    txn: Any,
    ranges: Sequence[tuple[bytes, bytes | None]],
    reverse: bool,
    limit: int | None,
    db: Any = None,
    records: Records | None = None,
    cut: int = 0,
) -> Iterator[list[tuple[bytes, bytes]]]:
    """The items of each ``[start, stop)`` of ``ranges`` in turn (in the order
    given; each read descending with ``reverse``), at most ``limit`` in all, as
    pages of :data:`PAGE_FIRST` items, then four times more each up to
    :data:`PAGE_MOST` (as :func:`~keyspace.stores.pages_of`), read by one cursor that seeks each
    range in turn and reads it a page at a time, cut at the range's end in C
    (:func:`~keyspace.stores._take.take_until`; its reference without the C
    module); the small ranges of one read share a page. Each key without its
    first ``cut`` bytes; LMDB's records of named databases left out as they
    are read (both in the same C pass). Cost per range: one seek and one C
    call a page; per item, one ``memcmp`` and no Python code."""
    cursor = txn.cursor(db)
    take = take_until_py if take_until is None else take_until
    drop = (None, -1) if records is None else (records.is_record, RECORD_SIZE)
    out: list[tuple[bytes, bytes]] = []
    left = limit  # what is still wanted, out included
    size = PAGE_FIRST
    for bounds in ranges:
        if left is not None and len(out) >= left:
            break
        items, bound = _positioned(cursor, reverse, bounds, True)
        if items is None:
            continue
        while True:
            want = size - len(out) if left is None else min(size, left) - len(out)
            page = take(items, bound, want, reverse, cut, *drop)
            ended = len(page) < want
            out += page
            if len(out) >= size:
                if left is not None:
                    left -= len(out)
                yield out
                out = []
                size = min(size * 4, PAGE_MOST)
            if ended or (left is not None and len(out) >= left):
                break
    if out:
        yield out


def cursor_take_py(
    txn: Any,
    db: Any,
    start: bytes,
    stop: bytes | None,
    limit: int,
    reverse: bool,
    cut: int = 0,
    is_record: Callable[[bytes, bytes], bool] | None = None,
    record_size: int = -1,
) -> list[tuple[bytes, bytes]]:
    """At most ``limit`` items of ``[start, stop)`` read by one cursor of ``txn``
    (database ``db``), in key order or descending with ``reverse``: one seek
    (:func:`_positioned`) and :func:`take_until_py` (each key without its first
    ``cut`` bytes; ``is_record``'s records of ``record_size`` bytes left out,
    read on past them). The reference of the C ``cursor_take``, which makes the
    same calls from C."""
    if cut < 0:
        raise ValueError(f"cursor_take: cut={cut} is negative")
    items, bound = _positioned(txn.cursor(db), reverse, (start, stop), True)
    if items is None:
        return []
    return take_until_py(items, bound, limit, reverse, cut, is_record, record_size)


cursor_take: Callable[..., list[tuple[bytes, bytes]]]
"""One short page of a cursor (:func:`cursor_take_py`), read by C calls alone where
the optional module is built: the page of a scan of at most ``limit`` items (up to
:data:`PAGE_MOST`), each key without its first ``cut`` bytes, LMDB's records of
named databases left out (``is_record``, the store's :meth:`Records.is_record`,
asked in the same pass of an item that may be one), read on past them. Callers
call it directly, with no frame between: a short scan's whole cost is this call."""
try:
    from .._pairs_accel import cursor_take
except ImportError:  # pragma: no cover - the optional C module is not built
    cursor_take = cursor_take_py


def _positioned(
    cursor: Any, reverse: bool, bounds: tuple[bytes, bytes | None], values: bool
) -> tuple[Iterator[Any] | None, bytes | None]:
    """``(items, bound)``: ``cursor`` placed on the first key of ``bounds``, a
    range ``[start, stop)``, in the order asked for and its
    ``iternext``/``iterprev`` (``values=False``: keys only), which goes on past the
    range, and the bound where the range ends that way (``None``: the end of the
    database); ``(None, None)`` where no key lies that way. Costs one frame and
    one seek (a scan of several ranges pays them per range: no keyword argument
    for py-lmdb to parse where values are read)."""
    start, stop = bounds
    if not reverse:
        if not cursor.set_range(start):
            return None, None
        return (cursor.iternext() if values else cursor.iternext(values=False)), stop
    found = cursor.last() if stop is None or not cursor.set_range(stop) else cursor.prev()
    if not found:
        return None, None
    return (cursor.iterprev() if values else cursor.iterprev(values=False)), start or None


def _range_items(
    cursor: Any, reverse: bool, bounds: tuple[bytes, bytes | None]
) -> Iterator[tuple[bytes, bytes]]:
    """The items of ``[start, stop)`` from ``cursor``, which this positions."""
    items, bound = _positioned(cursor, reverse, bounds, True)
    if items is None:
        return iter(())
    if bound is not None:
        # (bound,) > (k, v) <=> k < bound; (bound,) <= (k, v) <=> k >= bound
        items = takewhile(partial(le if reverse else gt, (bound,)), items)
    return items


def cursor_delete_range(
    txn: Any, start: bytes, stop: bytes | None, db: Any = None, records: Records | None = None
) -> None:
    """Delete ``[start, stop)`` of database ``db`` (default: the transaction's) with
    one cursor, each delete moving it to the next key. With ``records`` (the
    unnamed database), LMDB's records of named databases stay: the cursor steps
    over them (deleting one as data is refused by LMDB and spoils the
    transaction); a key is looked at only when its value has a record's size,
    and no value is read where the range's bounds rule records out
    (:func:`records_in`)."""
    records = records_in(records, start, stop)
    cursor = txn.cursor(db)
    if not cursor.set_range(start):
        return
    delete = cursor.delete
    key = cursor.key
    if records is None:
        while stop is None or key() < stop:
            if not delete():  # deletes and moves to the next key; False at the end
                break
        return
    value, step, is_record = cursor.value, cursor.next, records.is_record
    while stop is None or key() < stop:
        here = value()
        if len(here) == RECORD_SIZE and is_record(key(), here):
            if not step():
                break
        elif not delete():
            break
