"""Single-precision floats (type code 20) and versionstamps (33) read and written
byte for byte as FoundationDB writes them: a key another client wrote with either
packs back to the same bytes, so it can be found again and is never written twice.

The vectors are those of FoundationDB's Java ``TupleSerializationTest`` for these
codes, with more NaN bit patterns (signalling NaNs, payloads) of our own."""

from __future__ import annotations

import itertools
import math
import pickle
import struct
import uuid
from pathlib import Path
from typing import Any

import fdb.tuple as fdbt
import pytest
from _cli import run
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import tuples
from keyspace.cli._format import component_json, parse_component, render_component
from keyspace.errors import DecodeError, IncompleteVersionstamp, InvalidArgument, InvalidKey
from keyspace.stores import open_store
from keyspace.tuples import SingleFloat, Versionstamp, pack, unpack

# (encoded, bits of the single or (tr_version, user_version) of the versionstamp)
JAVA_SINGLE_FLOATS: list[tuple[str, int]] = [
    ("20 c0 48 f5 c3", 0x4048F5C3),  # 3.14f
    ("20 3f b7 0a 3c", 0xC048F5C3),  # -3.14f
    ("20 80 00 00 00", 0x00000000),  # 0.0f
    ("20 7f ff ff ff", 0x80000000),  # -0.0f
    ("20 ff 80 00 00", 0x7F800000),  # +inf
    ("20 00 7f ff ff", 0xFF800000),  # -inf
    ("20 ff ff ff ff", 0x7FFFFFFF),  # Float.intBitsToFloat(Integer.MAX_VALUE): a NaN
    ("20 00 00 00 00", 0xFFFFFFFF),  # Float.intBitsToFloat(~0): a negative NaN
]
MORE_NANS = [0x7F800001, 0x7FA00000, 0x7FBFFFFF, 0x7FC00000, 0x7FC00001, 0xFF800001, 0xFFC00000, 0xFFC12345]
JAVA_VERSIONSTAMPS: list[tuple[str, bytes, int]] = [
    ("33 aa bb cc dd ee ff 00 01 02 03 00 00", bytes.fromhex("aabbccddeeff00010203"), 0),
    ("33 01 02 03 04 05 06 07 08 09 0a 02 91", bytes.fromhex("0102030405060708090a"), 657),
]


def hexb(text: str) -> bytes:
    return bytes.fromhex(text)


def single_bytes(bits: int) -> bytes:
    """The tuple encoding of a single, computed apart from the code under test."""
    return b"\x20" + (bits ^ 0xFFFFFFFF if bits & 0x80000000 else bits ^ 0x80000000).to_bytes(4, "big")


def both_decoders(raw: bytes) -> list[tuple[Any, ...]]:
    """``unpack`` (with the C decoder where built) and the pure-Python decoder."""
    return [unpack(raw), tuples._unpack_py(raw), tuples._unpack_exact(raw, 0)]


# -- the Java vectors ----------------------------------------------------------------


@pytest.mark.parametrize(("encoded", "bits"), JAVA_SINGLE_FLOATS)
def test_java_single_float_vectors_round_trip(encoded: str, bits: int) -> None:
    raw = hexb(encoded)
    for decoded in both_decoders(raw):
        (value,) = decoded
        assert type(value) is SingleFloat and value.bits == bits
        assert pack(decoded) == raw
    assert pack((SingleFloat.from_bits(bits),)) == raw == single_bytes(bits)


@pytest.mark.parametrize(("encoded", "tr_version", "user_version"), JAVA_VERSIONSTAMPS)
def test_java_versionstamp_vectors_round_trip(encoded: str, tr_version: bytes, user_version: int) -> None:
    raw = hexb(encoded)
    for decoded in both_decoders(raw):
        (value,) = decoded
        assert type(value) is Versionstamp and value.is_complete()
        assert (value.tr_version, value.user_version) == (tr_version, user_version)
        assert pack(decoded) == raw
    assert pack((Versionstamp(tr_version, user_version),)) == raw
    theirs = fdbt.unpack(raw)[0]  # fdb.tuple reads the vector as the same versionstamp
    assert (theirs.tr_version, theirs.user_version) == (tr_version, user_version)


@pytest.mark.parametrize("bits", MORE_NANS)
def test_nan_bit_patterns_are_kept_bit_for_bit(bits: int) -> None:
    """Signalling NaNs and payloads come back as they were written (a round trip
    through a Python float would quiet a signalling NaN: another key)."""
    raw = single_bytes(bits) + b"\x02x\x00"
    for decoded in both_decoders(raw):
        assert decoded[0].bits == bits and decoded[1] == "x"
        assert pack(decoded) == raw
    assert SingleFloat.from_bits(bits) == unpack(raw)[0]
    assert math.isnan(SingleFloat.from_bits(bits).value)


