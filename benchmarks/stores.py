"""Scope operations on each engine against hand-written code on the engine's own
binding that stores the same bytes (the TupleScheme layout
``prefix 01 key(00 -> 00 ff) 00``, encoded inline as a program would).

Every variant has its own store. Writes get a new store each round; reads share one
store per variant, filled once before the rounds begin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from keyspace.keyspace import Keyspace
from keyspace.schemes import TupleScheme

from . import _data
from ._engines import PATH, Fresh, open_keyspace, open_raw
from ._harness import Comparison, Context, Ratio, Target, Trial, workload

_Z, _ZF = b"\x00", b"\x00\xff"
_V = _data.VALUE
PREFIX = TupleScheme().prefix(PATH)
"""Stored bytes in front of every key of the benchmark scope."""
_P1 = PREFIX + b"\x01"  # prefix and the bytes type code, as a program would precompute
_PLEN = len(PREFIX)
_HI = PREFIX + b"\xff"

Factory = Callable[[], Trial]


def raw_fill(engine: str, handle: Any, pairs: list[tuple[bytes, bytes]]) -> None:
    """Store ``pairs`` (stored key, value) with the engine's fastest batch path."""
    if engine == "lmdb":
        with handle.begin(write=True) as txn:
            txn.cursor().putmulti(pairs)
    elif engine == "leveldb":
        with handle.write_batch() as batch:
            for k, v in pairs:
                batch.put(k, v)
    elif engine == "rocksdb":
        from rocksdict import WriteBatch

        wb = WriteBatch(raw_mode=True)
        for k, v in pairs:
            wb.put(k, v)
        handle.write(wb)
    else:
        handle.execute("BEGIN")
        handle.executemany("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", pairs)
        handle.execute("COMMIT")


def dataset(
    n: int,
) -> tuple[list[bytes], list[bytes], list[tuple[bytes, bytes]], list[tuple[bytes, bytes]]]:
    """The ``n`` benchmark keys, the same keys in read order, the ``(key, value)``
    pairs a scope stores and the ``(stored key, value)`` pairs hand-written code
    stores, both in key order: both stores are loaded alike, so their engines lay
    them out alike (an LMDB B-tree loaded in random order has about half as many
    pages again, which a scan pays for whoever wrote them)."""
    keys = _data.keys(n)
    stored = sorted((_P1 + k.replace(_Z, _ZF) + _Z, _V) for k in keys)
    return keys, _data.shuffled(keys), [(k, _V) for k in sorted(keys)], stored


class Shared:
    """A store built once per variant on first use and closed when the workload ends."""

    def __init__(self, ctx: Context, build: Callable[[str], tuple[Any, Callable[[], None]]]) -> None:
        self._ctx = ctx
        self._build = build
        self._handle: Any = None

    def get(self) -> Any:
        if self._handle is None:
            d = Fresh()
            self._handle, close = self._build(d.path)
            self._ctx.defer(d.remove)
            self._ctx.defer(close)
        return self._handle


def shared_keyspace(ctx: Context, engine: str, pairs: list[tuple[bytes, bytes]]) -> Shared:
    """A keyspace whose benchmark scope holds ``pairs`` (loaded in one transaction)."""

    def build(directory: str) -> tuple[Any, Callable[[], None]]:
        ks = open_keyspace(engine, directory)
        with ks.transaction() as tx:
            tx.scope(*PATH).update(pairs)
        return ks, ks.close

    return Shared(ctx, build)


def shared_raw(ctx: Context, engine: str, stored: list[tuple[bytes, bytes]]) -> Shared:
    """A raw store holding ``stored`` (already encoded keys)."""

    def build(directory: str) -> tuple[Any, Callable[[], None]]:
        handle, close = open_raw(engine, directory)
        raw_fill(engine, handle, stored)
        return handle, close

    return Shared(ctx, build)


# -- keyspace variants ------------------------------------------------------------------


