"""docs/collections.md: "`Item`, `Map`, `IndexedMap` …, `Deque`, `SnapshotMap`
and `SnapshotItem` run on any scope of every scheme". With no ``layout=``, a
collection takes tuple-layer keys where the scheme's keys are typed (TupleScheme)
and cw-storage-plus bytes elsewhere, so the same code runs on every scheme; on a
scheme that does not keep keys in order (ScopeHash) ranges, prefixes and
``clear()`` still give exactly the keys, in key order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.collections import (
    COSMWASM,
    TUPLE,
    Deque,
    IndexedMap,
    Item,
    Map,
    MultiIndex,
    SnapshotMap,
    UniqueIndex,
)
from keyspace.errors import UniqueViolation
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, ScopeHash, Sublevel, TupleScheme

ORDERED = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), Delimited(":"), Delimited("\x00")]
EVERY = [*ORDERED, ScopeHash()]


def _run_everything(ks: Any, app: keyspace.Scope) -> None:
    scores = Map(app, "scores", key=("addr", "u64"))
    for who, n in (("alice", 7), ("alice", 2), ("alice", 30), ("bob", 1)):
        scores.save((who, n), {"points": n})
    assert list(scores.prefix("alice").keys()) == [2, 7, 30]
    assert list(scores.prefix("alice").items(start=5, reverse=True, limit=10)) == [
        (30, {"points": 30}),
        (7, {"points": 7}),
    ]
    signed = Map(app, "signed", key="i32", value="json")
    for n in (5, -3, 0, -100, 7):
        signed.save(n, n)
    assert list(signed.keys()) == [-100, -3, 0, 5, 7]
    users = IndexedMap(
        app,
        "users",
        key="str",
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "users__email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "users__team", key="str"),
        },
    )
    users.save("alice", {"email": "a@example.com", "team": "red"})
    users.save("bob", {"email": "b@example.com", "team": "red"})
    before = list(ks.store.scan())
    with pytest.raises(UniqueViolation):
        users.save("carol", {"email": "a@example.com", "team": "blue"})
    assert list(ks.store.scan()) == before
    assert [k for k, _ in users.index("team").prefix("red").items()] == ["alice", "bob"]
    config = Item(app, "config")
    config.save({"v": 1})
    assert config.load() == {"v": 1}
    queue = Deque(app, "queue")
    queue.push_back(1)
    queue.push_back(2)
    queue.push_front(0)
    assert [queue.pop_front(), queue.pop_back(), queue.pop_back(), queue.pop_back()] == [0, 2, 1, None]
    members = SnapshotMap(app, "members", "members__check", "members__change", key="addr")
    members.save("alice", 1, height=10)
    members.save("alice", 2, height=20)
    assert members.may_load_at_height("alice", 15) == 1
    users.clear()
    scores.clear()
    assert list(users.keys()) == [] and list(users.index("team").prefix("red").items()) == []
    assert list(scores.prefix("alice").keys()) == []
    assert list(signed.keys()) == [-100, -3, 0, 5, 7]  # another collection's entries stay
    assert config.load() == {"v": 1}


@pytest.mark.parametrize("scheme", EVERY, ids=lambda s: repr(s))
def test_collections_run_on_every_scheme(tmp_path: Path, scheme: Any) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", scheme=scheme) as ks:
        ks.scope("other")[b"k"] = b"v"
        _run_everything(ks, ks.scope("app"))
        assert ks.scope("other")[b"k"] == b"v"
        expected = TUPLE if scheme.typed_keys else COSMWASM
        assert Map(ks.scope("app"), "m", key="str").layout is expected


def test_a_map_on_a_scheme_without_key_order_lists_and_clears_its_keys() -> None:
    """ScopeHash stores a key after its length, so its stored order is not the
    keys' order: a COSMWASM map there once listed none of its keys and its
    ``clear()`` deleted none of them (then collections were refused there). Now
    a map lists its keys in key order and clears exactly them."""
    ks = keyspace.open("memory:", scheme=ScopeHash())
    app = ks.scope("app")
    app[b"\x00\x01ax"] = b'"by hand"'  # what a map "a" holds for the key "x"
    app[b"\x00\x01b" + b"y" * 40] = b"1"  # another namespace, a longer key
    names = Map(app, "a", key="str")
    names.save("zz", 2)
    names.save("y" * 30, 3)
    assert list(names.keys()) == ["x", "y" * 30, "zz"]
    assert list(names.items(start="y", reverse=True, limit=2)) == [("zz", 2), ("y" * 30, 3)]
    names.clear()
    assert list(names.keys()) == [] and dict(app.items()) == {b"\x00\x01b" + b"y" * 40: b"1"}
