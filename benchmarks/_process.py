"""Commands timed as a user starts them: each run a fresh process, wall time,
start-up included (the best of a few runs, as the machine's noise only ever
adds), bytecode cached as in a user's installation."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

from ._harness import Context

__all__ = ["RAW_SCAN", "command", "user_env", "wall_ms"]

RAW_SCAN = """
import sys
import lmdb
env = lmdb.open(sys.argv[1], readonly=True, lock=False, max_dbs=0)
keys = size = 0
with env.begin() as txn:
    for k, v in txn.cursor():
        keys += 1
        size += len(k) + len(v)
print(keys, size)
"""
"""A script reading an LMDB store with py-lmdb alone: a full scan counting keys
and bytes (``python -c RAW_SCAN PATH``)."""


def user_env(ctx: Context) -> dict[str, str]:
    """The environment of the timed processes: bytecode cached (in a directory of
    the workload's own, so that an environment that writes none still measures
    what a user runs)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = ctx.tmpdir()
    return env


def wall_ms(
    argv: list[str], runs: int, env: dict[str, str], before: Callable[[], object] | None = None
) -> float:
    """The least wall time of ``runs`` runs of ``argv`` (output discarded), in ms,
    after one untimed run (which writes the bytecode caches a user's installation
    holds); ``before`` (untimed) is called before each run, e.g. to put back a
    store that the command changes."""
    best = float("inf")
    for i in range(runs + 1):
        if before is not None:
            before()
        t0 = time.perf_counter()
        subprocess.run(
            argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, env=env
        )
        if i:
            best = min(best, time.perf_counter() - t0)
    return best * 1000


def command() -> list[str]:
    """The ``keyspace`` command as installed beside this interpreter, else ``python -m keyspace.cli``."""
    beside = os.path.join(os.path.dirname(sys.executable), "keyspace")
    return [beside] if os.path.exists(beside) else [sys.executable, "-m", "keyspace.cli"]
