"""Reads and deletes of one LMDB cursor, shared by the store and its views.

:func:`cursor_scan` gives the items of a half-open range as an ``itertools`` chain
over the cursor (no Python code per item), :func:`cursor_scan_ranges` those of
several ranges in turn with one cursor; :func:`cursor_delete_range` deletes a range
with one cursor. All take the LMDB transaction and, optionally, a named database
of its environment; errors are py-lmdb's own (the caller translates them).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from functools import partial
from itertools import chain, islice, takewhile
from operator import gt, le
from typing import Any

from ._base import limited

__all__ = ["SHORT_SCAN", "cursor_delete_range", "cursor_scan", "cursor_scan_ranges"]

SHORT_SCAN = 16
"""A forward scan limited to this many items reads them at once and cuts them at
``stop`` with one binary search, instead of testing every item against ``stop``
(about 85 ns an item): it reads at most this many items past ``stop``."""


def cursor_scan(
    txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, db: Any = None
) -> Iterator[tuple[bytes, bytes]]:
    """Items of ``[start, stop)`` read by one cursor (on database ``db``, default: the
    transaction's): an ``itertools`` chain over ``iternext``/``iterprev``, so no
    Python code runs per item (a short forward scan: one list, see
    :data:`SHORT_SCAN`). The cursor keeps ``txn`` alive as long as the chain
    lives."""
    cursor = txn.cursor(db)
    if not reverse and limit is not None and limit <= SHORT_SCAN:
        if not cursor.set_range(start):
            return iter(())
        page = list(islice(cursor.iternext(), max(limit, 0)))
        if stop is not None and page and page[-1][0] >= stop:
            del page[bisect_left(page, (stop,)) :]  # (stop,) sorts before (stop, value)
        return iter(page)
    items = _range_items(cursor, reverse, (start, stop))
    return limited(items, limit)


def cursor_scan_ranges(
    txn: Any, ranges: list[tuple[bytes, bytes | None]], reverse: bool, limit: int | None, db: Any = None
) -> Iterator[tuple[bytes, bytes]]:
    """The items of each ``[start, stop)`` of ``ranges`` in turn (in the order
    given; each read descending with ``reverse``), at most ``limit`` in all, read
    by one cursor that each range seeks again once the one before it has ended:
    one chain, no Python code per item, and per range one seek instead of a new
    cursor and chain."""
    cursor = txn.cursor(db)
    items = chain.from_iterable(map(partial(_range_items, cursor, reverse), ranges))
    return limited(items, limit)


def _range_items(
    cursor: Any, reverse: bool, bounds: tuple[bytes, bytes | None]
) -> Iterator[tuple[bytes, bytes]]:
    """The items of ``[start, stop)`` from ``cursor``, which this positions."""
    start, stop = bounds
    if not reverse:
        if not cursor.set_range(start):
            return iter(())
        items: Iterator[tuple[bytes, bytes]] = cursor.iternext()
        if stop is not None:
            items = takewhile(partial(gt, (stop,)), items)  # (stop,) > (k, v)  <=>  k < stop
        return items
    found = cursor.last() if stop is None or not cursor.set_range(stop) else cursor.prev()
    if not found:
        return iter(())
    items = cursor.iterprev()
    if start:
        items = takewhile(partial(le, (start,)), items)  # (start,) <= (k, v)  <=>  k >= start
    return items


def cursor_delete_range(txn: Any, start: bytes, stop: bytes | None, db: Any = None) -> None:
    """Delete ``[start, stop)`` of database ``db`` (default: the transaction's) with
    one cursor, each delete moving it to the next key."""
    cursor = txn.cursor(db)
    if not cursor.set_range(start):
        return
    delete = cursor.delete
    key = cursor.key
    while stop is None or key() < stop:
        if not delete():  # deletes and moves to the next key; False at the end
            break
