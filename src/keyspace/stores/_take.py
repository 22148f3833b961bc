"""A page of an engine iterator cut at a bound, :func:`take_until`: one C loop
(``_pairs_accel``) that compares each key with the bound by ``memcmp``, where the
optional module is built, else ``None``; :func:`take_until_py` is its reference.
:func:`~keyspace.stores._base.pages_of` reads a scan's items as pages with it.

An ``itertools.takewhile`` over a ``partial(operator.gt, (bound,))`` costs about
20 ns an item in a Python-level call and a tuple comparison; the C loop, one
``memcmp``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ._cut import cut_keys_py

__all__ = ["may_be_record", "take_until", "take_until_py"]

_T = TypeVar("_T")


def may_be_record(item: Any, size: int) -> bool:
    """Whether ``item``, a ``(key, value)`` pair or a key of an LMDB unnamed
    database, may be LMDB's record of a named database: a pair whose value has
    ``size`` bytes (or is no bytes) and whose key holds no NUL byte, a key
    holding no NUL byte (a database's name holds none). The test the C
    ``take_until`` and ``name_candidates`` make with one ``memchr`` an item.

    >>> may_be_record((b"orders", b"x" * 48), 48), may_be_record((b"a\\x00", b"x" * 48), 48)
    (True, False)
    """
    if isinstance(item, tuple) and len(item) == 2:
        key, value = item
        return (not isinstance(value, bytes) or len(value) == size) and not _holds_nul(key)
    return not _holds_nul(item)


def _holds_nul(key: Any) -> bool:
    return isinstance(key, bytes) and 0 in key


def take_until_py(
    items: Iterator[_T],
    bound: bytes | None,
    size: int,
    descending: bool,
    cut: int = 0,
    is_record: Callable[[bytes, bytes], bool] | None = None,
    record_size: int = -1,
) -> list[_T]:
    """At most ``size`` of ``items``, ending before the first whose key lies past
    ``bound`` (``None``: no bound): ascending, a key ``>= bound``; with
    ``descending``, a key ``< bound``. An item is a key, or a tuple whose first
    item is the key. The item past the bound is consumed and dropped.

    With ``cut``, each item is a ``(key, value)`` pair given as ``(key[cut:],
    value)`` (:func:`~keyspace.stores._cut.cut_keys`'s :class:`ValueError`
    where it is no such pair). With ``is_record``, a pair that may be an LMDB
    record of a named database (its value of ``record_size`` bytes, its key
    holding no NUL: :func:`may_be_record`) is asked ``is_record(key, value)``
    and left out where it answers true, taking no place of ``size``. Cost: a
    Python step per item.

    >>> take_until_py(iter([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]), b"c", 10, False)
    [(b'a', b'1'), (b'b', b'2')]
    >>> take_until_py(iter([b"c", b"b", b"a"]), b"b", 10, True)
    [b'c', b'b']
    >>> take_until_py(iter([b"a", b"b"]), None, 1, False)
    [b'a']
    >>> take_until_py(iter([(b"p/a", b"1"), (b"p/b", b"22"), (b"p/c", b"3")]), None, 2, False, 2,
    ...               lambda k, v: k == b"p/b", 2)
    [(b'a', b'1'), (b'c', b'3')]
    """
    out: list[Any] = []
    if cut < 0:
        raise ValueError(f"take_until: cut={cut} is negative")
    end = object()
    while len(out) < size:
        item = next(items, end)
        if item is end:
            break
        if bound is not None:
            key: Any = item[0] if isinstance(item, tuple) and item else item
            if key < bound if descending else not key < bound:
                break
        if (
            is_record is not None
            and isinstance(item, tuple)
            and len(item) == 2
            and may_be_record(item, record_size)
            and is_record(*item)
        ):
            continue
        if cut:
            out += cut_keys_py([item], cut)  # type: ignore[list-item]
        else:
            out.append(item)
    return out


take_until: Callable[..., list[Any]] | None
try:
    from ._pairs_accel import take_until
except ImportError:  # pragma: no cover - the optional C module is not built
    take_until = None
