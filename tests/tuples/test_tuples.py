"""keyspace.tuples against the FoundationDB tuple layer: vectors, differential
tests against ``fdb.tuple``, order, ranges and decoding of arbitrary bytes."""

from __future__ import annotations

import builtins
import enum
import math
import struct
import uuid
from collections import namedtuple
from decimal import Decimal
from typing import Any

import fdb.tuple as fdbt
import pytest
from _tuple_values import canon
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from keyspace import tuples
from keyspace.errors import DecodeError, InvalidKey, InvalidName
from keyspace.tuples import MAX_NESTING, pack, unpack

# -- helpers ------------------------------------------------------------------------


def double_from_bits(bits: int) -> float:
    value: float = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    return value


INT_LIMIT = 2 ** (8 * 255) - 1  # the 0x0b/0x1d forms hold at most 255 bytes
edge_ints = st.sampled_from(
    [0, 1, -1, 255, 256, -255, -256, 2**64 - 2, 2**64 - 1, 2**64, -(2**64) + 2, -(2**64) + 1, -(2**64)]
    + [2**i + d for i in (8, 16, 56, 63, 64, 72, 2032) for d in (-1, 0, 1)]
    + [-(2**i) + d for i in (8, 16, 56, 63, 64, 72, 2032) for d in (-1, 0, 1)]
    + [INT_LIMIT, -INT_LIMIT]
)
ints = st.one_of(st.integers(-(2**70), 2**70), edge_ints, st.integers(-INT_LIMIT, INT_LIMIT))
floats = st.one_of(
    st.floats(),
    st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324, -5e-324]),
    st.integers(0, 2**64 - 1).map(double_from_bits),  # any bit pattern, NaN payloads too
)
scalars = st.one_of(
    st.none(),
    st.binary(max_size=12),
    st.sampled_from([b"", b"\x00", b"\xff", b"\x00\xff", b"\x00\x00", b"a\x00", b"a\xff"]),
    st.text(max_size=8),
    st.sampled_from(["", "\x00", "\x00\xff", "a\x00b", "\uffff", "\U0010ffff"]),
    ints,
    floats,
    st.booleans(),
    st.uuids(),
)
elements = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=8)
tuples_ = st.lists(elements, max_size=4).map(tuple)


def hexb(text: str) -> bytes:
    return bytes.fromhex(text)


# -- vectors ------------------------------------------------------------------------

# design/tuple.md vectors, derived directory-layer keys, and boundaries checked
# against fdb.tuple
VECTORS: list[tuple[tuple[Any, ...], str]] = [
    ((b"foo\x00bar",), "01 66 6f 6f 00 ff 62 61 72 00"),
    (("F\u00d4O\u0000bar",), "02 46 c3 94 4f 00 ff 62 61 72 00"),
    (((b"foo\x00bar", None, ()),), "05 01 66 6f 6f 00 ff 62 61 72 00 00 ff 05 00 00"),
    ((-5551212,), "11 ab 4b 93"),
    ((-1,), "13 fe"),
    (((),), "05 00"),
    (((None,),), "05 00 ff 00"),
    ((b"\xfe",), "01 fe 00"),
    ((b"\xfe", b"hca"), "01 fe 00 01 68 63 61 00"),
    ((b"\xfe", b"version"), "01 fe 00 01 76 65 72 73 69 6f 6e 00"),
    ((b"\xfe", 0, "Second"), "01 fe 00 14 02 53 65 63 6f 6e 64 00"),
    ((5,), "15 05"),
    ((300,), "16 01 2c"),
    ((None,), "00"),
    ((0,), "14"),
    ((1,), "15 01"),
    ((2**64 - 2,), "1c ff ff ff ff ff ff ff fe"),
    ((2**64 - 1,), "1d 08 ff ff ff ff ff ff ff ff"),
    ((2**64,), "1d 09 01 00 00 00 00 00 00 00 00"),
    ((-(2**64) + 2,), "0c 00 00 00 00 00 00 00 01"),
    ((-(2**64) + 1,), "0b f7 00 00 00 00 00 00 00 00"),
    ((-(2**64),), "0b f6 fe ff ff ff ff ff ff ff ff"),
    ((False, True), "26 27"),
    ((1.5,), "21 bf f8 00 00 00 00 00 00"),
    ((-1.5,), "21 40 07 ff ff ff ff ff ff"),
    ((0.0, -0.0), "21 80 00 00 00 00 00 00 00 21 7f ff ff ff ff ff ff ff"),
    (
        (uuid.UUID(int=0x0102030405060708090A0B0C0D0E0F10),),
        "30 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10",
    ),
    (
        ("tenant1", "users", b"key-0001"),
        "02 74 65 6e 61 6e 74 31 00 02 75 73 65 72 73 00 01 6b 65 79 2d 30 30 30 31 00",
    ),
    ((("app",), "users", 42), "05 02 61 70 70 00 00 02 75 73 65 72 73 00 15 2a"),
]


