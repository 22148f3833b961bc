"""Deadlines live in the store, so they hold for every process: a key another
process put with a ``ttl`` is read by this one until its deadline and never
after it, with no sweep run (the rule reads the deadline), and a sweep in
either process deletes it once (the other process's reads and counts agree)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import keyspace

_PUTTER = r"""
import sys, time, keyspace
ks = keyspace.open(sys.argv[1])  # no option: the store records ttl=True
scope = ks.scope("sessions")
first = time.time()  # each deadline is at least this plus the ttl
for i in range(5):
    scope.put(b"s%d" % i, b"token", ttl=float(sys.argv[2]))
last = time.time()  # and at most this plus the ttl
scope[b"permanent"] = b"kept"
ks.close()
print(first, last)
"""

_SWEEPER = r"""
import sys, keyspace
ks = keyspace.open(sys.argv[1])
print(ks.expire(100))
ks.close()
"""


def _python(code: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_another_process_s_deadlines_hold_here(engine: str, tmp_path: Path) -> None:
    url = f"{engine}:///{tmp_path / 'db'}"
    with keyspace.open(url, ttl=True) as ks:
        ks.scope("sessions")[b"first"] = b""  # the feature recorded
    ttl = 1.5
    first, last = map(float, _python(_PUTTER, url, str(ttl)).split())
    with keyspace.open(url) as ks:
        scope = ks.scope("sessions")
        if time.time() < first + ttl - 0.3:  # well before the first deadline (a loaded machine may be late)
            assert sorted(scope.keys()) == [b"first", b"permanent", b"s0", b"s1", b"s2", b"s3", b"s4"]
        for _ in range(100):  # bounded: at most 10 s
            if time.time() > last + ttl + 0.05:
                break
            time.sleep(0.1)
        # past every deadline, nothing swept yet: the rule alone hides them
        assert sorted(scope.keys()) == [b"first", b"permanent"]
        assert len(scope) == 2
        assert scope.get(b"s0") is None
        assert _python(_SWEEPER, url).strip() == "5"  # another process deletes them, once
        assert ks.expire(100) == 0
        assert sorted(scope.keys()) == [b"first", b"permanent"]
