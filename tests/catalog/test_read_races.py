"""A read of a scope whose layout or name is not settled yet, and a writer that
makes another scope under the same prefix right after the read's check: a child
leaf of a LengthPrefixed path, a ScopeHash name of the same hash. The check said
nothing is stored at the path, so the read returns nothing; it used to read the
store after the check and return the other scope's keys as its own (a later check
of the same read may meet the twin's entry and refuse: never a read of its keys).
The writer is injected right after the check, where a concurrent process may land."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name

import keyspace
from keyspace.errors import HashCollision

# reads that check once, then read the store (a view's iteration checks again
# when it starts, after the injected write, so it is no race here)
READS: dict[str, Callable[[keyspace.Scope, bytes], Any]] = {
    "len": lambda s, _k: len(s),
    "bool": lambda s, _k: bool(s),
    "items with a limit": lambda s, _k: list(s.items(limit=5)),
    "get": lambda s, k: s.get(k),
    "in": lambda s, k: k in s,
}
EMPTY = {"len": 0, "bool": False, "items with a limit": [], "get": None, "in": False}


def _write_after_the_check(scope: keyspace.Scope, write: Callable[[], None]) -> None:
    check = scope._guard
    assert check is not None, "the scope's guard has not settled"
    done: list[bool] = []

    def racing(view: Any) -> Any:
        answer = check(view)
        if not done:
            done.append(True)
            write()
        return answer

    scope._guard = racing


@pytest.mark.parametrize("read", list(READS))
def test_a_free_paths_read_never_returns_a_child_leaf_made_meanwhile(tmp_path: Path, read: str) -> None:
    url = f"lmdb://{tmp_path}/db"
    with (
        keyspace.open(url, scheme="length-prefixed") as ks,
        keyspace.open(url, scheme="length-prefixed") as other,
    ):
        ks.scope(b"seed", b"x")[b"k"] = b"v"  # a recorded layout; (p,) has none
        parent = ks.scope(b"p")
        _write_after_the_check(parent, lambda: other.scope(b"p", b"c").__setitem__(b"k", b"child"))
        assert READS[read](parent, b"\x00\x01ck") == EMPTY[read]  # the child's key under the prefix
        assert other.scope(b"p", b"c")[b"k"] == b"child"


@pytest.mark.parametrize("read", list(READS))
def test_an_unregistered_names_read_never_returns_a_twins_keys_written_meanwhile(
    tmp_path: Path, read: str
) -> None:
    url = f"lmdb://{tmp_path}/db"
    twin = colliding_name("alice")
    with keyspace.open(url, scheme="scopehash") as ks, keyspace.open(url, scheme="scopehash") as other:
        ks.scope("seed")[b"k"] = b"v"  # recorded
        alice = ks.scope("alice")
        _write_after_the_check(alice, lambda: other.scope(twin).__setitem__(b"k", b"twin"))
        # a later check of the same read may meet the twin's entry: refused, not read
        with contextlib.suppress(HashCollision):
            assert READS[read](alice, b"k") == EMPTY[read]
        assert other.scope(twin)[b"k"] == b"twin"
