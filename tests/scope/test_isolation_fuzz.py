"""Isolation between scopes under adversarial names and keys, on every embedded engine.

A differential test: Hypothesis draws a few scope paths (separator bytes ``!``,
``00``, ``ff`` tails, empty components, long names, ints and None in the tuple
scheme) and a list of operations (put, delete, clear, drop, len, items, get,
scopes) on them; each runs on a real keyspace and on a plain-Python model, a dict
``(path, key) -> value``. Every read must equal the model, and the raw store must
hold exactly the model's keys (plus the scheme's own records): no read, count,
clear or drop of one scope touches another's keys.

- Sublevel and ScopeHash get names within their rules; LengthPrefixed uses leaf
  scopes of one depth (it refuses a scope that holds keys and child scopes).
- ScopeHash names include pairs with the same 32-bit hash and a name with the
  default scope's hash: every access to the second name of a pair (reads too)
  raises HashCollision once the first is registered, and changes nothing.
- A "reopen" operation replaces the keyspace object by a new one over the same
  store, so facts learnt in memory (the LengthPrefixed leaf/branch layout, the
  registered hashes) must come from the store.
- On LMDB a stored key over 511 bytes raises KeyTooLarge and changes nothing.
- Naive (which has no separators) is shown to leak: ``foo|bar`` and ``fo|obar``
  are the same stored key.

One store per engine and scheme; each example wipes it and starts a new keyspace.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import Keyspace
from keyspace.catalog import LAYOUT_START
from keyspace.errors import HashCollision, InvalidName, KeyTooLarge, ReservedKey
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Property, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._base import Scheme, component_bytes
from keyspace.stores import open_store
from keyspace.stores._base import Store

ENGINES = {
    "memory": "memory:",
    "lmdb": "lmdb://{}",
    "sqlite": "sqlite://{}/store.sqlite",
    "leveldb": "leveldb://{}",
    "rocksdb": "rocksdb://{}",
}
EXAMPLES = {"memory": 100, "lmdb": 30, "sqlite": 25, "leveldb": 25, "rocksdb": 25}
LP_DEPTH = 2  # LengthPrefixed: every scope that holds keys has this depth

LONG = b"L" * 600  # over LMDB's 511-byte key limit in every scheme
# ScopeHash names sharing a 32-bit hash: a birthday-search pair, a computed twin of
# "a", and a computed twin of the empty name (the default scope's hash)
HASH_TWINS = ["scope72590", "scope159129", "a", colliding_name("a"), colliding_name("")]
# where keyspaces keep their records: no scope may store a key there
RECORD_KEYS = {TupleScheme().metadata_key, AsciiHex().metadata_key, ScopeHash().metadata_key}
SPECIAL_BYTES = [b"", b"!", b"!!", b"\x00", b"\xff", b"\x00\xff", b"a\x00", b"a\xff", b"a!", b"\xff\xff"]


def _component(scheme: Scheme) -> st.SearchStrategy[Any]:
    if isinstance(scheme, Sublevel):
        name_bytes = st.integers(35, 126).map(lambda b: bytes([b]))
        return st.one_of(
            st.lists(name_bytes, max_size=4).map(b"".join),
            st.sampled_from([b"a", b"ab", b"#", b"~~", b"", b"a" * 300]),
        )
    if isinstance(scheme, ScopeHash):
        special = st.sampled_from(["a", "ab", "!", "\x00", "x" * 300])
        return st.one_of(st.text(min_size=1, max_size=6), special, st.sampled_from(HASH_TWINS))
    byte_names = st.one_of(st.binary(max_size=4), st.sampled_from([*SPECIAL_BYTES, LONG]))
    if isinstance(scheme, TupleScheme):
        return st.one_of(
            byte_names,
            st.text(max_size=3),
            st.sampled_from(["", "\x00", "a\x00", "ÿ"]),
            st.integers(min_value=-(2**70), max_value=2**70),
            st.none(),
        )
    return st.one_of(byte_names, st.text(max_size=3))


def _path(scheme: Scheme) -> st.SearchStrategy[tuple[Any, ...]]:
    comp = _component(scheme)
    if not scheme.typed_keys and not isinstance(scheme, ScopeHash):
        comp = comp.map(component_bytes)  # "a" and b"a" name the same scope here
    if isinstance(scheme, ScopeHash):
        return st.one_of(st.just(()), st.tuples(comp))
    if isinstance(scheme, LengthPrefixed):
        return st.lists(comp, min_size=LP_DEPTH, max_size=LP_DEPTH).map(tuple)
    return st.lists(comp, max_size=3).map(tuple)


def _key(scheme: Scheme) -> st.SearchStrategy[Any]:
    reserved = [b"\xffkeyspace", b"\xffkeyspace\x00a", LAYOUT_START + b"\x00\x01a", b"ks\xff"]
    keys = st.one_of(st.binary(max_size=5), st.sampled_from([*SPECIAL_BYTES, *reserved, b"K" * 520]))
    if isinstance(scheme, Sublevel):
        return keys.filter(lambda k: not k.startswith(b"!"))
    if isinstance(scheme, TupleScheme):
        return st.one_of(keys, st.integers(-5, 300), st.text(max_size=2))
    return keys


@st.composite
def _scenario(draw: Any, scheme: Scheme) -> tuple[list[tuple[Any, ...]], list[Any], list[tuple[Any, ...]]]:
    paths = draw(st.lists(_path(scheme), min_size=1, max_size=4, unique_by=repr))
    keys = draw(st.lists(_key(scheme), min_size=1, max_size=4, unique_by=repr))
    p = st.integers(0, len(paths) - 1)
    k = st.integers(0, len(keys) - 1)
    value = st.binary(max_size=8)
    op = st.one_of(
        st.tuples(st.just("put"), p, k, value),
        st.tuples(st.just("put"), p, k, value),
        st.tuples(st.just("put"), p, k, value),
        st.tuples(st.just("delete"), p, k),
        st.tuples(st.just("clear"), p),
        st.tuples(st.just("drop"), p, st.integers(0, 3)),
        st.tuples(st.just("check"), p),
        st.tuples(st.just("scopes"), p, st.integers(0, 3)),
        st.tuples(st.just("reopen"), p),
    )
    ops = draw(st.lists(op, max_size=25))
    return paths, keys, ops


class _Checker:
    """Runs operations on a keyspace and on the model, comparing as it goes."""

    def __init__(self, ks: Keyspace, lmdb_limit: int | None) -> None:
        self.ks = ks
        self.scheme = ks.scheme
        self.model: dict[tuple[tuple[Any, ...], Any], bytes] = {}
        self.limit = lmdb_limit
        self.empty_ok = ks.store.capabilities.empty_keys
        self.hashed = isinstance(self.scheme, ScopeHash)
        self.owners: dict[bytes, str] = {}  # ScopeHash: hash -> the name registered for it

    def reopen(self) -> None:
        """A new keyspace object over the same store: it knows only what the store says."""
        self.ks = keyspace.attach(self.ks.store, scheme=self.scheme, close_store=False)

    def blocked(self, path: tuple[Any, ...]) -> bool:
        """A ScopeHash name whose hash the default scope or another registered name holds."""
        if not self.hashed or not path:
            return False
        head = self.scheme.prefix(path)
        if head == self.scheme.prefix(()):
            return True
        return self.owners.get(head, path[0]) != path[0]

    def refused(self, path: tuple[Any, ...], action: Any) -> bool:
        """Run ``action`` expecting HashCollision when ``path`` is blocked (and then
        that nothing changed); True when it was."""
        if not self.blocked(path):
            return False
        before = self.raw()
        with pytest.raises(HashCollision):
            action()
        assert self.raw() == before, "a refused access changed the store"
        return True

    def reserved(self, path: tuple[Any, ...], key: Any) -> bool:
        """Whether the key's stored key lies where the keyspace keeps its records."""
        stored = self.scheme.encode(path, key)
        return (
            stored.startswith((b"\xffkeyspace", LAYOUT_START))
            or stored in RECORD_KEYS
            or stored == self.scheme.metadata_key
        )

    def storable(self, path: tuple[Any, ...], key: Any) -> type[Exception] | None:
        if self.reserved(path, key):
            return ReservedKey
        stored = self.scheme.encode(path, key)
        if self.limit is not None and len(stored) > self.limit:
            return KeyTooLarge
        if not stored and not self.empty_ok:
            return InvalidName
        return None

    def raw(self) -> list[tuple[bytes, bytes]]:
        return list(self.ks.store.scan(b"", None))

    def put(self, path: tuple[Any, ...], key: Any, value: bytes) -> None:
        if self.refused(path, lambda: self.ks.scope(*path).__setitem__(key, value)):
            return
        refused = self.storable(path, key)
        if refused is None:
            self.ks.scope(*path)[key] = value
            self.model[path, key] = value
            if self.hashed and path:
                self.owners.setdefault(self.scheme.prefix(path), path[0])
            return
        before = self.raw()
        with pytest.raises(refused):
            self.ks.scope(*path)[key] = value
        assert self.raw() == before, "a refused write changed the store"

    def delete(self, path: tuple[Any, ...], key: Any) -> None:
        if self.refused(path, lambda: self.ks.scope(*path).discard(key)):
            return
        scope = self.ks.scope(*path)
        if self.reserved(path, key):
            before = self.raw()
            for action in (scope.discard, scope.__delitem__):
                with pytest.raises(ReservedKey):
                    action(key)
            assert self.raw() == before, "a refused delete changed the store"
            return
        if not self.scheme.encode(path, key) and not self.empty_ok:
            return  # the empty key cannot be read on this engine (see test_bad_input)
        if (path, key) in self.model:
            del scope[key]
            del self.model[path, key]
        else:
            with pytest.raises(KeyError):
                del scope[key]

    def clear(self, path: tuple[Any, ...]) -> None:
        if self.refused(path, lambda: self.ks.scope(*path).clear()):
            return
        self.ks.scope(*path).clear()
        for pk in [pk for pk in self.model if pk[0] == path]:
            del self.model[pk]

    def drop(self, path: tuple[Any, ...]) -> None:
        if self.refused(path, lambda: self.ks.scope(*path).drop()):
            return
        self.ks.scope(*path).drop()
        if isinstance(self.scheme, ScopeHash) and path:
            doomed = [pk for pk in self.model if pk[0] == path]  # named scopes hold no children
        else:
            doomed = [pk for pk in self.model if pk[0][: len(path)] == path]
        for pk in doomed:
            del self.model[pk]

    def check(self, path: tuple[Any, ...], keys: list[Any]) -> None:
        if self.blocked(path):
            reads: list[Any] = [len, bool, list, lambda s: list(s.items()), lambda s: list(s.subtree())]
            reads += [lambda s: s.get(keys[0]), lambda s: keys[0] in s]
            for read in reads:
                self.refused(path, lambda read=read: read(self.ks.scope(*path)))
            return
        scope = self.ks.scope(*path)
        own = {k: v for (p, k), v in self.model.items() if p == path}
        items = list(scope.items())
        assert len(scope) == len(own)
        assert len(items) == len(own)
        assert dict(items) == own
        if Property.ORDER_WITHIN in self.scheme.properties and all(type(k) is bytes for k in own):
            assert [k for k, _ in items] == sorted(own)
        assert bool(scope) == bool(own)
        for key in keys:
            if self.reserved(path, key):
                for read in (scope.get, scope.__contains__, scope.__getitem__):
                    with pytest.raises(ReservedKey):
                        read(key)
                continue
            if not self.scheme.encode(path, key) and not self.empty_ok:
                continue
            assert scope.get(key) == own.get(key)
            assert (key in scope) == (key in own)

    def name(self, component: Any) -> Any:
        return (
            component
            if self.scheme.typed_keys or isinstance(self.scheme, ScopeHash)
            else (component_bytes(component))
        )

    def scopes(self, path: tuple[Any, ...]) -> None:
        if isinstance(self.scheme, ScopeHash) and path:
            self.refused(path, lambda: self.ks.scope(*path).scopes())
            return
        found = self.ks.scope(*path).scopes()
        depth = len(path)
        expected = {self.name(p[depth]) for p, _ in self.model if len(p) > depth and p[:depth] == path}
        assert len(found) == len(set(map(repr, found)))
        assert {repr(c) for c in found} == {repr(c) for c in expected}

    def raw_matches_model(self) -> None:
        expected = {self.scheme.encode(p, k): v for (p, k), v in self.model.items()}
        actual = dict(self.raw())
        meta = self.scheme.metadata_key
        registry = isinstance(self.scheme, ScopeHash)
        extra = {
            k
            for k in actual
            if k not in expected
            and k != meta
            and not (registry and len(k) == 4)
            and not k.startswith(LAYOUT_START)  # the LengthPrefixed layout records
        }
        assert not extra, f"keys outside every scope's model: {sorted(extra)[:5]}"
        assert {k: actual.get(k) for k in expected} == expected


