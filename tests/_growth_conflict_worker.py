"""Child process of tests/stores/test_lmdb_growth_conflicts.py.

Usage::

    python _growth_conflict_worker.py increments URL COUNT BIG GO_FILE
    python _growth_conflict_worker.py held MODE URL BIG READY_FILE DONE_FILE
    python _growth_conflict_worker.py meanwhile MODE URL READY_FILE DONE_FILE
    python _growth_conflict_worker.py committer   (paths on stdin)

``increments``: prints ``ready``, waits for ``GO_FILE`` (at most
``START_LIMIT_S``), then commits ``COUNT`` increments of the counter ``("c",)
[b"n"]``, each one transaction that reads the counter, writes a value under a
key of its own (the first ``EARLY`` of ``BIG/2`` to ``BIG`` bytes, which fill a
small map inside the transaction, so that it grows while the other process may
commit; then 1 KiB) and writes the counter plus one. A transaction that
raises ``TransactionConflict`` (nothing of it written) is run again, at most
``ATTEMPTS`` times. Prints ``done COMMITTED CONFLICTS``.

``held``: one operation (``MODE``, below) that fills the map, in a process whose
first growth of the map waits (at most ``WAIT_S``) after creating ``READY_FILE``
until ``DONE_FILE`` exists: the window in which the map grows with LMDB's writer
lock released, held open long enough for ``meanwhile`` to commit in it. A
``TransactionConflict`` runs the operation again (at most ``ATTEMPTS`` times).
Prints one JSON line: ``outcome`` (``ok`` or the error's class name),
``conflicts``, ``message``.

``meanwhile``: waits for ``READY_FILE`` (at most ``WAIT_S``), makes the small
write of ``MODE``, creates ``DONE_FILE`` and prints ``done``.

``committer``: for each path read, one commit of ``COMMITTED`` to the LMDB store
there; prints ``ok`` after each.

Modes (``held`` / ``meanwhile``):

- ``increment``: read the counter, write ``BIG`` bytes and the counter plus one /
  the same increment without the big value;
- ``blind``: write ``BIG`` bytes under ``b"big"``, reading nothing / write
  ``b"other"``;
- ``unique``: save record ``"a"`` (``BIG`` bytes of it) with the email
  ``EMAIL`` in an ``IndexedMap`` with a unique email index, inside
  ``ks.transaction()`` / save record ``"b"`` with the same email;
- ``scheme``: the first write of a tuple-scheme keyspace on an empty store
  (``BIG`` bytes, outside any transaction) / the first write of a
  length-prefixed keyspace on it;
- ``aio-scheme``: the same first write through ``keyspace.aio`` / as
  ``scheme``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from typing import Any

START_LIMIT_S = 60.0
COMMITS = 1000
COMMITTED = {b"k0": b"10", b"other": b"B"}
"""What ``committer`` writes."""
WAIT_S = 30.0
ATTEMPTS = 50
EARLY = 8
"""Increments of ``increments`` that write a value of ``BIG/2`` to ``BIG`` bytes
(the rest: 1 KiB): over the free space of a small new map."""
EMAIL = "e@example.com"


def _wait_file(path: str, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def users(ks: Any) -> Any:
    from keyspace.collections import IndexedMap, UniqueIndex

    return IndexedMap(
        ks.scope("app"),
        "users",
        key="str",
        indexes={"email": UniqueIndex(lambda u: u["email"], "users__email", key="str")},
    )


def _increment(ks: Any, big: int, tag: bytes) -> None:
    with ks.transaction() as tx:
        counter = tx.scope("c")
        n = int(counter.get(b"n", b"0"))
        if big:
            counter[b"big-" + tag] = b"x" * big
        counter[b"n"] = str(n + 1).encode()


def increments(url: str, count: int, big: int, go_file: str) -> None:
    import keyspace
    from keyspace.errors import TransactionConflict

    committed = conflicts = 0
    sizes = random.Random(os.getpid())  # each process its own sizes
    with keyspace.open(url) as ks:
        print("ready", flush=True)
        if not _wait_file(go_file, START_LIMIT_S):
            sys.exit("no go signal")
        for i in range(count):
            size = sizes.randrange(big >> 1, big) if i < EARLY else 1 << 10
            for _attempt in range(ATTEMPTS):
                try:
                    _increment(ks, size, f"{os.getpid()}-{i}".encode())
                except TransactionConflict:
                    conflicts += 1
                    continue
                committed += 1
                break
            else:
                sys.exit(f"increment {i} met {ATTEMPTS} conflicts")
    print(f"done {committed} {conflicts}", flush=True)


def _hold_first_growth(ready: str, done: str) -> None:
    """Make this process's first growth of an LMDB map wait for ``done``."""
    from keyspace.stores.lmdb import LMDBStore

    grow = LMDBStore._grow
    held: list[bool] = []

    def held_grow(self: Any, *args: Any, **kwargs: Any) -> None:
        if not held:
            held.append(True)
            open(ready, "w").close()
            _wait_file(done, WAIT_S)
        grow(self, *args, **kwargs)

    LMDBStore._grow = held_grow  # type: ignore[method-assign]