@settings(max_examples=500)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(), ("a",), (1, (None,))]))
def test_every_single_bit_pattern_round_trips(bits: int, around: tuple[Any, ...]) -> None:
    value = SingleFloat.from_bits(bits)
    raw = pack((*around, value, (value,)))
    assert raw == pack(around) + single_bytes(bits) + b"\x05" + single_bytes(bits) + b"\x00"
    decoded = unpack(raw)
    assert decoded == (*around, value, (value,)) and decoded[len(around)].bits == bits
    assert pack(decoded) == raw


@settings(max_examples=500)
@given(st.floats(width=64) | st.integers(-(2**200), 2**200))
def test_single_float_rounds_as_fdb(number: float) -> None:
    """``SingleFloat(x)`` is the single ``fdb.tuple.SingleFloat(x)`` packs."""
    assert pack((SingleFloat(number),)) == fdbt.pack((fdbt.SingleFloat(number),))


@settings(max_examples=300)
@given(st.integers(0, 2**32 - 1), st.binary(min_size=10, max_size=10), st.integers(0, 0xFFFF))
def test_fdb_reads_what_we_write(bits: int, tr_version: bytes, user_version: int) -> None:
    value = SingleFloat.from_bits(bits)
    raw = pack((value, "k"))
    theirs = fdbt.unpack(raw)
    assert type(theirs[0]) is fdbt.SingleFloat and theirs[1] == "k"
    if not (math.isnan(value.value) and not bits & 0x00400000):  # fdb quiets signalling NaNs
        assert fdbt.pack(theirs) == raw
    if tr_version != b"\xff" * 10:
        stamp = Versionstamp(tr_version, user_version)
        got = fdbt.unpack(pack(("k", stamp)))[1]
        assert (got.tr_version, got.user_version) == (tr_version, user_version)


# -- order, equality, hashing --------------------------------------------------------

singles = st.integers(0, 2**32 - 1).map(SingleFloat.from_bits)
stamps = st.one_of(
    st.builds(
        Versionstamp,
        st.binary(min_size=10, max_size=10).filter(lambda b: b != b"\xff" * 10),
        st.integers(0, 0xFFFF),
    ),
    st.integers(0, 0xFFFF).map(Versionstamp.incomplete),
)
complete_stamps = st.builds(
    Versionstamp,
    st.binary(min_size=10, max_size=10).filter(lambda b: b != b"\xff" * 10),
    st.integers(0, 0xFFFF),
)
elements = st.one_of(
    st.none(),
    st.binary(max_size=3),
    st.text(max_size=3),
    st.integers(-(2**70), 2**70),
    st.floats(),
    singles,
    st.booleans(),
    st.uuids(),
    complete_stamps,
)
mixed = st.lists(
    st.recursive(elements, lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=6), max_size=4
).map(tuple)


@settings(max_examples=500)
@given(singles, singles)
def test_single_floats_compare_as_their_packed_bytes(a: SingleFloat, b: SingleFloat) -> None:
    pa, pb = pack((a,)), pack((b,))
    assert (a < b) == (pa < pb) and (a <= b) == (pa <= pb)
    assert (a > b) == (pa > pb) and (a >= b) == (pa >= pb)
    assert (a == b) == (pa == pb) == (a.bits == b.bits)
    if a == b:
        assert hash(a) == hash(b)


@settings(max_examples=500)
@given(stamps, stamps)
def test_versionstamps_compare_as_their_bytes(a: Versionstamp, b: Versionstamp) -> None:
    ra, rb = a.to_bytes(), b.to_bytes()
    assert (a < b) == (ra < rb) and (a <= b) == (ra <= rb) and (a > b) == (ra > rb) and (a >= b) == (ra >= rb)
    assert (a == b) == (ra == rb)
    if a == b:
        assert hash(a) == hash(b)
    if a.is_complete() and b.is_complete():
        assert (a < b) == (pack((a,)) < pack((b,)))
        assert (
            fdbt.Versionstamp(a.tr_version, a.user_version) < fdbt.Versionstamp(b.tr_version, b.user_version)
        ) == (a < b)


def _fdb(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_fdb(v) for v in value)
    if isinstance(value, SingleFloat):
        return fdbt.SingleFloat(value.value)
    if isinstance(value, Versionstamp):
        return fdbt.Versionstamp(value.tr_version, value.user_version)
    return value


