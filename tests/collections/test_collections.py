"""Typed collections: key round trips and order (Hypothesis), ranges against a
sorted model under both layouts, Item, Deque and the snapshot collections."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import cosmwasm
from keyspace.collections import (
    COSMWASM,
    KEY_TYPES,
    TUPLE,
    Deque,
    IndexedMap,
    Item,
    KeySpec,
    Layout,
    Map,
    MultiIndex,
    SnapshotItem,
    SnapshotMap,
    UniqueIndex,
)
from keyspace.errors import DecodeError, InvalidArgument, InvalidKey, UniqueViolation

INT_TYPES = [f"{s}{b}" for s in "ui" for b in (8, 16, 32, 64, 128)]


def element(type_name: str) -> st.SearchStrategy[Any]:
    """Valid values of one key element type."""
    if type_name in ("str", "addr", "string"):
        return st.text(max_size=12)
    if type_name == "bytes":
        return st.binary(max_size=12)
    bits = int(type_name[1:])
    if type_name[0] == "u":
        return st.integers(0, (1 << bits) - 1)
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


ALL_TYPES = sorted(KEY_TYPES)
shapes = st.lists(st.sampled_from(ALL_TYPES), min_size=1, max_size=4).map(tuple)


@st.composite
def spec_and_key(draw: st.DrawFn) -> tuple[Any, Any]:
    shape = draw(shapes)
    values = tuple(draw(element(t)) for t in shape)
    if len(shape) == 1 and draw(st.booleans()):
        return shape[0], values[0]  # a bare key
    return shape, values


# -- element and composite round trips --------------------------------------------------


@pytest.mark.parametrize("type_name", ALL_TYPES)
@pytest.mark.parametrize("legacy", [False, True])
@given(data=st.data())
@settings(max_examples=40)
def test_element_round_trip(type_name: str, legacy: bool, data: st.DataObject) -> None:
    value = data.draw(element(type_name))
    raw = cosmwasm.to_cw_bytes(type_name, value, legacy_signed=legacy)
    assert cosmwasm.from_slice(type_name, raw, legacy_signed=legacy) == value


@pytest.mark.parametrize("type_name", INT_TYPES)
@given(data=st.data())
@settings(max_examples=60)
def test_int_keys_keep_numeric_order(type_name: str, data: st.DataObject) -> None:
    a, b = data.draw(element(type_name)), data.draw(element(type_name))
    ra, rb = cosmwasm.to_cw_bytes(type_name, a), cosmwasm.to_cw_bytes(type_name, b)
    assert (a < b) == (ra < rb) and (a == b) == (ra == rb)


def test_legacy_signed_keys_are_plain_twos_complement() -> None:
    assert cosmwasm.to_cw_bytes("i16", -1, legacy_signed=True) == b"\xff\xff"
    assert cosmwasm.to_cw_bytes("i16", -1) == b"\x7f\xff"
    with pytest.raises(InvalidKey):
        cosmwasm.to_cw_bytes("u8", 256)
    with pytest.raises(InvalidKey):
        cosmwasm.to_cw_bytes("i8", "1")
    with pytest.raises(DecodeError):
        cosmwasm.from_slice("u32", b"\x00\x01")


@given(spec_and_key())
@settings(max_examples=150)
def test_composite_cw_key_round_trip(case: tuple[Any, Any]) -> None:
    spec, key = case
    m = cosmwasm.Map("ns", key=spec)
    stored = m.key(key)
    assert stored.startswith(b"\x00\x02ns")
    assert m.decompose(stored) == key
    assert cosmwasm.decompose(stored, m) == key
    assert stored == b"\x00\x02ns" + cosmwasm.joined_key(spec, key)


def test_nested_tuple_specs_flatten() -> None:
    spec = (("bytes", "bytes"), "bytes")
    assert cosmwasm.key(spec, ((b"foo", b"bar"), b"zoom")) == [b"foo", b"bar", b"zoom"]
    m = cosmwasm.Map("n", key=spec)
    assert m.decompose(m.key(((b"a", b"b"), b"c"))) == ((b"a", b"b"), b"c")
    with pytest.raises(InvalidKey):
        m.key((b"a", b"b", b"c"))


LAYOUTS = {"tuple": TUPLE, "cosmwasm": COSMWASM}


def open_scope(layout: Layout) -> keyspace.Scope:
    """The tuple layout on a scope of a tuple keyspace; the CosmWasm layout on the
    raw root of a length-prefixed keyspace."""
    if layout is TUPLE:
        return keyspace.open("memory:").scope("app", 1)
    return keyspace.open("memory:", scheme="length-prefixed", leaf_depth=0).scope()


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
@given(case=spec_and_key(), value=st.integers())
@settings(max_examples=60)
def test_composite_key_round_trip_through_a_store(layout: Layout, case: tuple[Any, Any], value: int) -> None:
    spec, key = case
    m = Map(open_scope(layout), "things", key=spec, layout=layout)
    m.save(key, value)
    assert m.load(key) == value
    if layout is TUPLE:  # a tuple-layer key: (path + (namespace,), *elements)
        elements = m.spec.elements(key)
        stored = [(p, k) for p, k, _ in m.scope.keyspace.scope().subtree()]
        assert stored == [(("app", 1, "things"), elements[0] if len(elements) == 1 else elements)]
    else:  # exactly cw-storage-plus's bytes in the store
        assert [k for k, _ in m.scope.keyspace.store.scan()] == [cosmwasm.Map("things", key=spec).key(key)]
    assert list(m.items()) == [(key, value)]
    assert key in m
    m.remove(key)
    assert m.may_load(key) is None and len(m) == 0


# -- ranges against a sorted model -----------------------------------------------------


RANGE_SHAPES = [("str", "u16"), ("bytes", "i32"), ("u8", "str"), ("i64", "bytes"), ("addr", "u8", "i16")]


@st.composite
def range_case(draw: st.DrawFn, layout_name: str) -> dict[str, Any]:
    shape = draw(st.sampled_from(RANGE_SHAPES))
    small = {
        "str": st.sampled_from(["", "a", "ab", "b", "\x00", "é"]),
        "addr": st.sampled_from(["a", "b", "cc"]),
        "bytes": st.sampled_from([b"", b"\x00", b"a", b"a\x00", b"\xff", b"b"]),
    }
    elem = {t: small.get(t, element(t) if t[1:] in ("8",) else st.integers(-3, 3).map(abs)) for t in shape}
    if "i32" in shape or "i16" in shape or "i64" in shape:
        elem.update({t: st.integers(-3, 3) for t in shape if t[0] == "i"})
    key = st.tuples(*(elem[t] for t in shape))
    keys = draw(st.lists(key, max_size=14, unique=True))
    n = len(shape)
    # CosmWasm keys sort by their bytes: natural order holds for the last element
    plen = n - 1 if layout_name == "cosmwasm" else draw(st.integers(0, n - 1))
    prefix = tuple(draw(elem[t]) for t in shape[:plen])
    if keys and draw(st.booleans()):
        prefix = keys[0][:plen]
    rest = shape[plen:]
    bound = st.none() | st.tuples(*(elem[t] for t in rest))
    if keys:  # bounds equal to stored keys, where inclusive and exclusive differ
        bound = bound | st.sampled_from([k[plen:] for k in keys])
    return {
        "shape": shape,
        "keys": keys,
        "prefix": prefix,
        "bounds": [None, *draw(st.lists(bound, min_size=2, max_size=2))],
    }


def _model(case: dict[str, Any]) -> list[tuple[Any, ...]]:
    p = case["prefix"]
    out = []
    for k in sorted(case["keys"]):
        if k[: len(p)] != p:
            continue
        r = k[len(p) :]
        if case["start"] is not None and (
            r < case["start"] or (r == case["start"] and not case["include_start"])
        ):
            continue
        if case["stop"] is not None and (
            r > case["stop"] or (r == case["stop"] and not case["include_stop"])
        ):
            continue
        out.append(r)
    if case["reverse"]:
        out.reverse()
    return out if case["limit"] is None else out[: case["limit"]]


@pytest.mark.parametrize("layout_name", [*LAYOUTS, "cosmwasm-in-a-tuple-scope"])
@given(data=st.data())
@settings(max_examples=40)
def test_ranges_match_a_sorted_model(layout_name: str, data: st.DataObject) -> None:
    """Every combination of bounds (none, or keys that may be stored), inclusive
    or exclusive ends, direction and limit, on one drawn map. The CosmWasm layout
    also runs on a tuple-scheme scope, whose encoding of its bytes keys keeps
    their order."""
    in_tuple_scope = layout_name == "cosmwasm-in-a-tuple-scope"
    layout_name = "cosmwasm" if in_tuple_scope else layout_name
    case = data.draw(range_case(layout_name))
    layout = LAYOUTS[layout_name]
    scope = open_scope(TUPLE) if in_tuple_scope else open_scope(layout)
    m = Map(scope, "m", key=case["shape"], layout=layout)
    neighbour = Map(m.scope, "m2", key=case["shape"], layout=layout)  # must never show up
    for i, k in enumerate(case["keys"]):
        m.save(k, i)
        neighbour.save(k, -1)
    view = m.prefix(case["prefix"]) if case["prefix"] else m
    rest_len = len(case["shape"]) - len(case["prefix"])
    index = {k: i for i, k in enumerate(case["keys"])}

    def bare(b: Any) -> Any:
        return b[0] if b is not None and rest_len == 1 else b

    flags = itertools.product(case["bounds"], case["bounds"], *[[False, True]] * 3, [None, 0, 2])
    for start, stop, include_start, include_stop, reverse, limit in flags:
        args = {"start": start, "stop": stop, "include_start": include_start}
        args.update(include_stop=include_stop, reverse=reverse, limit=limit)
        kwargs = {k: v for k, v in args.items() if k not in ("start", "stop")}
        got = list(view.items(bare(start), bare(stop), **kwargs))
        assert [k for k, _ in got] == [bare(r) for r in _model({**case, **args})], args
        for r, v in got:
            assert index[case["prefix"] + (r if isinstance(r, tuple) else (r,))] == v


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
def test_map_clear_item_and_update(layout: Layout) -> None:
    scope = open_scope(layout)
    m = Map(scope, "m", key=("addr", "u64"), layout=layout)
    other = Map(scope, "m_other", key="str", layout=layout)
    for i in range(5):
        m.save(("a", i), i)
    other.save("x", 1)
    assert m.update(("a", 9), lambda old: (old or 0) + 1) == 1
    assert list(m.sub_prefix("a").keys(reverse=True, limit=2)) == [9, 4]
    assert list(m.prefix("a").range(3, 4, include_stop=True)) == [(3, 3), (4, 4)]
    with pytest.raises(KeyError):
        m.load(("b", 1))
    with pytest.raises(InvalidKey):
        m.save(("a", -1), 0)
    del m[("a", 0)]
    with pytest.raises(KeyError):
        del m[("a", 0)]
    m.clear()
    assert m.is_empty() and list(other.items()) == [("x", 1)]
    item = Item(scope, "config", layout=layout)
    assert item.may_load() is None and not item.exists()
    item.save({"a": 1})
    assert item.load() == {"a": 1}
    assert item.update(lambda v: {**v, "b": 2}) == {"a": 1, "b": 2}
    item.remove()
    with pytest.raises(KeyError):
        item.load()


def test_map_ranges_and_key_specs_reject_bad_input() -> None:
    m = Map(open_scope(TUPLE), "m", key=("str", "u8"))
    with pytest.raises(InvalidKey):
        m.prefix(("a", 1))  # a prefix must be shorter than the key
    with pytest.raises(InvalidKey):
        list(m.items(start=("a",)))  # bounds are whole keys
    with pytest.raises(ValueError):
        KeySpec("u7")
    assert "nope" not in m


# -- Deque -------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
@given(ops=st.lists(st.tuples(st.sampled_from(["pb", "pf", "ob", "of"]), st.integers()), max_size=30))
@settings(max_examples=40)
def test_deque_matches_a_list(layout: Layout, ops: list[tuple[str, int]]) -> None:
    d = Deque(open_scope(layout), "q", layout=layout)
    model: list[int] = []
    for op, v in ops:
        if op == "pb":
            d.push_back(v)
            model.append(v)
        elif op == "pf":
            d.push_front(v)
            model.insert(0, v)
        elif op == "ob":
            assert d.pop_back() == (model.pop() if model else None)
        else:
            assert d.pop_front() == (model.pop(0) if model else None)
        assert len(d) == len(model)
    assert list(d) == model
    assert d.front() == (model[0] if model else None)
    assert d.back() == (model[-1] if model else None)


def test_deque_cosmwasm_bytes() -> None:
    ks = keyspace.open("memory:", scheme="length-prefixed", leaf_depth=0)
    q = cosmwasm.Deque("q").bind(ks.scope())
    q.push_front({"x": 1})  # an empty deque's front is position 0xffffffff
    q.push_back(2)
    assert dict(ks.store.scan()) == {
        b"\x00\x01q\xff\xff\xff\xff": b'{"x":1}',
        b"\x00\x01q\x00\x00\x00\x00": b"2",
        b"\x00\x01qh": b"\xff\xff\xff\xff",
        b"\x00\x01qt": b"\x00\x00\x00\x01",
    }
    assert list(q) == [{"x": 1}, 2]


# -- snapshots ------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
def test_snapshot_map_and_item_history(layout: Layout) -> None:
    scope = open_scope(layout)
    members = SnapshotMap(
        scope, "members", "members__checkpoints", "members__changelog", key="addr", layout=layout
    )
    members.save("alice", 5, height=10)
    members.save("alice", 6, height=10)  # one change set per key and height
    members.save("alice", 7, height=12)
    members.remove("alice", height=15)
    assert [members.may_load_at_height("alice", h) for h in (9, 10, 11, 12, 14, 15, 16)] == [
        None,
        None,
        6,
        6,
        7,
        7,
        None,
    ]
    assert list(members.changes("alice")) == [(10, None), (12, 6), (15, 7)]
    total = SnapshotItem(scope, "total", "total__checkpoints", "total__changelog", layout=layout)
    total.save(3, height=1)
    total.save(4, height=2)
    assert [total.may_load_at_height(h) for h in (1, 2, 3)] == [None, 3, 4]
    for without_height in (
        lambda: total.save(5),
        lambda: members.save("bob", 1),
        lambda: members.remove("alice"),
    ):
        with pytest.raises(InvalidArgument, match="height="):
            without_height()


def test_snapshot_map_changelog_bytes() -> None:
    ks = keyspace.open("memory:", scheme="length-prefixed", leaf_depth=0)
    members = cosmwasm.SnapshotMap("members", "members__checkpoints", "members__changelog", key="addr")
    members.bind(ks.scope()).save("ab", 1, height=0x1D0)
    stored = dict(ks.store.scan())
    assert stored[b"\x00\x07membersab"] == b"1"
    assert stored[b"\x00\x12members__changelog\x00\x02ab" + (0x1D0).to_bytes(8, "big")] == b'{"old":null}'


# -- IndexedMap with composite keys ------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
def test_indexed_map_with_composite_record_and_index_keys(layout: Layout) -> None:
    scope = open_scope(layout)
    orders = IndexedMap(
        scope,
        "orders",
        key=("addr", "u32"),
        indexes={
            "ref": UniqueIndex(lambda o: (o["shop"], o["ref"]), "orders__ref", key=("str", "u64")),
            "day": MultiIndex(lambda o: (o["day"], o["shop"]), "orders__day", key=("u16", "str")),
        },
        layout=layout,
    )
    rows = {
        ("alice", 1): {"shop": "s1", "ref": 10, "day": 3},
        ("alice", 2): {"shop": "s1", "ref": 11, "day": 3},
        ("bob", 1): {"shop": "s2", "ref": 10, "day": 3},
        ("bob", 7): {"shop": "s1", "ref": 12, "day": 4},
    }
    for k, v in rows.items():
        orders.save(k, v)
    with pytest.raises(UniqueViolation):
        orders.save(("carol", 1), {"shop": "s1", "ref": 10, "day": 9})
    assert orders.may_load(("carol", 1)) is None
    ref = orders.index("ref")
    assert ref.load(("s2", 10)) == (("bob", 1), rows[("bob", 1)])
    assert ref.may_load(("s2", 11)) is None
    assert [k for k, _ in ref.prefix("s1").items(start=11)] == [("alice", 2), ("bob", 7)]
    day = orders.index("day")
    assert [k for k, _ in day.prefix((3, "s1")).items()] == [("alice", 1), ("alice", 2)]
    assert [k for k, _ in day.prefix((3, "s1")).items(start=("alice", 2), reverse=True)] == [("alice", 2)]
    assert len(day.prefix(3)) == 3
    orders.save(("alice", 1), {"shop": "s9", "ref": 10, "day": 4})  # both index keys move
    assert ref.load(("s9", 10))[0] == ("alice", 1) and ref.may_load(("s1", 10)) is None
    assert [k for k, _ in day.prefix(4).items()] == [("bob", 7), ("alice", 1)]  # shop s1 < s9
    del orders[("bob", 7)]
    assert [k for k, _ in day.prefix(4).items()] == [("alice", 1)]
    with pytest.raises(InvalidArgument, match="multi index"):
        day.load(3)
    orders.clear()
    assert len(ref) == len(day) == len(orders) == 0


def test_an_index_without_a_function_reads_and_refuses_a_save_naming_itself() -> None:
    scope = open_scope(TUPLE)
    written = IndexedMap(
        scope, "users", key="str", indexes={"mail": UniqueIndex(lambda u: u, "users__mail", key="str")}
    )
    written.save("ann", "ann@x")
    reader = IndexedMap(
        scope, "users", key="str", indexes={"mail": UniqueIndex(None, "users__mail", key="str")}
    )
    assert reader.index("mail").load("ann@x") == ("ann", "ann@x")
    before = list(scope.keyspace.store.scan())
    with pytest.raises(InvalidArgument, match="'users__mail' has no index function"):
        reader.save("bob", "bob@x")
    assert list(scope.keyspace.store.scan()) == before


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
def test_a_full_deque_refuses_a_push_with_a_named_error_and_writes_nothing(layout: Layout) -> None:
    from keyspace.errors import CollectionFull

    scope = open_scope(layout)
    d = Deque(scope, "q", layout=layout)
    d.push_back("first")
    d._set(scope, ("h",), 1)  # as after 2**32 - 1 pushes at the back: tail = head - 1
    d._set(scope, ("t",), 0)
    assert len(d) == 2**32 - 1
    before = list(scope.keyspace.store.scan(b"", None))
    for push in (d.push_back, d.push_front):
        with pytest.raises(CollectionFull, match=r"is full: it holds 4294967295 items"):
            push("one more")
        with pytest.raises(OverflowError):  # as before the error had a name
            push("one more")
    assert list(scope.keyspace.store.scan(b"", None)) == before
