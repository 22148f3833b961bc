"""The two decoders behind ``keyspace.tuples.unpack``: the optional C decoder
(``keyspace._tuples_accel``) against the exact pure-Python decoder and
``fdb.tuple``, and the pure-Python fast path, which ``unpack`` no longer reaches
for typical keys when the C decoder is built.

The C decoder must return either exactly what the exact decoder returns or None
(hand over to Python), for every input, and never raise.
"""

from __future__ import annotations

import functools
import math
import random
import struct
import uuid
from typing import Any

import fdb.tuple as fdbt
import pytest
from _tuple_values import canon
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import tuples
from keyspace.errors import DecodeError

try:
    from keyspace import _tuples_accel as accel
except ImportError:  # built without a C compiler: only the pure-Python tests run
    accel = None

needs_accel = pytest.mark.skipif(accel is None, reason="keyspace._tuples_accel was not built")


def outcome(fn: Any, data: Any, prefix_len: int = 0) -> Any:
    try:
        return ("ok", canon(fn(data, prefix_len)))
    except DecodeError as exc:
        return ("error", exc.offset, str(exc))


def exact(data: bytes, prefix_len: int = 0) -> Any:
    return outcome(tuples._unpack_exact, data, prefix_len)


def check_accel(data: bytes, prefix_len: int = 0) -> Any:
    """The C result (or None); asserts it is None or what the exact decoder returns."""
    assert accel is not None
    got = accel.unpack(data, prefix_len)
    if got is not None:
        assert type(got) is tuple
        assert ("ok", canon(got)) == exact(data, prefix_len), data
    return got


# The element types the C decoder handles itself (ints up to 8 bytes: 2**64 - 1
# already takes the 9-255 byte form).
handled = st.one_of(
    st.none(),
    st.binary(max_size=10),
    st.sampled_from([b"", b"\x00", b"\xff", b"\x00\xff", b"\x00\x00", b"a\x00", b"\x00\xff\x00"]),
    st.text(max_size=8),
    st.sampled_from(["", "\x00", "\x00\xff", "a\x00b", "é\x00", "\uffff", "\U0010ffff"]),
    st.integers(-(2**64) + 2, 2**64 - 2),
    st.sampled_from([0, 1, -1, 255, 256, -255, -256, 2**63, -(2**63), 2**64 - 2, -(2**64) + 2]),
    st.floats(),
    st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324]),
    st.integers(0, 2**64 - 1).map(lambda bits: struct.unpack(">d", bits.to_bytes(8, "big"))[0]),
    st.booleans(),
)
# ... and tuples of them, nested (the path tuple of a stored key, None as 00 ff).
nested = st.recursive(handled, lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=8)
# What it hands over to Python.
other = st.one_of(
    st.uuids(),
    st.sampled_from([2**64 - 1, -(2**64) + 1, 2**100, -(2**100)]),
    st.lists(st.uuids(), min_size=1, max_size=2).map(tuple),
)
handled_tuples = st.lists(nested, max_size=6).map(tuple)
mixed_tuples = st.lists(st.one_of(nested, other), max_size=6).map(tuple)


@needs_accel
@settings(max_examples=1000)
@given(handled_tuples, st.binary(max_size=3))
def test_accel_decodes_the_common_types(value: tuple[Any, ...], prefix: bytes) -> None:
    raw = tuples.pack(value)
    assert raw == fdbt.pack(value)
    got = check_accel(prefix + raw, len(prefix))
    assert got is not None
    assert canon(got) == canon(value) == canon(fdbt.unpack(raw))
    assert canon(tuples.unpack(prefix + raw, len(prefix))) == canon(value)


@needs_accel
@settings(max_examples=1000)
@given(mixed_tuples)
def test_accel_hands_over_other_types(value: tuple[Any, ...]) -> None:
    raw = tuples.pack(value)
    check_accel(raw)
    assert canon(tuples.unpack(raw)) == canon(value) == canon(fdbt.unpack(raw))


