"""``keyspace migrate`` of a store that holds directories refuses before anything
is written, saying so: it copies the scopes of a keyspace, and a directory's keys
lie under an allocated prefix no scope decodes, so a copy would leave them
behind."""

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
