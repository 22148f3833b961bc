"""A collection operation of several writes that meets a key the engine refuses
(over LMDB's 511-byte limit) writes none of them, also inside a caller's
transaction (``using(tx)``) that goes on and commits after the error: an
IndexedMap's record and index entries, a Deque's item and its head or tail, a
SnapshotMap's or SnapshotItem's value and its change set.

The lengths are swept across the limit, so that each of the operation's keys is
in turn the first one too long."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.collections import (
    COSMWASM,
    TUPLE,
    Deque,
    IndexedMap,
    IndexedSnapshotMap,
    Layout,
    MultiIndex,
    SnapshotItem,
    SnapshotMap,
    UniqueIndex,
)
from keyspace.errors import KeyTooLarge

LAYOUTS = [pytest.param(TUPLE, id="tuple"), pytest.param(COSMWASM, id="cosmwasm")]
SWEEP = range(470, 521)


@pytest.fixture
def ks(tmp_path: Path) -> Iterator[keyspace.Keyspace]:
    k = keyspace.open(f"lmdb:///{tmp_path}/db")
    k.scope("app")[b"seed"] = b"1"  # the scheme record and the scope's first write are done
    try:
        yield k
    finally:
        k.close()


def _state(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b""))


def _all_or_nothing(ks: keyspace.Keyspace, op: Callable[[keyspace.Transaction | None], Any]) -> bool:
    """Run ``op`` alone and inside a caller's transaction that commits after the
    error; where it raises KeyTooLarge the store must be as before. True when it
    was refused at least once."""
    refused = False
    for in_tx in (False, True):
        before = _state(ks)
        failed = False
        if in_tx:
            with ks.transaction() as tx:
                try:
                    op(tx)
                except KeyTooLarge:
                    failed = True
        else:
            try:
                op(None)
            except KeyTooLarge:
                failed = True
        if failed:
            refused = True
            assert _state(ks) == before, f"refused operation wrote part of itself (in_tx={in_tx})"
    return refused


@pytest.mark.parametrize("layout", LAYOUTS)
def test_indexed_map_save_with_an_index_key_too_long(ks: keyspace.Keyspace, layout: Layout) -> None:
    app = ks.scope("app")
    users = IndexedMap(
        app,
        "users",
        key="str",
        layout=layout,
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "team", key="str"),
        },
    )
    users.save("alice", {"email": "a@x", "team": "red"})
    refused = 0
    for n in SWEEP:
        for record in ({"email": "e" * n, "team": "blue"}, {"email": "b@x", "team": "t" * n}):

            def save(tx: keyspace.Transaction | None, record: dict[str, str] = record) -> None:
                (users if tx is None else users.using(tx)).save("alice", record)

            refused += _all_or_nothing(ks, save)
            if users.load("alice") != {"email": "a@x", "team": "red"}:
                users.save("alice", {"email": "a@x", "team": "red"})  # a save that fit: back
    assert refused
    assert users.index("email").load("a@x") == ("alice", {"email": "a@x", "team": "red"})
    assert list(users.index("team").prefix("red").keys()) == ["alice"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_indexed_map_save_with_a_record_key_too_long(ks: keyspace.Keyspace, layout: Layout) -> None:
    users = IndexedMap(
        ks.scope("app"),
        "u",
        key="str",
        layout=layout,
        indexes={"email": UniqueIndex(lambda u: u["email"], "e", key="str")},
    )
    refused = 0
    for n in SWEEP:

        def save(tx: keyspace.Transaction | None, n: int = n) -> None:
            (users if tx is None else users.using(tx)).save("k" * n, {"email": f"{n}@x"})

        refused += _all_or_nothing(ks, save)
    assert refused
    for key, value in users.items():  # every record that was saved has its index entry
        assert users.index("email").load(value["email"]) == (key, value)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("end", ["back", "front"])
def test_deque_push_with_its_head_or_tail_key_too_long(
    ks: keyspace.Keyspace, layout: Layout, end: str
) -> None:
    refused = 0
    for n in SWEEP:
        q = Deque(ks.scope("app"), "q" * n, layout=layout)

        def push(tx: keyspace.Transaction | None, q: Deque = q) -> None:
            target = q if tx is None else q.using(tx)
            getattr(target, f"push_{end}")(7)

        refused += _all_or_nothing(ks, push)
        assert list(q) == [7] * len(q)
        positions = (
            [k for k in q._items.scope(q.scope) if type(k) is int] if layout is TUPLE else [0] * len(q)
        )
        assert len(positions) == len(q), f"namespace of {n}: items at {positions} beside a deque of {len(q)}"
    assert refused


@pytest.mark.parametrize("layout", LAYOUTS)
def test_snapshot_map_save_with_its_key_too_long(ks: keyspace.Keyspace, layout: Layout) -> None:
    m = SnapshotMap(ks.scope("app"), "primary-" * 4, "cp", "cl", key="str", layout=layout)
    refused = 0
    for n in SWEEP:

        def save(tx: keyspace.Transaction | None, n: int = n) -> None:
            (m if tx is None else m.using(tx)).save("k" * n, n, height=5)

        refused += _all_or_nothing(ks, save)
    assert refused
    saved = {k for k, _ in m.items()}
    logged = {k[0] for k in m.changelog}
    assert logged == saved  # no change set of a value that was never written


@pytest.mark.parametrize("layout", LAYOUTS)
def test_snapshot_item_save_with_its_key_too_long(ks: keyspace.Keyspace, layout: Layout) -> None:
    refused = 0
    for n in SWEEP:
        item = SnapshotItem(ks.scope("app"), "i" * n, "cp", f"c{n}", layout=layout)

        def save(tx: keyspace.Transaction | None, item: SnapshotItem = item) -> None:
            (item if tx is None else item.using(tx)).save(1, height=3)

        if _all_or_nothing(ks, save):
            refused += 1
            assert not list(item.changelog.keys())
    assert refused


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("indexed", [False, True], ids=["snapshot_map", "indexed_snapshot_map"])
def test_snapshot_map_save_with_its_change_set_key_too_long(
    ks: keyspace.Keyspace, layout: Layout, indexed: bool
) -> None:
    # The changelog's namespace is long and the map's short: the change set's key
    # is refused where the record's and the index entry's still fit.
    app = ks.scope("app")
    changelog = "c" * 200
    m: SnapshotMap | IndexedSnapshotMap
    if indexed:
        team = MultiIndex(lambda v: v["team"], "t", key="str")
        m = IndexedSnapshotMap(app, "p", "cp", changelog, key="str", layout=layout, indexes={"team": team})
    else:
        m = SnapshotMap(app, "p", "cp", changelog, key="str", layout=layout)
    refused = 0
    for n in range(250, 330):

        def save(tx: keyspace.Transaction | None, n: int = n) -> None:
            (m if tx is None else m.using(tx)).save("k" * n, {"team": "red"}, height=5)

        refused += _all_or_nothing(ks, save)
    assert refused
    saved = {k for k, _ in m.items()}
    assert saved and {k[0] for k in m.changelog} == saved  # every record saved has its change set