@pytest.mark.parametrize(("value", "encoded"), VECTORS)
def test_vectors(value: tuple[Any, ...], encoded: str) -> None:
    raw = hexb(encoded)
    assert pack(value) == raw
    assert fdbt.pack(value) == raw  # the vector itself is right
    assert canon(unpack(raw)) == canon(value)


def test_directory_layer_prefixes() -> None:
    # the node subspace has raw prefix fe; the root node is node_subspace[b"\xfe"]
    root = b"\xfe" + pack((b"\xfe",))
    assert root == hexb("fe 01 fe 00")
    assert root + pack((b"hca",)) == hexb("fe 01 fe 00 01 68 63 61 00")
    assert root + pack((0, "Second")) == hexb("fe 01 fe 00 14 02 53 65 63 6f 6e 64 00")


def test_single_float_vector_decodes_as_single_float() -> None:
    assert fdbt.pack((fdbt.SingleFloat(-42.0),)) == hexb("20 3d d7 ff ff")
    (value,) = unpack(hexb("20 3d d7 ff ff"))
    assert type(value) is tuples.SingleFloat and value.value == -42.0
    assert unpack(fdbt.pack((fdbt.SingleFloat(1.25), "x"))) == (tuples.SingleFloat(1.25), "x")


def test_cross_type_order() -> None:
    ordered = [None, b"", "", (), -1, 0, 1, -math.inf, 0.0, False, True, uuid.UUID(int=0)]
    packed = [pack((v,)) for v in ordered]
    assert packed == sorted(packed)


def test_range() -> None:
    assert tuples.range(("a", 1)) == (pack(("a", 1)) + b"\x00", pack(("a", 1)) + b"\xff")
    assert tuples.range(()) == (b"\x00", b"\xff")
    fdb_range = fdbt.range(("a", 1))
    assert tuples.range(("a", 1)) == (fdb_range.start, fdb_range.stop)


# -- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [[1], {"a": 1}, bytearray(b"x"), {1}, object(), Decimal(1), 1j])
def test_unsupported_types_raise_type_error_naming_the_type(value: Any) -> None:
    with pytest.raises(TypeError, match=type(value).__name__):
        pack(("ok", value))
    with pytest.raises(TypeError, match=type(value).__name__):
        pack((("nested", value),))


@pytest.mark.parametrize("value", ["abc", b"abc", ["a"], None, 1])
def test_pack_takes_a_tuple(value: Any) -> None:
    with pytest.raises(TypeError, match="tuple"):
        pack(value)


def test_unpack_takes_bytes() -> None:
    with pytest.raises(TypeError, match="str"):
        unpack("\x02a\x00")  # type: ignore[arg-type]
    assert unpack(bytearray(b"\x02a\x00")) == ("a",)
    assert unpack(memoryview(b"\x15\x01")) == (1,)


def test_too_large_int_and_lone_surrogate() -> None:
    assert pack((INT_LIMIT,)) == fdbt.pack((INT_LIMIT,))
    assert pack((-INT_LIMIT,)) == fdbt.pack((-INT_LIMIT,))
    with pytest.raises(InvalidName, match="255 bytes"):
        pack((INT_LIMIT + 1,))
    with pytest.raises(InvalidName, match="255 bytes"):
        pack((("x", -INT_LIMIT - 1),))
    with pytest.raises(InvalidName, match="UTF-8"):
        pack(("a\ud800",))
    with pytest.raises(InvalidName, match="UTF-8"):
        pack((("a\udfff",),))


