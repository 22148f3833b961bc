"""Read commands leave an SQLite store's folder as they found it.

Found here: SQLite creates ``-wal`` and ``-shm`` files when it reads a database
in WAL mode (as the store writes them) and a read-only connection cannot remove
them, so every ``get``, ``scan``, ``inspect`` and the source side of
``migrate`` left both beside the store. They are now removed once the command's
store is closed, under the locks SQLite's last connection takes to remove them
itself, and kept while another connection uses them.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import keyspace
from keyspace.cli import data as data_cmd
from keyspace.cli import main


def _tree(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.iterdir()) if p.is_file()}


@pytest.fixture
def store(tmp_path: Path) -> str:
    folder = tmp_path / "folder"
    folder.mkdir()
    url = f"sqlite://{folder / 'db.sqlite'}"
    with keyspace.open(url) as ks:
        ks.scope("acme")[b"k"] = b"v"
    assert sorted(p.name for p in folder.iterdir()) == ["db.sqlite"]
    return url


COMMANDS = {
    "get": ["get", "{url}", "acme", "--key", "k"],
    "get-missing": ["get", "{url}", "acme", "--key", "nope"],
    "scan": ["scan", "{url}", "acme"],
    "inspect": ["inspect", "{url}"],
    "migrate-from": ["migrate", "{url}", "{dst}"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_read_leaves_no_file_beside_the_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: str, command: str
) -> None:
    folder = tmp_path / "folder"
    before = _tree(folder)
    args = [a.format(url=store, dst=f"lmdb://{tmp_path / 'dst'}") for a in COMMANDS[command]]
    code = main(args)
    capsys.readouterr()
    assert code == (1 if command == "get-missing" else 0)
    assert _tree(folder) == before


_HOLDER = """
import sys
import keyspace
ks = keyspace.open(sys.argv[1])
assert ks.scope("acme")[b"k"] == b"v"
print("open", flush=True)
sys.stdin.readline()
ks.scope("acme")[b"theirs"] = b"written while the command read"
ks.close()
print("wrote", flush=True)
"""


def test_files_another_connection_uses_stay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, store], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdin is not None and holder.stdout is not None
        key = data_cmd._key

        def key_once_the_other_reads(*args: object) -> object:
            assert holder.stdout is not None and holder.stdout.readline() == "open\n"
            return key(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(data_cmd, "_key", key_once_the_other_reads)
        assert main(["get", store, "acme", "--key", "k"]) == 0
        assert capsys.readouterr().out == "v\n"
        folder = tmp_path / "folder"
        assert {"db.sqlite-wal", "db.sqlite-shm"} <= {p.name for p in folder.iterdir()}
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "wrote\n"
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)
    with keyspace.open(store, readonly=True) as ks:
        assert ks.scope("acme")[b"theirs"] == b"written while the command read"
