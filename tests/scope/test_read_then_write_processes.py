"""``pop``, ``popitem`` and ``setdefault`` are one atomic step each across
processes too: several processes calling them on one scope of one LMDB or SQLite
store pop every item exactly once, and every ``setdefault`` returns the value
stored (the first caller's default), never its own unstored default.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import keyspace

PROCS = 3
N = 200
STORES = {
    "lmdb": "lmdb://{}/store",
    "sqlite": "sqlite:///{}/store.sqlite",
}
WORKER = """
import os, sys, time, keyspace
url, me, go = sys.argv[1], sys.argv[2], sys.argv[3]
with keyspace.open(url) as ks:
    items, keys, shared = ks.scope("items"), ks.scope("keys"), ks.scope("shared")
    deadline = time.monotonic() + 30
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            sys.exit("no go")
        time.sleep(0.002)
    for i in range(20):
        print("default", shared.setdefault(b"s%02d" % i, me.encode()).decode())
    while True:
        try:
            k, _ = items.popitem()
        except KeyError:
            break
        print("popitem", k.decode())
    for i in range($N):
        got = keys.pop(b"k%04d" % i, None)
        if got is not None:
            print("pop", got.decode())
""".replace("$N", str(N))


@pytest.mark.parametrize("engine", list(STORES))
def test_read_then_write_steps_are_atomic_across_processes(engine: str, tmp_path: Path) -> None:
    url = STORES[engine].format(tmp_path)
    with keyspace.open(url) as ks:
        ks.scope("items").update({b"k%04d" % i: b"v" for i in range(N)})
        ks.scope("keys").update({b"k%04d" % i: b"v%d" % i for i in range(N)})
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, f"p{i}", str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(PROCS)
    ]
    outs: list[str] = []
    try:
        time.sleep(0.5)  # let them import and open
        go.touch()
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                os.kill(p.pid, 9)
                p.communicate(timeout=30)
    lines = [line.split(" ", 1) for out in outs for line in out.splitlines()]
    popitems = Counter(v for kind, v in lines if kind == "popitem")
    pops = Counter(v for kind, v in lines if kind == "pop")
    assert popitems == Counter(f"k{i:04d}" for i in range(N))
    assert pops == Counter(f"v{i}" for i in range(N))
    with keyspace.open(url) as ks:
        assert len(ks.scope("items")) == 0 and len(ks.scope("keys")) == 0
        shared = {k.decode(): v.decode() for k, v in ks.scope("shared").items()}
    defaults = [(i, v) for i, (kind, v) in enumerate(lines) if kind == "default"]
    assert len(shared) == 20
    for n, out in enumerate(outs):  # each process's answers, in order, are the stored values
        got = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("default ")]
        assert got == [shared[f"s{i:02d}"] for i in range(20)], n
    assert len(defaults) == 20 * PROCS
