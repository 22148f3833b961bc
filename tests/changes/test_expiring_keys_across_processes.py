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
import sys, keyspace
ks = keyspace.open(sys.argv[1])  # no option: the store records ttl=True
scope = ks.scope("sessions")
for i in range(5):
    scope.put(b"s%d" % i, b"token", ttl=float(sys.argv[2]))
scope[b"permanent"] = b"kept"
ks.close()
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
    started = time.time()
    _python(_PUTTER, url, str(ttl))
    with keyspace.open(url) as ks:
        scope = ks.scope("sessions")
        if time.time() < started + ttl - 0.2:  # well before the deadline (a slow start can eat into it)
            assert sorted(scope.keys()) == [b"first", b"permanent", b"s0", b"s1", b"s2", b"s3", b"s4"]
        for _ in range(100):  # bounded: at most 10 s past the deadline
            if time.time() > started + ttl + 0.5:
                break
            time.sleep(0.1)
        # past every deadline, nothing swept yet: the rule alone hides them
        assert sorted(scope.keys()) == [b"first", b"permanent"]
        assert len(scope) == 2
        assert scope.get(b"s0") is None
        assert _python(_SWEEPER, url).strip() == "5"  # another process deletes them, once
        assert ks.expire(100) == 0
        assert sorted(scope.keys()) == [b"first", b"permanent"]