@needs_accel
@settings(max_examples=1500)
@given(st.binary(max_size=60), st.integers(0, 62))
def test_accel_on_arbitrary_bytes(data: bytes, prefix_len: int) -> None:
    check_accel(data, prefix_len)
    assert outcome(tuples.unpack, data, prefix_len) == outcome(tuples._unpack_py, data, prefix_len)


@needs_accel
@settings(max_examples=1000)
@given(mixed_tuples, st.data())
def test_accel_on_mutated_encodings(value: tuple[Any, ...], data: st.DataObject) -> None:
    raw = bytearray(tuples.pack(value))
    for _ in range(data.draw(st.integers(1, 3))):
        if not raw:
            break
        where = data.draw(st.integers(0, len(raw) - 1))
        byte = data.draw(st.sampled_from([0x00, 0xFF, 0x01, 0x02, 0x05, 0x0C, 0x14, 0x1C, 0x21, 0x27, 0xC3]))
        action = data.draw(st.sampled_from(["set", "delete", "insert", "truncate"]))
        if action == "set":
            raw[where] = byte
        elif action == "delete":
            del raw[where]
        elif action == "insert":
            raw.insert(where, byte)
        else:
            del raw[where:]
    check_accel(bytes(raw))
    assert outcome(tuples.unpack, bytes(raw)) == outcome(tuples._unpack_py, bytes(raw))


@needs_accel
def test_accel_corpus() -> None:
    """100,000 seeded inputs built from type codes, escapes and UTF-8 fragments."""
    rnd = random.Random(20240611)
    alphabet = [0x00, 0x00, 0x01, 0x02, 0xFF, 0x05, 0x0C, 0x13, 0x14, 0x15, 0x16, 0x1C, 0x21, 0x26, 0x27]
    alphabet += [0x30, 0x20, 0x1D, 0x0B, 0x33, 0x41, 0x80, 0xC3, 0xA9, 0xED, 0xA0]
    handed_over = decoded = 0
    for _ in range(100_000):
        n = rnd.randrange(24)
        data = bytes(rnd.choice(alphabet) if rnd.random() < 0.8 else rnd.randrange(256) for _ in range(n))
        if check_accel(data) is None:
            handed_over += 1
        else:
            decoded += 1
    assert decoded > 5_000 and handed_over > 5_000  # both branches exercised


@needs_accel
def test_accel_argument_forms() -> None:
    assert accel is not None
    raw = tuples.pack(("a", 1, b"x"))
    for data, prefix_len in [
        (bytearray(raw), 0),
        (memoryview(raw), 0),
        (raw, -1),
        (raw, len(raw) + 1),
        (raw, True),
        (raw, 2**70),
        ("text", 0),
    ]:
        assert accel.unpack(data, prefix_len) is None
    assert accel.unpack(raw, len(raw)) == ()
    with pytest.raises(TypeError):
        accel.unpack(raw)  # type: ignore[call-arg]
    # the public function takes the same inputs either way
    assert tuples.unpack(bytearray(raw)) == tuples.unpack(memoryview(raw)) == ("a", 1, b"x")
    assert outcome(tuples.unpack, raw, True) == outcome(tuples._unpack_py, raw, True)
    with pytest.raises(TypeError, match="str"):
        tuples.unpack("text")  # type: ignore[arg-type]


@needs_accel
def test_accel_is_used() -> None:
    assert accel is not None
    assert tuples._accel_unpack is accel.unpack


def test_accel_large_tuples_and_values() -> None:
    value = tuple(
        x for i in range(200) for x in (i, -i, f"s{i}\x00", bytes([i]) * 3, None, float(i), i % 2 == 0)
    )
    value += ("x" * 100_000, b"\x00" * 50_000, uuid.UUID(int=7))
    raw = tuples.pack(value)
    assert canon(tuples.unpack(raw)) == canon(value) == canon(tuples._unpack_exact(raw, 0))
    if accel is not None:
        assert accel.unpack(raw, 0) is None  # the UUID hands it over
        assert canon(accel.unpack(raw[:-17], 0)) == canon(value[:-1])


# -- the pure-Python decoder, on its own ----------------------------------------------


@settings(max_examples=1500)
@given(st.binary(max_size=60))
def test_pure_python_fast_path_on_arbitrary_bytes(data: bytes) -> None:
    assert outcome(tuples._unpack_py, data) == exact(data)


