"""A keyspace opened read-only refuses every write path with ``StoreError`` and
leaves the store byte for byte as it was, for every scheme on LMDB, LevelDB and
SQLite: set (of a written scope and of a new one), del, discard, pop, popitem,
setdefault, update, clear, clear_range, drop (of the scope and of the root, where
the scheme has one) and a transaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreError
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Naive, ScopeHash, Sublevel, TupleScheme
from keyspace.stores import open_store

URLS = {"lmdb": "lmdb://{}", "leveldb": "leveldb://{}", "sqlite": "sqlite://{}/s.db"}
SCHEMES: dict[str, tuple[Callable[[], Any], tuple[Any, ...], dict[str, Any]]] = {
    "tuple": (TupleScheme, ("t", "a"), {}),
    "asciihex": (AsciiHex, ("t", "a"), {}),
    "sublevel": (Sublevel, ("t", "a"), {}),
    "scopehash": (ScopeHash, ("a",), {}),
    "delimited": (lambda: Delimited(":"), ("a",), {}),
    "length-prefixed": (LengthPrefixed, (b"t", b"a"), {}),
    "naive": (lambda: Naive(allow_collisions=True), ("t", "a"), {"leaf_depth": 2}),
}


def _in_transaction(scope: Any) -> None:
    with scope.keyspace.transaction() as tx:
        tx.scope(*scope.path)[b"k"] = b"t"


def _sibling(scope: Any) -> Any:
    last = scope.path[-1]
    return scope.keyspace.scope(*scope.path[:-1], last + (b"q" if isinstance(last, bytes) else "q"))


WRITES: dict[str, Callable[[Any], object]] = {
    "set": lambda s: s.__setitem__(b"k", b"x"),
    "set in a new scope": lambda s: _sibling(s).__setitem__(b"k", b"x"),
    "del": lambda s: s.__delitem__(b"k"),
    "discard": lambda s: s.discard(b"k"),
    "pop": lambda s: s.pop(b"k"),
    "popitem": lambda s: s.popitem(),
    "setdefault": lambda s: s.setdefault(b"z", b"v"),
    "update": lambda s: s.update({b"a": b"1"}),
    "clear": lambda s: s.clear(),
    "clear_range": lambda s: s.clear_range(start=b"a"),
    "drop": lambda s: s.drop(),
    "transaction": _in_transaction,
}


@pytest.mark.parametrize("engine", list(URLS))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_readonly_keyspace_refuses_every_write(name: str, engine: str, tmp_path: Path) -> None:
    make, path, options = SCHEMES[name]
    url = URLS[engine].format(tmp_path)
    with keyspace.open(url, scheme=make(), **options) as ks:
        ks.scope(*path).update({b"k": b"v", b"m": b"w"})
    with open_store(url) as store:
        before = list(store.scan(b"", None))
    with keyspace.open(url, scheme=make(), readonly=True, **options) as ks:
        scope = ks.scope(*path)
        for write in WRITES.values():
            with pytest.raises(StoreError, match="read-only"):
                write(scope)
        if name != "delimited":  # (a delimited root holds no keys: refused as LayoutError)
            with pytest.raises(StoreError, match="read-only"):
                ks.scope().drop()
        assert dict(scope.items()) == {b"k": b"v", b"m": b"w"}
    with open_store(url) as store:
        assert list(store.scan(b"", None)) == before