class Color(enum.IntEnum):
    RED = 1
    BIG = 70000


class Name(str):
    pass


Pair = namedtuple("Pair", "a b")


class MyUUID(uuid.UUID):
    pass


def test_subclasses_encode_as_their_base_type() -> None:
    u = MyUUID(int=7)
    value = (Color.RED, Color.BIG, Name("n"), Pair(1, None), u, Pair)
    with pytest.raises(TypeError, match="type"):
        pack(value)  # a class object is not an element
    value = value[:-1]
    assert pack(value) == fdbt.pack(value)
    assert pack(Pair("x", 2)) == pack(("x", 2))
    assert unpack(pack(value)) == (1, 70000, "n", (1, None), uuid.UUID(int=7))


@pytest.mark.parametrize(
    ("raw", "offset", "message"),
    [
        ("02 61 62", 0, "terminator"),
        ("15 01 01 61 00 ff 62", 2, "terminator"),
        ("15 01 16 01", 2, "int element needs 2 bytes"),
        ("02 61 00 00 ff", 4, "unknown type code 0xff"),
        ("00 ff", 1, "unknown type code 0xff"),
        ("05 15 01", 0, "nested tuple"),
        ("05 15 01 05", 3, "nested tuple"),
        ("02 ff 00", 0, "UTF-8"),
        ("14 1d", 1, "length byte"),
        ("1d 03 01 02", 0, "big int"),
        ("0b fc 01", 0, "big int"),
        ("21 00 00", 0, "double"),
        ("20 00", 0, "single float"),
        ("30 01 02", 0, "UUID"),
        ("33 00 00 00 00 00 00 00 00 00 00 00", 0, "versionstamp element needs 12 bytes, 11 left"),
        ("03 04", 0, "unknown type code 0x03"),
        ("0a 00", 0, "unknown type code 0x0a"),
        ("25", 0, "unknown type code 0x25"),
        ("1e 00", 0, "unknown type code 0x1e"),
    ],
)
def test_decode_errors_name_the_offset(raw: str, offset: int, message: str) -> None:
    data = hexb(raw)
    with pytest.raises(DecodeError, match=message) as info:
        unpack(data)
    assert info.value.offset == offset
    assert f"offset {offset}" in str(info.value)
    # with a prefix the offset counts from the start of the bytes given
    with pytest.raises(DecodeError) as info:
        unpack(b"xyz" + data, 3)
    assert info.value.offset == offset + 3


def test_deep_nesting_never_recurses() -> None:
    # nesting up to the limit decodes; past it the decoder stops at the level too
    # many (tests/tuples/test_tuples_depth.py checks the limit itself)
    with pytest.raises(DecodeError, match="nested tuple"):
        unpack(b"\x05" * MAX_NESTING)
    with pytest.raises(DecodeError, match="nest deeper than the limit") as info:
        unpack(b"\x05" * 200_000)
    assert info.value.offset == MAX_NESTING
    value = unpack(b"\x05" * MAX_NESTING + b"\x00" * MAX_NESTING)
    depth = 0
    while value:
        (value,) = value
        depth += 1
    assert depth == MAX_NESTING


def test_prefix_len() -> None:
    assert unpack(b"\xffjunk\x02a\x00\x15\x07", 5) == ("a", 7)
    assert unpack(b"abc", 3) == ()
    assert fdbt.unpack(b"\xffjunk\x02a\x00\x15\x07", 5) == ("a", 7)


# -- differential and property tests ---------------------------------------------------


@settings(max_examples=500)
@given(tuples_)
def test_pack_matches_fdb(value: tuple[Any, ...]) -> None:
    raw = pack(value)
    assert raw == fdbt.pack(value)
    assert canon(unpack(raw)) == canon(value)
    assert canon(fdbt.unpack(raw)) == canon(value)


