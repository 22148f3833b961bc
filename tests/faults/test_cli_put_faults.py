"""``keyspace put`` creates its store when there is none; a put that fails writes
nothing and leaves no store it created (a key over the engine's limit, a name the
scheme refuses, a key the codec refuses, a scheme the store does not record),
for every local engine and a scoped-heed environment; an existing store or an
empty folder it was given stays exactly as it was."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import run

import keyspace
from keyspace.errors import KeyspaceError
from keyspace.stores import open_store

data_cmd = importlib.import_module("keyspace.cli.data")

STORES: dict[str, Callable[[Path], str]] = {
    "lmdb": lambda d: str(d / "new.lmdb"),
    "sqlite": lambda d: f"sqlite://{d / 'new.sqlite'}",
    "leveldb": lambda d: f"leveldb://{d / 'new.ldb'}",
    "rocksdb": lambda d: f"rocksdb://{d / 'new.rdb'}",
    "scoped-heed": lambda d: f"scoped-heed://{d / 'env'}?name=db&api=types&key=u8",
}
LONG = "x" * 600  # over LMDB's 511 bytes; SQLite, LevelDB and RocksDB take it
REFUSED: dict[str, tuple[str, ...]] = {
    # arguments after the URL that every store refuses before writing
    "sublevel-name": ("--scheme", "sublevel", "a!b", "--key", "k", "--value", "v"),
    "empty-scopehash-name": ("--scheme", "scopehash", "", "--key", "k", "--value", "v"),
    "naive-write": ("--scheme", "naive", "a", "--key", "k", "--value", "v"),
    "delimited-separator-in-name": ("--separator", ":", "a:b", "--key", "k", "--value", "v"),
    "length-prefixed-name-too-long": (
        "--scheme",
        "length-prefixed",
        "n" * 70_000,
        "--key",
        "k",
        "--value",
        "v",
    ),
}


def _put(*args: str) -> None:
    data_cmd.put.main(list(args), standalone_mode=False)


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("refusal", list(REFUSED))
@pytest.mark.parametrize("engine", [e for e in STORES if e != "scoped-heed"])
def test_a_refused_put_leaves_no_store(tmp_path: Path, engine: str, refusal: str) -> None:
    with pytest.raises(KeyspaceError):
        _put(STORES[engine](tmp_path), *REFUSED[refusal])
    assert _listing(tmp_path) == []


def test_a_key_over_the_lmdb_limit_leaves_no_store(tmp_path: Path) -> None:
    with pytest.raises(KeyspaceError, match="511"):
        _put(STORES["lmdb"](tmp_path), "a", "--key", LONG, "--value", "v")
    assert _listing(tmp_path) == []


def test_a_refused_put_into_a_new_named_lmdb_database_leaves_no_store(tmp_path: Path) -> None:
    """Opening ``db=NAME`` writes the named database's record into the main
    database: the new environment was taken for one that holds data, and kept."""
    with pytest.raises(KeyspaceError, match="511"):
        _put(f"lmdb://{tmp_path / 'named.lmdb'}?db=foo", "a", "--key", LONG, "--value", "v")
    assert _listing(tmp_path) == []


def test_a_named_lmdb_database_that_holds_keys_is_kept(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'named.lmdb'}?db=foo"
    _put(url, "a", "--key", "k", "--value", "v")
    _put(f"lmdb://{tmp_path / 'named.lmdb'}?db=bar", "a", "--key", "k", "--value", "v")
    with pytest.raises(KeyspaceError, match="511"):
        _put(f"lmdb://{tmp_path / 'other.lmdb'}?db=foo", "a", "--key", LONG, "--value", "v")
    assert _listing(tmp_path) == ["named.lmdb"]
    with keyspace.open(url) as ks:
        assert dict(ks.scope("a")) == {b"k": b"v"}


def test_a_key_the_scoped_heed_codec_refuses_leaves_no_environment(tmp_path: Path) -> None:
    with pytest.raises(KeyspaceError, match="300"):
        _put(STORES["scoped-heed"](tmp_path), "--key", "300", "--value", "v")  # not a u8
    assert _listing(tmp_path) == []


def test_the_command_says_why_and_leaves_no_store(tmp_path: Path) -> None:
    proc = run(
        "put",
        STORES["sqlite"](tmp_path),
        "--scheme",
        "sublevel",
        "a!b",
        "--key",
        "k",
        "--value",
        "v",
        ok=False,
    )
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("engine", ["lmdb", "leveldb"])
def test_an_empty_folder_stays_empty(tmp_path: Path, engine: str) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(KeyspaceError):
        _put(f"{engine}://{folder}", *REFUSED["sublevel-name"])
    assert folder.is_dir() and _listing(folder) == []


@pytest.mark.parametrize("engine", [e for e in STORES if e != "scoped-heed"])
def test_a_refused_put_into_an_existing_store_changes_nothing(tmp_path: Path, engine: str) -> None:
    url = STORES[engine](tmp_path)
    with keyspace.open(url) as ks:  # the tuple scheme, recorded
        ks.scope("a")[b"k"] = b"kept"
    files = _listing(tmp_path)
    with open_store(url) as store:
        before = list(store.scan(b"", None))
    for refusal in REFUSED.values():
        with pytest.raises(KeyspaceError):
            _put(url, *refusal)
    with pytest.raises(KeyspaceError, match="records scheme TupleScheme"):
        _put(url, "--scheme", "asciihex", "a", "--key", "k", "--value", "v")  # not the recorded scheme
    with open_store(url) as store:
        assert list(store.scan(b"", None)) == before
    assert set(files) <= set(_listing(tmp_path))


def test_a_put_that_succeeds_creates_the_store(tmp_path: Path) -> None:
    for engine, url in STORES.items():
        if engine == "scoped-heed":
            _put(url(tmp_path), "--key", "7", "--value", "v")
        else:
            _put(url(tmp_path), "a", "--key", "k", "--value", "v")
    assert _listing(tmp_path) == ["env", "new.ldb", "new.lmdb", "new.rdb", "new.sqlite"]
    with keyspace.open(STORES["sqlite"](tmp_path), create=False) as ks:
        assert ks.scope("a")[b"k"] == b"v"


def test_a_put_that_wrote_keeps_its_new_store_when_closing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keyspace.errors import StoreError
    from keyspace.stores.sqlite import SQLiteStore

    real = SQLiteStore.close

    def close(self: SQLiteStore) -> None:
        real(self)
        raise StoreError("injected: closing failed")

    monkeypatch.setattr(SQLiteStore, "close", close)
    url = STORES["sqlite"](tmp_path)
    with pytest.raises(StoreError, match="injected"):
        _put(url, "a", "--key", "k", "--value", "v")
    monkeypatch.undo()
    with keyspace.open(url, create=False) as ks:
        assert ks.scope("a")[b"k"] == b"v"
