"""Scope layouts: every scheme on LMDB, Sublevel on LevelDB, typed scopes, the
pure-Python path, one-op commits, short scans, scope creation per call,
``scopes()``, ``len``, ``inspect`` and the memory of ``update``.

Every competitor is hand-written code on the raw binding storing the same bytes,
written as a competent user would: the prefix computed once, the key transform
inline (one expression), the engine's own calls bound once.
"""

from __future__ import annotations

import binascii
import json
import os
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

import keyspace
from keyspace._scope_fields import PointOps
from keyspace.codecs import BYTES
from keyspace.keyspace import Keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._layouts import LayoutCache
from keyspace.scope import Scope

from . import _data
from ._data import after as _after
from ._data import hand_stored as _hand_stored
from ._data import scheme_keys as _keys
from ._engines import Fresh
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload

_V = _data.VALUE
_Z, _ZF = b"\x00", b"\x00\xff"
_U64 = struct.Struct("<Q").pack
_hexlify, _unhexlify = binascii.hexlify, binascii.unhexlify
_PATH = ("tenant1", "users")
_SCHEMES: list[tuple[str, Scheme, tuple[str, ...]]] = [
    ("tuple", TupleScheme(), _PATH),
    ("length-prefixed", LengthPrefixed(), _PATH),
    ("asciihex", AsciiHex(), _PATH),
    ("sublevel", Sublevel(), _PATH),
    ("scopehash", ScopeHash(), ("users",)),
]
_KIND = {
    "tuple": "tuple",
    "length-prefixed": "raw",
    "asciihex": "hex",
    "sublevel": "raw",
    "scopehash": "u64len",
}


def _all(*steps: Callable[[], object]) -> Callable[[], None]:
    """One close function running ``steps`` in order."""

    def run() -> None:
        for step in steps:
            step()

    return run


def _open(directory: str, scheme: Scheme, engine: str = "lmdb") -> Keyspace:
    return keyspace.open(f"{engine}://{directory}/db", scheme=scheme)


def _raw_env(directory: str) -> Any:
    import lmdb

    return lmdb.open(f"{directory}/db", map_size=4 << 30, max_dbs=0)


class _Store:
    """A store built once per comparison (fresh directory), closed when it ends."""

    def __init__(self, ctx: Context, build: Callable[[str], tuple[Any, Callable[[], object]]]) -> None:
        d = Fresh()
        self.handle, close = build(d.path)
        ctx.defer(d.remove)
        ctx.defer(close)


def _ks_store(ctx: Context, scheme: Scheme, path: tuple[str, ...], keys: list[bytes]) -> _Store:
    def build(directory: str) -> tuple[Any, Callable[[], object]]:
        ks = _open(directory, scheme)
        ks.scope(*path).update({k: _V for k in keys})
        return ks, ks.close

    return _Store(ctx, build)


def _raw_store(ctx: Context, stored: list[bytes]) -> _Store:
    def build(directory: str) -> tuple[Any, Callable[[], object]]:
        env = _raw_env(directory)
        with env.begin(write=True) as txn:
            txn.cursor().putmulti([(s, _V) for s in stored])
        return env, env.close

    return _Store(ctx, build)


# -- the hand-written transforms, one loop per kind (the transform inline) --------------


def _hand_put(kind: str, prefix: bytes) -> Callable[[Callable[[bytes, bytes], object], list[bytes]], None]:
    if kind == "tuple":
        p1 = prefix + b"\x01"

        def tuple_put(put: Callable[[bytes, bytes], object], keys: list[bytes]) -> None:
            for k in keys:
                put(p1 + k.replace(_Z, _ZF) + _Z, _V)

        return tuple_put
    if kind == "hex":

        def hex_put(put: Callable[[bytes, bytes], object], keys: list[bytes]) -> None:
            for k in keys:
                put(prefix + _hexlify(k), _V)

        return hex_put
    if kind == "u64len":

        def len_put(put: Callable[[bytes, bytes], object], keys: list[bytes]) -> None:
            for k in keys:
                put(prefix + _U64(len(k)) + k, _V)

        return len_put

    def raw_put(put: Callable[[bytes, bytes], object], keys: list[bytes]) -> None:
        for k in keys:
            put(prefix + k, _V)

    return raw_put


def _hand_get(kind: str, prefix: bytes) -> Callable[[Callable[[bytes], object], list[bytes]], None]:
    if kind == "tuple":
        p1 = prefix + b"\x01"

        def tuple_get(get: Callable[[bytes], object], keys: list[bytes]) -> None:
            for k in keys:
                get(p1 + k.replace(_Z, _ZF) + _Z)

        return tuple_get
    if kind == "hex":

        def hex_get(get: Callable[[bytes], object], keys: list[bytes]) -> None:
            for k in keys:
                get(prefix + _hexlify(k))

        return hex_get
    if kind == "u64len":

        def len_get(get: Callable[[bytes], object], keys: list[bytes]) -> None:
            for k in keys:
                get(prefix + _U64(len(k)) + k)

        return len_get

    def raw_get(get: Callable[[bytes], object], keys: list[bytes]) -> None:
        for k in keys:
            get(prefix + k)

    return raw_get