@settings(max_examples=500)
@given(tuples_, tuples_)
def test_order_matches_fdb_compare(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    expected = fdbt.compare(a, b)
    pa, pb = pack(a), pack(b)
    assert (pa < pb) == (expected < 0)
    assert (pa == pb) == (expected == 0)


@settings(max_examples=500)
@given(tuples_, st.lists(elements, min_size=1, max_size=3).map(tuple), tuples_)
def test_range_holds_exactly_the_longer_tuples(
    prefix: tuple[Any, ...], rest: tuple[Any, ...], other: tuple[Any, ...]
) -> None:
    start, stop = tuples.range(prefix)
    assert start <= pack(prefix + rest) < stop
    assert not start <= pack(prefix) < stop
    inside = start <= pack(other) < stop
    assert inside == (len(other) > len(prefix) and canon(other[: len(prefix)]) == canon(prefix))


def _outcome(fn: Any, data: bytes) -> Any:
    try:
        return ("ok", canon(fn(data)))
    except DecodeError as exc:
        assert isinstance(exc.offset, int) and 0 <= exc.offset <= len(data)
        assert f"offset {exc.offset}" in str(exc)
        return ("error", exc.offset)


def _check_decoding(data: bytes) -> None:
    ours = _outcome(unpack, data)  # anything but DecodeError fails the test
    # the split fast path and the exact decoder agree on every input
    assert ours == _outcome(lambda d: tuples._unpack_exact(d, 0), data)
    if ours[0] == "ok":
        try:
            theirs = fdbt.unpack(data)
        except Exception:  # fdb.tuple raises assorted errors; agreement is what counts
            return
        assert canon(_plain(theirs)) == ours[1]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, fdbt.SingleFloat):
        return tuples.SingleFloat(value.value)
    return value


@settings(max_examples=500)
@given(st.binary(max_size=40))
def test_unpack_arbitrary_bytes_raises_only_decode_error(data: bytes) -> None:
    _check_decoding(data)


@settings(max_examples=500)
@given(tuples_, st.data())
def test_unpack_mutated_encodings(value: tuple[Any, ...], data: st.DataObject) -> None:
    raw = bytearray(pack(value))
    assume(raw)
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["set", "delete", "insert", "truncate"]))
        byte = data.draw(st.sampled_from([0x00, 0xFF, 0x01, 0x02, 0x05, 0x15, 0x1D, 0x0B, 0x21, 0x30, 0x80]))
        if action == "set":
            raw[where] = byte
        elif action == "delete":
            del raw[where]
        elif action == "insert":
            raw.insert(where, byte)
        else:
            del raw[where:]
        if not raw:
            break
    _check_decoding(bytes(raw))


@settings(max_examples=500)
@given(
    st.lists(
        st.one_of(st.text(max_size=6), st.binary(max_size=6), ints, st.booleans(), st.none()), max_size=6
    )
)
def test_fast_path_shapes_round_trip(items: list[Any]) -> None:
    value = tuple(items)
    raw = pack(value)
    assert raw == fdbt.pack(value)
    assert canon(unpack(raw)) == canon(value)
    assert canon(tuples._unpack_exact(raw, 0)) == canon(value)


def test_long_tuples() -> None:
    value = tuple(item for i in builtins.range(60) for item in (i, -i, f"s{i}", bytes([i]), None, float(i)))
    assert pack(value) == fdbt.pack(value)
    assert canon(unpack(pack(value))) == canon(value)
    with pytest.raises(TypeError, match="list"):
        pack((*value, []))


def test_a_uuid_without_a_128_bit_value_is_invalid_key() -> None:
    """An exact ``uuid.UUID`` made without ``__init__`` (or its slot set to -1)
    raised a bare AttributeError/OverflowError, where a subclass got InvalidKey."""
    empty = uuid.UUID.__new__(uuid.UUID)
    negative = uuid.UUID(int=5)
    object.__setattr__(negative, "int", -1)
    for bad, held in ((empty, "None"), (negative, "-1")):
        for packed in ((bad,), ("a", (bad,))):
            with pytest.raises(InvalidKey, match=f"holds {held}, not a 128-bit int"):
                pack(packed)
