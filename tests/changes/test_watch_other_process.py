"""A watch of the change log in another process: it sees every write of the
writer process once, in commit order, about as soon as it commits (median well
under 50 ms: the watch reads the commit counter every 10 ms), and a watch that
waits costs no busy loop."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keyspace
from keyspace._changes import POLL_SECONDS

_WATCHER = r"""
import sys, time, keyspace
ks = keyspace.open(sys.argv[1])  # no option: the store records changes=True
w = ks.scope("lat").watch()
print("ready", flush=True)
for _ in range(int(sys.argv[2])):
    e = w.get(30)
    if e is None:
        break
    print(e.key.decode(), e.revision, repr(time.time()), flush=True)
w.close()
ks.close()
"""


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_watcher_in_another_process_sees_each_commit_soon(engine: str, tmp_path: Path) -> None:
    url = f"{engine}:///{tmp_path / 'db'}"
    writer = keyspace.open(url, changes=True)
    writer.scope("lat")[b"start"] = b""
    count = 40
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, "-c", _WATCHER, url, str(count)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        committed: dict[str, float] = {}
        for i in range(count):
            key = f"k{i:03d}"
            writer.scope("lat")[key.encode()] = b"v"
            committed[key] = time.time()
            writer.scope("other")[key.encode()] = b"v"  # another scope: not reported
            time.sleep(0.02)
        lines = [line.split() for line in proc.stdout]
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        writer.close()
    assert [key for key, _, _ in lines] == list(committed)  # each once, in commit order
    revisions = [int(rev) for _, rev, _ in lines]
    assert revisions == sorted(revisions)
    latencies = [(float(seen) - committed[key]) * 1000 for key, _, seen in lines]
    assert statistics.median(latencies) < 50, latencies


def test_a_waiting_watch_costs_no_busy_loop(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb:///{tmp_path / 'db'}", changes=True) as ks, ks.scope("a").watch() as watch:
        cpu, wall = time.process_time(), time.monotonic()
        assert watch.get(1.0) is None
        used = time.process_time() - cpu
        assert time.monotonic() - wall >= 1.0
        # one counter read per POLL_SECONDS: far below a busy loop's whole second
        assert used < 0.25, f"{used:.3f} s of CPU in a 1 s wait (poll every {POLL_SECONDS} s)"
