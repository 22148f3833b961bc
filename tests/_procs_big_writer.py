"""Child process of tests/faults/test_kill_first_writes.py: large first writes until killed.

Usage: ``python _procs_big_writer.py URL SCHEME MODE RUN``. Prints ``writing``
once the store is open, then ``ack NAME`` after each committed write. Write
``n`` is the first write of a new scope ``scope_path(SCHEME, RUN, n)``: ``KEYS``
keys through one ``update()`` (MODE ``update``) or one transaction (MODE
``transaction``), so that it carries the scheme record (the first one), the
name's registry entry (ScopeHash) or the leaf's layout record (LengthPrefixed)
with its data. Stops by itself after ``LIMIT_S`` seconds.
"""

from __future__ import annotations

import sys
import time
from typing import Any

KEYS = 4000
LIMIT_S = 20.0


def scope_path(scheme: str, run: int, n: int) -> tuple[Any, ...]:
    name = f"r{run:02d}n{n:04d}"
    return (name,) if scheme == "scopehash" else (b"big", name.encode())


def value(path: tuple[Any, ...], i: int) -> bytes:
    return repr((path, i)).encode() * 8


def main() -> None:
    import keyspace

    url, scheme, mode, run = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    ks = keyspace.open(url, scheme=scheme)
    print("writing", flush=True)
    deadline = time.monotonic() + LIMIT_S
    n = 0
    while time.monotonic() < deadline:
        path = scope_path(scheme, run, n)
        items = {b"k%05d" % i: value(path, i) for i in range(KEYS)}
        if mode == "update":
            ks.scope(*path).update(items)
        else:
            with ks.transaction() as tx:
                scope = tx.scope(*path)
                for k, v in items.items():
                    scope[k] = v
        print(f"ack {n}", flush=True)
        n += 1
    ks.close()


if __name__ == "__main__":
    main()
