"""A write command of the command line that fails or is refused leaves nothing
it made: no broken store in a folder that was empty, no -shm beside a folder
named as an SQLite file, no keyspace table in an empty file, no LMDB named
database (nor scoped-heed's) in an environment that existed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import lmdb
import pytest
from _cli import run
from _heed_env import reference_env


def _databases(path: Path) -> list[bytes]:
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=0)
    try:
        with env.begin() as txn:
            return [key for key, _ in txn.cursor()]
    finally:
        env.close()


@pytest.mark.parametrize("engine", ["rocksdb", "leveldb"])
def test_a_refused_put_into_an_empty_folder_leaves_it_empty(tmp_path: Path, engine: str) -> None:
    """The store was removed while still open, and its close wrote CURRENT and a
    MANIFEST back: a broken store every later command refused."""
    folder = tmp_path / "d"
    folder.mkdir()
    proc = run(
        "put", f"{engine}://{folder}", "x", "--key", "!a", "--value", "v", "--scheme", "sublevel", ok=False
    )
    assert proc.returncode == 1
    assert list(folder.iterdir()) == []
    run("put", f"{engine}://{folder}", "x", "--key", "a", "--value", "v")


def test_a_refused_put_into_a_folder_named_as_an_sqlite_file_makes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    proc = run("put", f"sqlite://{folder}", "x", "--key", "a", "--value", "v", ok=False)
    assert "is a directory" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["photos"]


def test_failed_writes_leave_an_empty_sqlite_file_empty(tmp_path: Path) -> None:
    """A failing delete, and a refused put, made an empty file a keyspace store."""
    path = tmp_path / "app.db"
    path.write_bytes(b"")
    proc = run("delete", f"sqlite://{path}", "--key", "a", ok=False)
    assert proc.returncode == 1
    proc = run(
        "put", f"sqlite://{path}", "x", "--key", "!a", "--value", "v", "--scheme", "sublevel", ok=False
    )
    assert proc.returncode == 1
    assert path.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
    assert sqlite3.connect(path).execute("SELECT sql FROM sqlite_master").fetchall() == []


def test_failed_writes_leave_no_named_database(tmp_path: Path) -> None:
    path = tmp_path / "env"
    env = lmdb.open(str(path), max_dbs=4)
    with env.begin(write=True) as txn:
        txn.put(b"k", b"v", db=env.open_db(b"users", txn=txn))
    env.close()
    run("put", f"lmdb://{path}?db=new1", "x", "--key", "!a", "--value", "v", "--scheme", "sublevel", ok=False)
    run("put", f"lmdb://{path}?db=new2", "x", "--key", "a", "--value", "v", "--scheme", "naive", ok=False)
    run("put", f"lmdb://{path}?db=new3", "x", "--key", "k" * 600, "--value", "v", ok=False)
    assert run("delete", f"lmdb://{path}?db=typo", "--key", "a", ok=False).returncode == 1
    assert run("delete", f"lmdb://{path}?db=typo", "acme", "--drop", ok=False).returncode == 1
    assert _databases(path) == [b"users"]
    run("put", f"lmdb://{path}?db=new4", "x", "--key", "a", "--value", "v")  # a good one makes it
    assert _databases(path) == [b"new4", b"users"]


def test_failed_writes_leave_no_scoped_heed_database(tmp_path: Path) -> None:
    path = reference_env(tmp_path)
    before = _databases(path)
    args = ["--scoped-heed", "newdb", "--api", "types", "--key-type", "u64"]
    assert run("put", str(path), *args, "--key", "notanumber", "--value", "b", ok=False).returncode == 1
    assert run("delete", str(path), "--scoped-heed", "typo", "--key", "a", ok=False).returncode == 1
    assert run("delete", str(path), "tenant1", "--scoped-heed", "typo2", "--drop", ok=False).returncode == 1
    assert _databases(path) == before