@settings(max_examples=500)
@given(st.lists(mixed, min_size=2, max_size=6))
def test_sorted_packed_tuples_are_in_fdb_order(values: list[tuple[Any, ...]]) -> None:
    """Sorting packed tuples that hold the new types among the others sorts them
    as the FoundationDB tuple order does."""
    import functools

    ours = sorted(values, key=pack)
    for a, b in itertools.pairwise(ours):
        assert fdbt.compare(_fdb(a), _fdb(b)) <= 0 or pack(a) == pack(b)
    for v in values:
        assert pack(unpack(pack(v))) == pack(v)
    assert [
        pack(v) for v in sorted(values, key=functools.cmp_to_key(lambda x, y: fdbt.compare(_fdb(x), _fdb(y))))
    ] == [pack(v) for v in ours] or any(
        isinstance(x, SingleFloat) and math.isnan(x.value) for v in values for x in _flat(v)
    )


def _flat(value: Any) -> list[Any]:
    out: list[Any] = []
    for x in value:
        out.extend(_flat(x) if isinstance(x, tuple) else [x])
    return out


def test_cross_type_order_ints_singles_doubles() -> None:
    ordered = [
        2**64,
        SingleFloat(-math.inf),
        SingleFloat(-1.0),
        SingleFloat(-0.0),
        SingleFloat(0.0),
        SingleFloat(1.5),
        SingleFloat(math.inf),
        SingleFloat.from_bits(0x7FC00000),
        -math.inf,
        -1.0,
        0.0,
        1.5,
        False,
        uuid.UUID(int=0),
        Versionstamp(b"\x00" * 10, 0),
        Versionstamp(b"\x00" * 10, 1),
        Versionstamp(b"\x01" + b"\x00" * 9, 0),
        Versionstamp.incomplete(0),
    ]
    packed = [
        b"\x33" + v.to_bytes() if type(v) is Versionstamp and not v.is_complete() else pack((v,))
        for v in ordered
    ]
    assert packed == sorted(packed) and len(set(packed)) == len(packed)
    # a single and a double of one value are different keys
    assert pack((SingleFloat(1.5),)) != pack((1.5,)) and SingleFloat(1.5) != 1.5


# -- incomplete versionstamps and bad arguments ---------------------------------------


def test_an_incomplete_versionstamp_is_refused_by_pack_by_name() -> None:
    stamp = Versionstamp.incomplete(7)
    for value in [(stamp,), ("a", (1, stamp)), (1, stamp, "x")]:
        with pytest.raises(IncompleteVersionstamp, match=r"Versionstamp\.incomplete\(7\)") as info:
            pack(value)
        assert isinstance(info.value, InvalidKey)
    raw = b"\x33" + b"\xff" * 10 + b"\x00\x07"
    assert unpack(raw) == (stamp,) and not unpack(raw)[0].is_complete()
    assert stamp.to_bytes() == raw[1:]
    done = stamp.completed(b"\x01" * 10)
    assert (
        done.is_complete()
        and done.user_version == 7
        and pack((done,)) == b"\x33" + b"\x01" * 10 + b"\x00\x07"
    )
    with pytest.raises(InvalidArgument, match="complete already"):
        done.completed(b"\x02" * 10)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Versionstamp(b"\x00" * 9), "10 bytes, not 9"),
        (lambda: Versionstamp("abcdefghij"), "10 bytes or None"),
        (lambda: Versionstamp(b"\xff" * 10), "incomplete"),
        (lambda: Versionstamp(b"\x00" * 10, 65536), "0 to 65535"),
        (lambda: Versionstamp(b"\x00" * 10, -1), "0 to 65535"),
        (lambda: Versionstamp.from_bytes(b"\x00" * 11), "12 bytes, not 11"),
        (lambda: Versionstamp.from_bytes(bytearray(12)), "takes bytes, not bytearray"),
        (lambda: SingleFloat("1.5"), "float or an int, not str"),
        (lambda: SingleFloat(True), "not bool"),
        (lambda: SingleFloat.from_bits(2**32), "2\\*\\*32 - 1"),
        (lambda: SingleFloat.from_bits(-1), "2\\*\\*32 - 1"),
    ],
)
def test_bad_arguments_are_named(make: Any, words: str) -> None:
    with pytest.raises(InvalidArgument, match=words):
        make()


@pytest.mark.parametrize(
    ("raw", "offset", "words"),
    [
        ("20 80 00", 0, "single float element needs 4 bytes, 2 left"),
        ("14 33 00", 1, "versionstamp element needs 12 bytes, 1 left"),
    ],
)
def test_truncated_elements_name_the_offset(raw: str, offset: int, words: str) -> None:
    with pytest.raises(DecodeError, match=words) as info:
        unpack(hexb(raw))
    assert info.value.offset == offset


