"""The size check of a batch of stored keys, :func:`first_bad_key`: one pass in C
over the keys' sizes where the optional module is built (``_pairs_accel``), else
:func:`first_bad_key_py`, its reference, in a few passes of C builtins; and
:func:`bad_key`, the key it finds, for the error that names it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from operator import itemgetter
from typing import Any

__all__ = ["bad_key", "first_bad_key", "first_bad_key_py"]

_first = itemgetter(0)


def first_bad_key_py(keys: list[Any], max_size: int | None, empty_ok: bool) -> int:
    """The index of the first item of ``keys`` whose key is not storable, or -1.
    The items are keys, or pairs whose first item is the key; a key is not
    storable when it is longer than ``max_size`` bytes (``None``: no limit) or
    empty unless ``empty_ok``. Cost: two or three passes of C builtins over the
    sizes, and a Python loop only when a key is bad.

    >>> first_bad_key_py([b"a", b"", b"bc"], 4, False)
    1
    >>> first_bad_key_py([(b"a", b"1"), (b"bcdef", b"2")], 4, True)
    1
    >>> first_bad_key_py([b"a", b""], None, True)
    -1
    """
    if not keys:
        return -1
    kinds = set(map(type, keys))
    if kinds == {tuple} and min(map(len, keys)):
        batch = list(map(_first, keys))
    elif kinds == {bytes}:
        batch = keys
    else:  # as the C function reads them: each item on its own
        batch = [item[0] if type(item) is tuple and item else item for item in keys]
    exact = set(map(type, batch)) == {bytes}  # then len() is the size, and emptiness is falsiness
    if exact and (max_size is None or max(map(len, batch)) <= max_size) and (empty_ok or all(batch)):
        return -1
    low = 0 if empty_ok else 1
    high = max_size if max_size is not None else sys.maxsize
    for i, key in enumerate(batch):
        size = bytes.__len__(key) if isinstance(key, bytes) else len(key)  # a subclass's __len__ lies
        if not low <= size <= high:
            return i
    return -1


first_bad_key: Callable[[list[Any], int | None, bool], int]
try:
    from ._pairs_accel import first_bad_key
except ImportError:  # pragma: no cover - the reference then runs
    first_bad_key = first_bad_key_py


def bad_key(items: list[Any], max_size: int | None, empty_ok: bool) -> bytes | None:
    """The first key of ``items`` (keys, or pairs whose first item is the key) that
    is not storable (see :func:`first_bad_key_py`), or ``None``. Cost: that of
    :func:`first_bad_key`.

    >>> bad_key([(b"a", b"1"), (b"", b"2")], None, False)
    b''
    >>> bad_key([b"a"], 4, False) is None
    True
    """
    at = first_bad_key(items, max_size, empty_ok)
    if at < 0:
        return None
    item = items[at]
    return item[0] if type(item) is tuple else item  # type: ignore[no-any-return]
