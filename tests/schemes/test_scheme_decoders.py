"""The decoders that indexers call (``Sublevel``, ``LengthPrefixed``, ``AsciiHex``
``decode``) check every stored key as fully as their format allows, whichever
route they take: on inputs made of the bytes each format gives meaning to, and on
valid encodings, each returns exactly what a plain model of the format says, and
raises :class:`DecodeError` with a message wherever the model refuses the key.
"""

from __future__ import annotations

import binascii
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import DecodeError
from keyspace.schemes import AsciiHex, LengthPrefixed, Sublevel

DECODERS = settings(max_examples=400, deadline=None)
Decoded = tuple[tuple[bytes, ...], bytes]


def _outcome(decode: Any, stored: bytes, depth: int | None) -> Decoded | None:
    """What ``decode`` returns, or None when it raises a DecodeError with a message."""
    try:
        return decode(stored, depth)  # type: ignore[no-any-return]
    except DecodeError as exc:
        assert str(exc)
        return None


# -- Sublevel --------------------------------------------------------------------------


def _sublevel_model(stored: bytes, sep: int, depth: int | None) -> Decoded | None:
    """``sep name sep`` groups while the rest starts with ``sep``; a name's bytes lie
    in ``sep + 2 .. 126``; None for a group left open, a bad name byte or another depth."""
    names, at = [], 0
    while at < len(stored) and stored[at] == sep:
        close = stored.find(bytes((sep,)), at + 1)
        if close < 0:
            return None
        name = stored[at + 1 : close]
        if any(not sep + 2 <= b <= 126 for b in name):
            return None
        names.append(name)
        at = close + 1
    if depth is not None and depth != len(names):
        return None
    return tuple(names), stored[at:]


SEPARATORS = ["!", "#", "\x00", "-", "[", "|"]


@pytest.mark.parametrize("separator", SEPARATORS, ids=[f"sep-{ord(s)}" for s in SEPARATORS])
@DECODERS
@given(data=st.data(), depth=st.sampled_from([None, 0, 1, 2, 3, 33, 40, -1]))
def test_sublevel_decode_is_the_model(separator: str, data: st.DataObject, depth: int | None) -> None:
    scheme = Sublevel(separator)
    sep = ord(separator)
    meaningful = [bytes((b,)) for b in (sep, sep + 1, sep + 2, 126, 127, 0, 0xFF, 0x20, 0x61)]
    made = st.lists(st.sampled_from(meaningful), max_size=30).map(b"".join)
    names = st.binary(max_size=4).map(lambda b: bytes(sep + 2 + x % (125 - sep) for x in b))
    valid = st.tuples(st.lists(names, max_size=40), st.binary(max_size=6)).map(
        lambda pk: scheme.encode(tuple(pk[0]), pk[1].lstrip(separator.encode()))
    )
    stored = data.draw(st.one_of(made, valid))
    assert _outcome(scheme.decode, stored, depth) == _sublevel_model(stored, sep, depth)


def test_sublevel_decode_vectors() -> None:
    scheme = Sublevel()
    assert scheme.decode(b"!a!!b!key", 2) == ((b"a", b"b"), b"key")
    assert scheme.decode(b"!a!!b!key") == ((b"a", b"b"), b"key")
    assert scheme.decode(b"!!!!k", 2) == ((b"", b""), b"k")
    assert scheme.decode(b"key\n!x!", 0) == ((), b"key\n!x!")
    assert scheme.decode(b"!a!k\n", 1) == ((b"a",), b"k\n")  # the key may hold any byte
    deep = tuple(b"n%d" % i for i in range(40))
    assert scheme.decode(scheme.encode(deep, b"k"), 40) == (deep, b"k")
    for bad, depth, words in [
        (b"!a!!b!key", 1, "has 2 sublevel names, not 1"),
        (b"!a!!b", 2, "that no separator '!' closes"),
        (b"!a b!k", 1, "invalid name at offset 1"),
        (b'!a"!k', None, "invalid name at offset 1"),
    ]:
        with pytest.raises(DecodeError, match=words):
            scheme.decode(bad, depth)


# -- LengthPrefixed -----------------------------------------------------------------------


def _length_prefixed_model(stored: bytes, depth: int) -> Decoded | None:
    if depth < 0:
        return None
    parts, at = [], 0
    for _ in range(depth):
        if at + 2 > len(stored):
            return None
        start = at + 2
        at = start + int.from_bytes(stored[at:start], "big")
        if at > len(stored):
            return None
        parts.append(stored[start:at])
    return tuple(parts), stored[at:]


@DECODERS
@given(
    stored=st.lists(st.sampled_from([b"\x00", b"\x01", b"\x02", b"\x03", b"a", b"\xff"]), max_size=16).map(
        b"".join
    ),
    depth=st.integers(-1, 4),
)
def test_length_prefixed_decode_is_the_model(stored: bytes, depth: int) -> None:
    assert _outcome(LengthPrefixed().decode, stored, depth) == _length_prefixed_model(stored, depth)


def test_length_prefixed_decode_errors_name_the_place() -> None:
    with pytest.raises(DecodeError, match="inside the length field of component 1") as info:
        LengthPrefixed().decode(b"\x00\x01a\x00", 2)
    assert info.value.offset == 3
    with pytest.raises(DecodeError, match="declares 5 bytes") as info:
        LengthPrefixed().decode(b"\x00\x01a\x00\x05abc", 2)
    assert info.value.offset == 5
    with pytest.raises(DecodeError, match="depth must be 0 or more"):
        LengthPrefixed().decode(b"", -1)


# -- AsciiHex -------------------------------------------------------------------------------


def _asciihex_model(stored: bytes, depth: int | None) -> Decoded | None:
    parts = stored.split(b"\x00")
    if depth is not None and depth != len(parts) - 1:
        return None
    if any(b not in b"0123456789abcdef" for part in parts for b in part) or any(len(p) % 2 for p in parts):
        return None
    decoded = [binascii.unhexlify(p) for p in parts]
    return tuple(decoded[:-1]), decoded[-1]


@DECODERS
@given(
    stored=st.one_of(
        st.lists(
            st.sampled_from([b"0", b"9", b"a", b"f", b"A", b"F", b"g", b"G", b"\x00", b" ", b"\xff"]),
            max_size=16,
        ).map(b"".join),
        st.lists(st.binary(max_size=5), min_size=1, max_size=4).map(
            lambda parts: b"\x00".join(map(binascii.hexlify, parts))
        ),
        st.lists(st.binary(max_size=5), min_size=1, max_size=4).map(
            lambda parts: b"\x00".join(binascii.hexlify(p).upper() for p in parts)
        ),
    ),
    depth=st.sampled_from([None, 0, 1, 2, 3]),
)
def test_asciihex_decode_is_the_model(stored: bytes, depth: int | None) -> None:
    assert _outcome(AsciiHex().decode, stored, depth) == _asciihex_model(stored, depth)


def test_asciihex_digit_only_keys_decode_and_upper_case_is_named() -> None:
    assert AsciiHex().decode(b"31\x0032", 1) == ((b"1",), b"2")  # no letter at all
    for bad in (b"4A\x0032", b"31\x004a4A", b"Aa"):
        with pytest.raises(DecodeError, match="upper-case"):
            AsciiHex().decode(bad)
