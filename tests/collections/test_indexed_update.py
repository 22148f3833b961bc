"""``IndexedMap.update`` moves the record's index entries as ``save`` does: the
index entries of the old value go, those of the new value come, and a unique key
held by another record raises UniqueViolation with nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.collections import IndexedMap, MultiIndex, UniqueIndex
from keyspace.errors import UniqueViolation
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, ScopeHash, Sublevel, TupleScheme

SCHEMES = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), Delimited(), ScopeHash()]


@pytest.fixture(params=["memory", "lmdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield "memory:" if request.param == "memory" else f"lmdb://{tmp_path}/db"


def _users(ks: keyspace.Keyspace) -> IndexedMap:
    return IndexedMap(
        ks.scope("app"),
        "users",
        key="str",
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "users__email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "users__team", key="str"),
        },
    )


def _view(users: IndexedMap) -> dict[str, Any]:
    return {
        "records": dict(users.items()),
        "email": [(k, v) for k, v in users.index("email").items()],
        "team": [(k, v) for k, v in users.index("team").items()],
    }


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_update_moves_index_entries(store: str, scheme: Any) -> None:
    with keyspace.open(store, scheme=scheme) as ks:
        users = _users(ks)
        users.save("alice", {"email": "a@x", "team": "red"})
        new = users.update("alice", lambda u: {"email": "b@x", "team": "blue"})
        assert new == {"email": "b@x", "team": "blue"}
        assert users.index("email").may_load("a@x") is None
        assert users.index("email").load("b@x") == ("alice", new)
        assert list(users.index("team").prefix("red").keys()) == []
        assert list(users.index("team").prefix("blue").items()) == [("alice", new)]
        # a record made by update gets its index entries too
        users.update("bob", lambda u: {"email": "c@x", "team": "red"} if u is None else u)
        assert users.index("email").load("c@x")[0] == "bob"
        assert list(users.index("team").prefix("red").keys()) == ["bob"]


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_update_to_a_held_unique_key_writes_nothing(store: str, scheme: Any) -> None:
    with keyspace.open(store, scheme=scheme) as ks:
        users = _users(ks)
        users.save("alice", {"email": "a@x", "team": "red"})
        users.save("bob", {"email": "b@x", "team": "blue"})
        before = _view(users)
        with pytest.raises(UniqueViolation):
            users.update("bob", lambda u: {**u, "email": "a@x"})
        assert _view(users) == before
        with ks.transaction() as tx, pytest.raises(UniqueViolation):
            users.using(tx).update("bob", lambda u: {**u, "email": "a@x"})
        assert _view(users) == before
