"""A command given a store under another engine's URL refuses it and leaves every
file of it byte for byte as it was.

Found here: LevelDB and RocksDB each took the other's directory (both keep a
``CURRENT`` and a ``LOCK`` file, the markers each looked for). ``keyspace put
rocksdb:///a-leveldb-store …`` rewrote the LevelDB store as a RocksDB one, which
LevelDB then refused as corrupt ("VersionEdit: unknown tag"): one mistyped URL
and the store was lost to its own engine. Read commands changed it too:
``scan rocksdb:///a-leveldb-store`` wrote ``rocksdict-config.json`` into it, and
``scan leveldb:///a-rocksdb-store`` moved RocksDB's ``LOG`` aside (and emptied
the one before it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from keyspace.cli import main

ENGINES = ["lmdb", "leveldb", "rocksdb"]


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


COMMANDS: dict[str, list[str]] = {
    "get": ["get", "{url}", "acme", "--key", "k"],
    "scan": ["scan", "{url}", "acme"],
    "inspect": ["inspect", "{url}"],
    "put": ["put", "{url}", "acme", "--key", "k2", "--value", "v2"],
    "delete": ["delete", "{url}", "acme", "--key", "k"],
    "drop": ["delete", "{url}", "acme", "--drop"],
    "migrate-into": ["migrate", "{other}", "{url}"],
    "migrate-from": ["migrate", "{url}", "{other}"],
}


NAMES = {"lmdb": "an LMDB", "leveldb": "a LevelDB", "rocksdb": "a RocksDB"}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("engine", "given"), [(e, g) for e in ENGINES for g in ENGINES if e != g])
def test_another_engines_store_is_refused_and_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, given: str, command: str
) -> None:
    store = tmp_path / "store"
    own = f"{engine}://{store}"
    assert _cli(capsys, "put", own, "acme", "--key", "k", "--value", "v")[0] == 0
    other = tmp_path / "other"
    assert _cli(capsys, "put", f"sqlite://{other}", "x", "--key", "k", "--value", "v")[0] == 0
    before = _tree(store)
    args = [a.format(url=f"{given}://{store}", other=f"sqlite://{other}") for a in COMMANDS[command]]
    code, out, err = _cli(capsys, *args)
    assert code == 1 and out == "", err
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert f"holds {NAMES[engine]} store" in err, err
    assert _tree(store) == before
    # and its own engine reads it as before
    assert _cli(capsys, "scan", own, "acme")[:2] == (0, "k\tv\n")


@pytest.mark.parametrize("config", [True, False], ids=["rocksdict-store", "other-writer"])
def test_read_commands_leave_a_rocksdb_store_as_they_found_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: bool
) -> None:
    """rocksdict writes ``rocksdict-config.json`` at every open, read-only ones
    too: a read command created it in a store another program wrote (which has
    none) and rewrote it in others."""
    store = tmp_path / "store"
    url = f"rocksdb://{store}"
    assert _cli(capsys, "put", url, "acme", "--key", "k", "--value", "v")[0] == 0
    if not config:
        (store / "rocksdict-config.json").unlink()
    before = _tree(store)
    times = {p.name: p.stat().st_mtime_ns for p in store.iterdir()}
    for args in (["get", url, "acme", "--key", "k"], ["scan", url, "acme"], ["inspect", url]):
        assert _cli(capsys, *args)[0] == 0
        assert _tree(store) == before, args
        assert {p.name: p.stat().st_mtime_ns for p in store.iterdir()} == times, args