def ks_put(engine: str, keys: list[bytes], in_txn: bool) -> Factory:
    """``scope[k] = v`` for each key on a new keyspace, inside one transaction or not."""

    def make() -> Trial:
        d = Fresh()
        ks = open_keyspace(engine, d.path)
        cm = ks.transaction() if in_txn else None
        scope = cm.__enter__().scope(*PATH) if cm is not None else ks.scope(*PATH)

        def run() -> None:
            for k in keys:
                scope[k] = _V

        def close() -> None:
            if cm is not None:
                cm.__exit__(None, None, None)
            ks.close()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def ks_get(shared: Shared, keys: list[bytes], in_txn: bool) -> Factory:
    """``scope[k]`` for each key, inside one transaction or not."""

    def make() -> Trial:
        ks: Keyspace = shared.get()
        cm = ks.transaction() if in_txn else None
        scope = cm.__enter__().scope(*PATH) if cm is not None else ks.scope(*PATH)

        def run() -> None:
            for k in keys:
                scope[k]

        def close() -> None:
            if cm is not None:
                cm.__exit__(None, None, None)

        return Trial(run, len(keys), close)

    return make


def ks_scan(shared: Shared, n: int) -> Factory:
    """``for key, value in scope.items()`` over the whole scope."""

    def make() -> Trial:
        scope = shared.get().scope(*PATH)

        def run() -> None:
            for _key, _value in scope.items():
                pass

        return Trial(run, n)

    return make


# -- hand-written LMDB ----------------------------------------------------------------------


def lmdb_put_txn(keys: list[bytes]) -> Factory:
    def make() -> Trial:
        d = Fresh()
        env, close_env = open_raw("lmdb", d.path)
        txn = env.begin(write=True)

        def run() -> None:
            for k in keys:
                txn.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        def close() -> None:
            txn.commit()
            close_env()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def lmdb_get(shared: Shared, keys: list[bytes], in_txn: bool) -> Factory:
    def make() -> Trial:
        env = shared.get()
        if in_txn:
            txn = env.begin(write=True)

            def run() -> None:
                for k in keys:
                    txn.get(_P1 + k.replace(_Z, _ZF) + _Z)

            return Trial(run, len(keys), txn.abort)

        def run_each() -> None:
            for k in keys:
                with env.begin() as txn:
                    txn.get(_P1 + k.replace(_Z, _ZF) + _Z)

        return Trial(run_each, len(keys))

    return make


def lmdb_scan_once(env: Any) -> None:
    """One hand-written py-lmdb scan of the benchmark scope, decoding every key."""
    with env.begin() as txn:
        cursor = txn.cursor()
        if cursor.set_range(PREFIX):
            for k, _value in cursor:
                if k >= _HI:
                    break
                _key = k[_PLEN + 1 : -1].replace(_ZF, _Z)


def lmdb_scan(shared: Shared, n: int) -> Factory:
    def make() -> Trial:
        env = shared.get()

        def run() -> None:
            lmdb_scan_once(env)

        return Trial(run, n)

    return make


@workload("lmdb")
def lmdb_workload(ctx: Context) -> Iterator[Comparison]:
    """Scope put/get/scan on LMDB against py-lmdb code storing the same bytes."""
    n = ctx.n(100_000, 2_000)
    keys, reads, pairs, stored = dataset(n)
    at_most_110 = Target(1.10)
    yield Comparison(
        "lmdb",
        "put inside a transaction",
        {"keyspace": ks_put("lmdb", keys, True), "py-lmdb": lmdb_put_txn(keys)},
        [Ratio("LMDB put in transaction", "keyspace", "py-lmdb", at_most_110)],
    )
    ks_store, raw_store = shared_keyspace(ctx, "lmdb", pairs), shared_raw(ctx, "lmdb", stored)
    yield Comparison(
        "lmdb",
        "get inside a transaction",
        {"keyspace": ks_get(ks_store, reads, True), "py-lmdb": lmdb_get(raw_store, reads, True)},
        [Ratio("LMDB get in transaction", "keyspace", "py-lmdb", at_most_110)],
    )
    yield Comparison(
        "lmdb",
        "get, one read transaction each",
        {"keyspace": ks_get(ks_store, reads, False), "py-lmdb": lmdb_get(raw_store, reads, False)},
        [Ratio("LMDB get (own read txn)", "keyspace", "py-lmdb")],
    )
    yield Comparison(
        "lmdb",
        "scan of the scope, per item",
        {"keyspace": ks_scan(ks_store, n), "py-lmdb": lmdb_scan(raw_store, n)},
        [Ratio("LMDB scan per item", "keyspace", "py-lmdb", at_most_110)],
    )


