"""Two processes on LMDB and on SQLite: a writer makes thousands of mixed puts,
deletes and transactions across four scopes while a durable feed of one scope is
consumed by another process, killed with SIGKILL and started again three times
from its acknowledged cursor. The consumer records each change and its
acknowledgement in one transaction; in the end it has seen exactly the scope's
changes, in commit order, none twice, none lost, and replaying them gives the
scope's final state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _changes_worker import plan

import keyspace
from keyspace.tuples import unpack

pytestmark = pytest.mark.slow

WORKER = str(Path(__file__).parent.parent / "_changes_worker.py")
OPS = 10_000
SEED = 41


def _run(*args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.Popen([sys.executable, WORKER, *args], env=env)


Event = tuple[str, bytes, bytes | None]


def _expected() -> list[list[Event]]:
    """The changes of scope s0, one sorted list per commit that changed it, in
    commit order (the changes of one commit share its revision, in no promised
    order): a delete of a missing key is none."""
    state: dict[tuple[str, bytes], bytes] = {}
    out: list[list[Event]] = []
    for ops in plan(OPS, SEED):
        settled: dict[tuple[str, bytes], bytes | None] = {}
        before = dict(state)
        for scope, key, value in ops:
            settled[(scope, key)] = value
            if value is None:
                state.pop((scope, key), None)
            else:
                state[(scope, key)] = value
        group: list[Event] = []
        for (scope, key), value in settled.items():
            if scope != "s0" or (value is None and (scope, key) not in before):
                continue
            group.append(("delete" if value is None else "put", key, value))
        if group:
            out.append(sorted(group, key=repr))
    return out


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_feed_killed_three_times_sees_every_change_once_in_order(engine: str, tmp_path: Path) -> None:
    url = f"{engine}:///{tmp_path / 'db'}"
    with keyspace.open(url, changes=True) as ks:
        ks.feed("w", ("s0",)).close()  # registered before the first write: it sees them all
    writer = _run("writer", url, str(OPS), str(SEED))
    deadline = time.monotonic() + 90
    try:
        for kill in range(3):
            consumer = _run("consumer", url)
            time.sleep(0.6 + 0.4 * kill)
            consumer.send_signal(signal.SIGKILL)
            consumer.wait(10)
        # the writer may have ended by now on a fast machine: the consumer is still
        # killed three times part-way through the log, and resumes after each kill
        assert writer.wait(max(deadline - time.monotonic(), 1)) == 0
        consumer = _run("consumer", url)
        assert consumer.wait(max(deadline - time.monotonic(), 1)) == 0
    finally:
        for proc in (writer, consumer):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    with keyspace.open(url) as ks:
        assert list(ks.scope("dups").keys()) == []  # no change recorded twice
        seen = [(unpack(k), unpack(v)) for k, v in ks.scope("seen").items()]
        revisions = [key[0] for key, _ in seen]
        assert revisions == sorted(revisions)
        groups: dict[int, list[Event]] = {}
        for (revision, _), (kind, key, value) in seen:
            groups.setdefault(revision, []).append((kind, key, value))
        assert [sorted(group, key=repr) for group in groups.values()] == _expected()
        replayed: dict[bytes, bytes] = {}
        for kind, key, value in (event for _, event in seen):
            if kind == "put":
                replayed[key] = value
            else:
                del replayed[key]
        assert replayed == dict(ks.scope("s0").items())
