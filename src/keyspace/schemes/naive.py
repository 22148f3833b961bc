"""Plain concatenation, ``c1 c2 … key``: the encoding to avoid.

Nothing marks where a component ends, so different scopes share stored keys: key
``bar`` in scope ``foo`` and key ``obar`` in scope ``fo`` are both ``foobar``. The
scheme exists to read data written that way and to show the collision; it refuses to
encode unless constructed with ``Naive(allow_collisions=True)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .._bytes import prefix_end
from ..errors import DecodeError, LayoutError, show_bytes
from ._base import Key, Path, Property, Scheme, checked_path, component_bytes, decode_arguments, key_bytes
from ._layouts import GENERAL, RAW, Layout

__all__ = ["Naive"]


class Naive(Scheme):
    """``c1 c2 … key`` with no separators: unsafe, for legacy data only.

    * ``encode`` and ``encode_key`` raise :class:`LayoutError` unless
      ``allow_collisions=True`` (needed for reads too, as reads encode keys).
    * Declared properties: 1 (any bytes) and 3 (order within a scope). Not 2
      (``foo|bar`` = ``fo|obar``), not 4 (``(b"a",)`` < ``(b"ab",)`` but key ``c`` of
      the first sorts after key ``""`` of the second), not 5 (``(b"a", b"b")`` and
      ``(b"ab",)`` are the same scope), not 6 (the boundaries are not recorded).
    * A scope's range also holds the keys of every scope whose name extends its
      own (``fo`` holds ``foo``'s keys), and no byte test can tell them apart.
    * No metadata key.
    """

    name: ClassVar[str] = "naive"
    properties: ClassVar[frozenset[Property]] = frozenset({Property.ANY_BYTES, Property.ORDER_WITHIN})
    separates_own_keys: ClassVar[bool] = False
    max_decode_depth: ClassVar[int | None] = 0
    refuses_writes: ClassVar[bool] = True

    def __init__(self, allow_collisions: bool = False) -> None:
        self._allow_collisions = bool(allow_collisions)

    @property
    def allow_collisions(self) -> bool:
        """True when the scheme was asked to encode despite the collisions."""
        return self._allow_collisions

    def refuse_change(self, what: str) -> None:
        """Raise :class:`LayoutError` unless built with ``allow_collisions=True``."""
        if not self._allow_collisions:
            raise LayoutError(
                f"the naive scheme refuses to {what}: plain concatenation makes different scopes share "
                "stored keys (key b'bar' in scope b'foo' and key b'obar' in scope b'fo' are both b'foobar', "
                "and a scope's range holds the keys of every scope whose name extends its own); "
                "use Naive(allow_collisions=True) only to read legacy data"
            )

    def _encode_new(self, path: Path, key: Key) -> bytes:
        """Refuse (:class:`LayoutError`) before compiling anything, unless built with
        ``allow_collisions=True``; then compile and memoise the path as every scheme does."""
        self.refuse_change(f"encode key {show_bytes(key)}")
        return super()._encode_new(path, key)

    def encode_key(self, key: Key) -> bytes:
        """Return ``key`` (only with ``allow_collisions=True``)."""
        self.refuse_change(f"encode key {show_bytes(key)}")
        return key_bytes(key)

    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Return ``((), stored)`` for ``depth=0``; any other depth (or none) raises
        :class:`DecodeError`: the format does not record where components end."""
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        if depth != 0:
            raise DecodeError(
                f"cannot split {show_bytes(stored)} into "
                f"{'path components' if depth is None else show_bytes(depth)} "
                "and a key: the naive scheme does not record where a component ends (only depth=0 decodes)"
            )
        return (), stored

    def prefix(self, path: Path) -> bytes:
        """Return the concatenated components."""
        return b"".join([component_bytes(c) for c in checked_path(path)])

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` for a component that is not bytes or str."""
        self.prefix(path)

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Every key that starts with the concatenated components (and so every
        key of every scope whose concatenated name extends it)."""
        start = self.prefix(path)
        return start, prefix_end(start)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Same as :meth:`own_range`."""
        return self.own_range(path)

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``raw`` transform with ``allow_collisions=True``; else ``general``,
        whose every key refuses (:class:`LayoutError`)."""
        kind = RAW if self._allow_collisions else GENERAL
        return Layout(self, path, kind=kind, accelerate=accelerate)

    def own_range_is_exact(self) -> bool:
        return False

    def params(self) -> Mapping[str, Any]:
        return {"allow_collisions": self._allow_collisions}