@settings(max_examples=1000)
@given(mixed_tuples)
def test_pure_python_round_trip(value: tuple[Any, ...]) -> None:
    raw = tuples.pack(value)
    assert canon(tuples._unpack_py(raw)) == canon(value)
    assert canon(tuples._unpack_py(b"\x15\x01" + raw, 2)) == canon(value)


# -- the C encoder --------------------------------------------------------------------


def check_pack(value: Any) -> bytes | None:
    """The C encoding (or None); asserts it is None or what the pure-Python encoder
    and fdb.tuple write, and that tuples.pack is the pure-Python result either way."""
    assert accel is not None
    got = accel.pack(value)
    try:
        expected: Any = tuples._pack_py(value)
    except Exception as exc:  # compared by type and message below
        assert got is None, value
        with pytest.raises(type(exc)) as info:
            tuples.pack(value)
        assert str(info.value) == str(exc)
        return None
    if got is not None:
        assert type(got) is bytes
        assert got == expected == fdbt.pack(value), value
    assert tuples.pack(value) == expected
    return got


class _Int(int):
    pass


class _Str(str):
    pass


class _Bytes(bytes):
    pass


class _Float(float):
    pass


PACK_EDGES: list[Any] = [
    0,
    1,
    -1,
    255,
    256,
    -255,
    -256,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64 - 2,
    -(2**64) + 2,
    *[
        s * 2 ** (8 * k) + d
        for k in range(1, 9)
        for s in (1, -1)
        for d in (-1, 0, 1)
        if abs(s * 2 ** (8 * k) + d) < 2**64 - 1
    ],
    "",
    "\x00",
    "a\x00",
    "\x00\x00",
    "é",
    "é\x00",
    "\uffff",
    "\U0010ffff",
    "x" * 300,
    b"",
    b"\x00",
    b"\xff",
    b"\x00\xff",
    b"\x00\x00",
    b"a\x00",
    b"\x00" * 300,
    bytes(range(256)),
    None,
    True,
    False,
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    -math.nan,
    5e-324,
    -5e-324,
    1.5,
]
PACK_NESTED: list[Any] = [
    (),
    (1, "a"),
    ((None,),),
    (None, (b"\x00", ())),
    ("tenant", "users"),
    functools.reduce(lambda inner, _: (inner,), range(tuples.MAX_NESTING - 1), (1,)),  # at the limit
]
PACK_FALLBACKS: list[Any] = [
    2**64 - 1,
    -(2**64) + 1,
    2**64,
    -(2**64),
    2**100,
    -(2**100),
    2**2040,
    _Int(3),
    _Str("s"),
    _Bytes(b"b"),
    _Float(1.0),
    uuid.UUID(int=5),
    (uuid.UUID(int=5),),
    functools.reduce(lambda inner, _: (inner,), range(tuples.MAX_NESTING), (1,)),  # past the limit
]


@needs_accel
def test_accel_pack_edges() -> None:
    for x in PACK_EDGES:
        assert check_pack((x,)) is not None, x
        assert check_pack(("k", x, b"v")) is not None, x
    assert check_pack(tuple(PACK_EDGES)) is not None
    assert check_pack(()) == b""
    assert check_pack(tuple(PACK_EDGES) * 20) is not None  # longer than the 32-element join
    for x in PACK_NESTED:
        assert check_pack((x,)) is not None, x
        assert check_pack((x, b"key")) == fdbt.pack((x, b"key")), x
        assert accel.unpack(fdbt.pack((x, b"key")), 0) == (x, b"key")
    for x in PACK_FALLBACKS:
        assert check_pack((x,)) is None, x
        assert check_pack((b"a", x, 1)) is None, x
    assert isinstance(tuples.pack((True,)), bytes) and tuples.pack((True,)) != tuples.pack((1,))