def _hand_decoder(kind: str, plen: int) -> Callable[[Any, bytes, int], list[tuple[bytes, bytes]]]:
    """``read(cursor, stop, limit)``: up to ``limit`` (key, value) pairs from the
    cursor's position to ``stop``, keys decoded inline (hex: children skipped)."""
    if kind == "tuple":

        def tuple_read(cursor: Any, stop: bytes, limit: int) -> list[tuple[bytes, bytes]]:
            out: list[tuple[bytes, bytes]] = []
            for k, v in cursor:
                if k >= stop or len(out) == limit:
                    break
                out.append((k[plen + 1 : -1].replace(_ZF, _Z), v))
            return out

        return tuple_read
    if kind == "hex":

        def hex_read(cursor: Any, stop: bytes, limit: int) -> list[tuple[bytes, bytes]]:
            out: list[tuple[bytes, bytes]] = []
            for k, v in cursor:
                if k >= stop or len(out) == limit:
                    break
                rem = k[plen:]
                if _Z not in rem:
                    out.append((_unhexlify(rem), v))
            return out

        return hex_read
    at = plen + 8 if kind == "u64len" else plen

    def raw_read(cursor: Any, stop: bytes, limit: int) -> list[tuple[bytes, bytes]]:
        out: list[tuple[bytes, bytes]] = []
        for k, v in cursor:
            if k >= stop or len(out) == limit:
                break
            out.append((k[at:], v))
        return out

    return raw_read


# -- LMDB, every scheme --------------------------------------------------------------------


def _ks_put_txn(scheme: Scheme, path: tuple[str, ...], keys: list[bytes]) -> Factory:
    def make() -> Trial:
        d = Fresh()
        ks = _open(d.path, scheme)
        cm = ks.transaction()
        scope = cm.__enter__().scope(*path)

        def run() -> None:
            for k in keys:
                scope[k] = _V

        def close() -> None:
            cm.__exit__(None, None, None)
            ks.close()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def _raw_put_txn(kind: str, prefix: bytes, keys: list[bytes]) -> Factory:
    loop = _hand_put(kind, prefix)

    def make() -> Trial:
        d = Fresh()
        env = _raw_env(d.path)
        txn = env.begin(write=True)

        def close() -> None:
            txn.commit()
            env.close()
            d.remove()

        return Trial(lambda: loop(txn.put, keys), len(keys), close)

    return make


def _ks_get_txn(
    store: _Store, path: tuple[str, ...], keys: list[bytes], make_scope: Callable[[Any], Scope] | None = None
) -> Factory:
    """Point reads in a write transaction (``ks.transaction()``)."""
    return _ks_get(store, path, keys, "transaction", make_scope)


def _ks_get_snapshot(
    store: _Store, path: tuple[str, ...], keys: list[bytes], make_scope: Callable[[Any], Scope] | None = None
) -> Factory:
    """Point reads in a read transaction (``ks.snapshot()``)."""
    return _ks_get(store, path, keys, "snapshot", make_scope)


def _ks_get(
    store: _Store,
    path: tuple[str, ...],
    keys: list[bytes],
    how: str,
    make_scope: Callable[[Any], Scope] | None,
) -> Factory:
    def make() -> Trial:
        ks: Keyspace = store.handle
        cm = getattr(ks, how)()
        tx = cm.__enter__()
        scope = tx.scope(*path) if make_scope is None else make_scope(tx)

        def run() -> None:
            for k in keys:
                scope[k]

        return Trial(run, len(keys), lambda: cm.__exit__(None, None, None))

    return make


def _raw_get_txn(store: _Store, kind: str, prefix: bytes, keys: list[bytes], write: bool = True) -> Factory:
    """Point reads in a py-lmdb transaction: a write one (``write``, the pair of
    ``ks.transaction()``) or a read one (the pair of ``ks.snapshot()``): each
    keyspace path against the same kind of LMDB transaction (a write transaction's
    reads look among its dirty pages first)."""
    loop = _hand_get(kind, prefix)

    def make() -> Trial:
        txn = store.handle.begin(write=write)
        return Trial(lambda: loop(txn.get, keys), len(keys), txn.abort)

    return make


def _ks_scan(store: _Store, path: tuple[str, ...], n: int) -> Factory:
    def make() -> Trial:
        scope = store.handle.scope(*path)

        def run() -> None:
            for _key, _value in scope.items():
                pass

        return Trial(run, n)

    return make


def _raw_scan(store: _Store, kind: str, prefix: bytes, stop: bytes, n: int) -> Factory:
    read = _hand_decoder(kind, len(prefix))

    def make() -> Trial:
        def run() -> None:
            with store.handle.begin() as txn:
                cursor = txn.cursor()
                cursor.set_range(prefix)
                for _key, _value in read(cursor, stop, n + 1):
                    pass

        return Trial(run, n)

    return make


def _ks_items(store: _Store, path: tuple[str, ...], how: str, args: list[bytes], by_prefix: bool) -> Factory:
    """A scope's short reads in one ``how`` block (``"transaction"`` or
    ``"snapshot"``): ``items(start=a, limit=10)`` for each ``a`` of ``args``, or
    with ``by_prefix`` ``items(prefix=a)``."""

    def make() -> Trial:
        ks: Keyspace = store.handle
        cm = getattr(ks, how)()
        scope = cm.__enter__().scope(*path)

        def run() -> None:
            if by_prefix:
                for a in args:
                    for _key, _value in scope.items(prefix=a):
                        pass
            else:
                for a in args:
                    for _key, _value in scope.items(start=a, limit=10):
                        pass

        return Trial(run, len(args), lambda: cm.__exit__(None, None, None))

    return make


