"""The change log (``changes=True``) on LMDB: what it costs a write, and how soon
a watcher in another process sees one.

- ``transaction``: one transaction of 1,000 puts, changes on against off
  (target ≤ 1.3×), on one store (the puts write keys the store holds but in
  the very first transaction; a trial is eight such transactions one after
  the other, a median one transaction's brief stall moves less, timed per
  transaction), and of 1,000 new keys (a new store each round);
- the floor of that transaction: the same puts written by hand with py-lmdb,
  with a counter and one log record of the keys and values in each commit,
  against the puts alone by hand (no target: what any program keeping such a
  log pays; at fsync it grows with the bytes the log adds to each commit);
- the transaction of 1,000 new keys with fsync too: there the store grows
  with or without the log;
- the same transaction with the log at its retention (``changes={"retention":
  256}``, filled to it before the timing; the by-hand log deletes the record
  256 commits back in each commit), a trial of 32 transactions holding one
  trim: a log still growing to its retention grows the file by its bytes in
  every commit, which with an fsync costs more than writing those bytes into
  pages trimmed records left (ext4 journals each extension), while a log at
  its retention reuses those pages and pays for the trim;
- ``put``: single puts, each its own commit, on against off, and the floor of
  it: a log record and the counter written by hand with py-lmdb in each
  commit, against a plain put by hand (no target); the single put's target
  (≤ 1.5×) is its row with LMDB's default fsync per commit, as a keyspace
  opened without options writes: without the fsync the floor by hand alone
  is about 1.7×, so the ``sync=False`` rows of single puts carry none;
- the transaction and the single puts on a store another program wrote (keys
  loaded with py-lmdb alone, opened with ``scheme="tuple"``), into a scope
  already holding 50,000 keys (the transaction ≤ 1.3×, with ``sync=False`` and
  with LMDB's default fsync per commit, its log growing and at its retention;
  the single puts with ``sync=False``, and with the fsync ≤ 1.5×);
- ``latency``: a watcher in another process (its watch polls the commit counter
  every 10 ms); each write's latency is from the end of its commit to the moment
  the watcher hands out its event (one machine, one clock). Median and p99 in
  the notes; target: median ≤ 50 ms.

Each ratio is measured twice: with ``sync=False`` (no fsync: the log's own work,
which doubles the bytes a commit writes, against the engine's) and with LMDB's
default durability (an fsync per commit).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

import keyspace
from keyspace._changes import TRIM_EVERY
from keyspace.keyspace import Keyspace

from . import _data
from ._engines import Fresh, scope_written_by_others
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload
from ._writes import (
    hand_written_single_puts,
    hand_written_transactions,
    inserts,
    put_all,
    single_puts_into_others,
)

_V = _data.VALUE

_WATCHER = r"""
import sys, time, keyspace
ks = keyspace.open(sys.argv[1], changes=True)
w = ks.scope("lat").watch()
print("ready", flush=True)
for _ in range(int(sys.argv[2])):
    e = w.get(30)
    if e is None:
        break
    print(e.key.decode(), repr(time.time()), flush=True)
