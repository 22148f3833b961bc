"""A page's keys without the prefix every key of it shares, :func:`cut_keys`: one
C loop (``_pairs_accel``) where the optional module is built, else
:func:`cut_keys_py`, its reference. ``ReadView.read_pages(..., cut=n)`` gives its
pages through it where the engine cannot leave the prefix out itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["cut_keys", "cut_keys_py"]


def cut_keys_py(page: list[tuple[bytes, Any]], cut: int) -> list[tuple[bytes, Any]]:
    """The ``(key, value)`` pairs of ``page`` with the first ``cut`` bytes of each
    key dropped. Raises :class:`ValueError` for a negative ``cut`` or a key
    shorter than ``cut``. Cost: one new key and pair per item.

    >>> cut_keys_py([(b"users!ann", b"1"), (b"users!bob", b"2")], 6)
    [(b'ann', b'1'), (b'bob', b'2')]
    """
    if cut < 0:
        raise ValueError(f"cut_keys: cut={cut} is negative")
    out = []
    for i, (key, value) in enumerate(page):
        if len(key) < cut:
            raise ValueError(
                f"cut_keys: item {i} of the page is not a (key, value) pair whose key "
                f"holds the {cut} bytes to cut"
            )
        out.append((key[cut:], value))
    return out


cut_keys: Callable[[list[tuple[bytes, Any]], int], list[tuple[bytes, Any]]]
try:
    from ._pairs_accel import cut_keys
except ImportError:  # pragma: no cover - the optional C module is not built
    cut_keys = cut_keys_py
