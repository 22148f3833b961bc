"""Child process of tests/stores/test_first_open_race.py: one contender for many
rounds of two processes opening one new store at once.

Usage: ``python _first_open_worker.py``. It imports keyspace once, then for each
line ``URL SCHEME NAME`` read from stdin it prints ``ready``, waits for the line
``go``, opens ``URL`` with ``SCHEME``, writes ``NAME`` into the scope ``race``,
closes, and prints one line: ``ok``, ``mismatch`` (:class:`SchemeMismatch` from
the open or the write) or ``error CLASS: MESSAGE``. Ends at end of input; a
worker still running after :data:`STUCK_S` seconds dumps its stacks and exits.
"""

from __future__ import annotations

import faulthandler
import sys

import keyspace
from keyspace.errors import SchemeMismatch

STUCK_S = 120


def _round(url: str, scheme: str, name: str) -> str:
    try:
        ks = keyspace.open(url, scheme=scheme)
        try:
            ks.scope("race")[name.encode()] = scheme.encode()
        finally:
            ks.close()
    except SchemeMismatch:
        return "mismatch"
    except Exception as exc:
        text = " ".join(str(exc).split())
        return f"error {type(exc).__name__}: {text}"
    return "ok"


def main() -> None:
    faulthandler.dump_traceback_later(STUCK_S, exit=True)
    for line in sys.stdin:
        url, scheme, name = line.split()
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            return
        print(_round(url, scheme, name), flush=True)


if __name__ == "__main__":
    main()
