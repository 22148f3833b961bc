"""Processes for the change-feed tests: ``writer URL N SEED`` makes N mixed puts,
deletes and transactions across scopes ``s0``..``s3`` (then puts ``done`` in
``s0``); ``consumer URL`` reads the feed ``w`` of scope ``s0`` and records each
change, with its acknowledgement, in one transaction (scope ``seen``: key
``(revision, index)``; a change recorded twice counts in ``dups``) until it sees
``done``; ``appender URL N TAG`` appends N values to scope ``log``."""

from __future__ import annotations

import random
import sys

import keyspace
from keyspace.tuples import pack

SCOPES = ["s0", "s1", "s2", "s3"]


def plan(n: int, seed: int) -> list[list[tuple[str, bytes, bytes | None]]]:
    """The writer's commits: lists of (scope, key, value or None for a delete)."""
    rng = random.Random(seed)
    commits: list[list[tuple[str, bytes, bytes | None]]] = []
    made = 0
    while made < n:
        size = 1 if rng.random() < 0.7 else rng.randint(2, 5)
        ops = []
        for _ in range(size):
            scope = rng.choice(SCOPES)
            key = b"k%d" % rng.randrange(40)
            value = None if rng.random() < 0.35 else b"v%d" % made
            ops.append((scope, key, value))
            made += 1
        commits.append(ops)
    commits.append([("s0", b"done", b"1")])
    return commits


def writer(url: str, n: int, seed: int) -> None:
    with keyspace.open(url, changes=True) as ks:
        for ops in plan(n, seed):
            if len(ops) == 1:
                scope, key, value = ops[0]
                ks.scope(scope).discard(key) if value is None else ks.scope(scope).__setitem__(key, value)
                continue
            with ks.transaction() as tx:
                for scope, key, value in ops:
                    s = tx.scope(scope)
                    s.discard(key) if value is None else s.__setitem__(key, value)


def consumer(url: str) -> None:
    with keyspace.open(url, changes=True) as ks:
        feed = ks.feed("w", ("s0",))
        if b"done" in ks.scope("finished"):  # an earlier consumer read to the end
            return
        for _ in range(100_000):  # bounded: the test kills or waits at most its own timeout
            batch = feed.read(limit=50, timeout=0.5)
            if not batch:
                continue
            with ks.transaction() as tx:
                seen, dups = tx.scope("seen"), tx.scope("dups")
                index: dict[int, int] = {}
                for event in batch:
                    at = index[event.revision] = index.get(event.revision, -1) + 1
                    key = pack((event.revision, at))
                    if key in seen:
                        dups[key] = b"1"
                    seen[key] = pack((event.kind, event.key, event.value))
                finished = any(e.key == b"done" for e in batch)
                if finished:
                    tx.scope("finished")[b"done"] = b"1"
                feed.ack(batch[-1].revision, tx=tx)
            if finished:
                return


def appender(url: str, n: int, tag: str) -> None:
    with keyspace.open(url, changes=True) as ks:
        log = ks.scope("log")
        for i in range(n):
            log.append(f"{tag}-{i}".encode())


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "writer":
        writer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif role == "consumer":
        consumer(sys.argv[2])
    elif role == "appender":
        appender(sys.argv[2], int(sys.argv[3]), sys.argv[4])
