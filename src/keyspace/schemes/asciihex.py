"""The "0x00 separated ASCIIHEX" namespaces of webmaster128/key-namespacing.

A stored key is ``hex(c1) 00 hex(c2) 00 … hex(key)`` with lower-case hex digits.
Hex digits are the bytes ``30``–``39`` and ``61``–``66``, so the separator ``00``
never occurs inside a component, sorts below every digit (a scope sorts before its
longer-named siblings: ``f`` < ``fo`` < ``foo``), and the number of ``00`` bytes is
the depth. Every property 1–6 holds, at the price of twice the key size plus one
byte per level.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .._bytes import prefix_end
from ..errors import DecodeError, show_bytes
from ._base import (
    Component,
    Key,
    Path,
    Property,
    Scheme,
    checked_path,
    component_bytes,
    decode_arguments,
    key_bytes,
)
from ._layouts import HEX, Layout, hex_child_step

__all__ = ["AsciiHex"]


_SEP = b"\x00"
_hexlify = binascii.hexlify
_unhexlify = binascii.unhexlify
_NOT_HEX = re.compile(rb"[^0-9a-f\x00]")
_DIGITS_AND_SEP = b"0123456789abcdef\x00"

# No encoding contains ff (nor any byte above 66), so [b"", b"\xff") holds every
# stored key and the keys from ff on are free for the keyspace's own records.
_ROOT_END = b"\xff"
_METADATA_KEY = b"\xffkeyspace"


class AsciiHex(Scheme):
    """``hex(c1) 00 hex(c2) 00 … hex(key)``, lower-case hex.

    * Components and keys are any bytes (str components are UTF-8).
    * Declared properties: all of 1–6. Hex keeps byte order, and ``00`` below every
      digit keeps a shorter name before its extensions.
    * A scope's own keys and its children's keys share the prefix range and
      interleave (own key ``6162`` sorts after child key ``61 00 …``), so
      :meth:`own_range_is_exact` is False and :meth:`is_own_remainder` tells them
      apart: an own key's remainder has no ``00``.
    * :attr:`metadata_key` starts with ``ff``, a byte no encoding contains; the root
      ranges end at ``ff`` so they never include it.

    Cost: ``encode`` is O(total length): one hexlify per component in C and one join.
    """

    name: ClassVar[str] = "asciihex"
    properties: ClassVar[frozenset[Property]] = frozenset(Property)

    def prefix(self, path: Path) -> bytes:
        """Return each component's hex digits followed by ``00``; ``b""`` for the root."""
        path = checked_path(path)
        if not path:
            return b""
        return b"\x00".join([_hexlify(component_bytes(c)) for c in path]) + _SEP

    def component_width(self, component: Any) -> int:
        """Two hex digits a byte, and ``00``."""
        return 2 * len(component_bytes(component)) + 1

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` for a path that is not a tuple or a component
        that is not bytes or str."""
        for component in checked_path(path):
            component_bytes(component)

    def encode_key(self, key: Key) -> bytes:
        """Return the lower-case hex digits of ``key``."""
        return _hexlify(key_bytes(key))

    def decode_key(self, raw: bytes) -> Key:
        """Return the bytes whose hex digits ``raw`` is; :class:`DecodeError` for
        anything else (upper case, odd length, ``00`` or other non-digits)."""
        _check_digits(raw, raw)
        if 0 in raw:
            offset = raw.index(b"\x00")
            raise DecodeError(f"key part {show_bytes(raw)} has a 00 separator at offset {offset}", offset)
        return _unhex(raw, raw, 0)

    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Split ``stored`` on ``00`` and unhex each part: the last part is the key,
        the others are the path (so the depth is the number of ``00`` bytes).

        ``depth``, when given, must match. Raises :class:`DecodeError` with the offset
        for upper-case digits, non-hex bytes, an odd number of digits in a part, or
        a depth mismatch. Cost: O(len(stored)), in C: ``unhexlify`` refuses every
        byte but a hex digit and every odd part, and ``islower`` (else one
        ``translate``, for keys with no letter) the upper-case digits it accepts.
        """
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        parts = stored.split(_SEP)
        if (depth is None or depth == len(parts) - 1) and (
            stored.islower() or not stored.translate(None, _DIGITS_AND_SEP)
        ):
            try:  # the common case: lower-case digits, even parts
                fast = list(map(_unhexlify, parts))
            except binascii.Error:
                pass  # a byte that is no digit, or an odd part: the checks below name it
            else:
                key = fast.pop()
                return tuple(fast), key
        _check_digits(stored, stored)
        if depth is not None and depth != len(parts) - 1:
            raise DecodeError(
                f"stored key {show_bytes(stored)} has {len(parts) - 1} path components, not "
                f"{show_bytes(depth)}"
            )
        decoded: list[bytes] = []
        offset = 0
        for part in parts:
            decoded.append(_unhex(part, stored, offset))
            offset += len(part) + 1
        key = decoded.pop()
        return tuple(decoded), key

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Prefix range of the scope: its own keys and its children's (filter with
        :meth:`is_own_remainder`). The root gives ``(b"", b"\\xff")``."""
        start = self.prefix(path)
        return start, (prefix_end(start) if start else _ROOT_END)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Same as :meth:`own_range`: the scope and everything below it."""
        return self.own_range(path)

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``hex`` transform; own keys are the remainders without ``00``
        (``lacks``: a count of them is a count of the keys without it)."""
        return Layout(self, path, kind=HEX, accelerate=accelerate, lacks=_SEP[0])

    def own_range_is_exact(self) -> bool:
        return False

    def child_step(self, path: Path) -> Callable[[bytes], tuple[Component, bytes | None] | None]:
        """The default's step (:meth:`Scheme.child_step`), with the child read off
        the stored key in one frame: the key's decode fast path inline (one split,
        one ``unhexlify`` a part) and the child's subtree end its hex digits and
        ``01``, in place of the decode, the width and the range end as calls of
        their own. A key that path does not take (a byte that is no lower-case
        digit, an odd part) goes to the default step, which says what it is.
        Built with the C module, the step is its C form
        (:func:`keyspace.schemes._layouts_accel.hex_child_step`), this one its reference.
        Cost: one pass over the key."""
        depth = len(path)
        at = len(self.prefix(path))
        slow = super().child_step(path)
        unhexlify, sep, digits = _unhexlify, _SEP, _DIGITS_AND_SEP
        hex_error = binascii.Error

        def step(stored: bytes) -> tuple[Component, bytes | None] | None:
            if type(stored) is not bytes or not (stored.islower() or not stored.translate(None, digits)):
                return slow(stored)
            parts = stored.split(sep)
            if len(parts) <= depth + 1:
                return slow(stored)  # a key of the scope itself (or no key of its subtree)
            try:
                decoded = list(map(unhexlify, parts))
            except hex_error:
                return slow(stored)
            child = decoded[depth]
            end = at + 2 * len(child)  # the child's 00 separator
            if stored[end : end + 1] != sep:
                return slow(stored)
            return child, stored[:end] + b"\x01"

        if hex_child_step is not None:
            return hex_child_step(at, depth, step)
        return step

    def is_own_remainder(self, remainder: bytes) -> bool:
        """True when the bytes after the prefix hold no ``00`` (no child's path)."""
        return _SEP not in remainder

    @property
    def metadata_key(self) -> bytes | None:
        return _METADATA_KEY

    def params(self) -> Mapping[str, Any]:
        return {}


def _check_digits(part: bytes, stored: bytes) -> None:
    bad = _NOT_HEX.search(part)
    if bad is None:
        return
    offset = bad.start()
    byte = part[offset : offset + 1]
    why = "an upper-case hex digit" if byte.isupper() else "not a lower-case hex digit"
    raise DecodeError(
        f"byte {byte!r} at offset {offset} of {show_bytes(stored)} is {why} "
        "(asciihex uses 0-9, a-f and the 00 separator)",
        offset,
    )


def _unhex(part: bytes, stored: bytes, offset: int) -> bytes:
    if len(part) % 2:
        end = offset + len(part)
        raise DecodeError(
            f"the part of {show_bytes(stored)} from offset {offset} to {end} has an odd number of "
            f"hex digits ({len(part)}); asciihex parts are a multiple of 2 digits",
            end,
        )
    return _unhexlify(part)
