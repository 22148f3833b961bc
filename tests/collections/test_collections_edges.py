"""Edges of the collections: a history of values that have no JSON form, a
failed pop writing nothing, deep prefixes, closed stores and bad arguments."""

from __future__ import annotations

from typing import Any

import pytest

import keyspace
from keyspace.collections import Deque, IndexedMap, Item, Map, MultiIndex, SnapshotItem, SnapshotMap
from keyspace.errors import DecodeError, InvalidArgument, InvalidKey, StoreClosed

SCHEMES = ["tuple", "length-prefixed", "asciihex", "sublevel", "scopehash"]


@pytest.mark.parametrize("scheme", ["tuple", "length-prefixed"])
def test_a_snapshot_collection_of_bytes_values_keeps_their_history(scheme: str) -> None:
    """The changelog re-encoded the old value as JSON: with value="bytes" every
    change after the first raised InvalidKey, so a saved key could never change."""
    with keyspace.open("memory:", scheme=scheme) as ks:
        sm = SnapshotMap(ks.scope("app"), "sm", "sm__cp", "sm__cl", key="str", value="bytes")
        sm.save("k", b"v1", height=1)
        sm.save("k", b"\xffv2", height=2)
        sm.remove("k", height=3)
        assert sm.may_load("k") is None
        assert sm.may_load_at_height("k", 1) is None
        assert sm.may_load_at_height("k", 2) == b"v1"
        assert sm.may_load_at_height("k", 3) == b"\xffv2"
        si = SnapshotItem(ks.scope("app"), "si", "si__cp", "si__cl", value="bytes")
        si.save(b"a", height=1)
        si.save(b"b", height=2)
        assert si.load() == b"b" and si.may_load_at_height(2) == b"a"
        js = SnapshotMap(ks.scope("app"), "js", "js__cp", "js__cl", key="str")  # JSON: cw-storage-plus's form
        js.save("k", {"a": 1}, height=1)
        js.save("k", {"a": 2}, height=2)
        assert js.may_load_at_height("k", 2) == {"a": 1}
        assert dict(js.changelog.items())[("k", 2)] == {"old": {"a": 1}}


@pytest.mark.parametrize("scheme", ["tuple", "length-prefixed", "sublevel"])
def test_a_pop_that_cannot_decode_its_item_writes_nothing(scheme: str) -> None:
    """The item was deleted before it was decoded: in a caller's transaction that
    went on after the error, the deque lost the item but kept its head."""
    with keyspace.open("memory:", scheme=scheme) as ks:
        app = ks.scope("app")
        raw = Deque(app, "q", value="bytes")
        raw.push_back(b"\xff not json")
        raw.push_back(b"2")
        before = list(ks.store.scan(b""))
        with ks.transaction() as tx, pytest.raises(DecodeError):
            Deque(app, "q").using(tx).pop_front()
        assert list(ks.store.scan(b"")) == before
        assert len(raw) == 2 and raw.front() == b"\xff not json"


def test_a_prefix_nested_too_deep_is_invalid_key() -> None:
    deep: Any = ()
    for _ in range(100_000):
        deep = (deep,)
    with keyspace.open("memory:") as ks:
        m = Map(ks.scope("app"), "m", key=("str", "u8"))
        im = IndexedMap(
            ks.scope("app"), "im", key="str", indexes={"t": MultiIndex(lambda v: v["t"], "im__t", key="str")}
        )
        for call in (lambda: m.prefix(deep), lambda: im.index("t").prefix(deep)):
            with pytest.raises(InvalidKey, match="nest deeper than the limit"):
                call()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_reads_asking_for_no_key_of_a_closed_store_raise(scheme: str) -> None:
    """A limit of 0 or an empty range returned [] from a closed store, before
    any read (LengthPrefixed and ScopeHash raised: their guards read first)."""
    ks = keyspace.open("memory:", scheme=scheme)
    scope = ks.scope("app")
    m = Map(scope, "m", key=("str", "u8"))
    m.save(("a", 1), 1)
    ks.close()
    for read in (
        lambda: list(scope.items(limit=0)),
        lambda: list(scope.keys(start=b"b", stop=b"a")),
        lambda: list(m.items(limit=0)),
        lambda: list(m.items(start=("b", 0), stop=("a", 0))),
    ):
        with pytest.raises(StoreClosed):
            read()


def test_collection_arguments_of_the_wrong_kind_are_invalid_argument() -> None:
    with keyspace.open("memory:") as ks:
        app = ks.scope("app")
        for make in (
            lambda: Map(app, "m", key="str", layout="tuple"),  # type: ignore[arg-type]
            lambda: Item(app, "i", layout="cosmwasm"),  # type: ignore[arg-type]
            lambda: Deque(app, "q", layout="tuple"),  # type: ignore[arg-type]
            lambda: IndexedMap(app, "im", key="str", indexes={"a": "x"}),  # type: ignore[dict-item]
            lambda: IndexedMap(app, "im", key="str", indexes=5),  # type: ignore[arg-type]
            lambda: Map(app, "m", key="str").using(None),  # type: ignore[arg-type]
        ):
            with pytest.raises(InvalidArgument):
                make()
        assert list(ks.store.scan(b"")) == []