def _raw_short(store: _Store, kind: str, prefix: bytes, stop: bytes, starts: list[bytes]) -> Factory:
    read = _hand_decoder(kind, len(prefix))
    stored = _hand_stored(kind, prefix)

    def make() -> Trial:
        txn = store.handle.begin()

        def run() -> None:
            for k in starts:
                cursor = txn.cursor()
                if cursor.set_range(stored(k)):
                    for _key, _value in read(cursor, stop, 10):
                        pass

        return Trial(run, len(starts), txn.abort)

    return make


def _ks_len(store: _Store, path: tuple[str, ...], n: int) -> Factory:
    """``len(scope)`` of the keyspace's scope (outside any transaction)."""

    def make() -> Trial:
        scope = store.handle.scope(*path)
        return Trial(lambda: len(scope), n)

    return make


def _raw_count(store: _Store, kind: str, layout: Any, n: int) -> Factory:
    """The own keys counted by hand in one read transaction: a keys-only cursor
    loop over each own range (hex: the keys with no ``00`` after the prefix, the
    others being children's)."""
    ranges, plen = layout.ranges, len(layout.prefix)

    def make() -> Trial:
        env = store.handle

        def run() -> int:
            count = 0
            with env.begin() as txn:
                cursor = txn.cursor()
                for lo, hi in ranges:
                    if not cursor.set_range(lo):
                        break
                    for k in cursor.iternext(values=False):
                        if hi is not None and k >= hi:
                            break
                        if kind != "hex" or _Z not in k[plen:]:
                            count += 1
            return count

        return Trial(run, n)

    return make


def _raw_prefix(store: _Store, kind: str, prefix: bytes, stop: bytes, heads: list[bytes]) -> Factory:
    """The keys starting with each head, decoded, by hand in one read transaction:
    one cursor range where the stored keys of a byte prefix are contiguous; for
    u64len (each key's length before it) a skip over the lengths stored, a range
    each."""
    read = _hand_decoder(kind, len(prefix))
    stored = _hand_stored(kind, prefix)
    at, many = len(prefix), 1 << 40

    def by_length(cursor: Any, head: bytes) -> None:
        found = cursor.set_range(prefix)
        while found and (key := cursor.key()) < stop:
            run = key[: at + 8]
            if int.from_bytes(run[at:], "little") >= len(head) and cursor.set_range(run + head):
                for _key, _value in read(cursor, _after(run + head), many):
                    pass
            found = cursor.set_range(_after(run))

    def make() -> Trial:
        txn = store.handle.begin()

        def run() -> None:
            for head in heads:
                cursor = txn.cursor()
                if kind == "u64len":
                    by_length(cursor, head)
                    continue
                start = stored(head)
                if cursor.set_range(start):
                    for _key, _value in read(cursor, _after(start), many):
                        pass

        return Trial(run, len(heads), txn.abort)

    return make


def _commits_interleaved(
    scheme: Scheme, path: tuple[str, ...], kind: str, keys: list[bytes]
) -> dict[str, float]:
    """One commit per put, keyspace and hand-written py-lmdb alternating commit by
    commit (the order flipped every time), each commit timed on its own: the
    median ns of each. Each commit is an fsync whose time drifts with the disk, so
    comparing neighbours, not whole runs, is what tells the keyspace's cost apart."""
    ks_dir, raw_dir = Fresh(), Fresh()
    ks = _open(ks_dir.path, scheme)
    env = _raw_env(raw_dir.path)
    try:
        scope = ks.scope(*path)
        scope[b"\x01first"] = _V  # the scope's first write (its records) is not timed
        stored = _hand_stored(kind, scheme.layout(path).prefix)

        def ks_one(k: bytes) -> None:
            scope[k] = _V

        def raw_one(k: bytes) -> None:
            with env.begin(write=True) as txn:
                txn.put(stored(k), _V)

        times: dict[str, list[int]] = {"keyspace": [], "py-lmdb": []}
        clock = time.perf_counter_ns
        for i, k in enumerate(keys):
            pair = (("keyspace", ks_one), ("py-lmdb", raw_one))
            for name, one in pair if i % 2 == 0 else pair[::-1]:
                t0 = clock()
                one(k)
                times[name].append(clock() - t0)
        return {name: float(statistics.median(t)) for name, t in times.items()}
    finally:
        ks.close()
        env.close()
        ks_dir.remove()
        raw_dir.remove()


