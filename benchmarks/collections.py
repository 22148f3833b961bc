"""Collections: a ``Map`` range read on every scheme against hand-written py-lmdb
reading the same bytes.

A ``Map(scope, "scores", key="str")`` of 2*10^4 entries (JSON objects) beside a
second namespace of a quarter as many; ``map.items()`` against what a competent
user writes who knows the stored layout: a cursor from the namespace's stored
prefix, the key cut inline, the value decoded by a prebuilt ``json.JSONDecoder``. On ScopeHash, whose
stored order is not key order (a key's length comes first), both sides read the
whole scope, keep the namespace's keys and sort them.
"""

from __future__ import annotations

import binascii
import json
import random
import struct
from collections.abc import Callable, Iterator
from typing import Any

import keyspace
from keyspace.collections import Map
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes.length_prefixed import to_length_prefixed

from ._engines import Fresh
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload
from .layouts import _raw_env

_SCHEMES: list[tuple[str, Scheme]] = [
    ("tuple", TupleScheme()),
    ("length-prefixed", LengthPrefixed()),
    ("asciihex", AsciiHex()),
    ("sublevel", Sublevel()),
    ("scopehash", ScopeHash()),
]
_PATH = ("app",)
_NAME = "scores"
_HEAD = to_length_prefixed(_NAME.encode())
"""cw-storage-plus's namespace bytes: what every key of the map starts with."""


def _entries(n: int) -> list[tuple[str, dict[str, Any]]]:
    """``n`` keys of 2 to 7 characters (so ScopeHash's length-first order is not
    key order) with small JSON objects."""
    return [(f"u{i * 7919 % (n * 5)}", {"points": i, "team": "red" if i % 3 else "blue"}) for i in range(n)]


def _hand_reader(name: str, scheme: Scheme) -> Callable[[Any], Iterator[tuple[str, Any]]]:
    """``read(txn)``: the map's ``(key, value)`` pairs in key order, read as a
    competent user would from the stored layout (the prefixes computed once)."""
    decode = json.JSONDecoder().decode  # prebuilt, of the text: no encoding guess
    if name == "tuple":  # the namespace is a child scope; a str key is 02 utf8(00 -> 00 ff) 00
        prefix = scheme.layout((*_PATH, _NAME)).prefix
        cut = len(prefix) + 1

        def tuple_read(txn: Any) -> Iterator[tuple[str, Any]]:
            cursor = txn.cursor()
            cursor.set_range(prefix)
            for k, v in cursor:
                if not k.startswith(prefix):
                    break
                yield k[cut:-1].replace(b"\x00\xff", b"\x00").decode(), decode(v.decode())

        return tuple_read
    scope_prefix = scheme.layout(_PATH).prefix
    if name == "asciihex":  # own keys are hex after the prefix; a child's hold a 00
        start = scope_prefix + binascii.hexlify(_HEAD)
        at, unhex = len(scope_prefix), binascii.unhexlify
        cut = len(_HEAD)

        def hex_read(txn: Any) -> Iterator[tuple[str, Any]]:
            cursor = txn.cursor()
            cursor.set_range(start)
            for k, v in cursor:
                if not k.startswith(start):
                    break
                rem = k[at:]
                if b"\x00" not in rem:
                    yield unhex(rem)[cut:].decode(), decode(v.decode())

        return hex_read
    if name == "scopehash":  # hash, u64le length, key: the whole scope read and sorted
        at, cut = len(scope_prefix) + 8, len(_HEAD)

        def scopehash_read(txn: Any) -> Iterator[tuple[str, Any]]:
            cursor = txn.cursor()
            cursor.set_range(scope_prefix)
            found = []
            for k, v in cursor:
                if not k.startswith(scope_prefix):
                    break
                rem = k[at:]
                if rem.startswith(_HEAD):
                    found.append((rem, v))
            found.sort()
            for rem, v in found:
                yield rem[cut:].decode(), decode(v.decode())

        return scopehash_read
    start = scope_prefix + _HEAD  # raw: the key after the prefix as it is
    cut = len(start)

    def raw_read(txn: Any) -> Iterator[tuple[str, Any]]:
        cursor = txn.cursor()
        cursor.set_range(start)
        for k, v in cursor:
            if not k.startswith(start):
                break
            yield k[cut:].decode(), decode(v.decode())

    return raw_read


def _hand_stored(name: str, scheme: Scheme) -> Callable[[str], bytes]:
    """The stored key of a map key, as a competent user builds it (prefixes once)."""
    if name == "tuple":
        prefix = scheme.layout((*_PATH, _NAME)).prefix + b"\x02"
        return lambda k: prefix + k.encode().replace(b"\x00", b"\x00\xff") + b"\x00"
    scope_prefix = scheme.layout(_PATH).prefix
    if name == "asciihex":
        hexlify = binascii.hexlify
        return lambda k: scope_prefix + hexlify(_HEAD + k.encode())
    if name == "scopehash":
        u64 = struct.Struct("<Q").pack
        return lambda k: scope_prefix + u64(len(_HEAD) + len(k.encode())) + _HEAD + k.encode()
    start = scope_prefix + _HEAD
    return lambda k: start + k.encode()


