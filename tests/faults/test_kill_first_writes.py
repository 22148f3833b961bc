"""A process killed (SIGKILL) in the middle of a large first write leaves it whole
or absent, with the records that write depends on consistent with its data.

Each write of the child (``_procs_big_writer.py``) is the first write of a new
scope: thousands of keys in one ``update()`` or one transaction, together with
the scheme record (the first write), the ScopeHash name registry entry or the
LengthPrefixed leaf record. The child is killed at a random moment; the store
is reopened and checked: every scope holds all its keys with their values, or
none; a ScopeHash name is registered exactly when its scope holds data, a
LengthPrefixed leaf recorded exactly when it holds data; the scheme record is
there exactly when any data is; every acknowledged write is there. Then the
next run writes on the same store.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from _procs_big_writer import KEYS, scope_path, value
from test_crash_atomicity import _read_until

import keyspace
from keyspace.catalog.leaves import _layout_key
from keyspace.stores import open_store

pytestmark = pytest.mark.slow

WRITER = Path(__file__).parent.parent / "_procs_big_writer.py"
RUNS = 2
KILL_WINDOW_S = 0.6
START_TIMEOUT_S = 30.0
STORES = {
    "lmdb": "lmdb://{}/store",
    "sqlite": "sqlite:///{}/store.sqlite",
    "leveldb": "leveldb://{}/store",
}
MODES = [("scopehash", "update"), ("length-prefixed", "update"), ("scopehash", "transaction")]


def _run_and_kill(url: str, scheme: str, mode: str, run: int, rng: random.Random) -> list[int]:
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), url, scheme, mode, str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out = _read_until(proc, b"writing\n", START_TIMEOUT_S)
        time.sleep(rng.uniform(0.05, KILL_WINDOW_S))
        os.kill(proc.pid, signal.SIGKILL)
        rest, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, f"writer ended ({proc.returncode}): {err.decode()}"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
    lines = (out + rest).decode().splitlines()
    return [int(line[4:]) for line in lines if line.startswith("ack ")]


def _verify(url: str, scheme: str, runs: int, acked: set[tuple[int, int]]) -> int:
    """Check every scope the writers may have made; return how many are whole."""
    whole = 0
    with open_store(url) as store:
        any_data = next(iter(store.scan(b"", None, limit=1)), None) is not None
        if not any_data:
            assert not acked
            return 0
        ks = keyspace.attach(store, scheme=scheme, close_store=False)
        try:
            record = ks.scheme.metadata_key
            for run in range(runs):
                n = 0
                while True:
                    path = scope_path(scheme, run, n)
                    items = dict(ks.scope(*path).items())
                    if scheme == "scopehash":
                        marker = store.get(ks.scheme.prefix(path))
                        assert (marker is not None) == bool(items), (path, len(items), marker)
                        if marker is not None:
                            assert marker == path[0].encode()
                    else:
                        marker = store.get(_layout_key(path))
                        assert (marker is not None) == bool(items), (path, len(items), marker)
                    if not items:
                        assert (run, n) not in acked, f"acknowledged write {path} was lost"
                        break
                    assert items == {b"k%05d" % i: value(path, i) for i in range(KEYS)}, (
                        f"{path}: {len(items)} of {KEYS} keys"
                    )
                    whole += 1
                    n += 1
            if record is not None:
                assert store.get(record) is not None
        finally:
            ks.close()
    return whole


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize(("scheme", "mode"), MODES)
def test_a_killed_first_write_is_whole_or_absent(scheme: str, mode: str, engine: str, tmp_path: Path) -> None:
    url = STORES[engine].format(tmp_path)
    rng = random.Random(f"{engine}-{scheme}-{mode}")
    acked: set[tuple[int, int]] = set()
    whole = 0
    for run in range(RUNS):
        acked |= {(run, n) for n in _run_and_kill(url, scheme, mode, run, rng)}
        whole = _verify(url, scheme, run + 1, acked)
    assert whole > 0  # the writers committed writes before they were killed