@workload("layouts")
def layouts_lmdb(ctx: Context) -> Iterator[Comparison]:
    """Every scheme on LMDB against hand-written py-lmdb storing the same bytes."""
    n = ctx.n(20_000, 500)
    keys = _keys(n)
    reads = _data.shuffled(keys)
    starts = reads[: ctx.n(2_000, 50)]
    heads = [k[:1] for k in reads[: ctx.n(200, 10)]]  # about n / 256 keys each
    commits = keys[: ctx.n(600, 6)]
    t110, t120, t105 = Target(1.10), Target(1.20), Target(1.05)
    for name, scheme, path in _SCHEMES:
        kind = _KIND[name]
        layout = scheme.layout(path)
        prefix = layout.prefix
        stop = layout.ranges[-1][1] or b"\xff" * 8
        stored = [layout.stored(k) for k in keys]
        assert [_hand_stored(kind, prefix)(k) for k in keys[:50]] == stored[:50], name
        yield Comparison(
            "layouts",
            f"{name} put in txn",
            {"keyspace": _ks_put_txn(scheme, path, keys), "py-lmdb": _raw_put_txn(kind, prefix, keys)},
            [Ratio(f"LMDB {name} put in txn", "keyspace", "py-lmdb", t110)],
            rounds=ctx.fine,
        )
        ks_store, raw_store = _ks_store(ctx, scheme, path, keys), _raw_store(ctx, stored)
        yield Comparison(
            "layouts",
            f"{name} get in txn",
            {
                "keyspace": _ks_get_txn(ks_store, path, reads),
                "py-lmdb": _raw_get_txn(raw_store, kind, prefix, reads),
            },
            [Ratio(f"LMDB {name} get in txn", "keyspace", "py-lmdb", t110)],
            rounds=ctx.fine,
        )
        yield Comparison(
            "layouts",
            f"{name} get in snapshot",
            {
                "keyspace": _ks_get_snapshot(ks_store, path, reads),
                "py-lmdb": _raw_get_txn(raw_store, kind, prefix, reads, write=False),
            },
            [Ratio(f"LMDB {name} get in snapshot", "keyspace", "py-lmdb", t110)],
            rounds=ctx.fine,
        )
        yield Comparison(
            "layouts",
            f"{name} scan",
            {"keyspace": _ks_scan(ks_store, path, n), "py-lmdb": _raw_scan(raw_store, kind, prefix, stop, n)},
            [Ratio(f"LMDB {name} scan per item", "keyspace", "py-lmdb", t110)],
            rounds=ctx.fine,
        )
        yield Comparison(
            "layouts",
            f"{name} items(start, limit=10)",
            {
                "keyspace": _ks_items(ks_store, path, "transaction", starts, by_prefix=False),
                "py-lmdb": _raw_short(raw_store, kind, prefix, stop, starts),
            },
            [Ratio(f"LMDB {name} items(start, limit=10)", "keyspace", "py-lmdb", t120)],
            rounds=ctx.fine,
        )
        yield Comparison(
            "layouts",
            f"{name} len",
            {"keyspace": _ks_len(ks_store, path, n), "py-lmdb": _raw_count(raw_store, kind, layout, n)},
            [Ratio(f"LMDB {name} len()", "keyspace", "py-lmdb", t120)],
            rounds=ctx.fine,
        )
        if name != "tuple":  # the tuple scheme's prefix= is leading elements, not bytes
            yield Comparison(
                "layouts",
                f"{name} items(prefix=) of one byte",
                {
                    "keyspace": _ks_items(ks_store, path, "snapshot", heads, by_prefix=True),
                    "py-lmdb": _raw_prefix(raw_store, kind, prefix, stop, heads),
                },
                [Ratio(f"LMDB {name} items(prefix=) of one byte", "keyspace", "py-lmdb", t120)],
                rounds=ctx.fine,
            )
        yield Comparison(
            "layouts",
            f"{name} one commit per put",
            {},
            [Ratio(f"LMDB {name} one commit per put", "keyspace", "py-lmdb", t105)],
            measured=_commits_interleaved(scheme, path, kind, commits),
        )


# -- LevelDB: Sublevel against prefixed_db ---------------------------------------------------


