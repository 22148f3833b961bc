"""Reads of a store another program wrote: the keys loaded with py-lmdb or sqlite3
directly (no scheme record, nothing of keyspace's), the keyspace opened on it
with the scheme named, as a user opening data that CosmWasm, Node or a
hand-made delimiter wrote does. Every read row, on LMDB and on SQLite, against
hand-written code on the raw binding reading the same bytes.

Rows: a scope made per request (100 tenants, random keys) with each get its
own read transaction, the same in one snapshot, one scope held; short scans
(``items(start=k, limit=10)``, random starts, each call its own read
transaction, and all in one transaction of the keyspace against one read
transaction of the raw binding) on a scope of 50,000 keys; ``scopes()`` of a scope with 20,000
children; ``len()`` of a scope of 300,000 keys.
"""

from __future__ import annotations

import binascii
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import keyspace
from keyspace.keyspace import Keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes.scope_hash import registry_key

from . import _data
from ._data import after as _after
from ._data import hand_stored as _stored
from ._data import scheme_keys as _keys
from ._engines import Fresh, load_raw
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload

_V = _data.VALUE
_Z, _ZF = b"\x00", b"\x00\xff"
_unhexlify = binascii.unhexlify
_GET = "SELECT v FROM kv WHERE k = ?"
_SHORT = "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k LIMIT ?"

# (name, scheme, kind of key transform, the path of tenant t's users scope)
_SCHEMES: list[tuple[str, Scheme, str, Callable[[str], tuple[str, ...]]]] = [
    ("tuple", TupleScheme(), "tuple", lambda t: (t, "users")),
    ("length-prefixed", LengthPrefixed(), "raw", lambda t: (t, "users")),
    ("asciihex", AsciiHex(), "hex", lambda t: (t, "users")),
    ("sublevel", Sublevel(), "raw", lambda t: (t, "users")),
    ("scopehash", ScopeHash(), "u64len", lambda t: (f"{t}.users",)),
]


def _decode(kind: str, plen: int) -> Callable[[bytes], bytes | None]:
    """The hand-written inverse (``None``: a child's key, for hex)."""
    if kind == "tuple":
        return lambda s: s[plen + 1 : -1].replace(_ZF, _Z)
    if kind == "hex":
        return lambda s: None if _Z in s[plen:] else _unhexlify(s[plen:])
    at = plen + 8 if kind == "u64len" else plen
    return lambda s: s[at:]


class _Foreign:
    """A store of ``engine`` holding ``pairs`` written by the raw binding alone, a
    keyspace opened on it with ``scheme`` named, and the raw handle the
    competitors read (LMDB: the keyspace's own environment, one per process;
    SQLite: a connection of its own). Closed when the workload ends."""

    def __init__(
        self, ctx: Context, engine: str, scheme: Scheme, pairs: list[tuple[bytes, bytes]], depth: int
    ) -> None:
        d = Fresh()
        ctx.defer(d.remove)
        self.engine = engine
        options: dict[str, Any] = {"leaf_depth": depth} if not scheme.separates_own_keys else {}
        self.ks: Keyspace = keyspace.open(load_raw(engine, d.path, pairs), scheme=scheme, **options)
        if engine == "lmdb":
            self.raw: Any = self.ks.store._env  # type: ignore[attr-defined]
        else:
            self.raw = sqlite3.connect(f"{d.path}/db.sqlite", isolation_level=None, check_same_thread=False)
            ctx.defer(self.raw.close)
        ctx.defer(self.ks.close)


# -- point reads ---------------------------------------------------------------------------


def _columns(asks: list[tuple[tuple[str, ...], bytes]]) -> tuple[list[tuple[str, ...]], list[bytes]]:
    """The requests as two lists, paths and keys, which every variant iterates
    with ``zip``: the requests are built long before a round, in a heap other
    rows have fragmented, and a variant iterating a list of their tuples pays
    a cache miss per request where the tuples lie scattered (more than the
    other variant's, built at another moment), which the figures showed as
    keyspace's. Iterated in ``zip``, both read only shared objects."""
    return [path for path, _ in asks], [k for _, k in asks]


def _ks_per_request(store: _Foreign, asks: list[tuple[tuple[str, ...], bytes]], snapshot: bool) -> Factory:
    paths, keys = _columns(asks)

    def make() -> Trial:
        ks = store.ks

        def own() -> None:
            scope = ks.scope
            for path, k in zip(paths, keys, strict=True):
                scope(*path).get(k)

        def in_snapshot() -> None:
            with ks.snapshot() as snap:
                scope = snap.scope
                for path, k in zip(paths, keys, strict=True):
                    scope(*path).get(k)

        return Trial(in_snapshot if snapshot else own, len(asks))

    return make


