"""The command and the library as a user starts them: each measured in a fresh
process, wall time, start-up included (the best of a few runs, as the machine's
noise only ever adds).

Rows: ``import keyspace`` and ``keyspace --help`` against a budget (ms), and
``keyspace inspect`` of a store of 300,000 keys against a script that reads the
same store with py-lmdb alone (a full scan, counting keys and bytes).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import keyspace

from . import _data
from ._engines import Fresh, load_raw
from ._harness import Comparison, Context, Ratio, Target, workload
from ._process import RAW_SCAN, command, user_env, wall_ms


@workload("startup")
def startup(ctx: Context) -> Iterator[Comparison]:
    """``import keyspace``, ``keyspace --help`` and ``keyspace inspect``, each a fresh process."""
    runs = ctx.n(9, 1)
    python = sys.executable
    env = user_env(ctx)
    bare = wall_ms([python, "-c", "pass"], runs, env)
    ctx.note(f"a bare interpreter (python -c pass) starts in {bare:.0f} ms here")
    imported = wall_ms([python, "-c", "import keyspace"], runs, env)
    yield Comparison(
        "startup",
        "import keyspace",
        {},
        [Ratio("import keyspace, a fresh process (s)", "keyspace", "1 s", Target(0.05, text="≤ 0.05 s"))],
        measured={"keyspace": imported, "1 s": 1000.0},
        unit="ms",
    )
    helped = wall_ms([*command(), "--help"], runs, env)
    yield Comparison(
        "startup",
        "keyspace --help",
        {},
        [Ratio("keyspace --help, a fresh process (s)", "keyspace", "1 s", Target(0.10, text="≤ 0.10 s"))],
        measured={"keyspace": helped, "1 s": 1000.0},
        unit="ms",
    )

    # a tuple store of `total` keys in 100 tenants of three scopes, written by keyspace
    total = ctx.n(300_000, 3_000)
    per = total // 300
    d = Fresh()
    ctx.defer(d.remove)
    keys = _data.keys(per)
    with keyspace.open(f"lmdb://{d.path}/db", scheme="tuple") as ks, ks.transaction() as tx:
        for t in range(100):
            for name in _data.TENANT_SCOPES:
                tx.scope(f"tenant{t:03d}", name).update({k: _data.VALUE for k in keys})
    inspected = wall_ms([*command(), "inspect", f"{d.path}/db"], runs, env)
    scanned = wall_ms([python, "-c", RAW_SCAN, f"{d.path}/db"], runs, env)
    yield Comparison(
        "startup",
        "keyspace inspect as a command",
        {},
        [
            Ratio(
                f"keyspace inspect of {per * 300:,} keys as a command vs a raw full-scan script",
                "keyspace",
                "py-lmdb script",
                Target(3.0),
            )
        ],
        measured={"keyspace": inspected, "py-lmdb script": scanned},
        unit="ms",
    )

    # the same keys loaded with py-lmdb alone (no record of keyspace's), the scheme named
    other = Fresh()
    ctx.defer(other.remove)
    url = load_raw("lmdb", other.path, _data.tenant_pairs(per))
    inspected = wall_ms([*command(), "inspect", url, "--scheme", "tuple"], runs, env)
    scanned = wall_ms([python, "-c", RAW_SCAN, f"{other.path}/db"], runs, env)
    yield Comparison(
        "startup",
        "keyspace inspect as a command, a store written by others",
        {},
        [
            Ratio(
                f"keyspace inspect --scheme tuple of {per * 300:,} keys written by others, as a command "
                "vs a raw full-scan script",
                "keyspace",
                "py-lmdb script",
                Target(3.0),
            )
        ],
        measured={"keyspace": inspected, "py-lmdb script": scanned},
        unit="ms",
    )