@workload("sublevel-leveldb")
def sublevel_leveldb(ctx: Context) -> Iterator[Comparison]:
    """A Sublevel scope on LevelDB against plyvel's ``prefixed_db`` storing the same
    bytes: put, get, scan, and a transaction against ``write_batch(transaction=True)``."""
    import plyvel

    n = ctx.n(20_000, 500)
    keys = _keys(n)
    reads = _data.shuffled(keys)
    scheme = Sublevel()
    prefix = scheme.prefix(_PATH)

    def fresh_ks() -> tuple[Keyspace, Fresh]:
        d = Fresh()
        return _open(d.path, scheme, "leveldb"), d

    def fresh_db() -> tuple[Any, Fresh]:
        d = Fresh()
        return plyvel.DB(f"{d.path}/db", create_if_missing=True), d

    def ks_put() -> Trial:
        ks, d = fresh_ks()
        scope = ks.scope(*_PATH)
        scope[b"\x01first"] = _V

        def run() -> None:
            for k in keys:
                scope[k] = _V

        return Trial(run, n, _all(ks.close, d.remove))

    def db_put() -> Trial:
        db, d = fresh_db()
        pdb = db.prefixed_db(prefix)
        put = pdb.put

        def run() -> None:
            for k in keys:
                put(k, _V)

        return Trial(run, n, _all(db.close, d.remove))

    def ks_tx() -> Trial:
        ks, d = fresh_ks()
        ks.scope(*_PATH)[b"\x01first"] = _V

        def run() -> None:
            with ks.transaction() as tx:
                scope = tx.scope(*_PATH)
                for k in keys:
                    scope[k] = _V

        return Trial(run, n, _all(ks.close, d.remove))

    def db_tx() -> Trial:
        db, d = fresh_db()
        pdb = db.prefixed_db(prefix)

        def run() -> None:
            with pdb.write_batch(transaction=True) as wb:
                put = wb.put
                for k in keys:
                    put(k, _V)

        return Trial(run, n, _all(db.close, d.remove))

    at_most_1 = Target(1.0)
    yield Comparison(
        "leveldb",
        "sublevel put",
        {"keyspace": ks_put, "prefixed_db": db_put},
        [Ratio("LevelDB Sublevel put vs prefixed_db", "keyspace", "prefixed_db", at_most_1)],
    )
    yield Comparison(
        "leveldb",
        "sublevel transaction",
        {"keyspace": ks_tx, "prefixed_db": db_tx},
        [Ratio("LevelDB Sublevel txn vs write_batch(transaction)", "keyspace", "prefixed_db", Target(1.2))],
    )

    # Both stores are reopened once built: LevelDB then holds the keys in a table
    # file, not in the memtable of the writes (whose node order in memory follows
    # the order of the writes), so reads of both find the same structure.
    def build_ks(directory: str) -> tuple[Any, Callable[[], object]]:
        ks = _open(directory, scheme, "leveldb")
        ks.scope(*_PATH).update({k: _V for k in keys})
        ks.close()
        ks = _open(directory, scheme, "leveldb")
        return ks, ks.close

    def build_db(directory: str) -> tuple[Any, Callable[[], object]]:
        db = plyvel.DB(f"{directory}/db", create_if_missing=True)
        with db.prefixed_db(prefix).write_batch() as wb:
            for k in keys:
                wb.put(k, _V)
        db.close()
        db = plyvel.DB(f"{directory}/db")
        return (db, db.prefixed_db(prefix)), db.close

    ks_store, db_store = _Store(ctx, build_ks), _Store(ctx, build_db)

    def ks_get() -> Trial:
        scope = ks_store.handle.scope(*_PATH)

        def run() -> None:
            for k in reads:
                scope[k]

        return Trial(run, n)

    def db_get() -> Trial:
        get = db_store.handle[1].get

        def run() -> None:
            for k in reads:
                get(k)

        return Trial(run, n)

    def ks_scan() -> Trial:
        scope = ks_store.handle.scope(*_PATH)

        def run() -> None:
            for _k, _v in scope.items():
                pass

        return Trial(run, n)

    def db_scan() -> Trial:
        pdb = db_store.handle[1]

        # the scope's own keys: those of its child sublevels ("!" after the
        # prefix) lie between two ranges, as in abstract-level
        def run() -> None:
            for _k, _v in chain(pdb.iterator(stop=b"!"), pdb.iterator(start=b'"')):
                pass

        return Trial(run, n)

    def db_scan_all() -> Trial:
        pdb = db_store.handle[1]

        def run() -> None:
            for _k, _v in pdb.iterator():
                pass

        return Trial(run, n)

    yield Comparison(
        "leveldb",
        "sublevel get",
        {"keyspace": ks_get, "prefixed_db": db_get},
        [Ratio("LevelDB Sublevel get vs prefixed_db", "keyspace", "prefixed_db", at_most_1)],
        rounds=ctx.fine,
    )
    yield Comparison(
        "leveldb",
        "sublevel scan",
        {"keyspace": ks_scan, "prefixed_db": db_scan, "prefixed_db, children too": db_scan_all},
        [
            Ratio("LevelDB Sublevel scan vs prefixed_db", "keyspace", "prefixed_db", at_most_1),
            Ratio(
                "LevelDB Sublevel scan vs one prefixed_db iterator (children's keys too)",
                "keyspace",
                "prefixed_db, children too",
            ),
        ],
        rounds=ctx.fine,
    )


# -- typed scopes, the pure-Python path, scope per call ----------------------------------------


@workload("typed")
def typed(ctx: Context) -> Iterator[Comparison]:
    """Typed scopes (str keys, json values, tuple scheme, LMDB in a transaction)
    against hand-written code with a prebuilt JSON encoder."""
    n = ctx.n(20_000, 500)
    names = [k.hex() for k in _data.keys(n)]
    docs = [{"id": i, "name": name[:8], "tags": ["a", "b"]} for i, name in enumerate(names)]
    prefix2 = TupleScheme().prefix(_PATH) + b"\x02"
    encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
    loads = json.loads

    def ks_put() -> Trial:
        d = Fresh()
        ks = _open(d.path, TupleScheme())
        cm = ks.transaction()
        scope = cm.__enter__().scope(*_PATH, key="str", value="json")

        def run() -> None:
            for k, doc in zip(names, docs, strict=True):
                scope[k] = doc

        return Trial(run, n, _all(lambda: cm.__exit__(None, None, None), ks.close, d.remove))

    def raw_put() -> Trial:
        d = Fresh()
        env = _raw_env(d.path)
        txn = env.begin(write=True)
        put = txn.put

        def run() -> None:
            for k, doc in zip(names, docs, strict=True):
                put(prefix2 + k.encode().replace(_Z, _ZF) + _Z, encode(doc).encode())

        return Trial(run, n, _all(txn.commit, env.close, d.remove))

    yield Comparison(
        "typed",
        "str/json put in txn",
        {"keyspace": ks_put, "py-lmdb": raw_put},
        [Ratio("typed scope put (str keys, json values)", "keyspace", "py-lmdb", Target(1.10))],
        rounds=ctx.fine,
    )

    def build_ks(directory: str) -> tuple[Any, Callable[[], object]]:
        ks = _open(directory, TupleScheme())
        ks.scope(*_PATH, key="str", value="json").update(zip(names, docs, strict=True))
        return ks, ks.close

    def build_raw(directory: str) -> tuple[Any, Callable[[], object]]:
        env = _raw_env(directory)
        with env.begin(write=True) as txn:
            for k, doc in zip(names, docs, strict=True):
                txn.put(prefix2 + k.encode().replace(_Z, _ZF) + _Z, encode(doc).encode())
        return env, env.close

    ks_store, raw_store = _Store(ctx, build_ks), _Store(ctx, build_raw)
    reads = [names[i] for i in range(n - 1, -1, -1)]  # another order than the writes

    def ks_get() -> Trial:
        cm = ks_store.handle.transaction()
        scope = cm.__enter__().scope(*_PATH, key="str", value="json")

        def run() -> None:
            for k in reads:
                scope[k]

        return Trial(run, n, lambda: cm.__exit__(None, None, None))

    def raw_get() -> Trial:
        txn = raw_store.handle.begin()
        get = txn.get

        def run() -> None:
            for k in reads:
                loads(get(prefix2 + k.encode().replace(_Z, _ZF) + _Z))

        return Trial(run, n, txn.abort)

    yield Comparison(
        "typed",
        "str/json get in txn",
        {"keyspace": ks_get, "py-lmdb": raw_get},
        [Ratio("typed scope get (str keys, json values)", "keyspace", "py-lmdb", Target(1.10))],
        rounds=ctx.fine,
    )


