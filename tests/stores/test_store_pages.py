"""Scope scans over a store's own ``read_pages`` (LMDB store scans, read in pages
of short read transactions; LevelDB: a plyvel iterator in pages; SQLite: a
scan of up to a page read by one statement at once) return what the
item-by-item route returns: every scheme,
both directions, limits across page boundaries, a child scope's keys and
neighbours' keys around the scope."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.stores import LevelDBStore, LMDBStore, ReadView, SQLiteStore

N = 1500  # more than the first pages (64 + 256 + 1024 items)


@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "sqlite"])
@pytest.mark.parametrize(
    "scheme",
    [TupleScheme(), AsciiHex(), Sublevel(), ScopeHash(), LengthPrefixed()],
    ids=lambda s: type(s).__name__,
)
def test_scans_over_pages_match_the_items(tmp_path: Path, engine: str, scheme: Scheme) -> None:
    ks = keyspace.open(f"{engine}://{tmp_path}/db", scheme=scheme)
    store = ks.store
    engine_type = {"lmdb": LMDBStore, "sqlite": SQLiteStore, "leveldb": LevelDBStore}[engine]
    assert isinstance(store, engine_type) and engine_type.read_pages is not ReadView.read_pages
    layered = isinstance(scheme, LengthPrefixed)  # a leaf holds no child scope
    path = ("users",) if isinstance(scheme, ScopeHash) else ("t", "users")
    scope = ks.scope(*path)
    want = {b"k%05d" % i: b"v%d" % i for i in range(N)}
    scope.update(want)
    if not isinstance(scheme, ScopeHash):
        ks.scope(path[0], "users0").update({b"n%03d" % i: b"x" for i in range(100)})  # a neighbour
        if not layered:
            scope.scope("child").update({b"c%03d" % i: b"x" for i in range(100)})
    items = sorted(want.items())
    assert list(scope.items()) == items
    assert list(scope.items(reverse=True)) == items[::-1]
    for limit in (1, 63, 64, 65, 320, 321, 1344, 1345, N + 5):
        assert list(scope.items(limit=limit)) == items[:limit]
        assert list(scope.items(reverse=True, limit=limit)) == items[::-1][:limit]
    assert list(scope.items(start=b"k00100", stop=b"k01400")) == items[100:1400]
    if not isinstance(scheme, TupleScheme):  # the tuple scheme's prefix is leading elements
        assert list(scope.keys(prefix=b"k010")) == [k for k, _ in items[1000:1100]]
    assert len(scope) == N
    assert (
        list(scope.items(start=b"k00100", stop=b"k01400", reverse=True, include_stop=True))
        == items[1400:99:-1]
    )
    assert list(scope.items(start=b"k", include_start=False, limit=3)) == items[:3]
    with ks.transaction() as tx:  # a transaction's view reads item by item
        assert list(tx.scope(*path).items(reverse=True, limit=70)) == items[::-1][:70]
    ks.close()


@pytest.mark.parametrize("path", [(), ("t",)])
def test_the_empty_key_in_both_directions(tmp_path: Path, path: tuple[str, ...]) -> None:
    ks = keyspace.open(f"leveldb://{tmp_path}/db", scheme=Sublevel())
    scope = ks.scope(*path)
    scope.update({b"": b"0", b"a": b"1", b"b": b"2"})
    want = [(b"", b"0"), (b"a", b"1"), (b"b", b"2")]
    assert list(scope.items()) == want
    assert list(scope.items(reverse=True)) == want[::-1]
    assert list(scope.items(stop=b"b", reverse=True)) == want[1::-1]
    assert list(scope.items(stop=b"a")) == want[:1]
    ks.close()


def test_a_leveldb_scope_iterates_its_own_ranges_in_turn(tmp_path: Path) -> None:
    """A whole-scope iteration of a Sublevel scope on LevelDB reads its own
    ranges in turn (the children's range lies between them): the same items as
    the ranged route, and the store closed while the caller iterates is the
    keyspace's ``StoreClosed``."""
    ks = keyspace.open(f"leveldb://{tmp_path}/db", scheme=Sublevel())
    scope = ks.scope("t", "users")
    want = {b"k%04d" % i: b"v%d" % i for i in range(300)} | {b"\x00a": b"low", b"~z": b"high"}
    scope.update(want)
    scope.scope("child").update({b"c": b"x"})
    ks.scope("t", "users0").update({b"n": b"x"})
    items = sorted(want.items())
    assert list(scope.items()) == items
    assert list(scope.values()) == [v for _, v in items]
    assert list(scope.items(start=b"")) == items  # the ranged route agrees
    running = iter(scope.items())
    assert next(running) == items[0]
    ks.close()
    with pytest.raises(keyspace.errors.StoreClosed):
        next(running)
