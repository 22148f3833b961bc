"""TupleScheme: stored keys are FoundationDB tuples ``(path, *key)``, and own keys,
the subtree and composite-key prefixes are each exactly one byte range."""

from __future__ import annotations

import uuid
from typing import Any

import fdb.tuple as fdbt
import pytest
from _tuple_values import canon
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import DecodeError, InvalidKey, InvalidName
from keyspace.schemes import Property, TupleScheme
from keyspace.tuples import pack


def key_elements(key: Any) -> tuple[Any, ...]:
    return key if isinstance(key, tuple) else (key,)


def inside(raw: bytes, rng: tuple[bytes, bytes | None]) -> bool:
    start, stop = rng
    return start <= raw and (stop is None or raw < stop)


# Components that stress the boundaries: None (00 ff inside the path), empty
# values, 00 bytes (escaped as 00 ff), ff tails, and values that extend others.
tricky = st.sampled_from(
    [None, b"", b"\x00", b"\x00\xff", b"\xff", b"a", b"a\x00", b"a\x00b", b"a\xff", "", "\x00", "a", "a\x00",
     "ab", 0, 1, -1, 256, False, True, 0.0, -0.0, (), (None,), ("a",), ("a", None), ((),)]
)  # fmt: skip
component = st.one_of(
    tricky,
    st.binary(max_size=4),
    st.text(max_size=3),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.uuids(),
    st.lists(tricky, max_size=2).map(tuple),
)
paths = st.lists(component, max_size=3).map(tuple)
key_element = st.one_of(tricky, st.binary(max_size=6), st.text(max_size=4), st.integers(-(2**70), 2**70))
# a key: one element, or a composite (a tuple, flattened after the path)
keys = st.one_of(key_element, st.lists(key_element, max_size=3).map(tuple))
raw_prefixes = st.sampled_from([b"", b"\x05", b"app", b"\xff\x00"])


@st.composite
def related_paths(draw: st.DrawFn, base: tuple[Any, ...]) -> tuple[Any, ...]:
    """A path near ``base``: itself, a child or grandchild, an ancestor, a sibling,
    the last component extended with 00 or ff bytes, or an unrelated path."""
    kind = draw(st.sampled_from(["same", "child", "grandchild", "parent", "sibling", "extended", "other"]))
    if kind == "same":
        return base
    if kind == "child":
        return (*base, draw(component))
    if kind == "grandchild":
        return (*base, draw(component), draw(component))
    if kind == "parent":
        return base[:-1]
    if kind == "sibling" and base:
        return (*base[:-1], draw(component))
    if kind == "extended" and base and isinstance(base[-1], (bytes, str)):
        tail = draw(st.sampled_from(["\x00", "\x00cd", "\xff", "\x00\xff", "b"]))
        last = base[-1] + (tail.encode("latin-1") if isinstance(base[-1], bytes) else tail)
        return (*base[:-1], last)
    return draw(paths)


# -- basics ---------------------------------------------------------------------------


def test_declared_contract() -> None:
    scheme = TupleScheme()
    assert TupleScheme.name == "tuple"
    assert scheme.properties == frozenset(Property)
    assert scheme.separates_own_keys is True
    assert scheme.typed_keys is True
    assert scheme.max_depth is None
    assert scheme.key_is_raw is False


def test_layout_vectors() -> None:
    scheme = TupleScheme()
    stored = scheme.encode(("tenant1", "users"), b"alice")
    assert stored == bytes.fromhex("05 02 74656e616e7431 00 02 7573657273 00 00 01 616c696365 00")
    assert fdbt.unpack(stored) == (("tenant1", "users"), b"alice")
    assert scheme.prefix(("a", None)) == bytes.fromhex("05 02 61 00 00 ff 00")
    assert scheme.own_range(("a",)) == (bytes.fromhex("05 02 61 00 00"), bytes.fromhex("05 02 61 00 00 ff"))
    assert scheme.subtree_range(("a",)) == (bytes.fromhex("05 02 61 00"), bytes.fromhex("05 02 61 00 ff"))
    assert scheme.prefix(()) == b"\x05\x00"
    assert scheme.subtree_range(()) == (b"\x05", b"\x05\xff")
    assert scheme.encode((), (1, "x")) == fdbt.pack(((), 1, "x"))
    assert scheme.key_prefix_range(("a",), (1,)) == (
        scheme.prefix(("a",)) + b"\x15\x01",
        scheme.prefix(("a",)) + b"\x15\x01\xff",
    )
    assert scheme.key_prefix_range(("a",), ()) == scheme.own_range(("a",))
    assert scheme.key_prefix_range(("a",), "k") == scheme.key_prefix_range(("a",), ("k",))