class _PythonScope(Scope):
    """A scope with the pure-Python point operations (what runs without the C module)."""

    __slots__ = ()
    __getitem__ = PointOps.__getitem__
    get = PointOps.get
    __setitem__ = PointOps.__setitem__
    __delitem__ = PointOps.__delitem__


def _python_scope(ks: Keyspace, view: Any, catalog: Any) -> Scope:
    return _PythonScope(ks._space, view, catalog, _PATH, BYTES, BYTES)


def _python_keyspace(directory: str) -> Keyspace:
    ks = _open(directory, TupleScheme())
    ks._space.layouts = LayoutCache(ks.scheme, accelerate=False)
    return ks


@workload("no-c")
def no_c(ctx: Context) -> Iterator[Comparison]:
    """The tuple scheme without the C module (pure-Python layout and point
    operations) against hand-written py-lmdb: put and get in a transaction, scan."""
    n = ctx.n(20_000, 500)
    keys = _keys(n)
    reads = _data.shuffled(keys)
    prefix = TupleScheme().prefix(_PATH)
    t125 = Target(1.25)

    def ks_put() -> Trial:
        d = Fresh()
        ks = _python_keyspace(d.path)
        cm = ks.transaction()
        tx = cm.__enter__()
        scope = _python_scope(ks, tx.view, tx.catalog)
        assert not scope.layout.accelerated

        def run() -> None:
            for k in keys:
                scope[k] = _V

        return Trial(run, n, _all(lambda: cm.__exit__(None, None, None), ks.close, d.remove))

    yield Comparison(
        "no-c",
        "tuple put in txn, no C",
        {"keyspace": ks_put, "py-lmdb": _raw_put_txn("tuple", prefix, keys)},
        [Ratio("no C: tuple put in txn", "keyspace", "py-lmdb", t125)],
        rounds=ctx.fine,
    )

    def build(directory: str) -> tuple[Any, Callable[[], object]]:
        ks = _python_keyspace(directory)
        ks.scope(*_PATH).update({k: _V for k in keys})
        return ks, ks.close

    ks_store = _Store(ctx, build)
    raw_store = _raw_store(ctx, [TupleScheme().encode(_PATH, k) for k in keys])

    def ks_scan() -> Trial:
        ks: Keyspace = ks_store.handle
        scope = _python_scope(ks, ks.store, ks.catalog)

        def run() -> None:
            for _k, _v in scope.items():
                pass

        return Trial(run, n)

    def python_scope(tx: Any) -> Scope:
        return _python_scope(tx.keyspace, tx.view, tx.catalog)

    yield Comparison(
        "no-c",
        "tuple get in txn, no C",
        {
            "keyspace": _ks_get_txn(ks_store, _PATH, reads, python_scope),
            "py-lmdb": _raw_get_txn(raw_store, "tuple", prefix, reads),
        },
        [Ratio("no C: tuple get in txn", "keyspace", "py-lmdb", t125)],
        rounds=ctx.fine,
    )
    yield Comparison(
        "no-c",
        "tuple get in snapshot, no C",
        {
            "keyspace": _ks_get_snapshot(ks_store, _PATH, reads, python_scope),
            "py-lmdb": _raw_get_txn(raw_store, "tuple", prefix, reads, write=False),
        },
        [Ratio("no C: tuple get in snapshot", "keyspace", "py-lmdb", t125)],
        rounds=ctx.fine,
    )
    yield Comparison(
        "no-c",
        "tuple scan, no C",
        {"keyspace": ks_scan, "py-lmdb": _raw_scan(raw_store, "tuple", prefix, prefix + b"\xff", n)},
        [Ratio("no C: tuple scan per item", "keyspace", "py-lmdb", t125)],
        rounds=ctx.fine,
    )


