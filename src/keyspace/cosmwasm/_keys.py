"""cw-storage-plus's key functions under their own names.

``to_cw_bytes("i8", 0x42) == b"\\xc2"``; ``key(("str", "bytes"), ("hello",
b"world")) == [b"hello", b"world"]``; ``joined_key(("bytes", "bytes"), (b"a",
b"b")) == b"\\x00\\x01ab"``; ``joined_prefix`` length-prefixes every element;
``from_slice("i16", b"\\x7f\\xff") == -1``. Every function takes
``legacy_signed=True`` for signed int keys as written before cw-storage-plus
v0.11 (plain two's complement). Pure functions, O(key size).
"""

from __future__ import annotations

from typing import Any

from ..collections._keys import KeySpec, SpecLike, key_type
from ..collections._layouts import joined_key as _joined
from ..errors import InvalidKey, bytes_argument, show_bytes
from ..schemes.length_prefixed import to_length_prefixed_nested

__all__ = [
    "from_slice",
    "joined_extra_key",
    "joined_key",
    "joined_prefix",
    "key",
    "namespace_upper_bound",
    "prefix",
    "to_cw_bytes",
]


def to_cw_bytes(type_name: str, value: Any, *, legacy_signed: bool = False) -> bytes:
    """The bytes of one key element (``IntKey::to_cw_bytes`` for ints; raw
    for text and bytes). :class:`InvalidKey` for a value out of the type's range."""
    t = key_type(type_name, legacy_signed=legacy_signed)
    return t.to_bytes(t.check(value))


def from_slice(type_name: str, raw: bytes, *, legacy_signed: bool = False) -> Any:
    """The key element stored as ``raw`` (``KeyDeserialize::from_slice``);
    :class:`DecodeError` for bytes of the wrong length or text that is not UTF-8;
    :class:`InvalidArgument` when ``raw`` is not bytes."""
    t = key_type(type_name, legacy_signed=legacy_signed)
    return t.from_bytes(bytes_argument(raw, "from_slice() raw"))


def key(spec: SpecLike, value: Any, *, legacy_signed: bool = False) -> list[bytes]:
    """``PrimaryKey::key()``: the bytes of each element, nested tuples flattened."""
    s = KeySpec(spec, legacy_signed=legacy_signed)
    return s.to_bytes(s.elements(value))


def joined_key(spec: SpecLike, value: Any, *, legacy_signed: bool = False) -> bytes:
    """``joined_key()``: every element length-prefixed except the last (raw)."""
    return _joined(key(spec, value, legacy_signed=legacy_signed))


def joined_extra_key(spec: SpecLike, value: Any, extra: bytes, *, legacy_signed: bool = False) -> bytes:
    """``joined_extra_key(extra)``: every element length-prefixed, then ``extra``
    raw (a ``MultiIndex`` key is ``joined_extra_key(index key, pk)``);
    :class:`InvalidArgument` when ``extra`` is not bytes."""
    tail = bytes_argument(extra, "joined_extra_key() extra")
    return to_length_prefixed_nested(key(spec, value, legacy_signed=legacy_signed)) + tail


def prefix(spec: SpecLike, value: Any, *, legacy_signed: bool = False) -> list[bytes]:
    """``Prefixer::prefix()``: the bytes of each prefix element."""
    return key(spec, value, legacy_signed=legacy_signed)


def joined_prefix(spec: SpecLike, value: Any, *, legacy_signed: bool = False) -> bytes:
    """``Prefixer::joined_prefix()``: every element length-prefixed."""
    return to_length_prefixed_nested(key(spec, value, legacy_signed=legacy_signed))


def namespace_upper_bound(prefix_bytes: bytes) -> bytes:
    """cosmwasm-storage's ``namespace_upper_bound`` (and cw-storage-plus's
    ``increment_last_byte``): the last byte incremented, carrying over ``ff`` bytes,
    which become ``00`` (so the length is kept: ``b"fo\\xff"`` gives ``b"fp\\x00"``).
    This end admits the key ``b"fp"``, which does not start with the prefix; the
    collections end their ranges with the tight end (``b"fp"``) instead.
    :class:`InvalidKey` for an empty or all-``ff`` prefix, which has no such end;
    :class:`InvalidArgument` for a prefix that is not bytes (a str, an int, a
    list of ints)."""
    out = bytearray(bytes_argument(prefix_bytes, "namespace_upper_bound() prefix"))
    for i in range(len(out) - 1, -1, -1):
        if out[i] != 0xFF:
            out[i] += 1
            return bytes(out)
        out[i] = 0
    raise InvalidKey(f"prefix {show_bytes(prefix_bytes)} is empty or all ff bytes: it has no upper bound")