def _raw_per_request(
    store: _Foreign,
    asks: list[tuple[tuple[str, ...], bytes]],
    stored: dict[tuple[str, ...], Callable[[bytes], bytes]],
    snapshot: bool,
) -> Factory:
    """The hand-written reads: the stored key from a prefix per tenant (computed
    once) and the key transform; LMDB: a read transaction per get (or one for
    all), SQLite: one statement per get (or all in one BEGIN ... COMMIT)."""
    paths, keys = _columns(asks)
    encs = [stored[path] for path in paths]

    def make() -> Trial:
        raw = store.raw
        if store.engine == "lmdb":

            def own() -> None:
                begin = raw.begin
                for enc, k in zip(encs, keys, strict=True):
                    with begin() as txn:
                        txn.get(enc(k))

            def in_snapshot() -> None:
                with raw.begin() as txn:
                    get = txn.get
                    for enc, k in zip(encs, keys, strict=True):
                        get(enc(k))

            return Trial(in_snapshot if snapshot else own, len(keys))

        def sql_own() -> None:
            execute = raw.execute
            for enc, k in zip(encs, keys, strict=True):
                execute(_GET, (enc(k),)).fetchone()

        def sql_snapshot() -> None:
            execute = raw.execute
            execute("BEGIN")
            for enc, k in zip(encs, keys, strict=True):
                execute(_GET, (enc(k),)).fetchone()
            execute("COMMIT")

        return Trial(sql_snapshot if snapshot else sql_own, len(keys))

    return make


def _ks_held(store: _Foreign, path: tuple[str, ...], keys: list[bytes]) -> Factory:
    def make() -> Trial:
        get = store.ks.scope(*path).get

        def run() -> None:
            for k in keys:
                get(k)

        return Trial(run, len(keys))

    return make


# -- short scans, len, scopes() ----------------------------------------------------------------


def _ks_short(store: _Foreign, path: tuple[str, ...], starts: list[bytes], held: bool = False) -> Factory:
    """``items(start=k, limit=10)`` from each start: each call its own read, or
    (``held``) all in one transaction of the keyspace, the scope made in it."""

    def make() -> Trial:
        def run() -> None:
            items = scope.items
            for k in starts:
                for _key, _value in items(start=k, limit=10):
                    pass

        if not held:
            scope = store.ks.scope(*path)
            return Trial(run, len(starts))
        block = store.ks.transaction()
        scope = block.__enter__().scope(*path)
        return Trial(run, len(starts), lambda: block.__exit__(None, None, None))

    return make


def _raw_short(
    store: _Foreign, kind: str, prefix: bytes, stop: bytes, starts: list[bytes], held: bool = False
) -> Factory:
    """Ten items from each start, each read in its own read transaction (LMDB) or
    one statement (SQLite), keys decoded by hand (hex: children's keys skipped);
    with ``held``, all in one read transaction (LMDB: a cursor per start) or one
    ``BEGIN ... COMMIT`` (SQLite)."""
    enc, dec = _stored(kind, prefix), _decode(kind, len(prefix))

    def make() -> Trial:
        raw = store.raw
        if store.engine == "lmdb" and held:
            txn = raw.begin()

            def run_held() -> None:
                for k in starts:
                    cursor = txn.cursor()
                    out: list[tuple[bytes, bytes]] = []
                    if cursor.set_range(enc(k)):
                        for s, v in cursor:
                            if s >= stop or len(out) == 10:
                                break
                            key = dec(s)
                            if key is not None:
                                out.append((key, v))

            return Trial(run_held, len(starts), txn.abort)
        if store.engine == "lmdb":

            def run() -> None:
                begin = raw.begin
                for k in starts:
                    with begin() as txn:
                        cursor = txn.cursor()
                        out: list[tuple[bytes, bytes]] = []
                        if cursor.set_range(enc(k)):
                            for s, v in cursor:
                                if s >= stop or len(out) == 10:
                                    break
                                key = dec(s)
                                if key is not None:
                                    out.append((key, v))

            return Trial(run, len(starts))

        def sql_run() -> None:
            execute = raw.execute
            if held:
                execute("BEGIN")
            for k in starts:
                out: list[tuple[bytes, bytes]] = []
                for s, v in execute(_SHORT, (enc(k), stop, 10)):
                    key = dec(s)
                    if key is not None:
                        out.append((key, v))
            if held:
                execute("COMMIT")

        return Trial(sql_run, len(starts))

    return make