@workload("scope-per-call")
def scope_per_call(ctx: Context) -> Iterator[Comparison]:
    """``ks.scope("tenant1", "users").get(k)``, the scope made per call, against a
    raw get (its own read transaction each, as the keyspace's get outside a
    transaction)."""
    n = ctx.n(20_000, 500)
    keys = _keys(n)
    reads = _data.shuffled(keys)
    scheme = TupleScheme()
    ks_store = _ks_store(ctx, scheme, _PATH, keys)
    raw_store = _raw_store(ctx, [scheme.encode(_PATH, k) for k in keys])
    p1 = scheme.prefix(_PATH) + b"\x01"

    def ks_get() -> Trial:
        ks: Keyspace = ks_store.handle

        def run() -> None:
            for k in reads:
                ks.scope("tenant1", "users").get(k)

        return Trial(run, n)

    def raw_get() -> Trial:
        env = raw_store.handle

        def run() -> None:
            for k in reads:
                with env.begin() as txn:
                    txn.get(p1 + k.replace(_Z, _ZF) + _Z)

        return Trial(run, n)

    yield Comparison(
        "per-call",
        "scope made per get",
        {"keyspace": ks_get, "py-lmdb": raw_get},
        [Ratio("ks.scope(t, 'users').get(k) per call vs raw get", "keyspace", "py-lmdb", Target(1.5))],
    )

    # a snapshot per request: the block, its scope and `reads` gets, against one
    # read transaction and as many gets by hand
    for per, target in ((1, 4.0), (10, 1.5)):
        groups = [reads[i : i + per] for i in range(0, n - n % per, per)]

        def ks_snap(groups: list[list[bytes]] = groups) -> Trial:
            ks: Keyspace = ks_store.handle

            def run() -> None:
                for group in groups:
                    with ks.snapshot() as snap:
                        scope = snap.scope("tenant1", "users")
                        for k in group:
                            scope.get(k)

            return Trial(run, len(groups))

        def raw_snap(groups: list[list[bytes]] = groups) -> Trial:
            env = raw_store.handle

            def run() -> None:
                for group in groups:
                    with env.begin() as txn:
                        for k in group:
                            txn.get(p1 + k.replace(_Z, _ZF) + _Z)

            return Trial(run, len(groups))

        what = "one get" if per == 1 else f"{per} gets"
        yield Comparison(
            "per-call",
            f"a snapshot per request, {what}",
            {"keyspace": ks_snap, "py-lmdb": raw_snap},
            [Ratio(f"snapshot per request, {what}, vs raw read txn", "keyspace", "py-lmdb", Target(target))],
        )


# -- structure: scopes(), len, inspect ------------------------------------------------------


def _children_store(ctx: Context, scheme: Scheme, names: list[str]) -> _Store:
    """A store whose scope ``("tenant1",)`` has ``names`` as children, one key each."""

    def build(directory: str) -> tuple[Any, Callable[[], object]]:
        ks = _open(directory, scheme)
        with ks.transaction() as tx:
            for child in names:
                tx.scope("tenant1", child)[b"k"] = _V
        return ks, ks.close

    return _Store(ctx, build)


def _scopes_pair(ctx: Context, scheme: Scheme, name: str, names: list[str]) -> dict[str, Factory]:
    """``scope("tenant1").scopes()`` of a byte scheme with ``names`` as children,
    and the skip loop by hand over the same store: one seek per child, the name
    read off the stored key and the next seek past the child's subtree."""
    parent = scheme.prefix(("tenant1",))
    at = len(parent)
    store = _children_store(ctx, scheme, names)
    assert store.handle.scope("tenant1").scopes() == [c.encode() for c in names]

    child_end = _data.child_end(name, at)

    def ks_scopes() -> Trial:
        scope = store.handle.scope("tenant1")
        return Trial(scope.scopes, len(names))

    def raw_scopes() -> Trial:
        env = store.handle.store._env

        def run() -> list[bytes]:
            found = []
            with env.begin() as txn:
                cursor = txn.cursor()
                ok = cursor.set_range(parent)
                while ok:
                    k = cursor.key()
                    if not k.startswith(parent):
                        break
                    got = child_end(k)
                    if got is None:  # an own key of the parent: none here
                        ok = cursor.set_range(k + _Z)
                        continue
                    found.append(got[0])
                    ok = cursor.set_range(_after(k[: got[1]]))
            return found

        return Trial(run, len(names))

    return {"keyspace": ks_scopes, "py-lmdb": raw_scopes}


