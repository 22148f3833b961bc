"""The default scheme: FoundationDB tuples, with the path nested as one element.

A stored key is ``raw_prefix + pack((path, *key_elements))``, so
``fdb.tuple.unpack(stored[len(raw_prefix):])`` gives ``(path, *key)``. The layout
after ``raw_prefix``::

    05 <path elements, None as 00 ff> 00 <key elements>
    └────────────── P ──────────────┘
    └────────── prefix(path) ──────────┘

* own keys of ``path`` are ``[prefix, prefix + ff)``: after the prefix comes a
  top-level element, whose type code is below ``ff``; a child whose first component
  is None continues ``P 00 ff …`` and lies at or after ``prefix + ff``;
* the subtree is ``[P, P + ff)``: every descendant continues ``P`` with an element
  code below ``ff`` (or the ``00`` that ends the path), while a foreign path whose
  bytes merely extend the last component (``("ab",)`` vs ``("ab\\x00cd",)``:
  ``… 00 ff …``) continues with ``ff``;
* keys sort by tuple order inside a scope, and scopes by their path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .._bytes import prefix_end
from ..errors import DecodeError, IncompleteVersionstamp, InvalidKey, InvalidName, show_bytes
from ..tuples import _accel_unpack, _not_utf8, pack, unpack
from ._base import Key, Path, Property, Scheme, checked_path, decode_arguments
from ._layouts import TUPLE, Layout

__all__ = ["TupleScheme"]

_FRAME_STR = (b"\x02", b"\x00")
_FRAME_BYTES = (b"\x01", b"\x00")
_NESTED_NONE = b"\x00\xff"


def _key_of(elements: tuple[Any, ...]) -> Key:
    """The key for decoded key elements: the bare element when there is one (unless
    it is itself a tuple, which stays wrapped so that it reads back as a one-element
    key, not as a composite key), else the tuple."""
    if len(elements) == 1 and type(elements[0]) is not tuple:
        return elements[0]
    return elements


class TupleScheme(Scheme):
    """FoundationDB tuple layer keys: ``raw_prefix + pack((path, *key))``.

    * Path components and keys are any tuple-layer values: None, bytes, str, int,
      float, bool, uuid.UUID, tuple, and :class:`keyspace.tuples.SingleFloat` and
      :class:`keyspace.tuples.Versionstamp` (complete; an incomplete one raises
      :class:`~keyspace.errors.IncompleteVersionstamp`).
    * Keys: a Python tuple is a composite key (its elements follow the path
      flattened, so ranges on leading elements work: :meth:`key_prefix_range`); any
      other value is a one-element key, and ``(x,)`` is the same key as ``x``.
      Decoding gives back the bare element for one element and a tuple for zero
      or two and more elements (and ``((a, b),)`` for a single nested-tuple
      element, so that it does not read back as the composite key ``(a, b)``).
    * Every property 1–6 holds; own keys, children and the subtree are each one
      exact range.
    * ``metadata_key`` is ``raw_prefix + ff + b"keyspace"``, which no stored key can
      equal (they continue ``raw_prefix`` with ``05``): :meth:`footprint` is
      ``[raw_prefix 05, raw_prefix 06)``, so keyspaces under different raw
      prefixes share a store.

    Cost: ``prefix`` packs the path once per scope; ``encode_key`` of a bytes or
    str key is one ``replace`` and one ``join`` in C; ``decode`` is one unpack.
    """

    name: ClassVar[str] = "tuple"
    properties: ClassVar[frozenset[Property]] = frozenset(Property)
    separates_own_keys: ClassVar[bool] = True
    typed_keys: ClassVar[bool] = True

    def __init__(self, raw_prefix: bytes | str = b"") -> None:
        """``raw_prefix``: bytes in front of every stored key, or their hex string
        (the form :meth:`params` records in a keyspace's metadata)."""
        if isinstance(raw_prefix, str):
            try:
                raw_prefix = bytes.fromhex(raw_prefix)
            except ValueError:
                raise InvalidName(f"raw_prefix {raw_prefix!r} is a str but not hex digits") from None
        if not isinstance(raw_prefix, (bytes, bytearray, memoryview)):
            raise InvalidKey(
                f"raw_prefix {raw_prefix!r} has type {type(raw_prefix).__name__}; "
                "it must be bytes (or a str of hex digits)"
            )
        self._raw_prefix = bytes(raw_prefix)

    @property
    def raw_prefix(self) -> bytes:
        """Bytes in front of every stored key (``b""`` by default)."""
        return self._raw_prefix

    # -- paths and keys ---------------------------------------------------------

    def prefix(self, path: Path) -> bytes:
        """Return ``raw_prefix + pack((path,))``: ``raw_prefix 05 <path> 00``.

        Raises :class:`InvalidName` when ``path`` is not a tuple or holds a value
        the tuple layer cannot encode.
        """
        path = checked_path(path)
        try:
            return self._raw_prefix + pack((path,))
        except IncompleteVersionstamp as exc:
            raise IncompleteVersionstamp(f"scope path {show_bytes(path)}: {exc}") from None
        except TypeError as exc:
            raise InvalidName(f"scope path {show_bytes(path)}: {exc}") from None

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` if a component is not a tuple-layer value."""
        self.prefix(path)

    def encode_key(self, key: Key) -> bytes:
        """Return ``pack(key)`` for a tuple key, else ``pack((key,))``.

        Raises :class:`InvalidKey` for a value the tuple layer cannot encode (tuples
        nested deeper than :data:`keyspace.tuples.MAX_NESTING` included) and
        :class:`InvalidName` for a str with lone surrogates or an int over 255 bytes:
        :func:`keyspace.tuples.pack`'s errors, a bare str key's included.
        """
        kind = type(key)
        if kind is bytes:
            raw: bytes = key
            return raw.replace(b"\x00", b"\x00\xff").join(_FRAME_BYTES)
        try:
            if kind is str:
                text: str = key
                return text.encode().replace(b"\x00", b"\x00\xff").join(_FRAME_STR)
            return pack(key if issubclass(kind, tuple) else (key,))
        except UnicodeEncodeError as exc:  # a str key with lone surrogates: pack's error for it
            raise _not_utf8(key, exc) from None
        except IncompleteVersionstamp as exc:
            raise IncompleteVersionstamp(f"key {show_bytes(key)}: {exc}") from None
        except TypeError as exc:
            raise InvalidKey(f"key {show_bytes(key)}: {exc}") from None

    def decode_key(self, raw: bytes) -> Key:
        """Inverse of :meth:`encode_key` (see the class notes on one-element keys).
        Raises :class:`DecodeError`."""
        return _key_of(unpack(raw))

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``tuple`` transform: bytes keys framed ``01 key(00 -> 00 ff) 00``,
        str keys ``02 utf8 00``, every other key packed."""
        return Layout(self, path, kind=TUPLE, accelerate=accelerate)

    # -- the scheme interface ---------------------------------------------------
    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Split a stored key into ``(path, key)``.

        Raises :class:`DecodeError` when ``stored`` does not start with
        ``raw_prefix``, is not a valid tuple, does not start with a nested tuple
        (the path), or has a path of another length than ``depth`` (when given).
        """
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        rp = self._raw_prefix
        if not stored.startswith(rp):
            raise DecodeError(
                f"stored key {show_bytes(stored)} does not start with the raw prefix {show_bytes(rp)}", 0
            )
        items = unpack(stored, len(rp))
        if not items or type(items[0]) is not tuple:
            raise DecodeError(
                f"stored key {show_bytes(stored)} does not start with a path tuple at offset {len(rp)}",
                len(rp),
            )
        path = items[0]
        if depth is not None and depth != len(path):
            raise DecodeError(
                f"stored key {show_bytes(stored)} has a path of {len(path)} components, not "
                f"{show_bytes(depth)}"
            )
        return path, _key_of(items[1:])

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """``[prefix, prefix + ff)``: exactly the scope's own keys, no child's."""
        start = self.prefix(path)
        return start, start + b"\xff"

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """``[P, P + ff)`` with ``P = prefix[:-1]`` (the path without its ``00``
        terminator): exactly the scope's keys and every descendant's."""
        start = self.prefix(path)[:-1]
        return start, start + b"\xff"

    def child_step(self, path: Path) -> Callable[[bytes], tuple[Any, bytes | None] | None]:
        """:meth:`Scheme.child_step` read off the stored bytes: one unpack of the
        stored key, and the child's subtree end is the stored key cut after the
        child's element (``P + element``) plus ``ff``, as :meth:`subtree_range`
        gives it. Cost: one C unpack; the element of a bytes or ASCII str child
        holding no NUL ends ``len(child)`` bytes after its code, any other is
        packed again (one C pack)."""
        base = self.subtree_range(path)[0]
        at = len(base)
        depth = len(path)
        skip = len(self._raw_prefix)
        quick = _accel_unpack

        def step(stored: bytes) -> tuple[Any, bytes | None] | None:
            items = None if quick is None else quick(stored, skip)  # None: unpack says why
            if items is None:
                try:
                    items = unpack(stored, skip)
                except DecodeError:
                    return None
            if not items or type(items[0]) is not tuple or len(items[0]) <= depth:
                return None
            child = items[0][depth]
            if type(child) is bytes or (type(child) is str and child.isascii()):
                # its element is code, len(child) bytes and 00, unless it holds a NUL:
                # then the 00 found there is followed by ff (an escape), or is no 00
                end = at + 1 + len(child)
                if stored[end] == 0 and (len(stored) == end + 1 or stored[end + 1] != 0xFF):
                    return child, stored[: end + 1] + b"\xff"
            # the child's element as nested in the path: pack's, except None (00 ff)
            element = _NESTED_NONE if child is None else pack((child,))
            if stored.startswith(element, at):
                return child, stored[: at + len(element)] + b"\xff"
            return child, self.subtree_range((*path, child))[1]  # a non-canonical element

        return step

    def key_prefix_range(self, path: Path, key_prefix: tuple[Any, ...]) -> tuple[bytes, bytes]:
        """The range of the own composite keys whose leading elements equal
        ``key_prefix``, the key equal to ``key_prefix`` included:
        ``[prefix + pack(kp), prefix + pack(kp) + ff)``. A non-tuple ``key_prefix``
        is one element; ``()`` gives :meth:`own_range`."""
        if not isinstance(key_prefix, tuple):
            key_prefix = (key_prefix,)
        start = self.prefix(path) + self.encode_key(key_prefix)
        return start, start + b"\xff"

    def footprint(self) -> tuple[tuple[bytes, bytes | None], ...]:
        """``[raw_prefix 05, raw_prefix 06)``: every stored key is ``raw_prefix``
        then a packed tuple whose first element is the nested path (code ``05``).
        The metadata key (``raw_prefix ff …``) lies outside it."""
        start = self.subtree_range(())[0]
        return ((start, prefix_end(start)),)

    @property
    def metadata_key(self) -> bytes | None:
        """``raw_prefix + ff + b"keyspace"``; stored keys continue ``raw_prefix`` with
        ``05``, so none can equal it."""
        return self._raw_prefix + b"\xffkeyspace"

    def params(self) -> Mapping[str, Any]:
        return {"raw_prefix": self._raw_prefix.hex()}