def held(mode: str, url: str, big: int, ready: str, done: str) -> None:
    import keyspace
    from keyspace.errors import KeyspaceError, TransactionConflict

    _hold_first_growth(ready, done)
    blob = b"x" * big
    conflicts = 0
    outcome, message = "ok", ""
    with keyspace.open(url, scheme="tuple" if mode.endswith("scheme") else None) as ks:
        for _attempt in range(ATTEMPTS):
            try:
                if mode == "increment":
                    _increment(ks, big, b"held")
                elif mode == "blind":
                    with ks.transaction() as tx:
                        tx.scope("c")[b"big"] = blob
                elif mode == "unique":
                    indexed = users(ks)
                    with ks.transaction() as tx:
                        indexed.using(tx).save("a", {"email": EMAIL, "blob": "x" * big})
                elif mode == "scheme":
                    ks.scope("c")[b"big"] = blob
                elif mode == "aio-scheme":
                    asyncio.run(_aio_first_write(url, blob))
                else:
                    sys.exit(f"unknown mode {mode!r}")
            except TransactionConflict:
                conflicts += 1
                continue
            except KeyspaceError as exc:
                outcome, message = type(exc).__name__, str(exc)
            break
    print(json.dumps({"outcome": outcome, "conflicts": conflicts, "message": message}), flush=True)


async def _aio_first_write(url: str, blob: bytes) -> None:
    import keyspace.aio

    ks = await keyspace.aio.open(url, scheme="tuple")
    try:
        await ks.scope("c").put(b"big", blob)
    finally:
        await ks.close()


def meanwhile(mode: str, url: str, ready: str, done: str) -> None:
    import keyspace

    if mode == "aio-scheme":
        mode = "scheme"
    with keyspace.open(url, scheme="length-prefixed" if mode == "scheme" else None) as ks:
        if not _wait_file(ready, WAIT_S):
            sys.exit("the held process never grew its map")
        if mode == "increment":
            _increment(ks, 0, b"meanwhile")
        elif mode == "blind":
            ks.scope("c")[b"other"] = b"1"
        elif mode == "unique":
            users(ks).save("b", {"email": EMAIL, "blob": ""})
        elif mode == "scheme":
            ks.scope("c")[b"small"] = b"1"
        else:
            sys.exit(f"unknown mode {mode!r}")
    open(done, "w").close()
    print("done", flush=True)


def committer() -> None:
    """For each line read (an LMDB environment's path, at most ``COMMITS``
    lines): commit ``COMMITTED`` to it in one write, then print ``ok``."""
    from keyspace.stores.lmdb import LMDBStore

    for _ in range(COMMITS):
        path = sys.stdin.readline().strip()
        if not path:
            return
        store = LMDBStore(path, map_size=64 << 10)
        try:
            store.write(list(COMMITTED.items()))
        finally:
            store.close()
        print("ok", flush=True)


def main() -> None:
    role, *rest = sys.argv[1:]
    if role == "committer":
        committer()
    elif role == "increments":
        increments(rest[0], int(rest[1]), int(rest[2]), rest[3])
    elif role == "held":
        held(rest[0], rest[1], int(rest[2]), rest[3], rest[4])
    elif role == "meanwhile":
        meanwhile(rest[0], rest[1], rest[2], rest[3])
    else:
        sys.exit(f"unknown role {role!r}")


if __name__ == "__main__":
    main()