def test_raw_prefix_and_metadata_key() -> None:
    scheme = TupleScheme(b"app")
    stored = scheme.encode(("t",), 7)
    assert stored == b"app" + fdbt.pack((("t",), 7))
    assert scheme.decode(stored) == (("t",), 7)
    assert scheme.metadata_key == b"app\xffkeyspace"
    assert TupleScheme().metadata_key == b"\xffkeyspace"
    assert not inside(b"app\xffkeyspace", scheme.subtree_range(()))
    with pytest.raises(DecodeError):
        scheme.decode(b"app\xffkeyspace")


def test_params_value_semantics() -> None:
    scheme = TupleScheme(b"\x00app")
    assert scheme.params() == {"raw_prefix": "00617070"}
    rebuilt = TupleScheme(**scheme.params())
    assert rebuilt == scheme and hash(rebuilt) == hash(scheme)
    assert rebuilt.raw_prefix == b"\x00app"
    assert TupleScheme() != scheme
    assert TupleScheme(bytearray(b"x")) == TupleScheme(b"x")
    assert repr(TupleScheme(b"x")) == "TupleScheme(raw_prefix='78')"
    with pytest.raises(InvalidName):
        TupleScheme("not hex")
    with pytest.raises(TypeError):
        TupleScheme(5)  # type: ignore[arg-type]


def test_one_element_and_composite_keys() -> None:
    scheme = TupleScheme()
    path = ("p",)
    assert scheme.encode(path, b"k") == scheme.encode(path, (b"k",))
    assert scheme.encode(path, "k") == scheme.encode(path, ("k",))
    assert scheme.decode(scheme.encode(path, (b"k",))) == (path, b"k")
    assert scheme.decode(scheme.encode(path, ())) == (path, ())
    assert scheme.decode(scheme.encode(path, (1, "a"))) == (path, (1, "a"))
    # a single nested-tuple element stays wrapped, so it is not read as a composite
    assert scheme.decode(scheme.encode(path, ((1, "a"),))) == (path, ((1, "a"),))
    assert scheme.encode(path, ((1, "a"),)) != scheme.encode(path, (1, "a"))
    assert scheme.decode_key(scheme.encode_key(None)) is None


def test_encode_key_fast_paths_match_pack() -> None:
    scheme = TupleScheme()
    for key in [b"", b"a\x00b", b"\xff", "", "a\x00", "\u00d4", "\U0010ffff"]:
        assert scheme.encode_key(key) == pack((key,))


