"""Child process of test_concurrency.

Usage::

    python _concurrency_worker.py writer URL INDEX DURATION GO_FILE
    python _concurrency_worker.py reader URL WRITERS DURATION GO_FILE
    python _concurrency_worker.py open URL

A writer or reader prints ``ready``, waits for ``GO_FILE`` to exist (at most
``START_LIMIT_S``), then works for ``DURATION`` seconds:

- writer ``i``: each round is one transaction that adds item ``n`` to scope
  ``("conc", i, "items")`` and sets ``("conc", i)[b"count"]`` to ``n + 1``, then
  one plain put of ``n`` into ``("conc", i, "plain")``; prints ``done N`` (rounds
  acknowledged) at the end.
- reader: repeatedly, inside a snapshot (every fourth round inside a
  transaction), checks for every writer that the count equals the number of items
  and that the items are exactly ``0 .. count-1``; prints ``checks C distinct D
  violations V`` (D: how many different total counts it saw) and each violation.

``open`` tries to open the store and prints ``opened`` or ``error CLASSES | MESSAGE``
(CLASSES: the exception's class names, most derived first).
"""

from __future__ import annotations

import os
import sys
import time

START_LIMIT_S = 60.0


def _wait_for(go_file: str) -> None:
    print("ready", flush=True)
    deadline = time.monotonic() + START_LIMIT_S
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            sys.exit("no go signal")
        time.sleep(0.01)


def writer(url: str, index: int, duration: float, go_file: str) -> None:
    import keyspace

    with keyspace.open(url) as ks:
        _wait_for(go_file)
        deadline = time.monotonic() + duration
        n = 0
        while time.monotonic() < deadline:
            with ks.transaction() as tx:
                tx.scope("conc", index, "items")[n] = f"{index}:{n}".encode()
                tx.scope("conc", index)[b"count"] = str(n + 1).encode()
            ks.scope("conc", index, "plain")[n] = b"p"
            n += 1
    print(f"done {n}", flush=True)


def reader(url: str, writers: int, duration: float, go_file: str) -> None:
    import keyspace

    checks = 0
    totals: set[int] = set()
    violations: list[str] = []
    with keyspace.open(url) as ks:
        _wait_for(go_file)
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            view = ks.transaction() if checks % 4 == 3 else ks.snapshot()
            total = 0
            with view as snap:
                for i in range(writers):
                    count = int(snap.scope("conc", i).get(b"count", b"0"))
                    items = list(snap.scope("conc", i, "items").keys())
                    if items != list(range(count)):
                        violations.append(f"writer {i}: count {count}, {len(items)} items")
                    total += count
            totals.add(total)
            checks += 1
    print(f"checks {checks} distinct {len(totals)} violations {len(violations)}", flush=True)
    for line in violations[:10]:
        print(line, flush=True)


def try_open(url: str) -> None:
    import keyspace

    try:
        ks = keyspace.open(url)
    except Exception as exc:
        names = ",".join(c.__name__ for c in type(exc).__mro__)
        print(f"error {names} | {exc}", flush=True)
        return
    ks.close()
    print("opened", flush=True)


def main() -> None:
    role, url, *rest = sys.argv[1:]
    if role == "writer":
        writer(url, int(rest[0]), float(rest[1]), rest[2])
    elif role == "reader":
        reader(url, int(rest[0]), float(rest[1]), rest[2])
    elif role == "open":
        try_open(url)
    else:
        sys.exit(f"unknown role {role!r}")


if __name__ == "__main__":
    main()
