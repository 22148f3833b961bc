"""A process killed (SIGKILL) while it writes collections or a scoped-heed
environment leaves every logical operation whole or absent.

- Collections (LMDB, SQLite): a child saves and removes records of an
  ``IndexedMap`` with a unique and a multi index, and pushes and pops a
  ``Deque``, until it is killed at a random moment. Reopened: the unique index
  names exactly the records, each with its value; each multi index prefix holds
  exactly the records of that index key; the deque's head and tail bound its
  items, none missing. Every saved record the child acknowledged is there (or
  was replaced or removed by a later acknowledged step).
- scoped-heed: a child writes the first keys of new named scopes (a registry
  entry and the keys, one transaction each) until it is killed. Reopened: every
  hash that holds keys has its registry entry (a name whose entry went missing
  could not be read again), every entry names a scope with all its keys.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_crash_atomicity import _read_until

import keyspace
from keyspace import scoped_heed
from keyspace.collections import Deque, IndexedMap, MultiIndex, UniqueIndex

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

KILLS = 6
START_TIMEOUT_S = 30.0
STORES = {"lmdb": "lmdb://{}/store", "sqlite": "sqlite:///{}/store.sqlite"}

COLLECTIONS_CHILD = r"""
import random, sys
import keyspace
from keyspace.collections import Deque, IndexedMap, MultiIndex, UniqueIndex
from keyspace.errors import UniqueViolation
url, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
with keyspace.open(url) as ks:
    app = ks.scope("app")
    users = IndexedMap(app, "users", key="str", value="json", indexes={
        "email": UniqueIndex(lambda u: u["email"], "users__email", key="str"),
        "team": MultiIndex(lambda u: u["team"], "users__team", key="str"),
    })
    log = Deque(app, "log", value="json")
    print("writing", flush=True)
    i = 0
    while True:
        i += 1
        key = f"u{rng.randrange(40)}"
        if rng.random() < 0.3:
            print("will", key, "-", flush=True)
            try:
                users.remove(key)
            except KeyError:
                pass
            print("ok", flush=True)
        else:
            n = f"{seed}-{i}"
            record = {"email": f"e{rng.randrange(60)}", "team": f"t{rng.randrange(4)}", "n": n}
            print("will", key, n, flush=True)
            try:
                users.save(key, record)
                print("ok", flush=True)
            except UniqueViolation:
                print("no", flush=True)
        log.push_back(f"{seed}-{i}")
        if len(log) > 16:
            log.pop_front()
"""

HEED_CHILD = r"""
import sys
from keyspace import scoped_heed
path, run = sys.argv[1], int(sys.argv[2])
with scoped_heed.open(path, "db") as ks:
    print("writing", flush=True)
    n = 0
    while True:
        ks.scope(f"r{run}-s{n}").update({b"k%03d" % i: b"v" for i in range(50)})
        print("ack", n, flush=True)
        n += 1
"""


def _kill_after(args: list[str], rng: random.Random) -> list[str]:
    """Run ``args``, SIGKILL it a random moment after it says ``writing``; its
    whole lines (a last line the kill cut short said nothing: it is left out)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = _read_until(proc, b"writing\n", START_TIMEOUT_S)
        time.sleep(rng.uniform(0.02, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        rest, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, f"child ended ({proc.returncode}): {err.decode()}"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
    text = (out + rest).decode()
    return text[: text.rfind("\n") + 1].splitlines()


def _collections(ks: keyspace.Keyspace) -> tuple[Any, Any]:
    app = ks.scope("app")
    users = IndexedMap(
        app,
        "users",
        key="str",
        value="json",
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "users__email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "users__team", key="str"),
        },
    )
    return users, Deque(app, "log", value="json")


@pytest.mark.parametrize("engine", list(STORES))
def test_killed_collection_writes_are_whole_or_absent(engine: str, tmp_path: Path) -> None:
    url = STORES[engine].format(tmp_path)
    rng = random.Random(engine)
    expected: dict[str, str | None] = {}  # record key -> the n of its record, None: no record
    for run in range(KILLS):
        pending: tuple[str, str | None] | None = None  # a step begun, not acknowledged
        for line in _kill_after([sys.executable, "-c", COLLECTIONS_CHILD, url, str(run)], rng):
            word, *rest = line.split()
            if word == "will" and len(rest) == 2:
                pending = (rest[0], None if rest[1] == "-" else rest[1])
            elif word == "ok" and pending is not None:
                expected[pending[0]] = pending[1]
                pending = None
            elif word == "no":
                pending = None
        with keyspace.open(url) as ks:
            users, log = _collections(ks)
            records = dict(users.items())
            by_email = list(users.index("email").items())
            assert sorted(k for k, _ in by_email) == sorted(records)
            assert all(records[k] == v for k, v in by_email)
            assert len({v["email"] for v in records.values()}) == len(records)
            for team in ("t0", "t1", "t2", "t3"):
                members = sorted(k for k, _ in users.index("team").prefix(team).items())
                assert members == sorted(k for k, v in records.items() if v["team"] == team)
            items = list(log)
            assert len(items) == len(log) and None not in items
            state = {k: v["n"] for k, v in records.items()}
            if pending is not None:  # committed or not: either is whole
                key, n = pending
                assert state.get(key) in (expected.get(key), n)
                expected[key] = state.get(key)
            assert state == {k: n for k, n in expected.items() if n is not None}


def test_killed_scoped_heed_first_writes_leave_no_unregistered_keys(tmp_path: Path) -> None:
    rng = random.Random("scoped-heed")
    env = tmp_path / "env"
    acked: set[str] = set()
    for run in range(KILLS):
        lines = _kill_after([sys.executable, "-c", HEED_CHILD, str(env), str(run)], rng)
        acked |= {f"r{run}-s{line[4:]}" for line in lines if re.fullmatch(r"ack \d+", line)}
        with scoped_heed.open(env, "db", readonly=True) as ks:
            names = set(ks.scope_names())
            assert acked <= names
            for name in names:
                assert dict(ks.scope(name).items()) == {b"k%03d" % i: b"v" for i in range(50)}
            # every key of the named scopes lies under a registered hash
            registered = {ks.scheme.prefix((name,)) for name in names}
            for stored, _ in ks.store.scan(b"\x01", b"\x02"):
                assert stored[:5] in registered, stored