w.close()
ks.close()
"""


_OWN: tuple[str, ...] = ("t",)
"""The scope the rows on a store keyspace made write into."""


def _open(
    ctx: Context,
    changes: bool | dict[str, int],
    sync: bool = False,
    others: tuple[tuple[str, ...], int] | None = None,
) -> Keyspace:
    """A keyspace with ``changes`` on a new LMDB store, the feature recorded
    before the timing by a put into its scope: ``t`` of a store it makes, or,
    with ``others`` (a scope path and a number of keys), that scope of a store
    whose keys py-lmdb loaded (:func:`scope_written_by_others`), opened with
    ``scheme="tuple"``."""
    d = Fresh()
    ctx.defer(d.remove)
    if others is None:
        path, url = _OWN, f"lmdb://{d.path}/db"
        ks = keyspace.open(url, sync=sync, changes=changes)
    else:
        path, url = others[0], scope_written_by_others(d.path, *others)
        ks = keyspace.open(url, scheme="tuple", sync=sync, changes=changes)
    ctx.defer(ks.close)
    ks.scope(*path)[b"\x01first"] = _V
    return ks


_TIMES = 8


def _writes(
    ks: Keyspace, keys: list[bytes], transaction: bool, times: int = _TIMES, path: tuple[str, ...] = _OWN
) -> Factory:
    """``keys`` put into the scope ``path`` of ``ks`` (:func:`put_all`): a trial of
    ``times`` transactions of them (each one operation), or of single puts
    (each one operation)."""
    if transaction:
        run = put_all(ks, path, keys * times, True, len(keys))
        return lambda: Trial(run, times)
    run = put_all(ks, path, keys, False)
    return lambda: Trial(run, len(keys))


def _at_retention(
    ctx: Context, keys: list[bytes], sync: bool, kept: int, others: tuple[tuple[str, ...], int] | None = None
) -> dict[str, Factory]:
    """The trials of a transaction of ``keys`` (:func:`_writes`), changes on with
    ``changes={"retention": kept}`` (``"on"``) and off (``"off"``), on stores
    (:func:`_open`: with ``others``, of others' keys) whose log is filled to its
    retention before the timing: ``kept + 1`` such transactions first. A trial
    is :data:`~keyspace._changes.TRIM_EVERY` transactions, so each holds one
    trim."""
    path = _OWN if others is None else others[0]
    factories: dict[str, Factory] = {}
    for name, changes in (("on", {"retention": kept}), ("off", False)):
        ks = _open(ctx, changes, sync, others)
        put_all(ks, path, keys * (kept + 1), True, len(keys))()
        factories[name] = _writes(ks, keys, True, TRIM_EVERY, path)
    return factories


def _fresh_writes(changes: bool, keys: list[bytes], sync: bool = False) -> Factory:
    """``keys`` put in one transaction into the scope ``t`` of a new store each
    trial: every put a key the store did not hold (the store grows with or
    without the log)."""

    def make() -> Trial:
        d = Fresh()
        ks = keyspace.open(f"lmdb://{d.path}/db", sync=sync, changes=changes)
        ks.scope("t")[b"\x01first"] = _V  # the feature recorded before the timing

        def close() -> None:
            ks.close()
            d.remove()

        return Trial(put_all(ks, ("t",), keys, True), 1, close)

    return make


def _transactions(ctx: Context, keys: list[bytes], sync: bool, kept: int | None = None) -> Comparison:
    """The transaction of 1,000 puts, changes on against off, and its floor
    (:func:`hand_written_transactions`, on environments of their own) measured
    in the same rounds, on stores of their own. ``kept``: the log at its
    retention, ``changes={"retention": kept}``, filled to it before the timing
    (the by-hand log too): every commit's record reuses the pages of records
    trimmed, where a log still growing to its retention grows the file by its
    bytes each commit. A trial is then :data:`~keyspace._changes.TRIM_EVERY`
    transactions, so each holds one trim."""
    times = _TIMES if kept is None else TRIM_EVERY
    if kept is None:
        factories = {name: _writes(_open(ctx, name == "on", sync), keys, True) for name in ("on", "off")}
    else:
        factories = _at_retention(ctx, keys, sync, kept)
    for name, log in (("by hand", True), ("plain by hand", False)):
        d = Fresh()
        ctx.defer(d.remove)
        factory, close = hand_written_transactions(d.path, _OWN, keys, log, sync, times, kept)
        ctx.defer(close)
        factories[name] = factory
    tail = " (fsync)" if sync else ""
    at = "" if kept is None else " at its retention"
    what = "transaction of 1,000 puts" + (f", log at its retention ({kept:,} commits)" if kept else "")
    return Comparison(
        "changes",
        what + (", fsync" if sync else ""),
        factories,
        [
            Ratio(f"changes=True{at}: transaction of 1,000 puts vs off" + tail, "on", "off", Target(1.3)),
            Ratio(
                f"transaction of 1,000 puts: a log record by hand (py-lmdb){at} "
                f"vs the puts alone by hand{tail}",
                "by hand",
                "plain by hand",
            ),
            Ratio(
                f"changes=True{at}: transaction of 1,000 puts vs the log record by hand (py-lmdb)" + tail,
                "on",
                "by hand",
            ),
        ],
        rounds=ctx.fine,
    )


@workload("changes")
def changes(ctx: Context) -> Iterator[Comparison]:
    """The change log's cost per write and its watch latency across processes."""
    keys = _data.keys(ctx.n(1_000, 100))
    kept = ctx.n(256, 40)
    yield _transactions(ctx, keys, sync=False)
    yield _transactions(ctx, keys, sync=False, kept=kept)
    on, off = _open(ctx, True), _open(ctx, False)
    yield Comparison(
        "changes",
        "transaction of 1,000 new keys",
        {"on": _fresh_writes(True, keys), "off": _fresh_writes(False, keys)},
        [Ratio("changes=True: transaction of 1,000 new keys vs off", "on", "off", Target(1.3))],
        rounds=ctx.fine,
    )
    singles = keys[: ctx.n(2_000, 50)]
    yield Comparison(
        "changes",
        "single puts",
        {"on": _writes(on, singles, False), "off": _writes(off, singles, False)},
        [Ratio("changes=True: a put with its own commit vs off (sync=False)", "on", "off")],
        rounds=ctx.fine,
    )
    yield Comparison(
        "changes",
        "single puts with a log record written by hand",
        {
            "on": _writes(on, singles, False),
            "by hand": hand_written_single_puts(("t",), singles, "log"),
            "plain by hand": hand_written_single_puts(("t",), singles, None),
        },
        [
            Ratio(
                "a put with its own commit: a log record by hand (py-lmdb) vs a plain put by hand",
                "by hand",
                "plain by hand",
            ),
            Ratio(
                "changes=True: a put with its own commit vs the log record by hand (py-lmdb)", "on", "by hand"
            ),
        ],
        rounds=ctx.fine,
    )
    yield _transactions(ctx, keys, sync=True)
    yield _transactions(ctx, keys, sync=True, kept=kept)
    yield Comparison(
        "changes",
        "transaction of 1,000 new keys, fsync",
        {"on": _fresh_writes(True, keys, sync=True), "off": _fresh_writes(False, keys, sync=True)},
        [Ratio("changes=True: transaction of 1,000 new keys vs off (fsync)", "on", "off", Target(1.3))],
        rounds=ctx.fine,
    )
    on, off = _open(ctx, True, sync=True), _open(ctx, False, sync=True)
    yield Comparison(
        "changes",
        "single puts, fsync",
        {"on": _writes(on, singles[:200], False), "off": _writes(off, singles[:200], False)},
        [Ratio("changes=True: a put with its own commit vs off (fsync)", "on", "off", Target(1.5))],
        rounds=ctx.fine,
    )
    many = ctx.n(50_000, 500)
    path = ("tenant1", "users")
    new = _data.keys(ctx.n(1_000, 100), seed=7)
    opened = {name: _open(ctx, name == "on", others=(path, many)) for name in ("on", "off")}
    urls = {name: ks.url for name, ks in opened.items()}
    yield Comparison(
        "changes",
        f"transaction of 1,000 puts into a scope of {many:,} keys written by others",
        {name: inserts(ks, path, new) for name, ks in opened.items()},
        [
            Ratio(
                f"written by others: changes=True: transaction of 1,000 puts into a scope of {many:,} keys "
                "vs off",
                "on",
                "off",
                Target(1.3),
            )
        ],
        rounds=ctx.fine,
    )
    yield from single_puts_into_others(
        ctx,
        "changes",
        f"changes=True: a put with its own commit into a scope of {many:,} keys vs off",
        opened,
        urls,
        path,
        singles,
        1.5,
    )
    yield Comparison(  # the keyspaces opened again with LMDB's default fsync per commit
        "changes",
        f"transaction of 1,000 puts into a scope of {many:,} keys written by others, fsync",
        {name: inserts(ks, path, new) for name, ks in opened.items()},
        [
            Ratio(
                f"written by others: changes=True: transaction of 1,000 puts into a scope of {many:,} keys "
                "vs off (fsync)",
                "on",
                "off",
                Target(1.3),
            )
        ],
        rounds=ctx.fine,
    )
    for sync in (False, True):
        tail = " (fsync)" if sync else ""
        yield Comparison(
            "changes",
            f"transaction of 1,000 puts into a scope of {many:,} keys written by others, log at its "
            f"retention ({kept:,} commits)" + (", fsync" if sync else ""),
            _at_retention(ctx, new, sync, kept, (path, many)),
            [
                Ratio(
                    f"written by others: changes=True at its retention: transaction of 1,000 puts into a "
                    f"scope of {many:,} keys vs off{tail}",
                    "on",
                    "off",
                    Target(1.3),
                )
            ],
            rounds=ctx.fine,
        )

    n = ctx.n(200, 20)
    latency_dir = Fresh()
    ctx.defer(latency_dir.remove)
    url = f"lmdb://{latency_dir.path}/db"
    writer = keyspace.open(url, sync=False, changes=True)
    ctx.defer(writer.close)
    writer.scope("lat")[b"start"] = b""
    proc = subprocess.Popen([sys.executable, "-c", _WATCHER, url, str(n)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise RuntimeError("the watcher process did not start")
    committed: dict[str, float] = {}
    scope = writer.scope("lat")
    for i in range(n):
        key = f"k{i:05d}"
        scope[key.encode()] = _V
        committed[key] = time.time()
        time.sleep(0.005)  # writes apart: each one waits for its own wake-up
    latencies: list[float] = []
    for line in proc.stdout:
        key, seen = line.split()
        latencies.append((float(seen) - committed[key]) * 1000)
    proc.wait(30)
    if latencies:
        ordered = sorted(latencies)
        median = statistics.median(ordered)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        ctx.note(
            f"watch latency, another process (commit to event), {len(ordered)} writes: median "
            f"{median:.2f} ms, p99 {p99:.2f} ms (target: median ≤ 50 ms)"
        )
        yield Comparison(
            "changes",
            "watch latency",
            {},
            [Ratio("changes=True: watcher in another process, median ms", "median", "one", Target(50.0))],
            measured={"median": median, "one": 1.0},
            unit="ms",
        )
