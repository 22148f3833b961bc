"""A failed ``put`` takes back the store it created, and never a store another
process uses or wrote to, nor a file someone else put beside it.

Found here: the check "does the new store hold keys?" and the removal were two
steps, and a process that had opened the new store without writing yet was not
seen. A second ``keyspace put`` into the same new path that opened it while the
first was failing reported success, and its key was gone: the first removed the
files it wrote into (LMDB and SQLite, a few times in 40 races). And a folder
that was empty before the command was emptied whole, files that appeared in it
meanwhile included.

Now the check and the removal hold the engine's own lock (LMDB's and SQLite's
per-process locks, LevelDB's and RocksDB's one-process lock), and a folder with
a file no engine makes is left alone.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import keyspace
from keyspace.cli import _format, main
from keyspace.cli import data as data_cmd

URLS = {
    "lmdb": lambda d: f"lmdb://{d / 'new'}",
    "sqlite": lambda d: f"sqlite://{d / 'new.sqlite'}",
    "leveldb": lambda d: f"leveldb://{d / 'new'}",
    "rocksdb": lambda d: f"rocksdb://{d / 'new'}",
}

_HOLDER = """
import sys, time
import keyspace
from keyspace.errors import StoreError
for attempt in range(1000):  # LevelDB and RocksDB: one process at a time
    try:
        ks = keyspace.open(sys.argv[1], scheme="sublevel")
        break
    except StoreError:
        if attempt == 999:
            raise
        time.sleep(0.01)
print("open", flush=True)
sys.stdin.readline()
ks.scope("other")[b"k"] = b"theirs"
ks.close()
print("wrote", flush=True)
"""


@contextmanager
def _holder(url: str) -> Iterator[subprocess.Popen[str]]:
    """Another process that opens the store at ``url`` (creating it or not) and
    writes one key when told to."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _theirs(url: str) -> bytes | None:
    with keyspace.open(url, scheme="sublevel", create=False, readonly=True) as ks:
        return ks.scope("other").get(b"k")


def _fail_after_open(monkeypatch: pytest.MonkeyPatch, meanwhile: object) -> None:
    """Make ``put`` fail on its key, once its store is open, after ``meanwhile()``."""

    def refuse(*_args: object) -> object:
        meanwhile()  # type: ignore[operator]
        raise _format.InputError("refused for the test")

    monkeypatch.setattr(data_cmd, "_key", refuse)


@pytest.mark.parametrize("engine", list(URLS))
def test_a_new_store_another_process_holds_open_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    url = URLS[engine](tmp_path)
    with contextlib.ExitStack() as stack:
        others: list[subprocess.Popen[str]] = []

        def open_it() -> None:
            other = stack.enter_context(_holder(url))
            others.append(other)
            if engine in ("lmdb", "sqlite"):  # the others open once this command has closed
                assert other.stdout is not None and other.stdout.readline() == "open\n"

        _fail_after_open(monkeypatch, open_it)
        code = main(["put", url, "--scheme", "sublevel", "a", "--key", "k", "--value", "v"])
        assert code == 1 and "refused for the test" in capsys.readouterr().err
        [other] = others
        assert other.stdin is not None and other.stdout is not None
        if engine in ("leveldb", "rocksdb"):
            assert other.stdout.readline() == "open\n"
        other.stdin.write("go\n")
        other.stdin.flush()
        assert other.stdout.readline() == "wrote\n"
        assert other.wait(timeout=30) == 0
    assert _theirs(url) == b"theirs"


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_new_store_another_process_wrote_to_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    url = URLS[engine](tmp_path)

    def write_it() -> None:
        with _holder(url) as other:
            assert other.stdout is not None and other.stdout.readline() == "open\n"
            assert other.stdin is not None
            other.stdin.write("go\n")
            other.stdin.flush()
            assert other.wait(timeout=30) == 0

    _fail_after_open(monkeypatch, write_it)
    assert main(["put", url, "--scheme", "sublevel", "a", "--key", "k", "--value", "v"]) == 1
    capsys.readouterr()
    assert _theirs(url) == b"theirs"


@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "rocksdb"])
def test_a_file_that_appeared_in_an_empty_folder_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    note = folder / "notes.txt"
    _fail_after_open(monkeypatch, lambda: note.write_text("mine"))
    assert main(["put", f"{engine}://{folder}", "a", "--key", "k", "--value", "v"]) == 1
    capsys.readouterr()
    assert note.read_text() == "mine"


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "leveldb"])
def test_a_failed_put_alone_still_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    _fail_after_open(monkeypatch, lambda: None)
    assert main(["put", URLS[engine](tmp_path), "a", "--key", "k", "--value", "v"]) == 1
    capsys.readouterr()
    assert list(tmp_path.iterdir()) == []
    folder = tmp_path / "folder"
    folder.mkdir()
    if engine != "sqlite":
        assert main(["put", f"{engine}://{folder}", "a", "--key", "k", "--value", "v"]) == 1
        capsys.readouterr()
        assert list(folder.iterdir()) == []


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "keyspace.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_racing_a_refused_put_with_a_good_one_loses_no_key(tmp_path: Path, engine: str) -> None:
    """Two commands into one new store at once, a refused one and a good one,
    eight times with their starts a little apart: whenever the good one says it
    wrote, its key is there."""
    for i in range(8):
        url = URLS[engine](tmp_path / str(i))
        (tmp_path / str(i)).mkdir()
        procs = [_cli("put", url, "--scheme", "sublevel", "a!b", "--key", "k", "--value", "v")]
        try:
            time.sleep(0.02 * (i % 4))
            procs.append(_cli("put", url, "--scheme", "sublevel", "other", "--key", "k", "--value", "theirs"))
            results = [p.communicate(timeout=60) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait(timeout=30)
        assert procs[0].returncode == 1, results[0]
        if procs[1].returncode == 0:
            assert _theirs(url) == b"theirs", (i, results)
        else:
            assert results[1][1].startswith("error: "), results[1]
