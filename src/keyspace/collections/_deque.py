"""``Deque``: a double-ended queue, laid out as cw-storage-plus's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from ..codecs import Codec
from ..errors import CollectionFull, DecodeError, InvalidArgument, show_bytes
from ..scope import Scope
from ._base import Collection, owns_transaction
from ._keys import KeySpec
from ._layouts import Layout

__all__ = ["Deque"]

_WRAP = 1 << 32
_HEAD, _TAIL = ("h",), ("t",)


class _Keys(Protocol):
    """What a deque needs of the keys it keeps: their scope and their keys."""

    def scope(self, base: Scope) -> Scope: ...
    def key(self, elements: tuple[Any, ...]) -> Any: ...


def _u32(raw: bytes | None) -> int:
    if raw is None:
        return 0
    if len(raw) != 4:
        raise DecodeError(f"a deque head or tail is 4 bytes (u32 big-endian), got {show_bytes(raw)}", 0)
    return int.from_bytes(raw, "big")


class Deque(Collection):
    """A double-ended queue in namespace ``namespace`` of ``scope``.

    Items sit at u32 positions (wrapping around), the head and tail positions
    under the keys ``"h"`` and ``"t"`` as 4 raw big-endian bytes; under the
    CosmWasm layout these are cw-storage-plus's ``Deque`` bytes
    (``len(ns) ns u32be(pos)``, ``len(ns) ns "h"``). ``push_back``/``push_front``/
    ``pop_back``/``pop_front`` are atomic (the caller's transaction under
    ``using``); each costs two point reads and two writes. ``front``/``back``/
    ``get(i)``/``len`` cost two or three point reads; iteration one per item.
    Holds at most 2**32 - 1 items.
    """

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        *,
        value: str | Codec | None = None,
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, layout)
        self.namespace = namespace
        self.codec = self.layout.value_codec(value)
        self._items: _Keys = self.layout.namespace(namespace, KeySpec("u32"))
        self._meta: _Keys = self.layout.namespace(namespace, KeySpec("str"))

    def __repr__(self) -> str:
        return f"<Deque {self.namespace!r} ({self.layout.name}) in {self._base!r}>"

    def _ends(self, base: Scope) -> tuple[int, int]:
        meta = self._meta.scope(base)
        return _u32(meta.get(self._meta.key(_HEAD))), _u32(meta.get(self._meta.key(_TAIL)))

    def _set(self, base: Scope, which: tuple[str], pos: int) -> None:
        self._meta.scope(base)[self._meta.key(which)] = (pos % _WRAP).to_bytes(4, "big")

    def _check_room(self, head: int, tail: int) -> None:
        """:class:`CollectionFull` when the deque holds as many items as its u32
        positions can tell apart."""
        if (tail - head) % _WRAP == _WRAP - 1:
            raise CollectionFull(f"deque {self.namespace!r} is full: it holds {_WRAP - 1} items, its most")

    def __len__(self) -> int:
        head, tail = self._ends(self._base)
        return (tail - head) % _WRAP

    def is_empty(self) -> bool:
        return len(self) == 0

    @owns_transaction
    def push_back(self, value: Any) -> None:
        """Append ``value`` at the back."""
        raw = self.codec.encode(value)
        with self._atomic() as base:
            head, tail = self._ends(base)
            self._check_room(head, tail)
            items = self._items.scope(base)
            self._meta.scope(base).check_key(self._meta.key(_TAIL))
            items[self._items.key((tail,))] = raw
            self._set(base, _TAIL, tail + 1)

    @owns_transaction
    def push_front(self, value: Any) -> None:
        """Insert ``value`` at the front."""
        raw = self.codec.encode(value)
        with self._atomic() as base:
            head, tail = self._ends(base)
            self._check_room(head, tail)
            pos = (head - 1) % _WRAP
            items = self._items.scope(base)
            self._meta.scope(base).check_key(self._meta.key(_HEAD))
            items[self._items.key((pos,))] = raw
            self._set(base, _HEAD, pos)

    @owns_transaction
    def pop_back(self) -> Any:
        """Remove and return the back item (``None`` when empty)."""
        with self._atomic() as base:
            head, tail = self._ends(base)
            if head == tail:
                return None
            pos = (tail - 1) % _WRAP
            value = self._take(base, pos)
            self._set(base, _TAIL, pos)
        return value

    @owns_transaction
    def pop_front(self) -> Any:
        """Remove and return the front item (``None`` when empty)."""
        with self._atomic() as base:
            head, tail = self._ends(base)
            if head == tail:
                return None
            value = self._take(base, head)
            self._set(base, _HEAD, head + 1)
        return value

    def _take(self, base: Scope, pos: int) -> Any:
        scope, key = self._items.scope(base), self._items.key((pos,))
        raw = scope.get(key)
        value = None if raw is None else self.codec.decode(raw)  # a refusal writes nothing
        scope.discard(key)
        return value

    def get(self, index: int) -> Any:
        """The item at ``index`` from the front (negative: from the back), or
        ``None`` out of range; :class:`InvalidArgument` for an index that is not
        an int; :class:`DecodeError` when the position between the head and the
        tail holds nothing (as cw-storage-plus's "deque position not found")."""
        if type(index) is not int:
            if not isinstance(index, int) or isinstance(index, bool):
                raise InvalidArgument(f"a deque index must be an int, not {show_bytes(index)}")
            index = int.__int__(index)
        head, tail = self._ends(self._base)
        size = (tail - head) % _WRAP
        if index < 0:
            index += size
        if not 0 <= index < size:
            return None
        raw = self._items.scope(self._base).get(self._items.key(((head + index) % _WRAP,)))
        if raw is None:
            raise DecodeError(
                f"deque {self.namespace!r} has no item at index {index} between its head and tail"
            )
        return self.codec.decode(raw)

    def front(self) -> Any:
        """The front item without removing it (``None`` when empty)."""
        return self.get(0)

    def back(self) -> Any:
        """The back item without removing it (``None`` when empty)."""
        return self.get(-1)

    def __iter__(self) -> Iterator[Any]:
        """Items from front to back (reads each position once); see :meth:`iter`."""
        return self.iter()

    def __reversed__(self) -> Iterator[Any]:
        """Items from back to front (cw-storage-plus's ``iter().rev()``)."""
        return self.iter(reverse=True)

    def iter(
        self, start: int | None = None, stop: int | None = None, *, reverse: bool = False
    ) -> Iterator[Any]:
        """The items at indexes ``start`` (default 0) up to, not including,
        ``stop`` (default the length), counted from the front (negative: from
        the back, as a list slice), front to back, or back to front when
        ``reverse`` (cw-storage-plus's ``iter()`` with ``nth``/``nth_back`` and
        ``rev()``). Reads the head and tail once, then one point read per item;
        skipped items cost nothing. :class:`InvalidArgument` for an index that
        is not an int or ``None``, or a ``reverse`` that is not a bool."""
        if type(reverse) is not bool:
            raise InvalidArgument(f"reverse= takes True or False, not {show_bytes(reverse)}")
        head, tail = self._ends(self._base)
        size = (tail - head) % _WRAP
        lo, hi, _ = slice(_index(start, "start"), _index(stop, "stop")).indices(size)
        positions = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
        scope = self._items.scope(self._base)
        key, decode = self._items.key, self.codec.decode
        for i in positions:
            raw = scope.get(key(((head + i) % _WRAP,)))
            if raw is None:
                raise DecodeError(
                    f"deque {self.namespace!r} has no item at index {i} between its head and tail"
                )
            yield decode(raw)

    @owns_transaction
    def set(self, index: int, value: Any) -> None:
        """Replace the item at ``index`` from the front (negative: from the back)
        with ``value`` (``Deque::set``). :class:`InvalidArgument` (nothing
        written) for an index outside the deque or not an int. Atomic; two
        point reads and one write."""
        index = _index(index, "index")
        raw = self.codec.encode(value)
        with self._atomic() as base:
            head, tail = self._ends(base)
            size = (tail - head) % _WRAP
            at = index + size if index < 0 else index
            if not 0 <= at < size:
                raise InvalidArgument(
                    f"deque {self.namespace!r} has no index {index}: it holds {size} items (nothing written)"
                )
            self._items.scope(base)[self._items.key(((head + at) % _WRAP,))] = raw


def _index(index: Any, what: str) -> Any:
    """``index`` as an int (or ``None``); :class:`InvalidArgument` for anything else."""
    if index is None and what != "index":
        return None
    if type(index) is not int:
        if not isinstance(index, int) or isinstance(index, bool):
            raise InvalidArgument(f"a deque {what} must be an int, not {show_bytes(index)}")
        index = int.__int__(index)
    return index