def test_values_are_immutable_and_pickle() -> None:
    single, stamp = SingleFloat.from_bits(0x7F800001), Versionstamp(b"\x05" * 10, 9)
    for value in (single, stamp, Versionstamp.incomplete(3)):
        assert pickle.loads(pickle.dumps(value)) == value
        with pytest.raises(AttributeError):
            value.x = 1  # type: ignore[union-attr]
    assert (
        repr(single) == "SingleFloat.from_bits(0x7f800001)" and repr(SingleFloat(1.5)) == "SingleFloat(1.5)"
    )
    assert float(SingleFloat(0.1)) == struct.unpack(">f", struct.pack(">f", 0.1))[0]
    assert SingleFloat(1e40) == SingleFloat(math.inf) and SingleFloat(-(2**1100)) == SingleFloat(-math.inf)
    assert set(tuples.__all__) >= {"SingleFloat", "Versionstamp"}


# -- in a keyspace -------------------------------------------------------------------


def _written_by_another_client(url: str) -> None:
    with keyspace.open(url) as ks:
        ks.scope("acme")[b"k"] = b"ours"
    with open_store(url) as store:
        store.put(fdbt.pack((("acme",), fdbt.SingleFloat(2.5))), b"single key")
        store.put(fdbt.pack((("acme", fdbt.SingleFloat(1.5)), b"k")), b"in a single scope")
        store.put(
            fdbt.pack((("acme",), "when")) + hexb(JAVA_VERSIONSTAMPS[1][0].replace(" ", "")), b"stamped"
        )


def test_keys_another_client_wrote_are_found_and_written_once(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    _written_by_another_client(url)
    stamp = Versionstamp(JAVA_VERSIONSTAMPS[1][1], 657)
    with keyspace.open(url) as ks:
        acme = ks.scope("acme")
        assert SingleFloat(2.5) in acme and acme.get(SingleFloat(2.5)) == b"single key"
        assert ("when", stamp) in acme and acme[("when", stamp)] == b"stamped"
        assert 2.5 not in acme  # the double is another key
        assert ks.scope("acme", SingleFloat(1.5))[b"k"] == b"in a single scope"
        assert SingleFloat(1.5) in ks.scope("acme").scopes()
        before = len(acme)
        acme[SingleFloat(2.5)] = b"rewritten"
        acme[("when", stamp)] = b"restamped"
        ks.scope("acme", SingleFloat(1.5))[b"k"] = b"rewritten too"
        assert len(acme) == before
        with pytest.raises(IncompleteVersionstamp):
            acme[("when", Versionstamp.incomplete())] = b"x"
    with open_store(url) as store:
        assert store.get(fdbt.pack((("acme",), fdbt.SingleFloat(2.5)))) == b"rewritten"
        assert store.get(fdbt.pack((("acme", fdbt.SingleFloat(1.5)), b"k"))) == b"rewritten too"


# -- the command line ----------------------------------------------------------------


@settings(max_examples=300)
@given(st.one_of(singles, stamps, st.tuples(singles, stamps)))
def test_every_printed_single_or_versionstamp_names_it_again(component: Any) -> None:
    parsed = parse_component(render_component(component, typed=True))
    assert parsed == component
    assert component_json(component, typed=True) is not None


def test_inspect_names_single_float_and_versionstamp_scopes_again(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        ks.scope("acme", SingleFloat(1.5))[b"k"] = b"single"
        ks.scope("acme", SingleFloat.from_bits(0x7F800001))[b"k"] = b"signalling"
        ks.scope("acme", Versionstamp(JAVA_VERSIONSTAMPS[0][1], 0))[b"k"] = b"stamped"
        ks.scope("acme")[SingleFloat(2.5)] = b"single key"
    shown = run("inspect", url).stdout
    for spelled, value in [
        ("float32:1.5", "single"),
        ("float32:0x7f800001", "signalling"),
        ("versionstamp:aabbccddeeff000102030000", "stamped"),
    ]:
        assert spelled in shown, shown
        assert run("get", url, "acme", spelled, "--key", "k").stdout == f"{value}\n"
    assert "float32:2.5\tsingle key" in run("scan", url, "acme").stdout
    assert run("get", url, "acme", "--key", "float32:2.5").stdout == "single key\n"
    assert run("get", url, "acme", "--json", "--key", '{"float32": "2.5"}').stdout == (
        '{"path": ["acme"], "key": {"float32": "2.5"}, "value": "single key"}\n'
    )
    tree = run("inspect", "--json", url).stdout
    assert '{"float32": "1.5"}' in tree and '{"versionstamp": "aabbccddeeff000102030000"}' in tree
    bad = run("get", url, "acme", "versionstamp:abc", "--key", "k", ok=False)
    assert bad.returncode != 0 and "24 hex digits" in bad.stderr