def test_bad_paths_and_keys() -> None:
    scheme = TupleScheme()
    with pytest.raises(InvalidName, match="tuple"):
        scheme.prefix(["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidName, match="list"):
        scheme.encode(("a", ["b"]), b"k")
    with pytest.raises(InvalidName, match="list"):
        scheme.validate_path(([],))
    with pytest.raises(InvalidKey, match="dict"):
        scheme.encode(("a",), {"k": 1})
    with pytest.raises(InvalidKey, match="bytearray"):
        scheme.encode_key((1, bytearray(b"x")))
    with pytest.raises(InvalidName, match="UTF-8"):
        scheme.encode_key("a\ud800")
    with pytest.raises(InvalidName, match="UTF-8"):
        scheme.encode(("a\ud800",), b"k")
    scheme.validate_path((None, b"", 1, 2.5, True, uuid.UUID(int=1), ("x", None)))


@pytest.mark.parametrize(
    "stored",
    [
        b"",
        b"\x02a\x00",  # no path tuple first
        b"\x15\x01\x05\x00",
        b"\x05\x02a\x00",  # path without its terminator
        b"\x05\x00\x02a",  # key without its terminator
        b"\xff",
    ],
)
def test_decode_rejects(stored: bytes) -> None:
    with pytest.raises(DecodeError) as info:
        TupleScheme().decode(stored)
    assert info.value.offset is not None


def test_decode_checks_raw_prefix_and_depth() -> None:
    scheme = TupleScheme(b"rp")
    stored = scheme.encode(("a", "b"), 1)
    with pytest.raises(DecodeError, match="raw prefix") as info:
        scheme.decode(stored[1:])
    assert info.value.offset == 0
    with pytest.raises(DecodeError, match="offset 2") as info:
        scheme.decode(b"rp\x02a\x00")
    assert info.value.offset == 2
    with pytest.raises(DecodeError, match="offset 3"):
        scheme.decode(b"rp\x05\x02a")  # offsets count from the start of the stored key
    assert scheme.decode(stored, depth=2) == (("a", "b"), 1)
    with pytest.raises(DecodeError, match="not 3"):
        scheme.decode(stored, depth=3)


# -- properties -------------------------------------------------------------------------


@settings(max_examples=500)
@given(raw_prefixes, paths, keys)
def test_stored_keys_are_fdb_tuples_and_decode(rp: bytes, path: tuple[Any, ...], key: Any) -> None:
    scheme = TupleScheme(rp)
    stored = scheme.encode(path, key)
    assert stored == scheme.prefix(path) + scheme.encode_key(key)
    assert stored == rp + fdbt.pack((path, *key_elements(key)))
    assert canon(fdbt.unpack(stored[len(rp) :])) == canon((path, *key_elements(key)))
    decoded_path, decoded_key = scheme.decode(stored)
    assert canon(decoded_path) == canon(path)
    elements = key_elements(key)
    expected = elements[0] if len(elements) == 1 and not isinstance(elements[0], tuple) else elements
    assert canon(decoded_key) == canon(expected)
    assert canon(scheme.decode_key(scheme.encode_key(key))) == canon(expected)
    assert scheme.encode(decoded_path, decoded_key) == stored  # decoding loses nothing
    assert inside(stored, scheme.own_range(path))
    assert inside(stored, scheme.subtree_range(path))


@settings(max_examples=500)
@given(raw_prefixes, paths, st.data())
def test_own_range_holds_exactly_own_keys(rp: bytes, path: tuple[Any, ...], data: st.DataObject) -> None:
    scheme = TupleScheme(rp)
    other = data.draw(related_paths(path))
    key = data.draw(keys)
    stored = scheme.encode(other, key)
    assert inside(stored, scheme.own_range(path)) == (canon(other) == canon(path))
    (own_start, own_stop), = scheme.own_ranges(path)  # fmt: skip
    assert (own_start, own_stop) == scheme.own_range(path)


@settings(max_examples=500)
@given(raw_prefixes, paths, st.data())
def test_subtree_range_holds_exactly_the_subtree(
    rp: bytes, path: tuple[Any, ...], data: st.DataObject
) -> None:
    scheme = TupleScheme(rp)
    other = data.draw(related_paths(path))
    stored = scheme.encode(other, data.draw(keys))
    in_subtree = len(other) >= len(path) and canon(other[: len(path)]) == canon(path)
    assert inside(stored, scheme.subtree_range(path)) == in_subtree
    assert not inside(scheme.metadata_key or b"", scheme.subtree_range(path))


@settings(max_examples=500)
@given(raw_prefixes, paths, st.lists(key_element, max_size=3).map(tuple), st.data())
def test_key_prefix_range_holds_exactly_matching_keys(
    rp: bytes, path: tuple[Any, ...], key_prefix: tuple[Any, ...], data: st.DataObject
) -> None:
    scheme = TupleScheme(rp)
    other = data.draw(st.one_of(st.just(path), related_paths(path)))
    kind = data.draw(st.sampled_from(["extend", "exact", "mutate", "any"]))
    if kind == "extend":
        key = key_prefix + data.draw(st.lists(key_element, min_size=1, max_size=2).map(tuple))
    elif kind == "exact":
        key = key_prefix
    elif kind == "mutate" and key_prefix and isinstance(key_prefix[-1], (bytes, str)):
        extra = data.draw(st.sampled_from(["\x00", "\x00x", "\xff", "x"]))
        last = key_prefix[-1] + (extra.encode("latin-1") if isinstance(key_prefix[-1], bytes) else extra)
        key = (*key_prefix[:-1], last, *data.draw(st.lists(key_element, max_size=1)))
    else:
        key = data.draw(st.lists(key_element, max_size=4).map(tuple))
    stored = scheme.encode(other, key)
    matches = (
        canon(other) == canon(path)
        and len(key) >= len(key_prefix)
        and canon(key[: len(key_prefix)]) == canon(key_prefix)
    )
    assert inside(stored, scheme.key_prefix_range(path, key_prefix)) == matches


@settings(max_examples=500)
@given(paths, paths, keys, keys)
def test_order_follows_tuple_order(
    path_a: tuple[Any, ...], path_b: tuple[Any, ...], key_a: Any, key_b: Any
) -> None:
    scheme = TupleScheme()
    # within one scope keys sort as tuples; across scopes, paths sort first
    same_scope = fdbt.compare(key_elements(key_a), key_elements(key_b))
    a, b = scheme.encode(path_a, key_a), scheme.encode(path_a, key_b)
    assert (a < b) == (same_scope < 0) and (a == b) == (same_scope == 0)
    by_path = fdbt.compare(path_a, path_b)
    if by_path != 0:
        assert (scheme.encode(path_a, key_a) < scheme.encode(path_b, key_b)) == (by_path < 0)
