"""``keyspace scan`` prints one state of the store however long it runs: a
writer that adds and removes keys while the command is blocked on its output
(a reader slower than the scan) changes nothing of what it prints, on every
local engine that a second process may write while the command reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import keyspace

N = 20_000  # far more than the pipe holds and than the scan reads ahead


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])  # LevelDB: one process per store
def test_a_scan_blocked_on_its_output_prints_one_state(tmp_path: Path, engine: str) -> None:
    url = f"sqlite:///{tmp_path}/store.sqlite" if engine == "sqlite" else f"{engine}://{tmp_path}/store"
    before = {b"k%05d" % i: b"v" * 40 for i in range(N)}
    with keyspace.open(url) as ks:
        ks.scope("s").update(before)
    proc = subprocess.Popen(
        [sys.executable, "-m", "keyspace.cli", "scan", url, "s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the command runs, then blocks on the full pipe
        assert first.startswith("k00000")
        with keyspace.open(url) as ks:  # meanwhile: keys after the scan's position change
            scope = ks.scope("s")
            scope.update({b"z%03d" % i: b"new" for i in range(10)})
            del scope[b"k%05d" % (N - 1)]
        rest = proc.stdout.read()  # through the same buffer as the first line
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait(timeout=10)
    keys = [line.split("\t", 1)[0] for line in [first, *rest.splitlines()]]
    assert keys == [k.decode() for k in before]  # the store as it was when the scan began
