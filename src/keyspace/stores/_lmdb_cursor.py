"""Reads and deletes of one LMDB cursor, shared by the store and its views.

:func:`cursor_scan` gives the items of a half-open range as an ``itertools`` chain
over the cursor (no Python code per item); :func:`cursor_delete_range` deletes a range
with one cursor. Both take the LMDB transaction and, optionally, a named database
of its environment; errors are py-lmdb's own (the caller translates them).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from functools import partial
from itertools import islice, takewhile
from operator import gt, le
from typing import Any

__all__ = ["SHORT_SCAN", "cursor_delete_range", "cursor_scan"]

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
    items: Iterator[tuple[bytes, bytes]]
    if not reverse:
        if not cursor.set_range(start):
            return iter(())
        if limit is not None and limit <= SHORT_SCAN:
            page = list(islice(cursor.iternext(), max(limit, 0)))
            if stop is not None and page and page[-1][0] >= stop:
                del page[bisect_left(page, (stop,)) :]  # (stop,) sorts before (stop, value)
            return iter(page)
        items = cursor.iternext()
        if stop is not None:
            items = takewhile(partial(gt, (stop,)), items)  # (stop,) > (k, v)  <=>  k < stop
    else:
        found = cursor.last() if stop is None or not cursor.set_range(stop) else cursor.prev()
        if not found:
            return iter(())
        items = cursor.iterprev()
        if start:
            items = takewhile(partial(le, (start,)), items)  # (start,) <= (k, v)  <=>  k >= start
    if limit is not None:
        items = islice(items, max(limit, 0))
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
