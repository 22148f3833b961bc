"""A page of an engine iterator cut at a bound, :func:`take_until`: one C loop
(``_pairs_accel``) that compares each key with the bound by ``memcmp``, where the
optional module is built, else ``None``; :func:`take_until_py` is its reference.
:func:`~keyspace.stores._base.pages_of` reads a scan's items as pages with it.

An ``itertools.takewhile`` over a ``partial(operator.gt, (bound,))`` costs about
20 ns an item in a Python-level call and a tuple comparison; the C loop, one
``memcmp``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, TypeVar

__all__ = ["take_until", "take_until_py"]

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