def _ks_len(store: _Foreign, path: tuple[str, ...], n: int) -> Factory:
    def make() -> Trial:
        scope = store.ks.scope(*path)
        return Trial(lambda: len(scope), n)

    return make


def _raw_len(store: _Foreign, kind: str, prefix: bytes, stop: bytes, n: int) -> Factory:
    """The own keys counted by hand: LMDB, a keys-only cursor loop in one read
    transaction (hex: keys with a ``00`` after the prefix are children's);
    SQLite, one ``count(*)`` (hex: of the keys without a ``00`` after the prefix)."""
    plen = len(prefix)

    def make() -> Trial:
        raw = store.raw
        if store.engine == "lmdb":

            def run() -> int:
                count = 0
                with raw.begin() as txn:
                    cursor = txn.cursor()
                    if cursor.set_range(prefix):
                        for k in cursor.iternext(values=False):
                            if k >= stop:
                                break
                            if kind != "hex" or _Z not in k[plen:]:
                                count += 1
                return count

            return Trial(run, n)
        sql = "SELECT count(*) FROM kv WHERE k >= ? AND k < ?"
        if kind == "hex":
            sql += f" AND instr(substr(k, {plen + 1}), x'00') = 0"
        return Trial(lambda: raw.execute(sql, (prefix, stop)).fetchone(), n)

    return make


def _raw_scopes(store: _Foreign, name: str, parent: bytes, count: int) -> Factory:
    """The skip loop by hand: one seek per child, its name read off the stored key,
    the next seek past its subtree (LMDB: one cursor; SQLite: one ``LIMIT 1``
    statement per seek, in one read transaction)."""
    child = _data.child_end(name, len(parent))
    end = _after(parent)

    def make() -> Trial:
        raw = store.raw
        if store.engine == "lmdb":

            def run() -> list[bytes]:
                found = []
                with raw.begin() as txn:
                    cursor = txn.cursor()
                    ok = cursor.set_range(parent)
                    while ok:
                        k = cursor.key()
                        if k >= end:
                            break
                        got = child(k)
                        if got is None:
                            ok = cursor.set_range(k + _Z)
                            continue
                        found.append(got[0])
                        ok = cursor.set_range(_after(k[: got[1]]))
                return found

            return Trial(run, count)

        seek = "SELECT k FROM kv WHERE k >= ? AND k < ? ORDER BY k LIMIT 1"

        def sql_run() -> list[bytes]:
            found = []
            execute = raw.execute
            execute("BEGIN")
            row = execute(seek, (parent, end)).fetchone()
            while row is not None:
                k = row[0]
                got = child(k)
                if got is None:
                    row = execute(seek, (k + _Z, end)).fetchone()
                    continue
                found.append(got[0])
                row = execute(seek, (_after(k[: got[1]]), end)).fetchone()
            execute("COMMIT")
            return found

        return Trial(sql_run, count)

    return make


