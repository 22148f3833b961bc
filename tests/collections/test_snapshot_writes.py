"""Every write of a SnapshotMap or SnapshotItem keeps its history: ``update``
takes a height and records the change set as ``save`` does, ``del m[k]`` (which
has no height) is refused without removing anything, and ``clear()`` forgets the
history with the values, so no height answers a value the map no longer has."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.collections import SnapshotItem, SnapshotMap
from keyspace.errors import InvalidArgument
from keyspace.schemes import LengthPrefixed, ScopeHash, TupleScheme

SCHEMES = [TupleScheme(), LengthPrefixed(), ScopeHash()]


@pytest.fixture(params=["memory", "lmdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield "memory:" if request.param == "memory" else f"lmdb://{tmp_path}/db"


def _map(ks: keyspace.Keyspace) -> SnapshotMap:
    return SnapshotMap(ks.scope("app"), "sm", "sm__cp", "sm__cl", key=("str", "u8"))


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_update_records_the_change_at_its_height(store: str, scheme: Any) -> None:
    with keyspace.open(store, scheme=scheme) as ks:
        sm = _map(ks)
        sm.save(("k", 1), 1, height=1)
        assert sm.update(("k", 1), lambda v: v + 1, height=5) == 2
        assert [sm.may_load_at_height(("k", 1), h) for h in (0, 1, 4, 5, 6)] == [None, None, 1, 1, 2]
        assert list(sm.changes(("k", 1))) == [(1, None), (5, 1)]
        with ks.transaction() as tx:
            sm.using(tx).update(("k", 1), lambda v: v * 10, height=7)
        assert sm.may_load_at_height(("k", 1), 6) == 2 and sm.load(("k", 1)) == 20
        before = list(ks.store.scan(b""))
        with pytest.raises(InvalidArgument):
            sm.update(("k", 1), lambda v: 0)
        assert list(ks.store.scan(b"")) == before

        item = SnapshotItem(ks.scope("app"), "si", "si__cp", "si__cl")
        item.save(1, height=1)
        assert item.update(lambda v: v + 1, height=3) == 2
        assert [item.may_load_at_height(h) for h in (1, 2, 3, 4)] == [None, 1, 1, 2]
        before = list(ks.store.scan(b""))
        with pytest.raises(InvalidArgument):
            item.update(lambda v: 0)
        assert list(ks.store.scan(b"")) == before


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_del_without_a_height_is_refused(store: str, scheme: Any) -> None:
    with keyspace.open(store, scheme=scheme) as ks:
        sm = _map(ks)
        sm.save(("k", 1), 1, height=1)
        sm.save(("k", 1), 2, height=5)
        before = list(ks.store.scan(b""))
        with pytest.raises(InvalidArgument):
            del sm[("k", 1)]
        assert list(ks.store.scan(b"")) == before
        assert sm.may_load_at_height(("k", 1), 6) == 2


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_clear_forgets_the_history_with_the_values(store: str, scheme: Any) -> None:
    with keyspace.open(store, scheme=scheme) as ks:
        ks.scope("app")[b"other"] = b"stays"
        sm = _map(ks)
        sm.save(("k", 1), 1, height=1)
        sm.save(("k", 1), 2, height=5)
        sm.clear()
        assert list(sm.items()) == [] and list(sm.changes(("k", 1))) == []
        assert [sm.may_load_at_height(("k", 1), h) for h in (0, 2, 6, 100)] == [None] * 4
        assert ks.scope("app")[b"other"] == b"stays"
