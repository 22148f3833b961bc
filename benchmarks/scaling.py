"""Own-key cost of one scope as the rest of the LMDB store grows.

The scope holds 1,000 keys; 10^3 to 10^5 (10^6 in full mode) keys of two
neighbouring scopes surround it, half sorting before and half after. A scope scan
is one seek and then only the scope's own items, so its cost per item should not
depend on the store's size; a point read is one B-tree descent, which grows with
log(size) for keyspace and raw code alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from keyspace.schemes import TupleScheme

from . import _data
from ._engines import PATH, open_keyspace, open_raw
from ._harness import Comparison, Context, Ratio, Target, Trial, workload
from .stores import _P1, Shared, lmdb_scan_once, raw_fill

_Z, _ZF = b"\x00", b"\x00\xff"
_V = _data.VALUE
_OWN = 1_000
_SCANS = 20  # scans per timed run, so one run lasts long enough to time
_READ_REPEAT = 10

Factory = Callable[[], Trial]


def _neighbours(size: int) -> list[tuple[bytes, bytes]]:
    """``size`` stored pairs in the scopes just before and just after the benchmark scope."""
    scheme = TupleScheme()
    before, after = scheme.prefix(("tenant0", "users")), scheme.prefix(("tenant2", "users"))
    keys = _data.keys(size, seed=7)
    half = size // 2
    pairs = [(before + b"\x01" + k.replace(_Z, _ZF) + _Z, _V) for k in keys[:half]]
    pairs += [(after + b"\x01" + k.replace(_Z, _ZF) + _Z, _V) for k in keys[half:]]
    pairs.sort()
    return pairs


def _stores(ctx: Context, size: int, own: list[bytes]) -> tuple[Shared, Shared]:
    def build_ks(directory: str) -> tuple[Any, Callable[[], None]]:
        ks = open_keyspace("lmdb", directory)
        with ks.transaction() as tx:
            tx.scope(*PATH).update([(k, _V) for k in own])
        # the neighbours are plain stored bytes: write them below the scope layer
        ks.store.write(_neighbours(size))
        return ks, ks.close

    def build_raw(directory: str) -> tuple[Any, Callable[[], None]]:
        env, close = open_raw("lmdb", directory)
        stored = [(_P1 + k.replace(_Z, _ZF) + _Z, _V) for k in own]
        raw_fill("lmdb", env, sorted(stored + _neighbours(size)))
        return env, close

    return Shared(ctx, build_ks), Shared(ctx, build_raw)


def _ks_scan(shared: Shared) -> Factory:
    def make() -> Trial:
        scope = shared.get().scope(*PATH)

        def run() -> None:
            for _ in range(_SCANS):
                for _key, _value in scope.items():
                    pass

        return Trial(run, _SCANS * _OWN)

    return make


def _raw_scan(shared: Shared) -> Factory:
    def make() -> Trial:
        env = shared.get()

        def run() -> None:
            for _ in range(_SCANS):
                lmdb_scan_once(env)

        return Trial(run, _SCANS * _OWN)

    return make


def _ks_get(shared: Shared, reads: list[bytes]) -> Factory:
    def make() -> Trial:
        cm = shared.get().transaction()
        scope = cm.__enter__().scope(*PATH)

        def run() -> None:
            for k in reads:
                scope[k]

        return Trial(run, len(reads), lambda: cm.__exit__(None, None, None))

    return make


def _raw_get(shared: Shared, reads: list[bytes]) -> Factory:
    def make() -> Trial:
        txn = shared.get().begin(write=True)

        def run() -> None:
            for k in reads:
                txn.get(_P1 + k.replace(_Z, _ZF) + _Z)

        return Trial(run, len(reads), txn.abort)

    return make


@workload("scaling")
def scaling(ctx: Context) -> Iterator[Comparison]:
    """Scan and get of one scope's own keys with 10^3…10^6 other keys in the store.
    Target: the scope scan costs within 1.2× of its cost with 10^3 other keys."""
    sizes = [1_000, 10_000, 100_000] + ([] if ctx.quick else [1_000_000])
    own = _data.keys(_OWN, seed=3)
    reads = _data.shuffled(own) * _READ_REPEAT
    variants: dict[str, Factory] = {}
    ratios: list[Ratio] = []
    flat = Target(1.2)
    for size in sizes:
        ks_store, raw_store = _stores(ctx, size, own)
        variants[f"ks scan {size}"] = _ks_scan(ks_store)
        variants[f"raw scan {size}"] = _raw_scan(raw_store)
        variants[f"ks get {size}"] = _ks_get(ks_store, reads)
        variants[f"raw get {size}"] = _raw_get(raw_store, reads)
        ratios.append(
            Ratio(
                f"LMDB scan per item, {size:,} others",
                f"ks scan {size}",
                f"raw scan {size}",
                series="scan per item",
                size=size,
            )
        )
        ratios.append(
            Ratio(
                f"LMDB get in txn, {size:,} others",
                f"ks get {size}",
                f"raw get {size}",
                series="get in transaction",
                size=size,
            )
        )
    first = sizes[0]
    ratios.extend(
        Ratio(f"own-key scan, {size:,} vs {first:,} others", f"ks scan {size}", f"ks scan {first}", flat)
        for size in sizes[1:]
    )
    yield Comparison("scaling", "own keys of one scope by store size", variants, ratios)
