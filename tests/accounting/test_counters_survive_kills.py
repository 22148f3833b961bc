"""A writer SIGKILLed in the middle of its transactions leaves counters equal to
a full recount (LMDB and SQLite): the counter records commit in the same atomic
write as the data, or not at all. 30 kills per engine."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keyspace
from keyspace._accounting import accounting_of

pytestmark = pytest.mark.slow

_WRITER = r"""
import random, sys
import keyspace
url, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
ks = keyspace.open(url)
paths = [("a",), ("a", "b"), ("a", "c"), ("z",), ()]
first = True
while True:
    with ks.transaction() as tx:
        for _ in range(rng.randint(20, 80)):
            scope = tx.scope(*rng.choice(paths))
            key = b"k%d" % rng.randint(0, 300)
            if rng.random() < 0.3:
                scope.pop(key, None)
            else:
                scope[key] = b"v" * rng.randint(0, 64)
        if rng.random() < 0.05:
            tx.scope(*rng.choice(paths)).clear()
    if first:
        print("ready", flush=True)
        first = False
"""

KILLS = 30


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_counters_equal_the_recount_after_each_kill(engine: str, tmp_path: Path) -> None:
    url = {"lmdb": f"lmdb://{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db.sqlite"}[engine]
    ks = keyspace.open(url, accounting=True)
    ks.scope("a")[b"seed"] = b"x"  # records the scheme and accounting
    ks.close()
    rng = random.Random(engine)
    started = time.monotonic()
    for kill in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, url, str(kill)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line == b"ready\n", proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            time.sleep(rng.uniform(0.0, 0.05))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            proc.stdout.close()  # type: ignore[union-attr]
            proc.stderr.close()  # type: ignore[union-attr]
        assert proc.returncode == -signal.SIGKILL
        ks = keyspace.open(url)
        try:
            counts = accounting_of(ks.store)
            assert counts is not None
            with ks.store.snapshot() as view:
                assert counts.differences(view) == [], f"after kill {kill + 1}"
            assert ks.stats().subtree_keys > 0
        finally:
            ks.close()
        assert time.monotonic() - started < 60, "the kills take too long"
