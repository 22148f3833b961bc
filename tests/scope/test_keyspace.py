"""Keyspace and Scope: the API users hold."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import fdb.tuple
import pytest

import keyspace
from keyspace.catalog import LAYOUT_START
from keyspace.errors import (
    HashCollision,
    InvalidKey,
    InvalidName,
    KeyTooLarge,
    LayoutError,
    SchemeMismatch,
    StoreClosed,
)
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes.length_prefixed import namespace_with_key

NESTING_SCHEMES = [TupleScheme(), AsciiHex(), Sublevel()]


def raw_items(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b"", None))


def name(ks: keyspace.Keyspace, text: str) -> Any:
    """A path component as the scheme gives it back: str in the tuple scheme,
    UTF-8 bytes in the byte schemes."""
    return text if ks.scheme.typed_keys else text.encode()


@pytest.fixture(params=NESTING_SCHEMES, ids=lambda s: s.name)
def ks(request: pytest.FixtureRequest) -> Any:
    with keyspace.open("memory:", scheme=request.param) as k:
        yield k


def test_quick_start_on_lmdb(tmp_path: Path) -> None:
    with keyspace.open(str(tmp_path / "data.lmdb")) as ks:
        users = ks.scope("tenant1", "users")
        assert raw_items(ks) == []  # making a scope writes nothing
        users[b"alice"] = b"{...}"
        users[b"bob"] = b"{..}"
        ks.scope("tenant2", "users")[b"alice"] = b"other tenant"
        assert users[b"alice"] == b"{...}"
        assert list(users) == [b"alice", b"bob"]
        assert list(users.items(start=b"a", stop=b"m", reverse=True, limit=10)) == [
            (b"bob", b"{..}"),
            (b"alice", b"{...}"),
        ]
    with keyspace.open(str(tmp_path / "data.lmdb")) as ks:
        assert isinstance(ks.scheme, TupleScheme)
        assert dict(ks.scope("tenant1", "users")) == {b"alice": b"{...}", b"bob": b"{..}"}
        assert ks.scope().scopes() == ["tenant1", "tenant2"]


def test_mapping_view_sees_only_own_keys(ks: keyspace.Keyspace) -> None:
    parent = ks.scope("a")
    child = parent.scope("b")
    parent[b"k1"] = b"p1"
    parent[b"k2"] = b"p2"
    child[b"k1"] = b"c1"
    ks.scope("ab")[b"k"] = b"sibling"
    assert dict(parent) == {b"k1": b"p1", b"k2": b"p2"}
    assert len(parent) == 2
    assert dict(child) == {b"k1": b"c1"}
    assert b"k1" in child and b"k2" not in child
    assert parent.scopes() == [name(ks, "b")]
    assert ks.scope().scopes() == [name(ks, "a"), name(ks, "ab")]
    parent.clear()
    assert dict(parent) == {} and dict(child) == {b"k1": b"c1"}
    parent[b"k3"] = b"p3"
    parent.drop()
    assert dict(parent) == {} and dict(child) == {} and parent.scopes() == []
    assert dict(ks.scope("ab")) == {b"k": b"sibling"}


def test_delete_get_and_keyerror(ks: keyspace.Keyspace) -> None:
    s = ks.scope("x")
    s[b"k"] = b"v"
    assert s.get(b"k") == b"v" and s.get(b"missing", b"d") == b"d"
    del s[b"k"]
    with pytest.raises(KeyError):
        del s[b"k"]
    with pytest.raises(KeyError):
        s[b"k"]
    s.discard(b"k")


def test_ranges_use_plyvel_words(ks: keyspace.Keyspace) -> None:
    s = ks.scope("r")
    for k in (b"a", b"b", b"c", b"d"):
        s[k] = k.upper()
    assert list(s.keys(start=b"b", stop=b"d")) == [b"b", b"c"]
    assert list(s.keys(start=b"b", stop=b"d", include_start=False, include_stop=True)) == [b"c", b"d"]
    assert list(s.keys(reverse=True, limit=2)) == [b"d", b"c"]
    assert list(s.values(start=b"c")) == [b"C", b"D"]
    s[b"ba"] = b"BA"
    if ks.scheme.typed_keys:  # prefix = leading elements of composite keys
        s[(b"b", 1)] = b"B1"
        assert list(s.keys(prefix=b"b")) == [b"b", (b"b", 1)]
    else:  # prefix = leading bytes
        assert list(s.keys(prefix=b"b")) == [b"b", b"ba"]
    with pytest.raises(TypeError):
        list(s.keys(prefix=b"b", start=b"a"))
    assert list(s.keys(limit=0)) == []


def test_subtree_walks_absolute_paths(ks: keyspace.Keyspace) -> None:
    ks.scope("t")[b"0"] = b"root-own"
    ks.scope("t", "u")[b"1"] = b"child"
    ks.scope("t", "u", "v")[b"2"] = b"grandchild"
    ks.scope("t2")[b"3"] = b"outside"
    t, u, v = name(ks, "t"), name(ks, "u"), name(ks, "v")
    walked = sorted(ks.scope("t").subtree())
    expected = [((t,), b"0", b"root-own"), ((t, u), b"1", b"child"), ((t, u, v), b"2", b"grandchild")]
    assert walked == sorted(expected)


def test_transaction_is_atomic_across_scopes(ks: keyspace.Keyspace) -> None:
    with ks.transaction() as tx:
        tx.scope("tenant1", "users")[b"bob"] = b"..."
        tx.scope("tenant1", "audit")[b"0001"] = b"added bob"
        assert tx.scope("tenant1", "users")[b"bob"] == b"..."
    assert ks.scope("tenant1", "audit")[b"0001"] == b"added bob"
    before = raw_items(ks)
    with pytest.raises(RuntimeError), ks.transaction() as tx:
        tx.scope("tenant1", "users")[b"carol"] = b"..."
        tx.scope("tenant1", "audit")[b"0002"] = b"added carol"
        raise RuntimeError("abort")
    assert raw_items(ks) == before


def test_codecs(ks: keyspace.Keyspace) -> None:
    ints = ks.scope("ints", key="int", value="json")
    for n in (5, -1, 0, -(2**63), 2**63 - 1, 300):
        ints[n] = {"n": n}
    assert list(ints) == sorted([5, -1, 0, -(2**63), 2**63 - 1, 300])
    assert ints[-1] == {"n": -1}
    names = ks.scope("names", key="str", value="str")
    names["zoë"] = "z"
    names["anna"] = "a"
    assert list(names.items()) == [("anna", "a"), ("zoë", "z")]
    with pytest.raises(InvalidKey):
        ints["not an int"] = 1
    with pytest.raises(InvalidKey):
        ints[2**64] = 1
    with pytest.raises(InvalidKey):
        names[b"bytes"] = "x"


def test_tuple_scheme_typed_and_composite_keys() -> None:
    with keyspace.open("memory:") as ks:
        events = ks.scope("tenant1", "events")
        events[("2026-11-01", 3)] = b"c"
        events[("2026-11-01", 1)] = b"a"
        events[("2026-11-02", 1)] = b"d"
        events[("2026-11-01\x00x", 1)] = b"not a prefix match"
        events[12] = b"int key"
        assert list(events.keys(prefix="2026-11-01")) == [("2026-11-01", 1), ("2026-11-01", 3)]
        assert list(events.keys(prefix=("2026-11-01", 3))) == [("2026-11-01", 3)]
        assert events[12] == b"int key"
        for stored, _ in ks.store.scan(b"", None):
            if stored == ks.scheme.metadata_key:
                continue
            path, *_key = fdb.tuple.unpack(stored)
            assert path == ("tenant1", "events")


def test_paths_with_typed_components() -> None:
    with keyspace.open("memory:") as ks:
        ks.scope("t", 1, None, b"\x00\xff", uuid.UUID(int=7))[b"k"] = b"v"
        ks.scope("t", 1)[b"k"] = b"own"
        assert ks.scope("t").scopes() == [1]
        assert ks.scope("t", 1).scopes() == [None]
        assert dict(ks.scope("t", 1)) == {b"k": b"own"}


def test_metadata_records_scheme(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.sqlite'}"
    with keyspace.open(url, scheme=AsciiHex()) as ks:
        assert raw_items(ks) == []  # opening writes nothing
        ks.scope("a")[b"k"] = b"v"
    with keyspace.open(url) as ks:
        assert ks.scheme == AsciiHex()
        assert ks.scope("a")[b"k"] == b"v"
    with pytest.raises(SchemeMismatch):
        keyspace.open(url, scheme=TupleScheme())
    with pytest.raises(SchemeMismatch):
        keyspace.open(url, scheme="sublevel")


def test_prefixed_tuple_keyspaces_share_a_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    with keyspace.open(url) as ks:
        ks.scope("root")[b"k"] = b"at the root"
    app = TupleScheme(raw_prefix=b"app/")
    with keyspace.open(url, scheme=app) as ks:  # disjoint from the root keyspace: no mismatch
        assert ks.scheme == app
        ks.scope("root")[b"k"] = b"under app/"
    with keyspace.open(url, scheme=app) as ks:
        assert dict(ks.scope("root")) == {b"k": b"under app/"}
    with keyspace.open(url) as ks:
        assert ks.scheme == TupleScheme()
        assert dict(ks.scope("root")) == {b"k": b"at the root"}
        assert ks.scope().scopes() == ["root"]
    # a prefix whose keys would fall inside the root keyspace's own keys is refused
    with pytest.raises(SchemeMismatch):
        keyspace.open(url, scheme=TupleScheme(raw_prefix=b"\x05"))
    # a scheme that may write anywhere is refused too
    with pytest.raises(SchemeMismatch):
        keyspace.open(url, scheme=AsciiHex())
    with pytest.raises(SchemeMismatch):
        keyspace.open(url, scheme=ScopeHash())


@pytest.mark.parametrize("scheme", [Sublevel(), LengthPrefixed()], ids=lambda s: s.name)
def test_interop_schemes_write_no_metadata(scheme: Any) -> None:
    """Interop use (the layout declared for LengthPrefixed) writes nothing but data."""
    with keyspace.open("memory:", scheme=scheme, leaf_depth=2) as ks:
        ks.scope("bar", "cool")[b"foo"] = b"v"
        assert [k for k, _ in raw_items(ks)] == [scheme.encode(("bar", "cool"), b"foo")]


def test_cosmwasm_vectors_through_length_prefixed_scopes() -> None:
    with keyspace.open("memory:", scheme=LengthPrefixed(), leaf_depth=2) as ks:
        ks.scope(b"bar", b"cool")[b"foo"] = b"1"
        stored = [k for k, _ in raw_items(ks)]
        assert stored == [bytes.fromhex("0003626172 0004636f6f6c 666f6f".replace(" ", ""))]
        assert stored == [namespace_with_key([b"bar", b"cool"], b"foo")]
        assert dict(ks.scope(b"bar", b"cool")) == {b"foo": b"1"}
        assert ks.scope(b"bar").scopes() == [b"cool"]
        with pytest.raises(LayoutError):
            ks.scope(b"bar")[b""] = b"2"  # "bar" is a branch: its own keys would be ambiguous


def test_layout_error_for_length_prefixed_mix() -> None:
    with keyspace.open("memory:", scheme=LengthPrefixed()) as ks:
        ks.scope("a", "b")[b"k"] = b"v"
        before = raw_items(ks)
        with pytest.raises(LayoutError):
            ks.scope("a")[b"k"] = b"v"
        ks.scope("c")[b"k"] = b"v"
        with pytest.raises(LayoutError):
            ks.scope("c", "d")[b"k"] = b"v"
        layout_record = (LAYOUT_START + LengthPrefixed().prefix(("c",)), b"leaf")
        assert raw_items(ks) == sorted(
            [*before, (LengthPrefixed().encode(("c",), b"k"), b"v"), layout_record]
        )


def test_naive_refuses_writes_unless_asked() -> None:
    with keyspace.open("memory:", scheme=Naive()) as ks:
        with pytest.raises(LayoutError):
            ks.scope("foo")[b"bar"] = b"v"
        assert raw_items(ks) == []
    with keyspace.open("memory:", scheme=Naive(allow_collisions=True)) as ks:
        ks.scope("foo")[b"bar"] = b"1"
        assert ks.scope("fo")[b"obar"] == b"1"  # the collision it exists to show


# Two names with the same xxh32 (seed 0): 0xbdc096bc.
COLLIDING = ("scope72590", "scope159129")


def test_scope_hash_registry_detects_collisions(tmp_path: Path) -> None:
    first, second = COLLIDING
    url = str(tmp_path / "h.lmdb")
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        ks.scope(first)[b"k"] = b"v"
        before = raw_items(ks)
        with pytest.raises(HashCollision):
            ks.scope(second)[b"k"] = b"w"
        assert raw_items(ks) == before
        ks.scope("tenant1")[b"k"] = b"t"
        ks.scope()[b"root"] = b"r"
        assert sorted(ks.scope().scopes()) == sorted([first, "tenant1"])
        assert dict(ks.scope()) == {b"root": b"r"}
    with keyspace.open(url) as ks:
        assert isinstance(ks.scheme, ScopeHash)
        with pytest.raises(HashCollision):
            ks.scope(second)[b"k"] = b"w"
        assert dict(ks.scope(first)) == {b"k": b"v"}


def test_scope_hash_root_drop_removes_named_scopes() -> None:
    with keyspace.open("memory:", scheme=ScopeHash()) as ks:
        ks.scope()[b"own"] = b"1"
        ks.scope("tenant_2")[b"k"] = b"2"
        ks.scope("tenant214")[b"k"] = b"3"
        ks.scope().drop()
        assert dict(ks.scope()) == {} and ks.scope().scopes() == []
        assert dict(ks.scope("tenant214")) == {}
        ks.scope("tenant_2")[b"k"] = b"again"  # the registry still knows the names
        assert ks.scope().scopes() == ["tenant_2"]


def test_scope_hash_range_exact_for_ff_hash() -> None:
    with keyspace.open("memory:", scheme=ScopeHash()) as ks:
        for name in ("tenant_0", "tenant_1", "tenant_2", "tenant_3", "tenant_4", "tenant214"):
            ks.scope(name)[b"k"] = name.encode()
        ks.scope("tenant_2").clear()
        assert dict(ks.scope("tenant_4")) == {b"k": b"tenant_4"}
        assert dict(ks.scope("tenant214")) == {b"k": b"tenant214"}
        assert dict(ks.scope("tenant_2")) == {}


def test_bad_input_leaves_store_unchanged(tmp_path: Path) -> None:
    with keyspace.open(str(tmp_path / "b.lmdb")) as ks:
        s = ks.scope("t")
        s[b"ok"] = b"v"
        before = raw_items(ks)
        with pytest.raises(KeyTooLarge):
            s[b"x" * 600] = b"v"
        with pytest.raises(InvalidKey):
            s[1.5j] = b"v"  # type: ignore[index]
        with pytest.raises(InvalidName):
            keyspace.open("memory:", scheme=Sublevel()).scope("bad!name")
        with pytest.raises(InvalidKey):
            ks.scope("t", value="str")[b"k"] = b"not str"
        assert raw_items(ks) == before


def test_closed_keyspace_raises(tmp_path: Path) -> None:
    ks = keyspace.open(str(tmp_path / "c.lmdb"))
    s = ks.scope("t")
    ks.close()
    with pytest.raises(StoreClosed):
        s[b"k"] = b"v"
