"""Length-prefixed namespaces, byte-identical to cosmwasm-std ``storage_keys``.

A stored key is ``u16be(len c1) c1 … u16be(len cm) cm key``: every path component
carries a 2-byte big-endian length, the key is appended raw. This is what
cosmwasm-std's ``namespace_with_key`` writes and what cw-storage-plus ``Map`` keys
look like, so CosmWasm contract storage can be read and written in place.

The module keeps CosmWasm's function names::

    to_length_prefixed(b"bar")                    == b"\\x00\\x03bar"
    to_length_prefixed_nested([b"bar", b"cool"])  == b"\\x00\\x03bar\\x00\\x04cool"
    namespace_with_key([b"bar", b"cool"], b"foo") == b"\\x00\\x03bar\\x00\\x04coolfoo"
    decompose(b"\\x00\\x03bar\\x00\\x04coolfoo", 2) == ((b"bar", b"cool"), b"foo")

Because the key is not length-prefixed, the format does not record how many
components a stored key has: ``((b"a",), b"\\x00\\x01b")`` and ``((b"a", b"b"), b"")``
are the same bytes. Decoding therefore needs the depth, and a scope holds either keys
or child scopes, never both (the scope layer enforces this with ``LayoutError``).
Among paths of one depth the encoding is collision-free.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from .._bytes import _BYTE, prefix_end
from ..errors import DecodeError, InvalidArgument, KeyTooLarge, show_bytes
from ._base import (
    Component,
    Key,
    Path,
    Property,
    Scheme,
    checked_path,
    component_bytes,
    decode_arguments,
    in_c,
    key_bytes,
)
from ._layouts import RAW, Layout
from ._paths import exact_path, remember

_PREFIXES_MOST = 1024
"""Prefixes a LengthPrefixed object keeps (the oldest dropped first)."""

__all__ = [
    "MAX_COMPONENT_LENGTH",
    "LengthPrefixed",
    "decompose",
    "encode_length",
    "namespace_with_key",
    "to_length_prefixed",
    "to_length_prefixed_nested",
]

MAX_COMPONENT_LENGTH = 0xFFFF
"""Longest path component the 2-byte length field can describe (65535 bytes)."""

_U16BE = struct.Struct(">H")
_pack_u16 = _U16BE.pack
_unpack_u16 = _U16BE.unpack_from


def _too_large(component: bytes) -> KeyTooLarge:
    return KeyTooLarge(
        f"namespace component {show_bytes(component)} is {len(component)} bytes long; "
        f"length-prefixed namespaces take components up to {MAX_COMPONENT_LENGTH} bytes"
    )


def encode_length(length: int) -> bytes:
    """Return the 2-byte big-endian length field for a component of ``length`` bytes.

    Raises :class:`KeyTooLarge` above 65535 (where cosmwasm-std panics), and
    :class:`InvalidArgument` for a length that is not a non-negative int.
    """
    if type(length) is not int or length < 0:
        raise InvalidArgument(f"a component length is an int from 0 to 65535, not {show_bytes(length)}")
    if length > MAX_COMPONENT_LENGTH:
        raise KeyTooLarge(
            f"namespace component length {length} is over the limit of {MAX_COMPONENT_LENGTH} bytes"
        )
    return _pack_u16(length)


def to_length_prefixed(component: Component) -> bytes:
    """Return ``u16be(len component) | component``.

    ``component`` is bytes or str (UTF-8). Raises :class:`KeyTooLarge` for a
    component over 65535 bytes. Cost: one copy of the component.
    """
    raw = component_bytes(component)
    if len(raw) > MAX_COMPONENT_LENGTH:
        raise _too_large(raw)
    return _pack_u16(len(raw)) + raw


def _sequence(components: Any) -> Iterable[Component]:
    """``components``, refused (:class:`InvalidArgument`) when it is one component
    (a str or bytes, which would iterate as one-character components or ints)
    or not iterable."""
    if isinstance(components, (str, bytes, bytearray, memoryview)):
        raise InvalidArgument(
            f"components is one {type(components).__name__} {show_bytes(components)}, not a sequence of "
            f"components: pass [{show_bytes(components)}] for one namespace"
        )
    try:
        iter(components)
    except TypeError:
        raise InvalidArgument(
            f"components is {show_bytes(components)}, not a sequence of components (bytes or str)"
        ) from None
    return components  # type: ignore[no-any-return]


def to_length_prefixed_nested(components: Iterable[Component]) -> bytes:
    """Return the concatenation of ``to_length_prefixed(c)`` over ``components``;
    an empty sequence gives ``b""``.

    Raises :class:`KeyTooLarge` if any component is over 65535 bytes (the limit is
    per component, not on the total), and :class:`InvalidArgument` when
    ``components`` is one str or bytes (``"balance"``, which would otherwise be
    seven one-character components: pass ``["balance"]``) or not iterable.
    Cost: one pass, one final join.
    """
    if type(components) is not tuple and type(components) is not list:
        components = _sequence(components)
    parts: list[bytes] = []
    append = parts.append
    for component in components:
        raw = component_bytes(component)
        if len(raw) > MAX_COMPONENT_LENGTH:
            raise _too_large(raw)
        append(_pack_u16(len(raw)))
        append(raw)
    return b"".join(parts)


def namespace_with_key(components: Iterable[Component], key: bytes) -> bytes:
    """Return ``to_length_prefixed_nested(components) | key``; the key is not
    length-prefixed, and with no components the result is the key itself.
    ``components`` is a sequence (``["balance"]``): one str or bytes raises
    :class:`InvalidArgument`."""
    return to_length_prefixed_nested(components) + key_bytes(key)


def decompose(raw: bytes, depth: int) -> tuple[tuple[bytes, ...], bytes]:
    """Split a stored key into its ``depth`` namespace components and the key.

    The inverse of :func:`namespace_with_key` for a known depth:
    ``decompose(namespace_with_key(cs, k), len(cs)) == (tuple(cs), k)`` for bytes
    components. Raises :class:`DecodeError` (with the offset) when ``raw`` ends
    inside a length field or a component, or when ``depth`` is negative;
    :class:`~keyspace.errors.InvalidArgument` when ``raw`` is not bytes-like or
    ``depth`` not an int. Cost: O(depth) slices; the bounds are checked once, at the end (offsets only
    grow), and a key that fails is read again by the checked loop that names
    the fault.
    """
    if type(raw) is not bytes or type(depth) is not int:
        raw, checked = decode_arguments(LengthPrefixed(), raw, depth)
        if checked is None:
            raise DecodeError(f"depth must be 0 or more, not {show_bytes(depth)}")
        depth = checked
    components: list[bytes] = []
    offset = 0
    try:
        for _ in range(depth):
            start = offset + 2
            offset = start + ((raw[offset] << 8) | raw[offset + 1])
            components.append(raw[start:offset])
    except IndexError:  # a length field past the end
        return _decompose_checked(raw, depth)
    if offset > len(raw) or depth < 0:
        return _decompose_checked(raw, depth)
    return tuple(components), raw[offset:]


def _decompose_checked(raw: bytes, depth: int) -> tuple[tuple[bytes, ...], bytes]:
    """:func:`decompose` with every bound checked where it is crossed: the
    reference, which raises the :class:`DecodeError` naming the fault."""
    if depth < 0:
        raise DecodeError(f"depth must be 0 or more, not {show_bytes(depth)}")
    components: list[bytes] = []
    offset = 0
    end = len(raw)
    for index in range(depth):
        if offset + 2 > end:
            raise DecodeError(
                f"stored key {show_bytes(raw)} ends at byte {end} inside the length field of "
                f"component {index} (of {show_bytes(depth)}) at offset {offset}",
                offset,
            )
        (length,) = _unpack_u16(raw, offset)
        start = offset + 2
        offset = start + length
        if offset > end:
            raise DecodeError(
                f"stored key {show_bytes(raw)} ends at byte {end} inside component {index} "
                f"(of {show_bytes(depth)}), which starts at offset {start} and declares {length} bytes",
                start,
            )
        components.append(raw[start:offset])
    return tuple(components), raw[offset:]


class LengthPrefixed(Scheme):
    """cosmwasm-std's length-prefixed namespaces: ``u16be(len c1) c1 … key``.

    * Components are bytes or str (UTF-8) of at most 65535 bytes each
      (:class:`KeyTooLarge` beyond); keys are any bytes, stored raw.
    * Declared properties: 3 (order within a scope: the key is appended raw) and 5
      (any depth). Not 1 (the component limit), not 2 (collisions across depths:
      ``((b"a",), b"\\x00\\x01b")`` and ``((b"a", b"b"), b"")`` share bytes; paths
      of one depth never collide), not 4 (scopes sort by length first), not 6
      (decoding needs the depth).
    * A scope's own range also holds its children's keys, and no byte test tells
      them apart (:attr:`separates_own_keys` is False): the scope layer lets a
      scope hold keys or child scopes, not both, and under that rule
      :meth:`own_range` is exact.
    * No metadata key: every byte string is a valid root key of the format (a
      keyspace refuses those that fall where it keeps its records, see
      :class:`~keyspace.errors.ReservedKey`). A keyspace records its leaves
      instead (:attr:`records_layout`), unless opened with ``leaf_depth``.

    Cost: ``encode`` and ``prefix`` are O(total length) with one join.
    """

    name: ClassVar[str] = "length-prefixed"
    properties: ClassVar[frozenset[Property]] = frozenset({Property.ORDER_WITHIN, Property.NESTING})
    separates_own_keys: ClassVar[bool] = False
    key_is_raw: ClassVar[bool] = True
    decode_needs_depth: ClassVar[bool] = True
    records_layout: ClassVar[bool] = True
    _prefixes: dict[Path, bytes]  # made by prefix() when first asked

    @in_c("lp_decode")
    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Return ``decompose(stored, depth)``; ``depth`` is required because the
        format does not record it (:class:`DecodeError` without it). Served in C
        where the optional module is built (``_layouts_accel.lp_decode``, whose
        reference this method is: its ``__wrapped__``)."""
        if depth is None:  # decompose checks the arguments otherwise
            if type(stored) is not bytes:
                stored = decode_arguments(self, stored, None)[0]
            raise DecodeError(
                f"cannot decode {show_bytes(stored)}: the length-prefixed format does not record "
                "how many namespace components a stored key has; pass its depth (depth=, or --depth on "
                "the command line)"
            )
        return decompose(stored, depth)

    def prefix(self, path: Path) -> bytes:
        """Return ``to_length_prefixed_nested(path)``, kept for the last
        :data:`_PREFIXES_MOST` paths of exact str and bytes components (a scope
        bound to each new snapshot or transaction asks its prefix and its
        checks again). Cost: a kept path, one dict lookup and one C type check."""
        try:
            found: bytes = self._prefixes[path]
        except MemoryError:
            raise
        except Exception:  # none kept yet, a new path, or an unhashable one
            pass
        else:
            if exact_path(path):  # not an equal path of other types
                return found
        made = to_length_prefixed_nested(checked_path(path))
        if exact_path(path):
            try:
                prefixes = self._prefixes
            except AttributeError:
                prefixes = self._prefixes = {}
            remember(prefixes, path, made, _PREFIXES_MOST)
        return made

    def child_step(self, path: Path) -> Callable[[bytes], tuple[Component, bytes | None] | None]:
        """The default's step (:meth:`Scheme.child_step`), with the child read off
        the stored key in one frame: after the path's prefix, the child's u16
        length and bytes, and its subtree end the prefix end of the key up to
        them, in place of a decode of the key, the width and the range end as
        calls of their own. A key that does not start with the prefix or ends
        inside the child's length or bytes goes to the default step, which says
        what it is. Cost: one frame and three slices."""
        prefix = self.prefix(path)
        at = len(prefix)
        slow = super().child_step(path)
        starts, next_byte = bytes.startswith, _BYTE

        def step(stored: bytes) -> tuple[Component, bytes | None] | None:
            if type(stored) is not bytes or len(stored) < at + 2 or not starts(stored, prefix):
                return slow(stored)
            end = at + 2 + ((stored[at] << 8) | stored[at + 1])
            if end > len(stored):
                return slow(stored)
            last = stored[end - 1]
            if last == 0xFF:
                return stored[at + 2 : end], prefix_end(stored[:end])
            return stored[at + 2 : end], stored[: end - 1] + next_byte[last + 1]

        return step

    def component_width(self, component: Any) -> int:
        """A big-endian u16 length and the component's bytes."""
        return 2 + len(component_bytes(component))

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` or :class:`KeyTooLarge` for an unusable path."""
        self.prefix(path)

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Every stored key that starts with ``prefix(path)``: the scope's keys, or
        (for a branch scope) its children's keys. The root gives ``(b"", None)``."""
        start = self.prefix(path)
        return start, prefix_end(start)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Same as :meth:`own_range`: the prefix range holds the whole subtree."""
        return self.own_range(path)

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``raw`` transform: the key follows the length-prefixed path."""
        return Layout(self, path, kind=RAW, accelerate=accelerate)

    def params(self) -> Mapping[str, Any]:
        return {}