def _ks_save(ks: Any, entries: list[tuple[str, dict[str, Any]]]) -> Factory:
    scores = Map(ks.scope(*_PATH), _NAME, key="str")

    def make() -> Trial:
        cm = ks.transaction()
        in_tx = scores.using(cm.__enter__())

        def run() -> None:
            save = in_tx.save
            for key, value in entries:
                save(key, value)

        return Trial(run, len(entries), lambda: cm.__exit__(None, None, None))

    return make


def _hand_save(
    env: Any, stored: Callable[[str], bytes], entries: list[tuple[str, dict[str, Any]]]
) -> Factory:
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

    def make() -> Trial:
        txn = env.begin(write=True)

        def run() -> None:
            put = txn.put
            for key, value in entries:
                put(stored(key), encode(value).encode())

        return Trial(run, len(entries), txn.commit)

    return make


def _ks_load(scores: Map, keys: list[str]) -> Factory:
    def make() -> Trial:
        cm = scores.scope.keyspace.snapshot()
        in_snapshot = scores.using(cm.__enter__())

        def run() -> None:
            load = in_snapshot.load
            for key in keys:
                load(key)

        return Trial(run, len(keys), lambda: cm.__exit__(None, None, None))

    return make


def _hand_load(env: Any, stored: Callable[[str], bytes], keys: list[str]) -> Factory:
    decode = json.JSONDecoder().decode

    def make() -> Trial:
        txn = env.begin()

        def run() -> None:
            get = txn.get
            for key in keys:
                raw = get(stored(key))
                if raw is None:
                    raise KeyError(key)
                decode(raw.decode())

        return Trial(run, len(keys), txn.abort)

    return make


def _ks_items(scores: Map, n: int) -> Factory:
    def make() -> Trial:
        def run() -> None:
            for _key, _value in scores.items():
                pass

        return Trial(run, n)

    return make


def _hand_items(env: Any, read: Callable[[Any], Iterator[tuple[str, Any]]], n: int) -> Factory:
    def make() -> Trial:
        def run() -> None:
            with env.begin() as txn:
                for _key, _value in read(txn):
                    pass

        return Trial(run, n)

    return make


def _lmdb(ctx: Context, scheme: Scheme | None) -> Any:
    """A keyspace of ``scheme`` on LMDB (``None``: a raw py-lmdb environment) in a
    fresh directory, closed and removed when the workload ends."""
    d = Fresh()
    ctx.defer(d.remove)
    opened = _raw_env(d.path) if scheme is None else keyspace.open(f"lmdb://{d.path}/db", scheme=scheme)
    ctx.defer(opened.close)
    return opened


def _versus(name: str, what: str, ks: Factory, raw: Factory, rounds: int | None) -> Comparison:
    """keyspace against py-lmdb, target 1.20."""
    return Comparison(
        "collections",
        f"{name} {what}",
        {"keyspace": ks, "py-lmdb": raw},
        [Ratio(f"LMDB {name} {what}", "keyspace", "py-lmdb", Target(1.20))],
        rounds=rounds,
    )


@workload("collections")
def collections(ctx: Context) -> Iterator[Comparison]:
    """``Map.save`` in a transaction, ``Map.load`` in a snapshot and
    ``Map.items()`` on every scheme against hand-written py-lmdb over the same
    bytes (per item; lower is better)."""
    n = ctx.n(20_000, 500)
    entries = _entries(n)
    keys = [k for k, _ in entries]
    random.Random(3).shuffle(keys)
    for name, scheme in _SCHEMES:
        ks = _lmdb(ctx, scheme)
        scores, other = Map(ks.scope(*_PATH), _NAME, key="str"), Map(ks.scope(*_PATH), "other", key="str")
        with ks.transaction() as tx:
            in_tx, other_in_tx = scores.using(tx), other.using(tx)
            for key, value in entries:
                in_tx.save(key, value)
            for key, value in entries[: n // 4]:
                other_in_tx.save(key, value)
        env = _lmdb(ctx, None)
        with env.begin(write=True) as txn:
            txn.cursor().putmulti(list(ks.store.scan()))
        read, stored = _hand_reader(name, scheme), _hand_stored(name, scheme)
        with env.begin() as txn:
            assert list(read(txn)) == list(scores.items()), name  # the same items, in the same order
            assert all(txn.get(stored(k)) is not None for k in keys[:100]), name
        saved = _ks_save(_lmdb(ctx, scheme), entries), _hand_save(_lmdb(ctx, None), stored, entries)
        yield _versus(name, "Map.save in txn", *saved, ctx.fine)
        yield _versus(
            name, "Map.load in snapshot", _ks_load(scores, keys), _hand_load(env, stored, keys), ctx.fine
        )
        yield _versus(name, "Map.items() per item", _ks_items(scores, n), _hand_items(env, read, n), ctx.fine)
