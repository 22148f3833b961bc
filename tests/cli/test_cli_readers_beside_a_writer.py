"""The CLI's read commands (read-only opens) while another process writes.

A writer process commits transactions that each add ``BATCH`` items to the scope
``("cli", "items")`` and set ``("cli",)[b"count"]``; on LMDB it starts from a map
of 64 KiB, so the map grows many times while the CLI reads. Each CLI ``scan``
of the last items, run meanwhile, succeeds (no MDB_MAP_RESIZED, no "database
is locked") and shows whole transactions only: the items ``m-1, m-2, ...``
with ``m`` a multiple of ``BATCH``, never fewer than the previous scan showed; ``get`` of
the count and ``inspect`` succeed too. The read-only opens change nothing: the
writer's data is whole after it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli import run

import keyspace

BATCH = 25
WRITE_S = 4.0
STORES = {
    "lmdb": ("lmdb://{}/store?map_size=64KiB", "lmdb://{}/store"),
    "sqlite": ("sqlite:///{}/store.sqlite", "sqlite:///{}/store.sqlite"),
}
WRITER = f"""
import os, sys, time, keyspace
url, go, n = sys.argv[1], sys.argv[2], 0
with keyspace.open(url) as ks:
    ks.scope("cli")[b"count"] = b"0"
    open(go, "w").close()
    deadline = time.monotonic() + {WRITE_S}
    while time.monotonic() < deadline:
        with ks.transaction() as tx:
            items = tx.scope("cli", "items")
            for i in range(n, n + {BATCH}):
                items[b"%06d" % i] = os.urandom(150)
            n += {BATCH}
            tx.scope("cli")[b"count"] = str(n).encode()
        time.sleep(0.005)
print(n, flush=True)
"""


@pytest.mark.parametrize("engine", list(STORES))
def test_cli_reads_while_another_process_writes(engine: str, tmp_path: Path) -> None:
    write_url, read_url = (u.format(tmp_path) for u in STORES[engine])
    go = tmp_path / "go"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, write_url, str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not go.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "writer did not start"
            time.sleep(0.01)
        seen, scans = 0, 0
        while proc.poll() is None:
            # the last items: whole transactions, never fewer than before
            out = run("scan", read_url, "cli", "items", "--reverse", "--limit", str(2 * BATCH)).stdout
            keys = [int(line.split("\t")[0]) for line in out.splitlines()]
            top = keys[0] + 1 if keys else 0
            assert keys == list(range(top - 1, top - 1 - len(keys), -1)), keys
            assert top % BATCH == 0 and top >= seen and len(keys) == min(top, 2 * BATCH), (top, seen)
            seen, scans = top, scans + 1
            assert int(run("get", read_url, "cli", "--key", "count").stdout) >= seen
            if scans % 3 == 0:
                assert "items" in run("inspect", read_url).stdout
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, 9)
            proc.communicate(timeout=30)
    total = int(out)
    assert scans >= 2 and 0 < seen <= total
    with keyspace.open(read_url, readonly=True) as ks:
        assert ks.scope("cli")[b"count"] == str(total).encode()
        assert len(ks.scope("cli", "items")) == total
    if engine == "lmdb":
        assert (tmp_path / "store" / "data.mdb").stat().st_size > 64 << 10  # the map grew