# -- hand-written plyvel --------------------------------------------------------------------


def plyvel_put(keys: list[bytes], prefixed: bool) -> Factory:
    def make() -> Trial:
        d = Fresh()
        db, close_db = open_raw("leveldb", d.path)
        if prefixed:
            pdb = db.prefixed_db(PREFIX)

            def run() -> None:
                for k in keys:
                    pdb.put(b"\x01" + k.replace(_Z, _ZF) + _Z, _V)

        else:

            def run() -> None:
                for k in keys:
                    db.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        def close() -> None:
            close_db()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def plyvel_get(shared: Shared, keys: list[bytes], prefixed: bool) -> Factory:
    def make() -> Trial:
        db = shared.get()
        if prefixed:
            pdb = db.prefixed_db(PREFIX)

            def run() -> None:
                for k in keys:
                    pdb.get(b"\x01" + k.replace(_Z, _ZF) + _Z)

        else:

            def run() -> None:
                for k in keys:
                    db.get(_P1 + k.replace(_Z, _ZF) + _Z)

        return Trial(run, len(keys))

    return make


def plyvel_scan(shared: Shared, n: int, prefixed: bool) -> Factory:
    def make() -> Trial:
        db = shared.get()
        if prefixed:
            pdb = db.prefixed_db(PREFIX)

            def run() -> None:
                for k, _value in pdb.iterator():
                    _key = k[1:-1].replace(_ZF, _Z)

        else:

            def run() -> None:
                for k, _value in db.iterator(start=PREFIX, stop=_HI):
                    _key = k[_PLEN + 1 : -1].replace(_ZF, _Z)

        return Trial(run, n)

    return make


@workload("leveldb")
def leveldb_workload(ctx: Context) -> Iterator[Comparison]:
    """Scope put/get/scan on LevelDB against raw plyvel and plyvel's ``prefixed_db``."""
    n = ctx.n(100_000, 2_000)
    keys, reads, pairs, stored = dataset(n)
    at_most_108 = Target(1.08)
    yield Comparison(
        "leveldb",
        "put",
        {
            "keyspace": ks_put("leveldb", keys, False),
            "plyvel": plyvel_put(keys, False),
            "prefixed_db": plyvel_put(keys, True),
        },
        [
            Ratio("LevelDB put", "keyspace", "plyvel", at_most_108),
            Ratio("LevelDB put vs prefixed_db", "keyspace", "prefixed_db"),
        ],
    )
    ks_store, raw_store = shared_keyspace(ctx, "leveldb", pairs), shared_raw(ctx, "leveldb", stored)
    raw_store2 = shared_raw(ctx, "leveldb", stored)
    yield Comparison(
        "leveldb",
        "get",
        {
            "keyspace": ks_get(ks_store, reads, False),
            "plyvel": plyvel_get(raw_store, reads, False),
            "prefixed_db": plyvel_get(raw_store2, reads, True),
        },
        [
            Ratio("LevelDB get", "keyspace", "plyvel", at_most_108),
            Ratio("LevelDB get vs prefixed_db", "keyspace", "prefixed_db"),
        ],
    )
    yield Comparison(
        "leveldb",
        "scan of the scope, per item",
        {
            "keyspace": ks_scan(ks_store, n),
            "plyvel": plyvel_scan(raw_store, n, False),
            "prefixed_db": plyvel_scan(raw_store2, n, True),
        },
        [
            Ratio("LevelDB scan per item", "keyspace", "plyvel"),
            Ratio("LevelDB scan vs prefixed_db", "keyspace", "prefixed_db"),
        ],
    )


# -- hand-written rocksdict and sqlite3 ------------------------------------------------------


def rocks_put(keys: list[bytes]) -> Factory:
    def make() -> Trial:
        d = Fresh()
        db, close_db = open_raw("rocksdb", d.path)

        def run() -> None:
            for k in keys:
                db.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        def close() -> None:
            close_db()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def rocks_get(shared: Shared, keys: list[bytes]) -> Factory:
    def make() -> Trial:
        db = shared.get()

        def run() -> None:
            for k in keys:
                db.get(_P1 + k.replace(_Z, _ZF) + _Z)

        return Trial(run, len(keys))

    return make


