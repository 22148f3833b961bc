"""Child process of test_lmdb_growth.

Usage::

    python _growth_worker.py writer PATH INDEX COUNT GO_FILE
    python _growth_worker.py reader PATH WRITERS COUNT GO_FILE

Both open the LMDB store at PATH with a small map (``map_size=256 KiB``), print
``ready`` and wait for GO_FILE (at most 60 s).

- writer ``i`` puts COUNT values of 4 KiB into scope ``("w", i)``, each an
  acknowledged plain put (the map grows many times), and prints ``done COUNT``.
- reader: until every writer's scope holds COUNT keys (at most 60 s), reads every
  writer's scope (a scan and a point read of the last key seen) and, every fifth
  round, opens the store again; prints ``reads R errors E`` and each error.
"""

from __future__ import annotations

import os
import sys
import time

MAP = 256 << 10


def _wait_for(go_file: str) -> None:
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            sys.exit("no go signal")
        time.sleep(0.01)


def writer(path: str, index: int, count: int, go_file: str) -> None:
    import keyspace

    with keyspace.open(path, map_size=MAP) as ks:
        _wait_for(go_file)
        scope = ks.scope("w", index)
        for n in range(count):
            scope[b"%06d" % n] = bytes([n % 256]) * 4096
        print(f"done {count}", flush=True)


def reader(path: str, writers: int, count: int, go_file: str) -> None:
    import keyspace

    ks = keyspace.open(path, map_size=MAP)
    _wait_for(go_file)
    reads = 0
    errors: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            total = 0
            for i in range(writers):
                keys = list(ks.scope("w", i).keys())
                total += len(keys)
                if keys:
                    value = ks.scope("w", i).get(keys[-1])
                    if value != bytes([int(keys[-1]) % 256]) * 4096:
                        again = ks.store.get(ks.scope("w", i).prefix + b"\x01" + keys[-1] + b"\x00")
                        raise AssertionError(f"{keys[-1]!r}: {value!r:.20} then {again!r:.20}")
                reads += 1
            if reads % 5 == 0:
                ks.close()
                try:
                    ks = keyspace.open(path, map_size=MAP)  # an open while the map grows
                except Exception as exc:  # reported, and the reader stops
                    errors.append(f"open: {type(exc).__name__}: {exc}")
                    break
            if total == writers * count:
                break
        except Exception as exc:  # counted and reported
            errors.append(f"{type(exc).__name__}: {exc}")
            if len(errors) > 20:
                break
    ks.close()
    print(f"reads {reads} errors {len(errors)}", flush=True)
    for error in errors:
        print(error, flush=True)


if __name__ == "__main__":
    role, path, number, count, go = sys.argv[1:6]
    (writer if role == "writer" else reader)(path, int(number), int(count), go)
