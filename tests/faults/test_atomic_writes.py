"""No fault loses or half-applies a write, for every scheme on memory, LMDB and LevelDB.

- ``update`` whose input fails part way (the iterator raises, a key the scheme
  cannot encode, a value that is not bytes), after more pairs than one chunk of
  the streaming route (4096), as a scope's first write and as a later one: the raw
  store is exactly as before, records included.
- A transaction whose body raises after first writes of new scopes (scheme record,
  ScopeHash registration, LengthPrefixed leaf), a delete, a ``clear`` and a
  ``drop``: the raw store is exactly as before, and the keyspace acts on what the
  store holds, not on what the aborted body learnt (a name that would have
  collided with the aborted one registers; a parent of the aborted leaf can hold
  keys).
- A closed keyspace: every operation of a scope made before the close raises
  :class:`StoreClosed` and the store, reopened, holds what it held.
- An LMDB store opened with a tiny map: large updates and transactions land whole.
- Two threads racing first writes that exclude each other (names with one hash,
  a leaf and its child) over one store: exactly one wins, and the loser's keys are
  nowhere.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _schemes import SCOPE_AND_SIBLING
from _xxh32 import colliding_name

import keyspace
from keyspace.errors import HashCollision, InvalidKey, InvalidName, KeyspaceError, LayoutError, StoreClosed
from keyspace.schemes import (
    LengthPrefixed,
    Scheme,
    ScopeHash,
    Sublevel,
)
from keyspace.stores import open_store
from keyspace.stores._base import Store

STORES = {"memory": "memory:", "lmdb": "lmdb://{}", "leveldb": "leveldb://{}"}
SCHEMES = SCOPE_AND_SIBLING
CHUNK = 4096  # the streaming route of update hands the store this many pairs at a time


def _raw(store: Store) -> list[tuple[bytes, bytes]]:
    return list(store.scan(b"", None))


@pytest.fixture(params=list(STORES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_store(STORES[request.param].format(tmp_path))
    yield s
    s.close()


class _Boom(Exception):
    pass


def _pairs(n: int) -> Iterator[tuple[Any, Any]]:
    for i in range(n):
        yield b"k%05d" % i, b"v%d" % i


def _failing(kind: str) -> tuple[Iterator[tuple[Any, Any]], type[BaseException]]:
    """Pairs past the first chunk, then one that fails as ``kind`` says."""
    late = CHUNK + 10

    def gen() -> Iterator[tuple[Any, Any]]:
        yield from _pairs(late)
        if kind == "raises":
            raise _Boom("the input fails part way")
        if kind == "key":
            yield object(), b"v"
        if kind == "value":
            yield b"zz", 12345
        yield b"never", b"v"

    return gen(), (_Boom if kind == "raises" else InvalidKey)


@pytest.mark.parametrize("kind", ["raises", "key", "value"])
@pytest.mark.parametrize("first", [True, False], ids=["first-write", "later-write"])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_update_failing_part_way_writes_nothing(store: Store, name: str, first: bool, kind: str) -> None:
    make, path, sibling = SCHEMES[name]
    ks = keyspace.attach(store, scheme=make(), close_store=False)
    ks.scope(*sibling)[b"s"] = b"sibling"
    if not first:
        ks.scope(*path)[b"old"] = b"0"
    before = _raw(store)
    pairs, error = _failing(kind)
    with pytest.raises(error):
        ks.scope(*path).update(pairs)
    assert _raw(store) == before
    # the keyspace carries on: a later update of the same scope lands whole
    ks.scope(*path).update(_pairs(10))
    assert len(ks.scope(*path)) == 10 + (0 if first else 1)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_update_failing_part_way_in_a_transaction_leaves_the_transaction_whole(
    store: Store, name: str
) -> None:
    make, path, sibling = SCHEMES[name]
    ks = keyspace.attach(store, scheme=make(), close_store=False)
    ks.scope(*path)[b"old"] = b"0"
    with ks.transaction() as tx:
        tx.scope(*sibling)[b"s"] = b"in tx"
        for kind in ("raises", "key", "value"):
            pairs, error = _failing(kind)
            with pytest.raises(error):
                tx.scope(*path).update(pairs)
        tx.scope(*path)[b"after"] = b"1"
    assert dict(ks.scope(*path).items()) == {b"old": b"0", b"after": b"1"}
    assert dict(ks.scope(*sibling).items()) == {b"s": b"in tx"}


def _aborted(ks: keyspace.Keyspace, body: Callable[[Any], None]) -> None:
    with pytest.raises(_Boom), ks.transaction() as tx:
        body(tx)
        raise _Boom("the body fails after its writes")


@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_transaction_body_that_raises_leaves_no_trace(store: Store, name: str) -> None:
    make, path, sibling = SCHEMES[name]
    ks = keyspace.attach(store, scheme=make(), close_store=False)

    def first_writes(tx: Any) -> None:
        tx.scope(*path)[b"k"] = b"v"
        tx.scope(*sibling).update({b"a": b"1", b"b": b"2"})

    _aborted(ks, first_writes)
    assert _raw(store) == []  # no scheme record, registration or leaf either
    ks.scope(*path).update({b"x": b"1", b"y": b"2"})
    ks.scope(*sibling)[b"s"] = b"s"
    before = _raw(store)

    def changes(tx: Any) -> None:
        scope = tx.scope(*path)
        del scope[b"x"]
        scope[b"z"] = b"3"
        tx.scope(*sibling).clear()
        tx.scope(*path).drop()
        tx.scope(*path)[b"w"] = b"4"

    _aborted(ks, changes)
    assert _raw(store) == before
    assert dict(ks.scope(*path).items()) == {b"x": b"1", b"y": b"2"}


@pytest.mark.parametrize("engine", list(STORES))
def test_an_aborted_registration_does_not_hold_the_hash(engine: str, tmp_path: Path) -> None:
    twin = colliding_name("a")
    with open_store(STORES[engine].format(tmp_path)) as store:
        ks = keyspace.attach(store, scheme=ScopeHash(), close_store=False)
        _aborted(ks, lambda tx: tx.scope("a").__setitem__(b"k", b"aborted"))
        # the twin takes the hash, for good: the aborted name now collides
        other = keyspace.attach(store, scheme=ScopeHash(), close_store=False)
        other.scope(twin)[b"k"] = b"twin"
        for keyspace_ in (ks, other):
            with pytest.raises(HashCollision):
                keyspace_.scope("a")[b"k"] = b"a"
            with pytest.raises(HashCollision):
                keyspace_.scope("a").get(b"k")
        assert dict(ks.scope(twin).items()) == {b"k": b"twin"}


@pytest.mark.parametrize("engine", list(STORES))
def test_an_aborted_leaf_does_not_hold_the_layout(engine: str, tmp_path: Path) -> None:
    with open_store(STORES[engine].format(tmp_path)) as store:
        ks = keyspace.attach(store, scheme=LengthPrefixed(), close_store=False)
        _aborted(ks, lambda tx: tx.scope(b"a", b"b").__setitem__(b"k", b"aborted"))
        ks.scope(b"a")[b"k"] = b"a is a leaf"  # (a, b) was never a leaf: its parent may hold keys
        with pytest.raises(LayoutError):
            ks.scope(b"a", b"b")[b"k"] = b"now refused"
        assert dict(ks.scope(b"a").items()) == {b"k": b"a is a leaf"}


_OPS: dict[str, Callable[[Any], object]] = {
    "get": lambda s: s.get(b"k"),
    "getitem": lambda s: s[b"k"],
    "contains": lambda s: b"k" in s,
    "setitem": lambda s: s.__setitem__(b"k", b"new"),
    "setitem-new": lambda s: s.__setitem__(b"n", b"new"),
    "delitem": lambda s: s.__delitem__(b"k"),
    "discard": lambda s: s.discard(b"k"),
    "pop": lambda s: s.pop(b"k"),
    "popitem": lambda s: s.popitem(),
    "setdefault": lambda s: s.setdefault(b"n", b"new"),
    "len": len,
    "bool": bool,
    "iter": list,
    "items": lambda s: list(s.items()),
    "items-short": lambda s: list(s.items(limit=3)),
    "keys-long": lambda s: list(s.keys(limit=2000)),
    "values-reverse": lambda s: list(s.values(reverse=True)),
    "update": lambda s: s.update({b"a": b"1"}),
    "clear": lambda s: s.clear(),
    "clear_range": lambda s: s.clear_range(start=b"a"),
    "drop": lambda s: s.drop(),
    "subtree": lambda s: list(s.subtree()),
    "transaction": lambda s: s.keyspace.transaction().__enter__(),
}


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_closed_keyspace_refuses_every_operation(name: str, engine: str, tmp_path: Path) -> None:
    make, path, _ = SCHEMES[name]
    url = STORES[engine].format(tmp_path)
    store = open_store(url)
    ks = keyspace.attach(store, scheme=make())
    scope = ks.scope(*path)
    scope.update({b"k": b"v", b"m": b"w"})
    assert scope.get(b"k") == b"v" and len(scope) == 2  # every route bound before the close
    before = _raw(store)
    ks.close()
    ks.close()  # idempotent
    for op, call in _OPS.items():
        with pytest.raises(StoreClosed):
            call(scope)
        with pytest.raises(StoreClosed):
            call(ks.scope(*path))
        assert op  # (named for the failure message)
    if engine != "memory":
        with open_store(url) as again:
            assert _raw(again) == before


@pytest.mark.parametrize("name", [n for n in SCHEMES if n != "naive"])
def test_a_tiny_lmdb_map_takes_large_writes_whole(name: str, tmp_path: Path) -> None:
    make, path, sibling = SCHEMES[name]
    url = f"lmdb://{tmp_path}?map_size=32KiB"
    with keyspace.open(url, scheme=make()) as ks:
        ks.scope(*path).update((b"k%05d" % i, b"v" * 200) for i in range(3000))
        with ks.transaction() as tx:
            scope = tx.scope(*sibling)
            for i in range(1500):
                scope[b"t%05d" % i] = b"w" * 300
        for i in range(100):
            ks.scope(*path)[b"p%03d" % i] = b"x" * 1000
    with keyspace.open(url, scheme=make()) as ks:
        assert len(ks.scope(*path)) == 3100 and len(ks.scope(*sibling)) == 1500
        assert ks.scope(*path)[b"k02999"] == b"v" * 200 and ks.scope(*sibling)[b"t01499"] == b"w" * 300


def _race(
    store: Store, scheme: Callable[[], Scheme], writes: list[Callable[[keyspace.Keyspace], None]]
) -> list[str]:
    """Run ``writes`` in threads started together, each on its own keyspace over
    ``store``; return what each did: ``ok`` or the name of its error."""
    barrier = threading.Barrier(len(writes))
    out = [""] * len(writes)
    keyspaces = [keyspace.attach(store, scheme=scheme(), close_store=False) for _ in writes]

    def run(i: int) -> None:
        barrier.wait(timeout=30)
        try:
            writes[i](keyspaces[i])
            out[i] = "ok"
        except KeyspaceError as exc:
            out[i] = type(exc).__name__
        except Exception as exc:  # not a keyspace error: named in full, so the test shows it
            out[i] = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(writes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return out


@pytest.mark.parametrize("engine", list(STORES))
def test_racing_first_writes_that_exclude_each_other(engine: str, tmp_path: Path) -> None:
    twin = colliding_name("a")
    for round_ in range(8):
        with open_store(STORES[engine].format(tmp_path / f"h{round_}")) as store:
            got = _race(
                store,
                ScopeHash,
                [
                    lambda ks: ks.scope("a").update({b"k": b"a data", b"j": b"a data"}),
                    lambda ks: ks.scope(twin).__setitem__(b"k", b"twin data"),
                ],
            )
            assert sorted(got) == ["HashCollision", "ok"]
            winner, loser = ("a", twin) if got[0] == "ok" else (twin, "a")
            fresh = keyspace.attach(store, scheme=ScopeHash(), close_store=False)
            assert set(fresh.scope(winner).values()) == {b"a data" if winner == "a" else b"twin data"}
            with pytest.raises(HashCollision):
                fresh.scope(loser).get(b"k")
            # (the registry holds the winner's name as a value: data values end in " data")
            assert [v for _, v in _raw(store) if v.endswith(b" data")] == (
                [b"a data", b"a data"] if winner == "a" else [b"twin data"]
            )
        with open_store(STORES[engine].format(tmp_path / f"l{round_}")) as store:
            got = _race(
                store,
                LengthPrefixed,
                [
                    lambda ks: ks.scope(b"a", b"b").__setitem__(b"k", b"leaf data"),
                    lambda ks: ks.scope(b"a", b"b", b"c").__setitem__(b"k", b"child data"),
                ],
            )
            assert sorted(got) == ["LayoutError", "ok"]
            values = [v for _, v in _raw(store) if v.endswith(b" data")]
            assert values == ([b"leaf data"] if got[0] == "ok" else [b"child data"])


def test_a_sublevel_bound_that_is_no_key_is_refused_and_changes_nothing(store: Store) -> None:
    ks = keyspace.attach(store, scheme=Sublevel(), close_store=False)
    ks.scope("t")[b"a"] = b"1"
    ks.scope("t", "c")[b"a"] = b"child"
    before = _raw(store)
    for call in (
        lambda s: list(s.items(start=b"!")),
        lambda s: list(s.keys(stop=b"!c!")),
        lambda s: s.clear_range(start=b"!", stop=b"~"),
    ):
        with pytest.raises(InvalidName, match="separator"):
            call(ks.scope("t"))
    assert _raw(store) == before
