"""A process killed (SIGKILL) while it drops the ScopeHash root leaves the drop
whole or absent.

The root of a ScopeHash keyspace holds its named scopes beside it (one range per
registered name), so dropping it deletes many ranges. A drop is one write: the
child (``_procs_dropper`` below, run as ``python -c``) drops the root of a store
holding ``NAMES`` named scopes and root keys, and is killed at a random moment
while it does; after a reopen either every key is there or none (the name
registry and the scheme record stay either way).
"""

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
from keyspace.stores import open_store

NAMES = 120
KEYS = 150
ROUNDS = 4
STORES = {
    "lmdb": "lmdb://{}/store",
    "sqlite": "sqlite:///{}/store.sqlite",
    "leveldb": "leveldb://{}/store",
}
DROPPER = """
import sys, keyspace
ks = keyspace.open(sys.argv[1], scheme="scopehash")
print("dropping", flush=True)
ks.scope().drop()
print("dropped", flush=True)
ks.close()
"""


def _fill(url: str) -> int:
    with keyspace.open(url, scheme="scopehash") as ks:
        with ks.transaction() as tx:
            for n in range(NAMES):
                tx.scope(f"name{n}").update({b"k%03d" % i: b"v" * 40 for i in range(KEYS)})
            tx.scope().update({b"root%03d" % i: b"r" for i in range(KEYS)})
        return sum(1 for _ in ks.store.scan(b"", None))


def _data_keys(url: str) -> int:
    """Keys that are neither the scheme record nor a registry entry (4 bytes)."""
    with open_store(url) as store:
        ks = keyspace.attach(store, scheme="scopehash", close_store=False)
        record = ks.scheme.metadata_key
        return sum(1 for k, _ in store.scan(b"", None) if k != record and len(k) != 4)


def _drop_and_kill(url: str, delay: float) -> bool:
    """Run the dropper, kill it ``delay`` s after it starts dropping; whether it
    reported the drop done before the kill."""
    proc = subprocess.Popen(
        [sys.executable, "-c", DROPPER, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        fd, buf = proc.stdout.fileno(), b""
        deadline = time.monotonic() + 30
        while b"dropping\n" not in buf:
            assert time.monotonic() < deadline, f"dropper did not start: {buf!r}"
            if select.select([fd], [], [], 1.0)[0]:
                chunk = os.read(fd, 4096)
                assert chunk, proc.stderr.read() if proc.stderr else b""
                buf += chunk
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
    return b"dropped" in buf + rest


@pytest.mark.parametrize("engine", list(STORES))
def test_a_killed_root_drop_is_whole_or_absent(engine: str, tmp_path: Path) -> None:
    rng = random.Random(engine)
    total = NAMES * KEYS + KEYS
    for round_ in range(ROUNDS):
        (tmp_path / f"r{round_}").mkdir()
        url = STORES[engine].format(tmp_path / f"r{round_}")
        _fill(url)
        done = _drop_and_kill(url, rng.uniform(0.0, 0.15))
        left = _data_keys(url)
        assert left in (0, total), f"round {round_}: {left} of {total} keys left by a killed drop"
        if done:
            assert left == 0
        with keyspace.open(url) as ks:  # the records stayed: the names are still theirs
            assert ks.scope("name0").get(b"k000") == (b"v" * 40 if left else None)
