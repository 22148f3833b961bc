"""A handle whose directory was removed raises StaleDirectory on its structure
reads too (``subtree()``, ``scopes()``, ``watch()``), as on every other operation:
they never answer from a prefix no directory owns, which a later directory may
be given (then they would show that directory's keys)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.directory import Directory
from keyspace.errors import StaleDirectory

READS: dict[str, Callable[[Directory], Any]] = {
    "subtree": lambda d: list(d.subtree()),
    "scopes": lambda d: d.scopes(),
    "watch": lambda d: d.watch().close(),
    "watch_subtree": lambda d: d.watch(subtree=True).close(),
}


@pytest.mark.parametrize("engine", ["memory", "lmdb"])
@pytest.mark.parametrize("read", list(READS))
def test_structure_reads_of_a_removed_directorys_handle_raise_stale(
    engine: str, read: str, tmp_path: Path
) -> None:
    url = "memory:" if engine == "memory" else f"lmdb://{tmp_path}/db"
    with keyspace.open(url, changes=True) as ks:
        d = ks.directory("a", "b")
        d[b"k"] = b"v"
        READS[read](d)  # alive: answers
        ks.directories.remove(("a",))
        with pytest.raises(StaleDirectory, match="was removed"):
            READS[read](d)
        with ks.transaction() as tx:
            bound = d._on(tx.view, d._state.child())
            with pytest.raises(StaleDirectory):
                READS[read](bound)


def test_subtree_checks_the_node_in_the_view_it_scans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A removal and a new directory at the same prefix made between the node
    check and the scan are not seen: the check and the scan read one state (a
    snapshot) of the store, which still holds the directory's own keys."""
    from keyspace.directory import _directory

    with keyspace.open(f"lmdb://{tmp_path}/db", directory_manual_prefixes=True) as ks:
        d = ks.directories.create(("a",), prefix=b"\x15\x20")
        d[b"mine"] = b"1"
        alive = _directory._DirectoryCatalog.alive
        done: list[bool] = []

        def alive_then_replaced(self: Any, view: Any) -> None:
            alive(self, view)
            if not done:
                done.append(True)
                ks.directories.remove(("a",))
                ks.directories.create(("b",), prefix=b"\x15\x20")[b"theirs"] = b"2"

        monkeypatch.setattr(_directory._DirectoryCatalog, "alive", alive_then_replaced)
        seen = [key for _, key, _ in d.subtree()]
        assert done and seen == [b"mine"]
