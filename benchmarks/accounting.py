"""Accounting on LMDB: what keeping per-scope counts costs writes, and what it
saves reads.

- a transaction of 1,000 puts into one scope, with ``accounting=True`` against
  without (target ≤ 1.15×): the counters cost one record per touched scope and
  ancestor per commit, plus one point read per changed key (its old size); a
  trial is eight such transactions of new keys one after the other on a fresh
  store (a median one transaction's brief stall moves less), timed per put;
- 1,000 single puts, each its own commit, with against without, with
  ``sync=False`` (no fsync: the counters' own work against the engine's; no
  target, see below);
- the floor of that single put: the same three counter records read and
  written by hand with py-lmdb in each commit, against a plain put by hand
  (no target: what any program keeping such counts pays), and accounting
  against it;
- the transaction and the single puts again with LMDB's default durability
  (an fsync per commit), as a keyspace opened without options writes: the
  single put's target (≤ 1.3×) is this row's. Without the fsync the target
  lies below the floor by hand (three counter records cost a py-lmdb put
  about 1.6× on their own), so no program keeping counts in the commit meets
  it; that row is reported beside it;
- ``len()`` of a scope of 10^6 keys with accounting (≤ 20 µs; the cursor count
  without it is reported beside);
- the scope tree ``keyspace inspect`` shows, of that store (1.1 × 10^6 keys: the
  scope of 10^6 and 1,000 scopes of 100), read from the kept counts (≤ 0.5 s;
  one scan of the store without accounting is reported beside).

On a store another program wrote (keys loaded with py-lmdb alone, the keyspace
opened with ``scheme="tuple"``), accounting turned on by ``keyspace accounting
enable``: the transaction of 1,000 new keys into a scope already holding
50,000 (≤ 1.15×), the same keys each its own commit (``sync=False``, no
target) and 200 of them with LMDB's default fsync per commit (≤ 1.3×), ``len()`` of
that scope (≤ 20 µs); and the commands as a user runs them, each a fresh
process, on a store of 300,000 keys in 300 scopes: ``keyspace accounting
enable`` against a py-lmdb script scanning the store, then ``keyspace inspect``
of the counted store (≤ 0.5 s).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator

import keyspace
from keyspace.cli import main as command_line
from keyspace.cli.inspect_cmd import counted_tree, kept_tree
from keyspace.keyspace import Keyspace

from . import _data
from ._engines import Fresh, load_raw, scope_written_by_others
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload
from ._process import RAW_SCAN, command, user_env, wall_ms
from ._writes import hand_written_single_puts, inserts, put_all, single_puts_into_others

_V = _data.VALUE
_PATH = ("tenant1", "users")


def _open(accounting: bool, sync: bool = False) -> tuple[Keyspace, Fresh]:
    d = Fresh()
    ks = keyspace.open(f"lmdb://{d.path}/db", sync=sync, accounting=accounting)
    ks.scope(*_PATH)[b"\x00first"] = _V  # scheme (and accounting) recorded before the timing
    return ks, d


def _writes(
    accounting: bool, keys: list[bytes], transaction: bool, sync: bool = False, size: int | None = None
) -> Factory:
    """``keys`` put on a fresh store (:func:`put_all`: in transactions of ``size``
    keys), accounting on or off; ``sync``: LMDB's default durability (an fsync
    per commit). Timed per put."""

    def make() -> Trial:
        ks, d = _open(accounting, sync)

        def close() -> None:
            ks.close()
            d.remove()

        return Trial(put_all(ks, _PATH, keys, transaction, size), len(keys), close)

    return make


def _big(ctx: Context, n: int, scopes: int, accounting: bool) -> Keyspace:
    """A keyspace of one scope of ``n`` keys and ``scopes`` scopes of ``n // 10`` keys in all."""
    d = Fresh()
    ks = keyspace.open(f"lmdb://{d.path}/db", sync=False, map_size=8 << 30, accounting=accounting)
    half = n
    per = max(1, n // 10 // scopes)
    with ks.transaction() as tx:
        big = tx.scope("big")
        for i in range(half):
            big[i.to_bytes(4, "big")] = _V
        for s in range(scopes):
            scope = tx.scope(f"tenant{s % 10}", f"s{s}")
            for i in range(per):
                scope[i.to_bytes(4, "big")] = _V
    ctx.defer(d.remove)
    ctx.defer(ks.close)
    return ks


def _best(fn: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter_ns() - t0)
    return best


@workload("accounting")
def accounting(ctx: Context) -> Iterator[Comparison]:
    """Accounting's cost on writes and gain on counts, LMDB."""
    keys = _data.keys(ctx.n(1_000, 100))
    size = len(keys)
    eight = _data.keys(8 * size, seed=3)  # eight transactions of new keys a trial
    yield Comparison(
        "account",
        "transaction of 1,000 puts into one scope",
        {
            "accounting": _writes(True, eight, True, size=size),
            "plain": _writes(False, eight, True, size=size),
        },
        [Ratio("tx of 1,000 puts: accounting vs not", "accounting", "plain", Target(1.15))],
        rounds=ctx.fine,
    )
    yield Comparison(
        "account",
        "single puts, each its own commit",
        {"accounting": _writes(True, keys, False), "plain": _writes(False, keys, False)},
        [Ratio("single put: accounting vs not (sync=False)", "accounting", "plain")],
        rounds=ctx.fine,
    )
    yield Comparison(
        "account",
        "single puts with three counter records written by hand",
        {
            "accounting": _writes(True, keys, False),
            "by hand": hand_written_single_puts(_PATH, keys, "counters"),
            "plain by hand": hand_written_single_puts(_PATH, keys, None),
        },
        [
            Ratio(
                "single put: three counter records by hand (py-lmdb) vs a plain put by hand",
                "by hand",
                "plain by hand",
            ),
            Ratio("single put: accounting vs the counter records by hand (py-lmdb)", "accounting", "by hand"),
        ],
        rounds=ctx.fine,
    )
    yield Comparison(
        "account",
        "transaction of 1,000 puts into one scope, fsync",
        {
            "accounting": _writes(True, eight, True, True, size),
            "plain": _writes(False, eight, True, True, size),
        },
        [Ratio("tx of 1,000 puts: accounting vs not (fsync)", "accounting", "plain", Target(1.15))],
        rounds=ctx.fine,
    )
    yield Comparison(
        "account",
        "single puts, each its own commit, fsync",
        {
            "accounting": _writes(True, keys[:200], False, True),
            "plain": _writes(False, keys[:200], False, True),
        },
        [Ratio("single put: accounting vs not (fsync)", "accounting", "plain", Target(1.3))],
        rounds=ctx.fine,
    )
    n = ctx.n(1_000_000, 2_000)
    counted = _big(ctx, n, ctx.n(1_000, 10), accounting=True)
    scope = counted.scope("big")
    assert len(scope) == n
    reps = 2_000
    per_len = _best(lambda: [len(scope) for _ in range(reps)], 5) / reps
    ctx.note(f"len() of a scope of {n:,} keys with accounting: {per_len / 1000:.2f} µs")
    yield Comparison(
        "account",
        f"len() of a scope of {n:,} keys",
        {},
        [Ratio("len() with accounting / 20 µs", "len()", "20 µs", Target(1.0, text="≤ 20 µs"))],
        measured={"len()": per_len, "20 µs": 20_000.0},
    )
    kept = _best(lambda: kept_tree(counted), 3)
    total = counted.stats().subtree_keys
    ctx.note(f"inspect tree of {total:,} keys from the kept counts: {kept / 1e6:.1f} ms")
    plain = _big(ctx, n, ctx.n(1_000, 10), accounting=False)
    plain_len = _best(lambda: len(plain.scope("big")), 3)
    scanned = _best(lambda: counted_tree(plain), 1)
    ctx.note(
        f"without accounting: len() of that scope {plain_len / 1e6:.2f} ms (a cursor count), "
        f"the inspect tree {scanned / 1e9:.2f} s (one scan)"
    )
    yield Comparison(
        "account",
        f"inspect of {total:,} keys with accounting",
        {},
        [Ratio("inspect with accounting / 0.5 s", "inspect", "0.5 s", Target(1.0, text="≤ 0.5 s"))],
        measured={"inspect": kept, "0.5 s": 5e8},
    )

    yield from _written_by_others(ctx)


def _written_by_others(ctx: Context) -> Iterator[Comparison]:
    """The rows above that apply to a store another program wrote."""
    many = ctx.n(50_000, 500)
    on_dir, off_dir = Fresh(), Fresh()
    ctx.defer(on_dir.remove)
    ctx.defer(off_dir.remove)
    on_url = scope_written_by_others(on_dir.path, _PATH, many)
    off_url = scope_written_by_others(off_dir.path, _PATH, many)
    if command_line(["accounting", "enable", on_url, "--scheme", "tuple"]) != 0:
        raise RuntimeError(f"keyspace accounting enable {on_url} failed")
    on = keyspace.open(on_url, scheme="tuple", sync=False)
    off = keyspace.open(off_url, scheme="tuple", sync=False)
    ctx.defer(on.close)
    ctx.defer(off.close)
    assert on.scope(*_PATH).stats().keys == many
    new = _data.keys(ctx.n(1_000, 100), seed=7)
    yield Comparison(
        "account",
        f"transaction of 1,000 puts into a scope of {many:,} keys written by others",
        {"accounting": inserts(on, _PATH, new), "plain": inserts(off, _PATH, new)},
        [
            Ratio(
                f"written by others: tx of 1,000 puts into a scope of {many:,} keys: accounting vs not",
                "accounting",
                "plain",
                Target(1.15),
            )
        ],
        rounds=ctx.fine,
    )
    opened = {"accounting": on, "plain": off}
    yield from single_puts_into_others(
        ctx,
        "account",
        f"single put into a scope of {many:,} keys: accounting vs not",
        opened,
        {"accounting": on_url, "plain": off_url},
        _PATH,
        new,
        1.3,
    )
    on = opened["accounting"]
    scope = on.scope(*_PATH)
    reps = 2_000
    per_len = _best(lambda: [len(scope) for _ in range(reps)], 5) / reps
    yield Comparison(
        "account",
        f"len() of a scope of {many:,} keys written by others",
        {},
        [
            Ratio(
                f"written by others: len() of {many:,} keys with accounting / 20 µs",
                "len()",
                "20 µs",
                Target(1.0, text="≤ 20 µs"),
            )
        ],
        measured={"len()": per_len, "20 µs": 20_000.0},
    )

    # the commands, each a fresh process, on 100 tenants of three scopes written by others
    total = ctx.n(300_000, 3_000)
    store, pristine = Fresh(), Fresh()
    ctx.defer(store.remove)
    ctx.defer(pristine.remove)
    load_raw("lmdb", pristine.path, _data.tenant_pairs(total // 300))

    def restore() -> None:  # the store as it was written, before accounting was enabled
        shutil.rmtree(f"{store.path}/db", ignore_errors=True)
        shutil.copytree(f"{pristine.path}/db", f"{store.path}/db")

    url = f"lmdb://{store.path}/db"
    runs, env = ctx.n(5, 1), user_env(ctx)
    enabled = wall_ms([*command(), "accounting", "enable", url, "--scheme", "tuple"], runs, env, restore)
    scanned = wall_ms([sys.executable, "-c", RAW_SCAN, f"{store.path}/db"], runs, env)
    yield Comparison(
        "account",
        "keyspace accounting enable as a command",
        {},
        [
            Ratio(
                f"keyspace accounting enable of {total:,} keys written by others, as a command, "
                "vs a raw full-scan script",
                "keyspace",
                "py-lmdb script",
            )
        ],
        measured={"keyspace": enabled, "py-lmdb script": scanned},
        unit="ms",
    )
    inspected = wall_ms([*command(), "inspect", url, "--scheme", "tuple"], runs, env)
    ctx.note(
        f"keyspace inspect of {total:,} keys written by others, accounting on, as a command: "
        f"{inspected:.0f} ms (a py-lmdb script scanning the store: {scanned:.0f} ms)"
    )
    yield Comparison(
        "account",
        "keyspace inspect with accounting as a command",
        {},
        [
            Ratio(
                f"keyspace inspect of {total:,} keys written by others, accounting on, as a command / 0.5 s",
                "keyspace",
                "0.5 s",
                Target(1.0, text="≤ 0.5 s"),
            )
        ],
        measured={"keyspace": inspected, "0.5 s": 500.0},
        unit="ms",
    )