@workload("structure")
def structure(ctx: Context) -> Iterator[Comparison]:
    """``scopes()`` of a scope with many children against a raw skip loop, ``len``
    against a raw cursor count, ``keyspace inspect``'s scan against a raw full scan."""
    from keyspace.cli.inspect_cmd import scope_tree

    children = ctx.n(100_000, 500)
    scheme = TupleScheme()
    names = [f"u{i:07d}" for i in range(children)]
    parent = scheme.prefix(("tenant1",))[:-1]  # P: the parent's subtree prefix
    plen = len(parent)
    store = _children_store(ctx, scheme, names)
    assert store.handle.scope("tenant1").scopes() == names

    def ks_scopes() -> Trial:
        scope = store.handle.scope("tenant1")
        return Trial(scope.scopes, children)

    def raw_scopes() -> Trial:
        env = store.handle.store._env

        def run() -> list[str]:
            found = []
            with env.begin() as txn:
                cursor = txn.cursor()
                ok = cursor.set_range(parent)
                while ok:
                    k = cursor.key()
                    if not k.startswith(parent) or k[plen] != 2:
                        break
                    end = k.index(0, plen + 1)
                    found.append(k[plen + 1 : end].decode())
                    ok = cursor.set_range(k[: end + 1] + b"\xff")
            return found

        return Trial(run, children)

    yield Comparison(
        "structure",
        f"scopes() of {children:,} children",
        {"keyspace": ks_scopes, "py-lmdb": raw_scopes},
        [Ratio(f"scopes() of {children:,} children vs raw skip loop", "keyspace", "py-lmdb", Target(2.0))],
    )

    # scopes() of the byte schemes, against the skip loop their layout asks for
    few = ctx.n(20_000, 200)
    few_names = [f"u{i:07d}" for i in range(few)]
    for name, byte_scheme in (
        ("sublevel", Sublevel()),
        ("asciihex", AsciiHex()),
        ("length-prefixed", LengthPrefixed()),
    ):
        yield Comparison(
            "structure",
            f"{name} scopes() of {few:,} children",
            _scopes_pair(ctx, byte_scheme, name, few_names),
            [
                Ratio(
                    f"{name} scopes() of {few:,} children vs raw skip loop",
                    "keyspace",
                    "py-lmdb",
                    Target(2.0),
                )
            ],
        )

    n = ctx.n(200_000, 1000)
    keys = _keys(n)
    big = _ks_store(ctx, scheme, _PATH, keys)
    lo, hi = scheme.own_range(_PATH)
    assert hi is not None

    def ks_len() -> Trial:
        scope = big.handle.scope(*_PATH)
        return Trial(lambda: len(scope), n)

    def raw_count() -> Trial:
        env = big.handle.store._env

        def run() -> int:
            count = 0
            with env.begin() as txn:
                cursor = txn.cursor()
                cursor.set_range(lo)
                for k in cursor.iternext(values=False):
                    if k >= hi:
                        break
                    count += 1
            return count

        return Trial(run, n)

    yield Comparison(
        "structure",
        "len",
        {"keyspace": ks_len, "py-lmdb": raw_count},
        [Ratio(f"len() of {n:,} keys vs raw cursor count", "keyspace", "py-lmdb", Target(1.2))],
    )

    tenants = 20
    per = n // tenants

    def build_tree(directory: str) -> tuple[Any, Callable[[], object]]:
        ks = _open(directory, scheme)
        with ks.transaction() as tx:
            for t in range(tenants):
                tx.scope(f"tenant{t:02d}", "users").update({k: _V for k in keys[t * per : (t + 1) * per]})
        return ks, ks.close

    tree = _Store(ctx, build_tree)
    total = per * tenants + 1  # and the scheme record

    def ks_inspect() -> Trial:
        return Trial(lambda: scope_tree(tree.handle), total)

    def raw_full_scan() -> Trial:
        env = tree.handle.store._env

        def run() -> None:
            with env.begin() as txn:
                for _k, _v in txn.cursor():
                    pass

        return Trial(run, total)

    yield Comparison(
        "structure",
        f"inspect of {total:,} keys",
        {"keyspace": ks_inspect, "py-lmdb": raw_full_scan},
        [Ratio(f"keyspace inspect of {total:,} keys vs raw full scan", "keyspace", "py-lmdb", Target(3.0))],
    )


# -- memory of update -----------------------------------------------------------------------

_MEMORY_PROGRAM = """
import os, resource, sys
import lmdb
import keyspace
n, variant, directory = int(sys.argv[1]), sys.argv[2], sys.argv[3]
value = bytes(range(32))
pairs = ((b"key-%012d" % i, value) for i in range(n))
scheme = keyspace.schemes.TupleScheme()
p1 = scheme.prefix(("tenant1", "users")) + b"\\x01"
record_key = scheme.metadata_key
from keyspace import _metadata
record = _metadata.record(scheme)
if variant == "keyspace":
    ks = keyspace.open(f"lmdb://{directory}/db")
    ks.scope("tenant1", "users").update(pairs)
    ks.close()
else:
    env = lmdb.open(f"{directory}/db", map_size=1 << 40)
    with env.begin(write=True) as txn:
        put = txn.put
        put(record_key, record)  # the same bytes: the keyspace's scheme record too
        for k, v in pairs:
            put(p1 + k.replace(b"\\0", b"\\0\\xff") + b"\\0", v)
    env.close()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_kib(variant: str, n: int) -> int:
    d = Fresh()
    try:
        out = subprocess.run(
            [sys.executable, "-c", _MEMORY_PROGRAM, str(n), variant, d.path],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        return max(1, int(out.stdout.strip()))
    finally:
        d.remove()


@workload("update-memory")
def update_memory(ctx: Context) -> Iterator[Comparison]:
    """Peak resident memory of a process that writes n pairs from an iterator with
    ``scope.update(iterator)`` against one that runs a raw put loop over the same
    iterator in one LMDB write transaction, with the keyspace's scheme record (the
    same bytes: a key after all the others changes how LMDB fills its pages); each
    process imports keyspace and lmdb; KiB, in the table's keyspace/competitor
    columns."""
    n = ctx.n(1_000_000, 20_000)
    peaks = {variant: _peak_kib(variant, n) for variant in ("keyspace", "raw")}

    yield Comparison(
        "memory",
        f"update of {n:,} pairs, peak memory",
        {},
        [Ratio(f"update({n:,} pairs) peak memory vs raw put loop", "keyspace", "raw put loop", Target(1.2))],
        measured={"keyspace": float(peaks["keyspace"]), "raw put loop": float(peaks["raw"])},
        unit="KiB",
    )
