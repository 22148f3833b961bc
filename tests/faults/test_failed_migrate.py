"""A failed ``keyspace migrate`` leaves no store it created, and never takes away
what existed before it.

- Refused before the first batch (two source keys that would merge, a key the
  destination's engine cannot store, a source key that does not decode, a fault
  or an interrupt in the first batch): a destination that did not exist is gone
  again, with every file an engine keeps beside it, for every local engine and a
  scoped-heed environment; a destination that was an empty folder is an empty
  folder again; an existing store is exactly as it was (raw keys), files and all.
- Failing after batches committed: the destination keeps them (whole batches
  only), and running the same command again completes the copy.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from _cli import run

import keyspace
from keyspace.errors import KeyspaceError, KeyTooLarge, StoreError
from keyspace.stores import open_store

migrate_cmd = importlib.import_module("keyspace.cli.migrate")  # the module, not the command it exports

DESTINATIONS: dict[str, Callable[[Path], str]] = {
    "lmdb": lambda d: str(d / "dst.lmdb"),
    "sqlite": lambda d: f"sqlite://{d / 'dst.sqlite'}",
    "leveldb": lambda d: f"leveldb://{d / 'dst.ldb'}",
    "rocksdb": lambda d: f"rocksdb://{d / 'dst.rdb'}",
}


def _migrate(*args: str) -> None:
    migrate_cmd.migrate.main(list(args), standalone_mode=False)


def _merging_source(tmp_path: Path) -> str:
    """Tuple scopes ("a",) and (b"a",): one destination key under asciihex."""
    src = str(tmp_path / "merging.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("a")[b"k"] = b"from str"
        ks.scope(b"a")[b"k"] = b"from bytes"
    return src


def _source(tmp_path: Path, n: int = 50, garbage: bytes | None = None) -> str:
    """``n`` keys in scope ("s",), and a stored key that does not decode."""
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("s").update({b"k%03d" % i: b"v%d" % i for i in range(n)})
        if garbage is not None:
            ks.store.put(garbage, b"not a tuple key")
    return src


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url) as store:
        return list(store.scan(b"", None))


@pytest.mark.parametrize("engine", list(DESTINATIONS))
def test_a_refused_merge_leaves_no_destination(tmp_path: Path, engine: str) -> None:
    src = _merging_source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    dst = DESTINATIONS[engine](out)
    with pytest.raises(KeyspaceError, match="does not merge"):
        _migrate(src, dst, "--to-scheme", "asciihex")
    assert _listing(out) == []


@pytest.mark.parametrize("engine", ["sqlite", "leveldb"])
def test_the_command_leaves_no_destination_and_says_why(tmp_path: Path, engine: str) -> None:
    src = _merging_source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    proc = run("migrate", src, DESTINATIONS[engine](out), "--to-scheme", "asciihex", ok=False)
    assert proc.returncode == 1 and proc.stderr.splitlines()[-1].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "does not merge" in proc.stderr
    assert _listing(out) == []


def test_a_key_too_large_for_the_destination_leaves_no_lmdb_store(tmp_path: Path) -> None:
    src = f"sqlite://{tmp_path / 'src.db'}"  # SQLite takes keys of any size, LMDB up to 511 bytes
    with keyspace.open(src) as ks:
        ks.scope("a").update({b"k%02d" % i: b"v" for i in range(20)})
        ks.scope("a")[b"z" * 600] = b"v"
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(KeyTooLarge, match="511"):
        _migrate(src, str(out / "dst.lmdb"), "--batch", "5")
    assert _listing(out) == []


def test_a_source_key_that_does_not_decode_first_leaves_no_destination(tmp_path: Path) -> None:
    src = _source(tmp_path, garbage=b"\x01no terminator")  # sorts before every scope key
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(KeyspaceError, match="source key"):
        _migrate(src, f"sqlite://{out / 'dst.sqlite'}", "--batch", "10")
    assert _listing(out) == []


def test_a_refused_copy_into_a_new_scoped_heed_environment_leaves_none(tmp_path: Path) -> None:
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src, scheme="scopehash") as ks:
        ks.scope("tenant")[b"k"] = b"v"
        ks.store.put(b"\x00\x00\x00\x00" + b"\x01" + bytes(7) + b"k", b"a key of no registered name")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(KeyspaceError):
        _migrate(src, f"scoped-heed://{out / 'env'}?name=db&api=raw_bytes")
    assert _listing(out) == []


@pytest.mark.parametrize("engine", ["lmdb", "leveldb"])
def test_an_empty_folder_stays_an_empty_folder(tmp_path: Path, engine: str) -> None:
    src = _merging_source(tmp_path)
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(KeyspaceError, match="does not merge"):
        _migrate(src, f"{engine}://{folder}", "--to-scheme", "asciihex")
    assert folder.is_dir() and _listing(folder) == []


@pytest.mark.parametrize("engine", list(DESTINATIONS))
def test_an_existing_store_is_never_removed(tmp_path: Path, engine: str) -> None:
    src = _merging_source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    dst = DESTINATIONS[engine](out)
    with keyspace.open(dst, scheme="asciihex") as ks:
        ks.scope(b"other")[b"k"] = b"kept"
    files, before = _listing(out), _raw(dst)
    with pytest.raises(KeyspaceError, match="does not merge"):
        _migrate(src, dst, "--to-scheme", "asciihex")
    assert _raw(dst) == before
    assert set(files) <= set(_listing(out))


def test_an_existing_empty_store_is_never_removed(tmp_path: Path) -> None:
    src = _merging_source(tmp_path)
    dst = f"sqlite://{tmp_path / 'made-before.sqlite'}"
    open_store(dst).close()  # a store that holds nothing, made before the command
    with pytest.raises(KeyspaceError, match="does not merge"):
        _migrate(src, dst, "--to-scheme", "asciihex")
    assert (tmp_path / "made-before.sqlite").is_file() and _raw(dst) == []


class _Interrupted(BaseException):
    pass


def _fail_batch(monkeypatch: pytest.MonkeyPatch, at: int, error: BaseException) -> list[int]:
    """Make the ``at``-th batch of the copy raise ``error`` before it writes."""
    real = migrate_cmd._write_batch
    calls = [0]

    def write_batch(*args: Any) -> None:
        calls[0] += 1
        if calls[0] == at:
            raise error
        real(*args)

    monkeypatch.setattr(migrate_cmd, "_write_batch", write_batch)
    return calls


@pytest.mark.parametrize(
    "error",
    [StoreError("injected: the disk went away"), KeyboardInterrupt(), _Interrupted()],
    ids=["store-error", "keyboard-interrupt", "base-exception"],
)
@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "leveldb"])
def test_a_fault_in_the_first_batch_leaves_no_destination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, error: BaseException
) -> None:
    src = _source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    _fail_batch(monkeypatch, 1, error)
    with pytest.raises((type(error), click.Abort)):  # click turns ^C into Abort
        _migrate(src, DESTINATIONS[engine](out), "--batch", "10")
    assert _listing(out) == []


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "leveldb"])
def test_a_fault_after_committed_batches_keeps_them_and_a_rerun_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    src = _source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    dst = DESTINATIONS[engine](out)
    _fail_batch(monkeypatch, 3, StoreError("injected: the disk went away"))
    with pytest.raises(StoreError, match="the disk went away"):
        _migrate(src, dst, "--batch", "10")
    with keyspace.open(dst, create=False) as ks:
        assert dict(ks.scope("s").items()) == {b"k%03d" % i: b"v%d" % i for i in range(20)}  # 2 whole batches
    monkeypatch.undo()
    _migrate(src, dst, "--batch", "10")
    with keyspace.open(src) as a, keyspace.open(dst, create=False) as b:
        assert dict(b.scope("s").items()) == dict(a.scope("s").items())


def test_a_source_key_that_does_not_decode_late_is_refused_before_the_first_batch(tmp_path: Path) -> None:
    src = _source(tmp_path, garbage=b"\x99no tuple")  # sorts after every scope key
    dst = tmp_path / "dst.lmdb"
    with pytest.raises(KeyspaceError, match=r"source key .* nothing was written"):
        _migrate(src, str(dst), "--batch", "10")
    assert not dst.exists()  # the store it created is taken back: no batch was written


def test_a_destination_whose_parent_is_missing_creates_nothing(tmp_path: Path) -> None:
    src = _source(tmp_path)
    with pytest.raises(StoreError, match="parent directory"):
        _migrate(src, str(tmp_path / "missing" / "dst.lmdb"))
    assert not (tmp_path / "missing").exists()
    assert sorted(os.listdir(tmp_path)) == ["src.lmdb"]


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_store_another_command_wrote_meanwhile_is_not_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """Two commands create the same new store; the one that fails before writing
    leaves the other's key where it is."""
    src = _source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    dst = DESTINATIONS[engine](out)

    def other_command_then_fault(*args: Any) -> None:
        run("put", dst, "s", "--key", "other", "--value", "written by another command")
        raise StoreError("injected: the disk went away")

    monkeypatch.setattr(migrate_cmd, "_write_batch", other_command_then_fault)
    with pytest.raises(StoreError, match="the disk went away"):
        _migrate(src, dst, "--batch", "10")
    with keyspace.open(dst, create=False) as ks:
        assert dict(ks.scope("s").items()) == {b"other": b"written by another command"}


