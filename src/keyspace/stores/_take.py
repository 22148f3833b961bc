"""A page of an engine iterator cut at a bound, :func:`take_until`: one C loop
(``_pairs_accel``) that compares each key with the bound by ``memcmp``, where the
optional module is built, else ``None``; :func:`take_until_py` is its reference.
:func:`pages_of` reads a scan's items as pages of growing size with it (an
``itertools`` chain without the C module), for the views' ``fast_pages``.

An ``itertools.takewhile`` over a ``partial(operator.gt, (bound,))`` costs about
20 ns an item in a Python-level call and a tuple comparison; the C loop, one
``memcmp``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice, takewhile
from operator import gt, le
from typing import Any, TypeVar

__all__ = ["FIRST_PAGE", "LAST_PAGE", "pages_of", "take_until", "take_until_py"]

FIRST_PAGE, LAST_PAGE = 16, 1024
"""The sizes of the first page :func:`pages_of` reads and of the largest: each
page is four times the one before, so a short scan reads little past what its
caller takes, and a long one's pages stay in the CPU cache."""

_T = TypeVar("_T")


def take_until_py(items: Iterator[_T], bound: bytes | None, size: int, descending: bool) -> list[_T]:
    """At most ``size`` of ``items``, ending before the first whose key lies past
    ``bound`` (``None``: no bound): ascending, a key ``>= bound``; with
    ``descending``, a key ``< bound``. An item is a key, or a tuple whose first
    item is the key. The item past the bound is consumed and dropped. Cost: a
    Python step per item.

    >>> take_until_py(iter([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]), b"c", 10, False)
    [(b'a', b'1'), (b'b', b'2')]
    >>> take_until_py(iter([b"c", b"b", b"a"]), b"b", 10, True)
    [b'c', b'b']
    >>> take_until_py(iter([b"a", b"b"]), None, 1, False)
    [b'a']
    """
    out: list[_T] = []
    for item in islice(items, max(size, 0)):
        if bound is not None:
            key: Any = item[0] if isinstance(item, tuple) and item else item
            if key < bound if descending else not key < bound:
                break
        out.append(item)
    return out


take_until: Callable[[Iterator[Any], bytes | None, int, bool], list[Any]] | None
try:
    from ._pairs_accel import take_until
except ImportError:  # pragma: no cover - the optional C module is not built
    take_until = None


def _take_chain(items: Iterator[Any], bound: bytes | None, size: int, descending: bool) -> list[Any]:
    """:func:`take_until` of ``(key, value)`` pairs with ``itertools`` alone (the
    route without the C module): ``(bound,) > (k, v)`` is ``k < bound``."""
    if bound is not None:
        items = takewhile(partial(le if descending else gt, (bound,)), items)
    return list(islice(items, max(size, 0)))


def pages_of(
    items: Iterator[tuple[bytes, bytes]], bound: bytes | None, descending: bool, limit: int | None
) -> Iterator[list[tuple[bytes, bytes]]]:
    """At most ``limit`` of the ``(key, value)`` pairs of ``items`` (an engine's
    iterator, read on past the range) as non-empty lists of :data:`FIRST_PAGE`
    items, then four times more up to :data:`LAST_PAGE`, ending before the first
    pair past ``bound`` (see :func:`take_until`). Cost per item: the engine's step
    and, with the C module, one ``memcmp``; per page, one call."""
    take = _take_chain if take_until is None else take_until
    left = limit
    size = FIRST_PAGE
    while left is None or left > 0:
        want = size if left is None else min(size, left)
        page = take(items, bound, want, descending)
        if page:
            yield page
        if len(page) < want:
            return
        if left is not None:
            left -= want
        size = min(size * 4, LAST_PAGE)