def rocks_scan(shared: Shared, n: int) -> Factory:
    def make() -> Trial:
        db = shared.get()

        def run() -> None:
            for k, _value in db.items(from_key=PREFIX):  # noqa: PERF102 (a scan reads the values)
                if k >= _HI:
                    break
                _key = k[_PLEN + 1 : -1].replace(_ZF, _Z)

        return Trial(run, n)

    return make


_SQL_PUT = "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)"
_SQL_GET = "SELECT v FROM kv WHERE k = ?"
_SQL_SCAN = "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k"


def sqlite_put_txn(keys: list[bytes]) -> Factory:
    def make() -> Trial:
        d = Fresh()
        conn, close_conn = open_raw("sqlite", d.path)
        conn.execute("BEGIN IMMEDIATE")

        def run() -> None:
            for k in keys:
                conn.execute(_SQL_PUT, (_P1 + k.replace(_Z, _ZF) + _Z, _V))

        def close() -> None:
            conn.execute("COMMIT")
            close_conn()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def sqlite_get(shared: Shared, keys: list[bytes]) -> Factory:
    def make() -> Trial:
        conn = shared.get()

        def run() -> None:
            for k in keys:
                conn.execute(_SQL_GET, (_P1 + k.replace(_Z, _ZF) + _Z,)).fetchone()

        return Trial(run, len(keys))

    return make


def sqlite_scan(shared: Shared, n: int) -> Factory:
    def make() -> Trial:
        conn = shared.get()

        def run() -> None:
            for k, _value in conn.execute(_SQL_SCAN, (PREFIX, _HI)):
                _key = k[_PLEN + 1 : -1].replace(_ZF, _Z)

        return Trial(run, n)

    return make


def _informational(
    ctx: Context,
    engine: str,
    title: str,
    n: int,
    raw: str,
    put: tuple[str, bool, Callable[[list[bytes]], Factory]],
    get: Callable[[Shared, list[bytes]], Factory],
    scan: Callable[[Shared, int], Factory],
) -> Iterator[Comparison]:
    """Scope put/get/scan on ``engine`` against the hand-written ``raw`` variants
    (``put`` is the comparison's label, whether the scope puts inside one
    transaction, and the raw put), with ratios and no target."""
    keys, reads, pairs, stored = dataset(n)
    put_label, in_txn, raw_put = put
    yield Comparison(
        engine,
        put_label,
        {"keyspace": ks_put(engine, keys, in_txn), raw: raw_put(keys)},
        [Ratio(f"{title} {'put in transaction' if in_txn else 'put'}", "keyspace", raw)],
    )
    ks_store = shared_keyspace(ctx, engine, pairs)
    raw_store = shared_raw(ctx, engine, stored)
    yield Comparison(
        engine,
        "get",
        {"keyspace": ks_get(ks_store, reads, False), raw: get(raw_store, reads)},
        [Ratio(f"{title} get", "keyspace", raw)],
    )
    yield Comparison(
        engine,
        "scan of the scope, per item",
        {"keyspace": ks_scan(ks_store, n), raw: scan(raw_store, n)},
        [Ratio(f"{title} scan per item", "keyspace", raw)],
    )


@workload("rocksdb")
def rocksdb_workload(ctx: Context) -> Iterator[Comparison]:
    """Scope put/get/scan on RocksDB against raw rocksdict (raw mode). Informational."""
    n = ctx.n(100_000, 2_000)
    put = ("put", False, rocks_put)
    yield from _informational(ctx, "rocksdb", "RocksDB", n, "rocksdict", put, rocks_get, rocks_scan)


@workload("sqlite")
def sqlite_workload(ctx: Context) -> Iterator[Comparison]:
    """Scope put (in a transaction)/get/scan on SQLite against raw ``sqlite3``. Informational."""
    n = ctx.n(50_000, 1_000)
    put = ("put inside a transaction", True, sqlite_put_txn)
    yield from _informational(ctx, "sqlite", "SQLite", n, "sqlite3", put, sqlite_get, sqlite_scan)
