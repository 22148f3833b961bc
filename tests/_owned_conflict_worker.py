"""Child process of the tests of operations that own their transaction
(tests/faults/test_owned_transaction_conflicts.py,
tests/collections/test_collection_conflict_retries.py).

Usage::

    python _owned_conflict_worker.py held MODE URL BIG READY_FILE DONE_FILE
    python _owned_conflict_worker.py meanwhile MODE URL READY_FILE DONE_FILE
    python _owned_conflict_worker.py race MODE URL COUNT BIG GO_FILE

``held``: one call of the operation ``MODE`` (below; ``BIG`` bytes where it
writes a value), made once, in a process whose first growth of an LMDB map
waits after creating ``READY_FILE`` until ``DONE_FILE`` exists (the window of
``_growth_conflict_worker``, in which the other process commits). Prints one
JSON line: ``outcome`` (``ok`` or the error's class name), ``result`` (the
operation's return value, shown), ``message``, and ``conflicts``: how many
times an LMDB transaction of this process ended with ``TransactionConflict``
(raised to the caller or not).

``meanwhile``: waits for ``READY_FILE``, makes the small competing call of
``MODE``, creates ``DONE_FILE`` and prints the same JSON line.

``race``: prints ``ready``, waits for ``GO_FILE``, then makes ``COUNT`` rounds
of ``MODE`` (``pop-setdefault`` or ``save-push``, below) without any retry of
its own, values of ``BIG/2`` to ``BIG`` bytes in the first rounds; prints one
JSON line: its ``tag`` (the start of its values), what each round returned and
the conflicts met inside.

Modes of ``held`` / ``meanwhile`` (the first process's operation fills the map):

- ``pop`` / ``popitem``: ``scope("c").pop(b"k", None)`` / ``scope("q").popitem()``
  in both (the test filled the map beforehand: it grows as the pop's
  transaction begins, before its reads);
- ``setdefault``: ``setdefault(b"k", BIG bytes)`` / ``setdefault(b"k", b"B")``;
- ``save`` / ``save-same``: ``IndexedMap.save`` of record ``"a"`` (``BIG`` bytes
  of it) / of record ``"b"``, with emails of their own / the same email;
- ``push``: ``Deque.push_back(BIG bytes)`` / ``push_back(b"B")``;
- ``deque-map``: the same on the deque of key ``"x"`` of a ``DequeMap``;
- ``item-update``: ``Item.update`` adding one to a count, the first with a
  value of ``BIG`` bytes;
- ``snapshot-update``: ``SnapshotMap.update`` of key ``"n"`` the same way, at
  heights 1 / 2;
- ``accounting-put``: a plain ``s[b"big"] = BIG bytes`` / ``s[b"small"] = b"1"``
  in a keyspace opened with ``accounting=True`` (whose writes read counters);
- ``append``: ``scope("c").append(BIG bytes)`` / ``append(b"1")`` in a keyspace
  opened with ``changes=True`` (an append reads the commit counter at its
  commit); returns the number of the commit it got;
- ``aio-setdefault`` / ``aio-pop`` / ``aio-tx-setdefault``: ``setdefault`` /
  ``pop`` through ``keyspace.aio`` / the first process's ``setdefault`` inside
  ``async with aks.transaction()``;
- ``tx-setdefault``, ``tx-save``, ``tx-push``: the first process makes its call
  inside ``with ks.transaction() as tx`` (``tx.scope``, ``using(tx)``); the
  second as in ``setdefault``, ``save-same``, ``push``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from typing import Any

from _growth_conflict_worker import EMAIL, WAIT_S, _hold_first_growth, _wait_file, users

START_LIMIT_S = 60.0
EARLY = 6
"""Rounds of ``race`` whose values are over the free space of a small map."""


def deque(ks: Any) -> Any:
    from keyspace.collections import Deque

    return Deque(ks.scope("app"), "queue", value="bytes")


def keyed_deque(ks: Any) -> Any:
    from keyspace.collections import DequeMap

    return DequeMap(ks.scope("app"), "queues", key="str", value="bytes").deque("x")


def _count_conflicts() -> list[int]:
    """Count the LMDB transactions of this process that end with a conflict."""
    from keyspace.errors import TransactionConflict
    from keyspace.stores.lmdb._txn import LMDBTransaction

    seen = [0]
    unchanged = LMDBTransaction._unchanged

    def counted(self: Any) -> None:
        try:
            unchanged(self)
        except TransactionConflict:
            seen[0] += 1
            raise

    LMDBTransaction._unchanged = counted  # type: ignore[method-assign]
    return seen


def _show(value: Any) -> Any:
    """A return value as JSON: bytes over 64 bytes by their length."""
    if isinstance(value, bytes):
        return f"{len(value)} bytes" if len(value) > 64 else value.decode("latin-1")
    if isinstance(value, tuple | list):
        return [_show(v) for v in value]
    return value


def _add(blob: str) -> Any:
    return lambda v: {"n": (0 if v is None else v["n"]) + 1, "blob": blob}


def _call(ks: Any, mode: str, blob: bytes, first: bool) -> Any:
    """The operation of ``mode``: the first process's (``first``) or the other's."""
    from keyspace.collections import Item, SnapshotMap

    if mode == "pop":
        return ks.scope("c").pop(b"k", None)
    if mode == "popitem":
        return ks.scope("q").popitem()
    if mode == "setdefault":
        return ks.scope("c").setdefault(b"k", blob if first else b"B")
    if mode in ("save", "save-same"):
        name = "a" if first else "b"
        email = EMAIL if mode == "save-same" else f"{name}@example.com"
        users(ks).save(name, {"email": email, "blob": blob.decode() if first else ""})
        return name
    if mode == "push":
        deque(ks).push_back(blob if first else b"B")
        return None
    if mode == "deque-map":
        keyed_deque(ks).push_back(blob if first else b"B")
        return None
    if mode == "item-update":
        return Item(ks.scope("app"), "count").update(_add(blob.decode() if first else ""))["n"]
    if mode == "snapshot-update":
        history = SnapshotMap(ks.scope("app"), "hist", "hist__cp", "hist__log", key="str")
        return history.update("n", _add(blob.decode() if first else ""), 1 if first else 2)["n"]
    if mode == "accounting-put":
        ks.scope("c")[b"big" if first else b"small"] = blob if first else b"1"
        return None
    if mode == "append":
        stamp = ks.scope("c").append(blob if first else b"1")
        return int.from_bytes(stamp.tr_version[:8], "big")
    if mode.startswith("aio-"):
        what = mode[4:] if first else mode[4:].removeprefix("tx-")
        return asyncio.run(_aio(ks.url, what, blob if first else b"B"))
    if mode.startswith("tx-"):
        if not first:
            return _call(ks, {"save": "save-same"}.get(mode[3:], mode[3:]), blob, first)
        with ks.transaction() as tx:
            if mode == "tx-setdefault":
                return tx.scope("c").setdefault(b"k", blob)
            if mode == "tx-save":
                users(ks).using(tx).save("a", {"email": EMAIL, "blob": blob.decode()})
                return "a"
            if mode == "tx-push":
                deque(ks).using(tx).push_back(blob)
                return None
    sys.exit(f"unknown mode {mode!r}")


async def _aio(url: str, what: str, value: bytes) -> Any:
    import keyspace.aio

    aks = await keyspace.aio.open(url)
    try:
        scope = aks.scope("c")
        if what == "tx-setdefault":
            async with aks.transaction() as tx:
                return await tx.scope("c").setdefault(b"k", value)
        if what == "setdefault":
            return await scope.setdefault(b"k", value)
        return await scope.pop(b"k", None)
    finally:
        await aks.close()


def _outcome(ks: Any, mode: str, blob: bytes, first: bool, seen: list[int]) -> dict[str, Any]:
    from keyspace.errors import KeyspaceError

    try:
        result = _call(ks, mode, blob, first)
    except KeyspaceError as exc:
        return {"outcome": type(exc).__name__, "result": None, "message": str(exc), "conflicts": seen[0]}
    return {"outcome": "ok", "result": _show(result), "message": "", "conflicts": seen[0]}


def held(mode: str, url: str, big: int, ready: str, done: str) -> None:
    import keyspace

    _hold_first_growth(ready, done)
    seen = _count_conflicts()
    with keyspace.open(url) as ks:
        report = _outcome(ks, mode, b"x" * big, True, seen)
    print(json.dumps(report), flush=True)


def meanwhile(mode: str, url: str, ready: str, done: str) -> None:
    import keyspace

    seen = _count_conflicts()
    with keyspace.open(url) as ks:
        if not _wait_file(ready, WAIT_S):
            sys.exit("the held process never grew its map")
        report = _outcome(ks, mode, b"", False, seen)
    open(done, "w").close()
    print(json.dumps(report), flush=True)


def race(mode: str, url: str, count: int, big: int, go_file: str) -> None:
    """Rounds of two operations on shared keys, each owning its transaction:
    ``pop-setdefault`` (``setdefault`` of key ``i`` to a value of this process's,
    the values kept, so that the map grows again and again; once every key is
    set, ``pop`` of each key: returns both) or ``save-push`` (``save`` of a record
    of this process's with the email of round ``i`` whoever else holds it, then a
    ``push_back`` of the record's name: returns ``saved`` or the error's name)."""
    import keyspace
    from keyspace.errors import UniqueViolation

    seen = _count_conflicts()
    sizes = random.Random(os.getpid())
    tag = f"p{os.getpid()}"
    rounds: list[Any] = []
    with keyspace.open(url) as ks:
        print("ready", flush=True)
        if not _wait_file(go_file, START_LIMIT_S):
            sys.exit("no go signal")
        scope, indexed, queue = ks.scope("c"), users(ks), deque(ks)
        for i in range(count):
            pad = "x" * (sizes.randrange(big >> 1, big) if i < EARLY else 64)
            key = b"%d" % i
            if mode == "pop-setdefault":
                got = scope.setdefault(key, f"{tag}:{pad}".encode())
                rounds.append([_show(got.split(b":")[0]), None])
            elif mode == "save-push":
                name = f"{tag}-{i}"
                try:
                    indexed.save(name, {"email": f"{i}@example.com", "blob": pad})
                    saved = "saved"
                except UniqueViolation:
                    saved = "UniqueViolation"
                queue.push_back(name.encode())
                rounds.append([name, saved])
            else:
                sys.exit(f"unknown mode {mode!r}")
        if mode == "pop-setdefault":
            for i in range(count):
                popped = scope.pop(b"%d" % i, None)
                rounds[i][1] = None if popped is None else _show(popped.split(b":")[0])
    print(json.dumps({"tag": tag, "rounds": rounds, "conflicts": seen[0]}), flush=True)


# -- used by the tests --------------------------------------------------------

TIMEOUT_S = 60.0
WORKER = os.path.abspath(__file__)


def fill_map(path: str, map_size: int) -> int:
    """Fill the LMDB environment at ``path`` (map ``map_size``) with keys of a
    scope ``("fill",)`` until no value fits any more, so that a later write or
    delete grows the map. How many keys were written."""
    import lmdb

    from keyspace.tuples import pack

    env = lmdb.open(path, map_size=map_size, subdir=True)
    written, size = 0, 4096
    try:
        while size >= 16:
            try:
                with env.begin(write=True) as txn:
                    txn.put(pack((("fill",), written)), b"f" * size)
                written += 1
            except lmdb.MapFullError:
                size >>= 1
    finally:
        env.close()
    return written


def held_race(tmp: str, url: str, mode: str, big: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run ``held`` and ``meanwhile`` of ``mode`` on ``url`` (files in ``tmp``):
    the first process's first map growth waits until the other committed.
    Both reports."""
    from _workers import run_together

    ready, done = os.path.join(tmp, "ready"), os.path.join(tmp, "done")
    outputs = run_together(
        [[WORKER, "held", mode, url, str(big), ready, done], [WORKER, "meanwhile", mode, url, ready, done]],
        timeout=TIMEOUT_S,
    )
    first: dict[str, Any] = json.loads(outputs[0])
    second: dict[str, Any] = json.loads(outputs[1])
    return first, second


def races(tmp: str, url: str, mode: str, count: int, big: int, processes: int = 2) -> list[dict[str, Any]]:
    """Run ``race`` of ``mode`` in ``processes`` processes started together on
    ``url``; their reports."""
    from _workers import run_together

    go = os.path.join(tmp, "go")
    argv = [WORKER, "race", mode, url, str(count), str(big), go]
    return [json.loads(out) for out in run_together([argv] * processes, timeout=TIMEOUT_S, go=go)]


def main() -> None:
    role, *rest = sys.argv[1:]
    if role == "held":
        held(rest[0], rest[1], int(rest[2]), rest[3], rest[4])
    elif role == "meanwhile":
        meanwhile(rest[0], rest[1], rest[2], rest[3])
    elif role == "race":
        race(rest[0], rest[1], int(rest[2]), int(rest[3]), rest[4])
    else:
        sys.exit(f"unknown role {role!r}")


if __name__ == "__main__":
    main()
