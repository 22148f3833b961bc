"""Child process of test_crash_atomicity: writes multi-scope transactions until killed.

Usage: ``python _crash_writer.py URL RUN``. Prints ``ready`` once imported, waits
for a line on stdin (at most ``LIMIT_S``), opens the store, prints ``writing``,
then ``ack ID`` after each committed transaction. Transaction ``ID`` writes
``KEYS_PER_SCOPE`` keys ``(ID, j)`` into each scope of ``SCOPES``, deletes every key
of the transaction three before it, and records ``digest(items)`` at ``SUMS[ID]``.
Stops by itself after ``LIMIT_S`` seconds so that it is bounded even if nobody
kills it.
"""

from __future__ import annotations

import hashlib
import importlib
import random
import select
import sys
import time
from typing import Any

SCOPES: tuple[tuple[Any, ...], ...] = (
    ("crash", "alpha"),
    ("crash", "beta", b"\x00\xff"),
    ("crash", 3, None, "gamma"),
)
SUMS: tuple[Any, ...] = ("crash", "sums")
KEYS_PER_SCOPE = 3
LIMIT_S = 30.0


def txn_id(run: int, seq: int) -> str:
    return f"{run:03d}.{seq:06d}"


def digest(entries: dict[tuple[int, int], bytes]) -> str:
    """Checksum of one transaction's items: ``(scope index, j) -> value``."""
    h = hashlib.sha256()
    for (index, j), value in sorted(entries.items()):
        h.update(f"{index}:{j}:{len(value)}:".encode())
        h.update(value)
    return f"{len(entries)}:{h.hexdigest()}"


def main() -> None:
    import keyspace

    url, run = sys.argv[1], int(sys.argv[2])
    engine = url.partition(":")[0]
    importlib.import_module(f"keyspace.stores.{engine}")  # import before "ready"
    rng = random.Random(run)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    if not select.select([sys.stdin], [], [], LIMIT_S)[0] or not sys.stdin.readline():
        return  # nobody started us: end quietly
    deadline = time.monotonic() + LIMIT_S
    ks = keyspace.open(url)
    out.write("writing\n")
    out.flush()
    seq = 0
    while time.monotonic() < deadline:
        tid = txn_id(run, seq)
        entries: dict[tuple[int, int], bytes] = {}
        with ks.transaction() as tx:
            for index, path in enumerate(SCOPES):
                scope = tx.scope(*path)
                for j in range(KEYS_PER_SCOPE):
                    value = rng.randbytes(rng.randrange(1, 1500))
                    scope[(tid, j)] = value
                    entries[index, j] = value
                if seq >= 3:
                    old = txn_id(run, seq - 3)
                    for j in range(KEYS_PER_SCOPE):
                        scope.discard((old, j))
            sums = tx.scope(*SUMS)
            sums[tid] = digest(entries).encode()
            if seq >= 3:
                sums.discard(txn_id(run, seq - 3))
        out.write(f"ack {tid}\n")
        out.flush()
        seq += 1
    ks.close()


if __name__ == "__main__":
    main()
