"""A scoped-heed environment through ``keyspace.scoped_heed`` against py-lmdb code
writing scoped-heed's layout by hand (``u32le(h) u64le(len) key`` in ``NAME_scoped``;
bincode ``u64`` keys and ``String`` values for the typed database). The hand-written
side builds each stored key (and encodes each typed value) in its loop, as the
keyspace side does; its transactions are begun on the scoped database."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from typing import Any

import lmdb
from xxhash import xxh32_intdigest

from keyspace import bincode, scoped_heed

from . import _data
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload

_V = b"v" * 32
_HEAD = struct.pack("<I", xxh32_intdigest(b"tenant1"))
_LEN = struct.Struct("<Q").pack
_U64 = struct.Struct("<Q").pack
_SCOPE = "tenant1"


def _stored(key: bytes) -> bytes:
    return _HEAD + _LEN(len(key)) + key


def _raw_env(ctx: Context) -> tuple[Any, Any]:
    env = lmdb.open(ctx.tmpdir(), max_dbs=8, map_size=1 << 32)
    db = env.open_db(b"db_scoped")
    ctx.defer(env.close)
    return env, db


def _ks(ctx: Context, **options: Any) -> scoped_heed.ScopedHeedKeyspace:
    ks = scoped_heed.open(ctx.tmpdir(), "db", map_size=1 << 32, **options)
    ctx.defer(ks.close)
    return ks


def _ks_put(ctx: Context, items: list[tuple[Any, Any]], **options: Any) -> Factory:
    def make() -> Trial:
        ks = _ks(ctx, **options)
        tx_cm = ks.transaction()
        tx = tx_cm.__enter__()
        scope = tx.scope(_SCOPE)

        def run() -> None:
            for k, v in items:
                scope[k] = v

        return Trial(run, len(items), lambda: tx_cm.__exit__(None, None, None))

    return make


def _raw_put(ctx: Context, items: list[tuple[bytes, bytes]]) -> Factory:
    def make() -> Trial:
        env, db = _raw_env(ctx)
        txn = env.begin(write=True, db=db)

        def run() -> None:
            put = txn.put
            for k, v in items:
                put(_HEAD + _LEN(len(k)) + k, v)

        return Trial(run, len(items), txn.commit)

    return make


def _raw_typed_put(ctx: Context, items: list[tuple[int, str]]) -> Factory:
    def make() -> Trial:
        env, db = _raw_env(ctx)
        txn = env.begin(write=True, db=db)

        def run() -> None:
            put = txn.put
            for k, v in items:
                raw = v.encode()
                put(_HEAD + _U64(k), _LEN(len(raw)) + raw)

        return Trial(run, len(items), txn.commit)

    return make


def _ks_get(ks: scoped_heed.ScopedHeedKeyspace, keys: list[Any], in_txn: bool) -> Factory:
    def make() -> Trial:
        if in_txn:
            cm = ks.snapshot()
            scope = cm.__enter__().scope(_SCOPE)

            def end() -> None:
                cm.__exit__(None, None, None)
        else:
            scope, end = ks.scope(_SCOPE), (lambda: None)

        def run() -> None:
            for k in keys:
                scope[k]

        return Trial(run, len(keys), end)

    return make


def _raw_get(env: Any, db: Any, keys: list[bytes], in_txn: bool) -> Factory:
    def make() -> Trial:
        if in_txn:
            txn = env.begin(db=db)

            def run() -> None:
                get = txn.get
                for k in keys:
                    get(_HEAD + _LEN(len(k)) + k)

            return Trial(run, len(keys), txn.abort)

        def run_own() -> None:
            for k in keys:
                with env.begin(db=db) as txn:
                    txn.get(_HEAD + _LEN(len(k)) + k)

        return Trial(run_own, len(keys))

    return make


def _raw_typed_get(env: Any, db: Any, keys: list[int]) -> Factory:
    def make() -> Trial:
        txn = env.begin(db=db)

        def run() -> None:
            get = txn.get
            for k in keys:
                get(_HEAD + _U64(k))[8:].decode()

        return Trial(run, len(keys), txn.abort)

    return make


def _ks_scan(ks: scoped_heed.ScopedHeedKeyspace, n: int) -> Factory:
    def make() -> Trial:
        scope = ks.scope(_SCOPE)
        return Trial(lambda: sum(1 for _ in scope.items()), n)

    return make


def _raw_scan(env: Any, db: Any, n: int) -> Factory:
    def make() -> Trial:
        def run() -> None:
            # as the LMDB scan of the tuple scheme: stop at the scope's end, take each key
            with env.begin(db=db) as txn:
                cursor = txn.cursor()
                if cursor.set_range(_HEAD):
                    for k, _value in cursor:
                        if not k.startswith(_HEAD):
                            break
                        _key = k[12:]

        return Trial(run, n)

    return make


@workload("scoped-heed")
def scoped_heed_workload(ctx: Context) -> Iterator[Comparison]:
    """Named-scope put/get/scan of a raw_bytes database, and typed u64 -> String
    put/get, against py-lmdb writing the same bytes by hand."""
    n = ctx.n(50_000, 1_000)
    t110, t120 = Target(1.10), Target(1.20)
    keys = _data.keys(n)
    reads = _data.shuffled(keys)
    stored = [(_stored(k), _V) for k in keys]
    yield Comparison(
        "heed",
        "raw_bytes put in a transaction",
        {
            "keyspace": _ks_put(ctx, [(k, _V) for k in keys]),
            "py-lmdb": _raw_put(ctx, [(k, _V) for k in keys]),
        },
        [Ratio("scoped-heed put in transaction", "keyspace", "py-lmdb", t110)],
    )
    ks = _ks(ctx)
    ks.scope(_SCOPE).update([(k, _V) for k in keys])
    env, db = _raw_env(ctx)
    with env.begin(write=True, db=db) as txn:
        for k, v in stored:
            txn.put(k, v)
    yield Comparison(
        "heed",
        "raw_bytes get in a snapshot",
        {"keyspace": _ks_get(ks, reads, True), "py-lmdb": _raw_get(env, db, reads, True)},
        [Ratio("scoped-heed get in snapshot", "keyspace", "py-lmdb", t110)],
    )
    yield Comparison(
        "heed",
        "raw_bytes get, one read transaction each",
        {"keyspace": _ks_get(ks, reads, False), "py-lmdb": _raw_get(env, db, reads, False)},
        # as close to py-lmdb as the tuple scheme's LMDB get (own read txn)
        [Ratio("scoped-heed get (own read txn)", "keyspace", "py-lmdb", Target(1.5))],
    )
    yield Comparison(
        "heed",
        "raw_bytes scan of the scope, per item",
        {"keyspace": _ks_scan(ks, n), "py-lmdb": _raw_scan(env, db, n)},
        [Ratio("scoped-heed scan per item", "keyspace", "py-lmdb", t110)],
    )
    ints = list(range(n))
    typed_items = [(i, f"value-{i}") for i in ints]
    typed_stored = [(_HEAD + _U64(i), bincode.STRING.encode(v)) for i, v in typed_items]
    typed = {"api": "types", "key": bincode.U64, "value": bincode.STRING}
    yield Comparison(
        "heed",
        "types<u64, String> put in a transaction",
        {"keyspace": _ks_put(ctx, typed_items, **typed), "py-lmdb": _raw_typed_put(ctx, typed_items)},
        [Ratio("scoped-heed typed put in transaction", "keyspace", "py-lmdb", t120)],
    )
    tks = _ks(ctx, **typed)
    tks.scope(_SCOPE).update(typed_items)
    tenv, tdb = _raw_env(ctx)
    with tenv.begin(write=True, db=tdb) as txn:
        for k, v in typed_stored:
            txn.put(k, v)
    shuffled = list(ints)
    random.Random(2).shuffle(shuffled)
    yield Comparison(
        "heed",
        "types<u64, String> get in a snapshot",
        {
            "keyspace": _ks_get(tks, shuffled, True),
            "py-lmdb": _raw_typed_get(tenv, tdb, shuffled),
        },
        [Ratio("scoped-heed typed get in snapshot", "keyspace", "py-lmdb", t120)],
    )