def test_a_leveldb_store_another_process_holds_is_not_removed(tmp_path: Path) -> None:
    from keyspace.cli import _created

    dst = f"leveldb://{tmp_path / 'dst.ldb'}"
    holder = None
    try:
        failing = _created.removed_on_failure(dst, wrote=lambda: False)
        with pytest.raises(StoreError, match="injected"), failing:
            holder = open_store(dst)  # (as another process would: LevelDB takes one opener)
            raise StoreError("injected: this command failed")
        assert (tmp_path / "dst.ldb").is_dir()
    finally:
        if holder is not None:
            holder.close()


@pytest.mark.parametrize(
    "spelling",
    [
        lambda d: (f"sqlite://{d / 'a.db'}", f"sqlite://{d / 'x' / '..' / 'a.db'}"),
        lambda d: (f"sqlite://{d / 'a.db'}", f"sqlite://{d / 'link.db'}"),
        lambda d: (str(d / "a.lmdb"), f"lmdb://{d / 'a.lmdb'}"),
        lambda d: (str(d / "a.lmdb"), f"{d / 'a.lmdb'}/"),
        lambda d: (f"sqlite://{d / 'a.db'}", f"sqlite://{d / 'a.db'}?timeout=5"),
        lambda d: (f"sqlite://{d / 'a.db'}?sync=false", f"sqlite://{d / 'a.db'}?timeout=5"),
        lambda d: (str(d / "a.lmdb"), f"lmdb://{d / 'a.lmdb'}?db=&map_size=1GiB"),
    ],
    ids=[
        "dot-dot",
        "symlink",
        "bare-path-and-url",
        "trailing-slash",
        "an-option",
        "other-options",
        "lmdb-options",
    ],
)
def test_a_store_spelled_two_ways_is_refused_as_its_own_destination(tmp_path: Path, spelling: Any) -> None:
    """A copy of a store into itself under another scheme would mix two schemes'
    keys in one store (one that records no scheme, like sublevel's)."""
    (tmp_path / "x").mkdir()
    src, dst = spelling(tmp_path)
    with keyspace.open(src, scheme="sublevel") as ks:
        ks.scope("t")[b"k"] = b"v"
    if "link" in dst:
        (tmp_path / "link.db").symlink_to(tmp_path / "a.db")
    before = _raw(src)
    with pytest.raises(KeyspaceError, match="the same store"):
        _migrate(src, dst, "--from-scheme", "sublevel", "--to-scheme", "tuple")
    assert _raw(src) == before