def _run(ks: Keyspace, scenario: Any, lmdb_limit: int | None) -> None:
    paths, keys, ops = scenario
    checker = _Checker(ks, lmdb_limit)
    for op in ops:
        kind, i = op[0], op[1]
        path = paths[i]
        if kind == "put":
            checker.put(path, keys[op[2]], op[3])
        elif kind == "delete":
            checker.delete(path, keys[op[2]])
        elif kind == "clear":
            checker.clear(path)
        elif kind == "drop":
            checker.drop(path[: min(op[2], len(path))])
        elif kind == "check":
            checker.check(path, keys)
        elif kind == "reopen":
            checker.reopen()
        else:
            sub = path[: min(op[2], len(path))]
            if scheme_nests(ks.scheme) or len(sub) < len(path) or not path:
                checker.scopes(sub)
    for path in paths:
        checker.check(path, keys)
    for depth in range(3):
        for path in {p[:depth] for p in paths if len(p) >= depth}:
            if scheme_nests(ks.scheme) or depth < LP_DEPTH:
                checker.scopes(path)
    checker.raw_matches_model()


def scheme_nests(scheme: Scheme) -> bool:
    return scheme.separates_own_keys and not isinstance(scheme, ScopeHash)


SCHEMES = [TupleScheme(), AsciiHex(), Sublevel(), ScopeHash(), LengthPrefixed()]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Store]]:
    opened: dict[str, Store] = {}
    yield opened
    for store in opened.values():
        store.close()


