"""A collection with several namespaces (an indexed map and its indexes, a
snapshot collection and its changelog and checkpoints maps) refuses, in its
constructor, two of them that are one namespace: such a pair writes and deletes
each other's entries (an index in the map's namespace makes ``items()`` read an
index entry as a record; two indexes in one namespace delete each other's
entries). Distinct namespaces, however alike (``tokens``/``tokens2``), work."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import cosmwasm as cw
from keyspace.collections import (
    IndexedMap,
    IndexedSnapshotMap,
    MultiIndex,
    SnapshotItem,
    SnapshotMap,
    UniqueIndex,
)
from keyspace.cosmwasm import SchemaError
from keyspace.errors import InvalidArgument
from keyspace.schemes import LengthPrefixed, TupleScheme

SCHEMES = [TupleScheme(), LengthPrefixed()]


def _scope(ks: keyspace.Keyspace) -> keyspace.Scope:
    return ks.scope() if isinstance(ks.scheme, LengthPrefixed) else ks.scope("app")


def _owner(v: Any) -> Any:
    return v["owner"]


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_index_in_the_maps_namespace_is_refused(scheme: Any) -> None:
    with keyspace.open("memory:", scheme=scheme) as ks:
        with pytest.raises(InvalidArgument, match=r"index 'owner' uses namespace 'tokens'.*the map"):
            IndexedMap(
                _scope(ks), "tokens", key="str", indexes={"owner": MultiIndex(_owner, "tokens", key="str")}
            )
        with pytest.raises(InvalidArgument, match=r"index 'owner' uses namespace b'tokens'"):
            IndexedMap(
                _scope(ks), "tokens", key="str", indexes={"owner": UniqueIndex(_owner, b"tokens", key="str")}
            )
        assert list(ks.store.scan(b"")) == []


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_two_indexes_in_one_namespace_are_refused(scheme: Any) -> None:
    with keyspace.open("memory:", scheme=scheme) as ks:
        indexes = {"a": MultiIndex(_owner, "idx", key="str"), "b": UniqueIndex(_owner, "idx", key="str")}
        with pytest.raises(InvalidArgument, match=r"index 'b' uses namespace 'idx', which index 'a' uses"):
            IndexedMap(_scope(ks), "tokens", key="str", indexes=indexes)


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_snapshot_namespaces_must_differ(scheme: Any) -> None:
    with keyspace.open("memory:", scheme=scheme) as ks:
        s = _scope(ks)
        for pk, cp, cl in (("m", "m", "cl"), ("m", "cp", "m"), ("m", "x", "x")):
            with pytest.raises(InvalidArgument, match="uses namespace"):
                SnapshotMap(s, pk, cp, cl, key="str")
        with pytest.raises(InvalidArgument, match="the changelog uses namespace 'x'"):
            SnapshotItem(s, "i", "x", "x")
        with pytest.raises(InvalidArgument, match="index 'owner' uses namespace 'cl'"):
            IndexedSnapshotMap(
                s, "m", "cp", "cl", key="str", indexes={"owner": MultiIndex(_owner, "cl", key="str")}
            )
        # An item lies at its raw name, apart from its own maps: allowed, as in cw-storage-plus.
        item = SnapshotItem(s, "i", "i", "i__cl")
        item.save(1, 1)
        item.save(2, 2)
        assert item.may_load_at_height(2) == 1 and item.load() == 2


def test_cosmwasm_definitions_refuse_it_too() -> None:
    with pytest.raises(InvalidArgument, match="index 'owner' uses namespace 'tokens'"):
        cw.IndexedMap("tokens", {"owner": cw.MultiIndex(_owner, "tokens", "tokens", key="addr")}, key="str")
    with pytest.raises(InvalidArgument, match="index 'b' uses namespace 'ix'"):
        cw.IndexedMap(
            "tokens",
            {
                "a": cw.UniqueIndex(_owner, "ix", key="addr"),
                "b": cw.MultiIndex(_owner, "tokens", "ix", key="addr"),
            },
            key="str",
        )
    with pytest.raises(InvalidArgument, match="uses namespace"):
        cw.SnapshotMap("m", "m__cp", "m__cp", key="str")
    with pytest.raises(InvalidArgument, match="uses namespace"):
        cw.SnapshotItem("i", "c", "c")
    with pytest.raises(InvalidArgument, match="not a cosmwasm UniqueIndex or MultiIndex"):
        cw.IndexedMap("tokens", {"owner": "tokens__owner"}, key="str")  # type: ignore[dict-item]
    with pytest.raises(SchemaError, match=r"indexed_maps\.t.*index 'o' uses namespace 't'"):
        cw.load_schema(
            {
                "indexed_maps": {
                    "t": {
                        "key": ["str"],
                        "indexes": {"o": {"kind": "multi", "namespace": "t", "key": ["addr"]}},
                    }
                }
            }
        )


NAMES = st.sampled_from(["tokens", "tokens2", "token", "owner", b"owner", "t", ""])


@settings(max_examples=60)
@given(
    pk=NAMES,
    idx=st.lists(st.tuples(st.booleans(), NAMES), min_size=1, max_size=3),
    records=st.dictionaries(st.text("ab", max_size=2), st.sampled_from(["x", "y", "z"]), max_size=4),
)
def test_indexed_map_works_exactly_when_its_namespaces_differ(
    pk: Any, idx: list[tuple[bool, Any]], records: dict[str, str]
) -> None:
    """Accepted exactly when every namespace differs (as bytes); then every
    index answers its records, whatever was saved and removed."""
    names = [pk, *(ns for _, ns in idx)]
    distinct = len({n.encode() if isinstance(n, str) else n for n in names}) == len(names)
    indexes = {
        f"i{n}": (UniqueIndex if unique else MultiIndex)(lambda v, n=n: f"{v['o']}{n}", ns, key="str")
        for n, (unique, ns) in enumerate(idx)
    }
    with keyspace.open("memory:", scheme=LengthPrefixed()) as ks:
        if not distinct:
            with pytest.raises(InvalidArgument, match="uses namespace"):
                IndexedMap(ks.scope(), pk, key="str", indexes=indexes)
            return
        m = IndexedMap(ks.scope(), pk, key="str", indexes=indexes)
        for k, o in records.items():
            m.save(k, {"o": f"{k}{o}"})  # unique index keys stay unique
        for k in list(records)[::2]:
            m.remove(k)
        expected = {k: {"o": f"{k}{o}"} for k, o in list(records.items()) if k not in list(records)[::2]}
        assert dict(m.items()) == expected
        for name in indexes:
            assert sorted(m.index(name).items()) == sorted(expected.items())
