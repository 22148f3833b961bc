"""Several processes on one store.

- LMDB and SQLite allow several processes: 4 writer processes on distinct scopes
  and 2 reader processes run together for a few seconds; no acknowledged write is
  lost, and every reader, inside a snapshot or a transaction, sees each writer's
  count equal to its items (a consistent snapshot across scopes).
- LevelDB and RocksDB allow one process: a second process opening the store gets
  a :class:`StoreError` saying the store is in use by another process, and can
  open it once the first process has closed it.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreError

WORKER = Path(__file__).parent.parent / "_concurrency_worker.py"
WRITERS = 4
READERS = 2
DURATION_S = 3.0
START_TIMEOUT_S = 60.0
END_TIMEOUT_S = 60.0

MULTI_PROCESS = {"lmdb": "lmdb://{}", "sqlite": "sqlite://{}/store.sqlite"}
ONE_PROCESS = {"leveldb": "leveldb://{}", "rocksdb": "rocksdb://{}"}


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _wait_ready(procs: list[subprocess.Popen[bytes]]) -> None:
    """Wait (bounded) until every child printed ``ready``."""
    deadline = time.monotonic() + START_TIMEOUT_S
    for proc in procs:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(left, 0))[0]
        assert ready, "a child did not start in time"
        line = proc.stdout.readline()
        if line != b"ready\n":
            proc.wait(timeout=10)
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"child said {line!r} instead of ready: {err}")


def _finish(proc: subprocess.Popen[bytes]) -> str:
    out, err = proc.communicate(timeout=END_TIMEOUT_S)
    assert proc.returncode == 0, f"child failed ({proc.returncode}): {err.decode()}"
    return out.decode()


def _kill_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.mark.parametrize("engine", list(MULTI_PROCESS))
def test_writers_and_readers_in_processes(engine: str, tmp_path: Path) -> None:
    url = MULTI_PROCESS[engine].format(tmp_path)
    with keyspace.open(url) as ks:
        assert ks.store.capabilities.multi_process
        ks.scope("conc", "other")[b"untouched"] = b"yes"  # also creates the store
    go = str(tmp_path / "go")
    writers = [_spawn("writer", url, str(i), str(DURATION_S), go) for i in range(WRITERS)]
    readers = [_spawn("reader", url, str(WRITERS), str(DURATION_S), go) for _ in range(READERS)]
    try:
        _wait_ready(writers + readers)
        Path(go).touch()
        done = []
        for proc in writers:
            out = _finish(proc)
            assert out.startswith("done "), out
            done.append(int(out.split()[1]))
        reports = [_finish(proc) for proc in readers]
    finally:
        _kill_all(writers + readers)

    # every writer made progress, and nothing it acknowledged is missing
    assert all(n > 0 for n in done), done
    with keyspace.open(url) as ks:
        for i, n in enumerate(done):
            assert ks.scope("conc", i)[b"count"] == str(n).encode()
            items = dict(ks.scope("conc", i, "items"))
            assert list(items) == list(range(n))
            assert all(value == f"{i}:{k}".encode() for k, value in items.items())
            assert list(ks.scope("conc", i, "plain")) == list(range(n))
        assert dict(ks.scope("conc", "other")) == {b"untouched": b"yes"}
        expected = {("conc", i) for i in range(WRITERS)} | {("conc", "other")}
        assert {("conc", c) for c in ks.scope("conc").scopes()} == expected

    # readers checked consistent snapshots while the writers were running
    for report in reports:
        first, *details = report.splitlines()
        words = first.split()
        checks, distinct, violations = int(words[1]), int(words[3]), int(words[5])
        assert violations == 0, details
        assert checks > 0
        assert distinct >= 2, f"the reader never saw the writers progress: {first}"


@pytest.mark.parametrize("engine", list(ONE_PROCESS))
def test_second_process_gets_store_error(engine: str, tmp_path: Path) -> None:
    url = ONE_PROCESS[engine].format(tmp_path)
    with keyspace.open(url) as ks:
        assert not ks.store.capabilities.multi_process
        ks.scope("held")[b"k"] = b"v"
        out = _finish(_spawn("open", url))
        assert out.startswith("error "), out
        classes, _, message = out[len("error ") :].partition(" | ")
        assert StoreError.__name__ in classes.split(","), out
        assert "already open" in message and "one process" in message, message
        assert str(tmp_path) in message, message
        assert ks.scope("held")[b"k"] == b"v"  # the first opener is unaffected
    # once the first process has closed it, another process may open it
    assert _finish(_spawn("open", url)).strip() == "opened"