@needs_accel
def test_accel_pack_hands_over_errors() -> None:
    assert accel is not None
    for bad in ["a", b"a", [1, 2], None, 5]:
        assert accel.pack(bad) is None
        with pytest.raises(TypeError, match="takes a tuple"):
            tuples.pack(bad)  # type: ignore[arg-type]
    for t in [("\ud800",), ("ok", "x\udfffy"), (object(),), (1.0, [1]), (2**2041,)]:
        assert check_pack(t) is None
    with pytest.raises(TypeError):
        accel.pack()  # type: ignore[call-arg]


@needs_accel
def test_accel_pack_large_values() -> None:
    value = ("x" * 100_000, b"\x00" * 50_000, "é\x00" * 20_000, -(2**63), 2.5)
    assert check_pack(value) is not None


@needs_accel
@settings(max_examples=1500)
@given(handled_tuples)
def test_accel_pack_matches_python_and_fdb(value: tuple[Any, ...]) -> None:
    got = check_pack(value)
    assert got is not None
    assert canon(tuples.unpack(got)) == canon(value)


@needs_accel
@settings(max_examples=1000)
@given(
    st.lists(
        st.one_of(
            handled,
            other,
            st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),
        ),
        max_size=6,
    ).map(tuple)
)
def test_accel_pack_hands_over_other_types(value: tuple[Any, ...]) -> None:
    check_pack(value)


def _nested_at(levels: int, inner: tuple[Any, ...], siblings: list[Any]) -> tuple[Any, ...]:
    """A tuple whose packing nests ``levels`` tuples inside one another, the
    deepest holding ``inner``, with ``siblings[i]`` beside the tuple of level i + 1."""
    t = inner
    for level in range(levels, 0, -1):
        extra = siblings[(level - 1) % len(siblings)] if siblings else None
        t = (t,) if extra is None else (extra, t)
    return t


@needs_accel
@settings(max_examples=300)
@given(
    st.integers(tuples.MAX_NESTING - 2, tuples.MAX_NESTING + 2),
    handled_tuples,
    st.lists(st.one_of(st.none(), handled), max_size=4),
)
def test_accel_and_python_agree_around_the_nesting_limit(
    levels: int, inner: tuple[Any, ...], siblings: list[Any]
) -> None:
    """The C encoder and decoder take exactly the depths the pure-Python ones take
    (``inner`` may nest a little more itself); past the limit both hand over and
    Python raises the same error either way."""
    assert accel is not None and accel.MAX_NESTING == tuples.MAX_NESTING
    value = _nested_at(levels, inner, siblings)
    got = check_pack(value)
    deepest = _depth(value)
    assert (got is not None) == (deepest <= tuples.MAX_NESTING)
    raw = got if got is not None else _nested_bytes(value)
    decoded = check_accel(raw)
    assert (decoded is not None) == (deepest <= tuples.MAX_NESTING)
    assert outcome(tuples.unpack, raw) == outcome(tuples._unpack_py, raw) == exact(raw)
    if deepest > tuples.MAX_NESTING:
        kind, offset, message = exact(raw)
        assert kind == "error" and "nest deeper than the limit" in message
        assert raw[offset] == 0x05


def _depth(value: tuple[Any, ...]) -> int:
    """How many tuples nest inside one another when ``value`` is packed."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        t, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((x, depth + 1) for x in t if isinstance(x, tuple))
    return deepest


def _nested_bytes(value: Any, nested: bool = False) -> bytes:
    """The encoding of ``value`` at any depth, written out: fdb.tuple for the
    elements that are not tuples."""
    if not isinstance(value, tuple):
        return b"\x00\xff" if value is None and nested else fdbt.pack((value,))
    inside = b"".join(_nested_bytes(x, True) for x in value)
    return b"\x05" + inside + b"\x00" if nested else inside


def test_pack_uses_the_pure_python_encoder_without_accel(monkeypatch: pytest.MonkeyPatch) -> None:
    value = ("a", b"\x00", 1, -(2**63), None, True, 0.5, (1, None), uuid.UUID(int=1), 2**70)
    with_accel = tuples.pack(value)
    monkeypatch.setattr(tuples, "_accel_pack", None)
    assert tuples.pack(value) == with_accel == fdbt.pack(value)
    assert tuples.pack(value[:7]) == fdbt.pack(value[:7])
