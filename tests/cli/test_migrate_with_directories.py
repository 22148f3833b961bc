"""``keyspace migrate`` of a store that holds directories refuses before anything
is written, saying so: it copies the scopes of a keyspace, and a directory's keys
lie under an allocated prefix no scope decodes, so a copy would leave them
behind. A store whose directories were all removed keeps only the
directory layer's version and allocator: its scopes are copied, and those are not."""

from __future__ import annotations

from pathlib import Path

from _cli import run

import keyspace


def test_migrate_refuses_a_source_holding_directories(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.lmdb", tmp_path / "dst.lmdb"
    with keyspace.open(str(src)) as ks:
        ks.scope("t")[b"a"] = b"1"
        ks.directory("tools", "x")[b"k"] = b"v"
    done = run("migrate", str(src), str(dst), ok=False)
    assert done.returncode == 1
    assert "directories" in done.stderr and "/tools" in done.stderr and "nothing was written" in done.stderr
    assert not dst.exists()
    with keyspace.open(str(src)) as ks:  # the source is as it was
        assert dict(ks.scope("t").items()) == {b"a": b"1"}
        assert ks.directories.list() == ["tools"]


def test_migrate_copies_the_scopes_of_a_store_whose_directories_were_all_removed(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.lmdb", tmp_path / "dst.lmdb"
    with keyspace.open(str(src)) as ks:
        ks.scope("t")[b"a"] = b"1"
        ks.directory("tools", "x")[b"k"] = b"v"
        ks.directories.remove(("tools",))  # the tree keeps its version and allocator
    run("migrate", str(src), str(dst))
    run("migrate", str(src), str(dst), "--dry-run")
    with keyspace.open(str(dst)) as ks:
        assert dict(ks.scope("t").items()) == {b"a": b"1"}
        assert [k for k, _ in ks.store.scan(b"\xfe", b"\xff")] == []  # no tree copied
