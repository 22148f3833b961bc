"""Scope scans over a store's ``fast_pages`` (LMDB store scans, read in pages of
short read transactions) return what the item-by-item route returns: every
scheme, both directions, limits across page boundaries, a child scope's keys and
neighbours' keys around the scope."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.stores import LMDBStore

N = 1500  # more than the first pages (64 + 256 + 1024 items)


@pytest.mark.parametrize(
    "scheme",
    [TupleScheme(), AsciiHex(), Sublevel(), ScopeHash(), LengthPrefixed()],
    ids=lambda s: type(s).__name__,
)
def test_scans_over_pages_match_the_items(tmp_path: Path, scheme: Scheme) -> None:
    ks = keyspace.open(f"lmdb://{tmp_path}/db", scheme=scheme)
    store = ks.store
    assert isinstance(store, LMDBStore) and store.fast_pages is not None
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
    ks.close()