@workload("foreign")
def foreign(ctx: Context) -> Iterator[Comparison]:
    """Every read row on a store another program wrote, LMDB and SQLite."""
    tenants = [f"t{i:03d}" for i in range(ctx.n(100, 5))]
    per = ctx.n(200, 20)
    big = ctx.n(50_000, 300)
    counted = ctx.n(300_000, 500)
    children = ctx.n(20_000, 100)
    requests = ctx.n(20_000, 200)
    base = _keys(per)
    t110, t120, t150, t2 = Target(1.10), Target(1.20), Target(1.5), Target(2.0)
    for engine in ("lmdb", "sqlite"):
        label = "LMDB" if engine == "lmdb" else "SQLite"
        for name, scheme, kind, path_of in _SCHEMES:
            paths = {t: path_of(t) for t in tenants}
            prefixes = {paths[t]: scheme.layout(paths[t]).prefix for t in tenants}
            stored = {path: _stored(kind, prefix) for path, prefix in prefixes.items()}
            pairs = [(stored[paths[t]](k), _V) for t in tenants for k in base]
            if scheme.hashed_names:  # the name registry the writing program keeps beside its keys
                pairs += [(registry_key(paths[t][0]), paths[t][0].encode()) for t in tenants]
            assert all(
                scheme.encode(paths[t], k) == stored[paths[t]](k) for t in tenants[:2] for k in base[:20]
            )
            store = _Foreign(ctx, engine, scheme, pairs, len(path_of("t")))
            rng = _data.shuffled([b"%d" % i for i in range(requests)])
            asks = [(paths[tenants[int(r) % len(tenants)]], base[int(r) * 7 % per]) for r in rng]
            for snapshot, what, target in (
                (False, "own read txn each", t150),
                (True, "in one snapshot", t150),
            ):
                yield Comparison(
                    "foreign",
                    f"{engine} {name} per-request scope get, {what}",
                    {
                        "keyspace": _ks_per_request(store, asks, snapshot),
                        "raw": _raw_per_request(store, asks, stored, snapshot),
                    },
                    [
                        Ratio(
                            f"{label} written by others: {name} ks.scope(t, 'users').get(k), "
                            f"{len(tenants)} tenants, {what}",
                            "keyspace",
                            "raw",
                            target,
                        )
                    ],
                    rounds=ctx.fine,
                )
            held = paths[tenants[0]]
            held_keys = [k for _, k in asks]
            yield Comparison(
                "foreign",
                f"{engine} {name} held scope get",
                {
                    "keyspace": _ks_held(store, held, held_keys),
                    "raw": _raw_per_request(store, [(held, k) for k in held_keys], stored, False),
                },
                [
                    Ratio(
                        f"{label} written by others: {name} one scope held, s.get(k)", "keyspace", "raw", t110
                    )
                ],
                rounds=ctx.fine,
            )

            # one scope of `big` keys: short scans with random starts, and (of `counted`) len()
            path = path_of("big")
            layout = scheme.layout(path)
            prefix, stop = (
                layout.prefix,
                _after(layout.prefix) if kind != "tuple" else _after(layout.prefix + b"\x01"),
            )
            enc = _stored(kind, prefix)
            size = max(big, counted)
            keys = _keys(size, seed=3)
            big_pairs = [(enc(k), _V) for k in keys]
            if scheme.hashed_names:
                big_pairs.append((registry_key(path[0]), path[0].encode()))
            store = _Foreign(ctx, engine, scheme, big_pairs, len(path))
            starts = _data.shuffled(keys)[: ctx.n(2_000, 50)]
            yield Comparison(
                "foreign",
                f"{engine} {name} items(start, limit=10)",
                {
                    "keyspace": _ks_short(store, path, starts),
                    "raw": _raw_short(store, kind, prefix, stop, starts),
                },
                [
                    Ratio(
                        f"{label} written by others: {name} items(start=k, limit=10), k random, "
                        f"scope of {size:,}, own read txn each",
                        "keyspace",
                        "raw",
                        t120,
                    )
                ],
                rounds=ctx.fine,
            )
            yield Comparison(
                "foreign",
                f"{engine} {name} items(start, limit=10) in one transaction",
                {
                    "keyspace": _ks_short(store, path, starts, held=True),
                    "raw": _raw_short(store, kind, prefix, stop, starts, held=True),
                },
                [
                    Ratio(
                        f"{label} written by others: {name} items(start=k, limit=10), k random, "
                        f"scope of {size:,}, in one transaction",
                        "keyspace",
                        "raw",
                        t120,
                    )
                ],
                rounds=ctx.fine,
            )
            yield Comparison(
                "foreign",
                f"{engine} {name} len",
                {"keyspace": _ks_len(store, path, size), "raw": _raw_len(store, kind, prefix, stop, size)},
                [Ratio(f"{label} written by others: {name} len() of {size:,} keys", "keyspace", "raw", t120)],
            )

            if name == "scopehash":
                continue  # one level of names: no scope has children
            # a scope with `children` children, one key each
            parent_path = ("tenant1",)
            names = [f"u{i:07d}" for i in range(children)]
            child_pairs = [(scheme.encode((*parent_path, c), b"k"), _V) for c in names]
            store = _Foreign(ctx, engine, scheme, child_pairs, 2)
            parent = scheme.prefix(parent_path)
            if name == "tuple":
                parent = parent[:-1]  # the parent's subtree prefix
            expected = names if name == "tuple" else [c.encode() for c in names]
            assert store.ks.scope(*parent_path).scopes() == expected, name

            def ks_scopes(store: _Foreign = store, parent_path: tuple[str, ...] = parent_path) -> Trial:
                return Trial(store.ks.scope(*parent_path).scopes, children)

            yield Comparison(
                "foreign",
                f"{engine} {name} scopes()",
                {"keyspace": ks_scopes, "raw": _raw_scopes(store, name, parent, children)},
                [
                    Ratio(
                        f"{label} written by others: {name} scopes() of {children:,} children",
                        "keyspace",
                        "raw",
                        t2,
                    )
                ],
            )
