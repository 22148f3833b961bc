"""The directory operations of a removed directory's handle (``create_or_open``,
``create``, ``open``, ``exists``, ``list``, ``move``, ``move_to``, ``remove``,
``remove_if_exists``: paths relative to it) raise StaleDirectory and change
nothing, as its reads and writes do: they never make the removed directory
again under a new prefix, nor remove or move a directory made since at its
path. The node is checked in the operation's own transaction or snapshot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import StaleDirectory

OPS: dict[str, Callable[[Any], Any]] = {
    "create_or_open": lambda d: d.create_or_open(("s",)),
    "create": lambda d: d.create(("s",)),
    "open": lambda d: d.open(("s",)),
    "exists": lambda d: d.exists(("s",)),
    "list": lambda d: d.list(),
    "move": lambda d: d.move(("s",), ("t",)),
    "move_to": lambda d: d.move_to(("z",)),
    "remove": lambda d: d.remove(),
    "remove_sub": lambda d: d.remove(("s",)),
    "remove_if_exists": lambda d: d.remove_if_exists(),
}


def stored(ks: keyspace.Keyspace) -> dict[bytes, bytes]:
    return dict(ks.store.scan(b"", None))


@pytest.mark.parametrize("engine", ["memory", "lmdb"])
@pytest.mark.parametrize("op", list(OPS))
def test_tree_operations_of_a_removed_directorys_handle_raise_stale(
    engine: str, op: str, tmp_path: Path
) -> None:
    url = "memory:" if engine == "memory" else f"lmdb://{tmp_path}/db"
    with keyspace.open(url) as ks:
        d = ks.directory("a", "b")
        d.create_or_open(("s",))
        ks.directories.remove(("a", "b"))
        before = stored(ks)
        with pytest.raises(StaleDirectory, match="was removed"):
            OPS[op](d)
        assert stored(ks) == before and not ks.directories.exists(("a", "b"))
        with ks.transaction() as tx:
            inside = tx.directory("a", "c")
            inside.create_or_open(("s",))
            tx.directories.remove(("a", "c"))
            seen = dict(tx.view.scan(b"", None))
            with pytest.raises(StaleDirectory, match="was removed"):
                OPS[op](inside)
            assert dict(tx.view.scan(b"", None)) == seen


@pytest.mark.parametrize("op", ["remove", "remove_if_exists", "move_to", "list"])
def test_a_removed_directorys_handle_leaves_the_directory_made_since_at_its_path(op: str) -> None:
    ks = keyspace.open("memory:")
    old = ks.directory("a")
    ks.directories.remove(("a",))
    new = ks.directory("a")
    new[b"k"] = b"v"
    with pytest.raises(StaleDirectory):
        OPS[op](old)
    assert ks.directories.open(("a",)).prefix == new.prefix and new[b"k"] == b"v"


def test_a_removed_partitions_handle_raises_stale() -> None:
    ks = keyspace.open("memory:")
    part = ks.directories.create_or_open(("p",), b"partition")
    part.create_or_open(("x",))
    ks.directories.remove(("p",))
    before = stored(ks)
    for op in ("create_or_open", "list", "remove_if_exists"):
        with pytest.raises(StaleDirectory, match="was removed"):
            OPS[op](part)
    assert stored(ks) == before and ks.directories.list() == []


def test_a_moved_directorys_handle_still_runs_tree_operations() -> None:
    ks = keyspace.open("memory:")
    d = ks.directory("a")
    d.create_or_open(("s",))
    ks.directories.move(("a",), ("b",))
    assert ks.directories.open(("b",)).list() == ["s"]
    assert d.exists() is False  # its path is the one it was opened at, as in FoundationDB
