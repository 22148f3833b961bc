"""bincode 1.x codecs: byte vectors of Rust's bincode::serialize, round trips,
and named errors for bad objects and bad bytes."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace import bincode
from keyspace.codecs import resolve_codec
from keyspace.errors import DecodeError, InvalidKey

_LEN = struct.Struct("<Q")

# (codec, object, bincode::serialize bytes) — the layout rules of bincode 1.3 defaults;
# the String/u64 vectors are the stored bytes of scoped-heed's reference environment
VECTORS: list[tuple[bincode.BincodeCodec, Any, bytes]] = [
    (bincode.STRING, "tenant1", bytes.fromhex("070000000000000074656e616e7431")),
    (bincode.STRING, "", bytes(8)),
    (bincode.STRING, "ünïcode", bytes.fromhex("0900000000000000c3bc6ec3af636f6465")),
    (bincode.BYTES, b"test_key", b"\x08" + bytes(7) + b"test_key"),
    (bincode.U64, 256, bytes.fromhex("0001000000000000")),
    (bincode.U64, 2**64 - 1, b"\xff" * 8),
    (bincode.U32, 0x12345678, bytes.fromhex("78563412")),
    (bincode.U16, 0xABCD, bytes.fromhex("cdab")),
    (bincode.U8, 255, b"\xff"),
    (bincode.I8, -1, b"\xff"),
    (bincode.I16, -2, bytes.fromhex("feff")),
    (bincode.I32, -(2**31), bytes.fromhex("00000080")),
    (bincode.I64, -1, b"\xff" * 8),
    (bincode.BOOL, True, b"\x01"),
    (bincode.BOOL, False, b"\x00"),
    (bincode.F64, 1.5, struct.pack("<d", 1.5)),
    (bincode.Option(bincode.U8), None, b"\x00"),
    (bincode.Option(bincode.U8), 7, b"\x01\x07"),
    (bincode.Seq(bincode.U16), [1, 2], b"\x02" + bytes(7) + b"\x01\x00\x02\x00"),
    # ScopedKey { scope_hash: u32, key: Vec<u8> } == ScopedBytesCodec::encode (scoped-heed's test)
    (
        bincode.Tuple(bincode.U32, bincode.BYTES),
        (0x12345678, b"test"),
        bytes.fromhex("785634120400000000000000") + b"test",
    ),
    (
        bincode.Struct(("name", bincode.STRING), ("age", bincode.U8), ("ok", bincode.BOOL)),
        {"name": "ann", "age": 7, "ok": True},
        b"\x03" + bytes(7) + b"ann\x07\x01",
    ),
]


@pytest.mark.parametrize(("codec", "obj", "raw"), VECTORS, ids=lambda v: repr(v)[:40])
def test_vectors(codec: bincode.BincodeCodec, obj: Any, raw: bytes) -> None:
    assert codec.encode(obj) == raw
    assert codec.decode(raw) == obj


def test_names_resolve() -> None:
    assert resolve_codec("bincode:String") is bincode.STRING
    assert resolve_codec("bincode:Vec<u8>") is bincode.BYTES
    assert resolve_codec("bincode:u64") is bincode.U64
    assert resolve_codec("bincode:i8") is bincode.I8
    assert resolve_codec("bincode:bool") is bincode.BOOL


INTS = [
    (c, bits, signed)
    for bits, (u, i) in {
        8: (bincode.U8, bincode.I8),
        16: (bincode.U16, bincode.I16),
        32: (bincode.U32, bincode.I32),
        64: (bincode.U64, bincode.I64),
    }.items()
    for c, signed in ((u, False), (i, True))
]


@pytest.mark.parametrize(("codec", "bits", "signed"), INTS, ids=lambda v: repr(v))
@given(data=st.data())
def test_int_round_trip_and_range(codec: bincode.BincodeCodec, bits: int, signed: bool, data: Any) -> None:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    value = data.draw(st.integers(lo, hi))
    raw = codec.encode(value)
    assert raw == value.to_bytes(bits // 8, "little", signed=signed)
    assert codec.decode(raw) == value
    outside = data.draw(st.one_of(st.integers(max_value=lo - 1), st.integers(min_value=hi + 1)))
    with pytest.raises(InvalidKey, match=str(outside)):
        codec.encode(outside)


RECORD = bincode.Tuple(
    bincode.STRING, bincode.BYTES, bincode.U64, bincode.I32, bincode.BOOL, bincode.Option(bincode.STRING)
)


@given(
    st.tuples(
        st.text(),
        st.binary(),
        st.integers(0, 2**64 - 1),
        st.integers(-(2**31), 2**31 - 1),
        st.booleans(),
        st.none() | st.text(),
    )
)
def test_composite_round_trip(obj: tuple[Any, ...]) -> None:
    raw = RECORD.encode(obj)
    assert RECORD.decode(raw) == obj
    # every proper prefix is a short encoding, never a different object
    for cut in range(len(raw)):
        with pytest.raises(DecodeError):
            RECORD.decode(raw[:cut])


@given(st.text(), st.binary(min_size=1, max_size=4))
def test_trailing_bytes_refused(text: str, extra: bytes) -> None:
    raw = bincode.STRING.encode(text)
    with pytest.raises(DecodeError, match="trailing") as info:
        bincode.STRING.decode(raw + extra)
    assert info.value.offset == len(raw)


def test_bad_bytes_are_decode_errors() -> None:
    with pytest.raises(DecodeError, match="not UTF-8"):
        bincode.STRING.decode(b"\x01" + bytes(7) + b"\xff")
    with pytest.raises(DecodeError, match="00 or 01, found 02"):
        bincode.BOOL.decode(b"\x02")
    with pytest.raises(DecodeError, match="Option tag"):
        bincode.Option(bincode.U8).decode(b"\x05\x01")
    with pytest.raises(DecodeError, match="declares"):
        bincode.Seq(bincode.U64).decode(b"\xff" * 8)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("inner", [bincode.UNIT, bincode.Tuple()], ids=["unit", "empty tuple"])
def test_a_sequence_of_zero_size_elements_is_bounded(inner: bincode.BincodeCodec) -> None:
    """Eight bytes declaring 2**64 - 1 elements that take no bytes made a list of
    that many: memory ran out instead of a DecodeError."""
    seq = bincode.Seq(inner)
    with pytest.raises(DecodeError, match=f"at most {bincode.ZERO_SIZED_MOST}") as info:
        seq.decode(b"\xff" * 8)
    assert info.value.offset == 0
    most = [inner.decode(b"")] * bincode.ZERO_SIZED_MOST
    assert seq.decode(seq.encode(most)) == most
    with pytest.raises(InvalidKey, match=str(bincode.ZERO_SIZED_MOST)):
        seq.encode([*most, most[0]])


def test_wrong_types_are_invalid_key() -> None:
    with pytest.raises(InvalidKey, match="takes str"):
        bincode.STRING.encode(b"x")
    with pytest.raises(InvalidKey, match="takes bytes"):
        bincode.BYTES.encode("x")
    with pytest.raises(InvalidKey, match="takes int"):
        bincode.U64.encode(True)
    with pytest.raises(InvalidKey, match="takes bool"):
        bincode.BOOL.encode(1)
    with pytest.raises(InvalidKey, match="missing fields"):
        bincode.Struct(("a", bincode.U8)).encode({})
    with pytest.raises(InvalidKey, match="tuple of 2"):
        bincode.Tuple(bincode.U8, bincode.U8).encode((1,))


def test_option_of_unit_keeps_some_apart_from_none() -> None:
    """``Some(())`` (``01``) decoded as ``None``, which a read-modify-write then
    stored back as ``00``: unit decodes as ``()``, as the empty tuple does."""
    codec = bincode.Option(bincode.UNIT)
    assert codec.encode(()) == b"\x01" and codec.encode(None) == b"\x00"
    assert codec.decode(b"\x01") == () and codec.decode(b"\x00") is None
    assert codec.encode(codec.decode(b"\x01")) == b"\x01"
    assert bincode.UNIT.decode(b"") == ()


_TWO_ZERO_SIZED_SEQUENCES: dict[str, tuple[bincode.BincodeCodec, Callable[[int], Any]]] = {
    "Vec<Vec<()>>": (bincode.Seq(bincode.Seq(bincode.UNIT)), lambda n: [[()] * n, [()] * n]),
    "(Vec<()>, Vec<()>)": (
        bincode.Tuple(bincode.Seq(bincode.UNIT), bincode.Seq(bincode.Tuple())),
        lambda n: ([()] * n, [()] * n),
    ),
    "Option<{a: Vec<Vec<()>>}>": (
        bincode.Option(bincode.Struct(("a", bincode.Seq(bincode.Seq(bincode.UNIT))))),
        lambda n: {"a": [[()] * n, [()] * n]},
    ),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", _TWO_ZERO_SIZED_SEQUENCES)
def test_elements_of_size_0_are_bounded_in_one_value(name: str) -> None:
    """``Vec<Vec<()>>`` bounded each inner ``Vec<()>`` alone: 520 stored bytes
    decoded into 2**26 elements (every 8 bytes one more 2**20), so a few KB of
    hostile bytes asked for GBs. The elements of size 0 of one value are counted
    together, encoding and decoding alike."""
    codec, value = _TWO_ZERO_SIZED_SEQUENCES[name]
    half = bincode.ZERO_SIZED_MOST // 2
    fits = codec.encode(value(half))
    assert codec.decode(fits) == value(half)
    with pytest.raises(InvalidKey, match=f"at most {bincode.ZERO_SIZED_MOST} elements of size 0"):
        codec.encode(value(half + 1))
    over = fits.replace(_LEN.pack(half), _LEN.pack(half + 1))  # size 0: only the counts differ
    with pytest.raises(DecodeError, match=f"{half - 1} left after its other sequences"):
        codec.decode(over)
    # each sequence read on its own still has the whole allowance
    assert (
        len(bincode.Seq(bincode.UNIT).read(_LEN.pack(bincode.ZERO_SIZED_MOST), 0)[0])
        == bincode.ZERO_SIZED_MOST
    )
