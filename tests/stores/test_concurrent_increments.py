"""The read-modify-write race across processes (the concurrency suite's).

Two processes each commit 200 increments of one counter, each increment one
transaction that reads the counter, writes a value under a key of its own and
writes the counter plus one. On LMDB the map is 1 MiB and each process's first
8 values are of 1.5 to 3 MiB, over its free space: the map grows inside those
transactions, which releases LMDB's writer lock between processes while the
other process may commit (it does in most runs: the conflicts are printed). A
transaction that raises ``TransactionConflict`` wrote nothing and is run again.
The counter ends exactly at the number of increments committed: no update is
lost. The same on SQLite (whose transactions hold the writer lock throughout).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _workers import run_together

import keyspace

WORKER = str(Path(__file__).parent.parent / "_growth_conflict_worker.py")
PROCESSES = 2
INCREMENTS = 200
BIG = 3 << 20
TIMEOUT_S = 120.0

URLS = {
    "lmdb": ("lmdb://{}/store?map_size=1MiB&sync=false", BIG),
    "sqlite": ("sqlite://{}/store.sqlite?sync=false", BIG >> 4),  # no map: the same race, less to copy
}


@pytest.mark.parametrize("engine", list(URLS))
def test_two_processes_lose_no_increment(engine: str, tmp_path: Path) -> None:
    template, big = URLS[engine]
    url = template.format(tmp_path)
    with keyspace.open(url) as ks:
        ks.scope("c")[b"n"] = b"0"
    go = tmp_path / "go"
    outputs = run_together(
        [[WORKER, "increments", url, str(INCREMENTS), str(big), str(go)]] * PROCESSES,
        timeout=TIMEOUT_S,
        go=go,
    )
    committed = conflicts = 0
    for out in outputs:
        word, done, met = out.split()
        assert word == "done", out
        committed += int(done)
        conflicts += int(met)
    assert committed == PROCESSES * INCREMENTS
    with keyspace.open(url) as ks:
        assert ks.scope("c")[b"n"] == str(committed).encode()
        assert sum(1 for key in ks.scope("c") if key.startswith(b"big-")) == committed
    print(f"{engine}: {committed} increments by {PROCESSES} processes, {conflicts} conflicts run again")
