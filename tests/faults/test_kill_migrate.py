"""``keyspace migrate`` killed (SIGKILL) at a random moment while it copies: the
destination holds whole batches only (the first ``n × --batch`` source keys in
order, nothing of a batch cut short), its scheme record with them, and running
the same command again completes the copy, equal to the source key for key."""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keyspace

pytestmark = pytest.mark.slow

N = 12_000
BATCH = 500
KILLS = 3
START_TIMEOUT_S = 30.0

DESTINATIONS = {
    "lmdb": lambda d: str(d / "dst.lmdb"),
    "sqlite": lambda d: f"sqlite://{d / 'dst.sqlite'}",
    "leveldb": lambda d: f"leveldb://{d / 'dst.ldb'}",
}


def _source(tmp_path: Path) -> tuple[str, list[bytes]]:
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("s").update({b"k%05d" % i: b"v" * 100 for i in range(N)})
        keys = list(ks.scope("s").keys())
    return src, keys


def _wait_for(proc: subprocess.Popen[bytes], marker: bytes, timeout: float) -> None:
    """Read the child's stderr until ``marker`` (bounded by ``timeout``)."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while marker not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"migrate gave no {marker!r} within {timeout} s (got {buf!r})")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return  # it ended (fast): the kill below finds it gone
            buf += chunk


def _started(src: str, dst: str) -> subprocess.Popen[bytes]:
    """``keyspace migrate src dst``, once it has opened the destination."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "keyspace.cli", "migrate", src, dst, "--batch", str(BATCH)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(proc, b"to   ", START_TIMEOUT_S)
    except BaseException:
        proc.kill()
        proc.communicate(timeout=30)
        raise
    return proc


def _copy_seconds(src: str, dst: str) -> float:
    """How long a whole copy runs on this machine, from the open of ``dst`` to
    the end: the kills below land inside it whatever the machine's speed."""
    proc = _started(src, dst)
    began = time.monotonic()
    proc.communicate(timeout=120)
    assert proc.returncode == 0
    return time.monotonic() - began


def _kill_while_copying(src: str, dst: str, delay: float) -> bool:
    """Start the copy, kill it ``delay`` s after it opened the destination;
    return whether the kill landed before it ended."""
    proc = _started(src, dst)
    try:
        time.sleep(delay)
        landed = proc.poll() is None
        if landed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        return landed
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)


@pytest.mark.parametrize("engine", list(DESTINATIONS))
def test_a_killed_migrate_leaves_whole_batches_and_a_rerun_completes(tmp_path: Path, engine: str) -> None:
    src, keys = _source(tmp_path)
    rng = random.Random(f"kill-migrate-{engine}")
    (tmp_path / "timed").mkdir()
    copy_s = _copy_seconds(src, DESTINATIONS[engine](tmp_path / "timed"))
    landed = 0
    for run in range(KILLS):
        out = tmp_path / f"run{run}"
        out.mkdir()
        dst = DESTINATIONS[engine](out)
        delay = rng.uniform(0.0, 0.8 * copy_s)
        if _kill_while_copying(src, dst, delay):
            landed += 1
        else:
            # the copy ended within ``delay``: the machine runs faster now than when
            # it was timed (a busy machine's load varies), so the next kills aim
            # within this shorter copy
            copy_s = delay
        if any(out.iterdir()):
            with keyspace.open(dst, create=False) as ks:
                copied = list(ks.scope("s").keys())
                assert list(ks.scope().scopes()) in ([], ["s"])  # nothing in another scope
            assert copied == keys[: len(copied)], "not the source keys in order"
            assert len(copied) % BATCH == 0 or len(copied) == N, f"{len(copied)} keys: a batch cut short"
        done = subprocess.run(
            [sys.executable, "-m", "keyspace.cli", "migrate", src, dst, "--batch", str(BATCH)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        with keyspace.open(dst, create=False) as ks:
            assert list(ks.scope("s").keys()) == keys
            assert ks.scope("s")[keys[-1]] == b"v" * 100
    assert landed  # the kills did land while the copy ran