def _store(stores: dict[str, Store], engine: str, scheme: Scheme, base: Path) -> Store:
    name = f"{engine}-{scheme.name}"
    if name not in stores:
        directory = base / name
        directory.mkdir()
        stores[name] = open_store(ENGINES[engine].format(directory))
    return stores[name]


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@pytest.mark.parametrize("engine", list(ENGINES))
def test_scopes_are_isolated(
    engine: str, scheme: Scheme, stores: dict[str, Store], tmp_path_factory: pytest.TempPathFactory
) -> None:
    store = _store(stores, engine, scheme, tmp_path_factory.mktemp("iso"))
    lmdb_limit = store.capabilities.max_key_size

    @settings(max_examples=EXAMPLES[engine])
    @given(_scenario(scheme))
    def run(scenario: Any) -> None:
        store.delete_range(b"", None)
        ks = Keyspace(store, scheme, recorded=False)
        _run(ks, scenario, lmdb_limit)

    run()


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_long_name_over_lmdb_limit_changes_nothing(scheme: Scheme, tmp_path: Path) -> None:
    """A scope whose first write would store a key over 511 bytes: KeyTooLarge, and
    neither the key nor any record (metadata, hash registry) is written."""
    long_path: tuple[Any, ...] = ("n" * 600,) if isinstance(scheme, ScopeHash) else (LONG,)
    long_key = b"K" * 600 if isinstance(scheme, ScopeHash) else b"k"
    if isinstance(scheme, LengthPrefixed):
        long_path = (LONG, b"x")
    for prefill in (False, True):
        with keyspace.open(f"lmdb://{tmp_path / str(prefill)}", scheme=scheme) as ks:
            if prefill:
                short = ("a",) if isinstance(scheme, ScopeHash) else (b"a", b"b")[: len(long_path)]
                ks.scope(*short)[b"k"] = b"v"
            before = list(ks.store.scan(b"", None))
            with pytest.raises(KeyTooLarge, match="511"):
                ks.scope(*long_path)[long_key] = b"v"
            with pytest.raises(KeyTooLarge, match="511"):
                ks.scope(*long_path).update({long_key: b"v", b"short": b"v"})
            assert list(ks.store.scan(b"", None)) == before


@pytest.mark.parametrize("engine", list(ENGINES))
def test_naive_scheme_leaks_between_scopes(engine: str, tmp_path: Path) -> None:
    """Naive concatenation is not isolated: ("foo",)+b"bar" and ("fo",)+b"obar" are
    the same stored key, so one scope reads, counts and clears the other's key."""
    with keyspace.open(ENGINES[engine].format(tmp_path), scheme=Naive(allow_collisions=True)) as ks:
        foo, fo = ks.scope(b"foo"), ks.scope(b"fo")
        foo[b"bar"] = b"written through foo"
        assert fo[b"obar"] == b"written through foo"  # a read of another scope's key
        assert len(fo) == 1  # counted in both scopes
        fo[b"obar"] = b"overwritten through fo"
        assert foo[b"bar"] == b"overwritten through fo"
        fo.clear()
        assert len(foo) == 0  # clearing one scope cleared the other
