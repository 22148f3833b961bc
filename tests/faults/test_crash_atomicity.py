"""Crash atomicity: a writer process SIGKILLed at a random moment never leaves a
half-applied transaction, and every transaction it acknowledged survives.

For each embedded engine, one store is reused across ``KILLS`` runs. Each run
spawns a fresh interpreter (``_crash_writer.py``) that writes transactions across
three scopes plus a checksum key (and deletes the keys of an older transaction in
the same transaction), waits until it reports that it is writing, kills it with
SIGKILL after a random delay, reopens the store and checks:

- the store opens cleanly and every stored key decodes;
- every transaction is entirely present (its checksum matches the stored items)
  or entirely absent (no item, no checksum) — including the deletes it made;
- every acknowledged transaction that no later transaction could have deleted is
  present (a committed transaction is never lost by killing the process).
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import keyspace

sys.path.insert(0, str(Path(__file__).parent.parent))
from _crash_writer import KEYS_PER_SCOPE, SCOPES, SUMS, digest, txn_id

pytestmark = pytest.mark.slow

WRITER = Path(__file__).parent.parent / "_crash_writer.py"
KILLS = 50
KILL_WINDOW_S = 0.25  # the kill lands uniformly within this long after "writing"
START_TIMEOUT_S = 30.0  # a child that does not report "writing" by then fails the test

ENGINES = {
    "lmdb": "lmdb://{}",
    "sqlite": "sqlite://{}/store.sqlite",
    "leveldb": "leveldb://{}",
    "rocksdb": "rocksdb://{}",
}


def _read_until(proc: subprocess.Popen[bytes], marker: bytes, timeout: float) -> bytes:
    """Read the child's stdout until ``marker`` appears (bounded by ``timeout``)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while marker not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"child gave no {marker!r} within {timeout} s (got {buf!r})")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            proc.wait(timeout=10)
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"child exited ({proc.returncode}) before {marker!r}: {err}")
        buf += chunk
    return buf


def _spawn(url: str, run: int) -> subprocess.Popen[bytes]:
    """Start one writer; it imports, reports "ready" and waits for "go"."""
    return subprocess.Popen(
        [sys.executable, str(WRITER), url, str(run)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def _run_and_kill(proc: subprocess.Popen[bytes], rng: random.Random, spawn_next: Any) -> list[str]:
    """Let a ready writer open the store, kill it at a random moment once it is
    writing; return the acknowledged ids. ``spawn_next()`` is called while this
    writer runs, so the next interpreter starts up meanwhile."""
    assert proc.stdin is not None
    out = _read_until(proc, b"ready\n", START_TIMEOUT_S)
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    out += _read_until(proc, b"writing\n", START_TIMEOUT_S)
    spawn_next()
    time.sleep(rng.uniform(0, KILL_WINDOW_S))
    os.kill(proc.pid, signal.SIGKILL)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"writer ended by itself ({proc.returncode}): {err.decode()}"
    lines = (out + rest).decode().splitlines()
    return [line[4:] for line in lines if line.startswith("ack ")]


def _verify(url: str, acked: list[str]) -> int:
    """Reopen the store and check every transaction is all-or-nothing; return how
    many transactions are present."""
    with keyspace.open(url) as ks:
        # every stored key decodes, and lies in a scope the writer uses
        known = {tuple(p) for p in SCOPES} | {SUMS}
        for stored, _ in ks.store.scan(b"", None):
            if stored == ks.scheme.metadata_key:
                continue
            path, _key = ks.scheme.decode(stored)
            assert path in known, f"stray key {stored!r} in scope {path!r}"

        items: dict[str, dict[tuple[int, int], bytes]] = defaultdict(dict)
        for index, path in enumerate(SCOPES):
            for key, value in ks.scope(*path).items():
                tid, j = key
                assert 0 <= j < KEYS_PER_SCOPE
                items[tid][index, j] = value
        sums = {tid: value.decode() for tid, value in ks.scope(*SUMS).items()}

    for tid in set(items) | set(sums):
        if tid in sums:
            assert tid in items, f"transaction {tid}: checksum without its items"
            assert digest(items[tid]) == sums[tid], (
                f"transaction {tid} is partly applied: {len(items[tid])} items, checksum {sums[tid]}"
            )
        else:
            assert tid not in items, f"transaction {tid}: {len(items[tid])} items without a checksum"

    # A transaction n is deleted only by n+3, which starts after "ack n+2" is out:
    # an acknowledged n without an acknowledged n+2 must still be there.
    acked_set = set(acked)
    for tid in acked:
        run, seq = (int(part) for part in tid.split("."))
        if txn_id(run, seq + 2) not in acked_set:
            assert tid in sums, f"acknowledged transaction {tid} was lost"
    return len(sums)


def kill_runs(url: str, rng: random.Random, kills: int = KILLS) -> tuple[int, int]:
    """``kills`` writers on ``url``, one after another, each killed (SIGKILL)
    while it writes and the store verified after each kill (the next writer is
    started meanwhile, so that its import does not delay the kill); returns the
    transactions acknowledged in all and the runs that had any."""
    total_acked = 0
    runs_with_commits = 0
    procs = [_spawn(url, 0)]
    try:
        for run in range(kills):

            def spawn_next(run: int = run) -> None:
                if run + 1 < kills:
                    procs.append(_spawn(url, run + 1))

            acked = _run_and_kill(procs[run], rng, spawn_next)
            total_acked += len(acked)
            runs_with_commits += bool(acked)
            _verify(url, acked)
    finally:
        for proc in procs:
            _stop(proc)
    return total_acked, runs_with_commits


@pytest.mark.parametrize("engine", list(ENGINES))
def test_sigkill_leaves_whole_transactions(engine: str, tmp_path: Path) -> None:
    directory = tmp_path / engine
    directory.mkdir()
    url = ENGINES[engine].format(directory)
    total_acked, runs_with_commits = kill_runs(url, random.Random(f"crash-{engine}"))
    # the kills did land while transactions were being written
    assert total_acked > 0
    assert runs_with_commits > 0
