"""Scopes read through the store views' fast paths and in chunks: every kind of own
key decodes as the pure-Python layout decodes it, for every scheme, at chunk
boundaries, forwards and backwards, with limits; engine errors are translated."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme

MIXED: list[Any] = [b"plain-%04d" % i for i in range(1500)]
MIXED += [b"zero\x00%04d" % i for i in range(0, 1500, 7)]  # escaped zero bytes
MIXED += [(b"a", b"b"), (b"a", 5), "text", 42, (), b"", b"\x00", b"\xff\x00\xff"]


@pytest.fixture(params=["lmdb", "memory", "leveldb"])
def ks(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[keyspace.Keyspace]:
    url = {"lmdb": str(tmp_path / "db"), "memory": "memory:", "leveldb": f"leveldb://{tmp_path / 'ldb'}"}
    with keyspace.open(url[request.param]) as opened:
        yield opened


def _reference(ks: keyspace.Keyspace, path: tuple[Any, ...]) -> list[tuple[Any, bytes]]:
    """The own items of ``path`` decoded one by one by the pure-Python layout."""
    layout = ks.scheme.layout(path, accelerate=False)
    own = [(k, v) for lo, hi in layout.ranges for k, v in ks.store.scan(lo, hi) if layout.is_own(k)]
    return [(layout.key_of(k), v) for k, v in own]


def test_chunked_scan_matches_the_reference_decoder(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("t", "users")
    scope.update({k: repr(k).encode() for k in MIXED})
    ks.scope("t", "users", "child")[b"x"] = b"not own"
    expected = _reference(ks, ("t", "users"))
    assert len(expected) == len(MIXED)
    assert list(scope.items()) == expected
    assert list(scope.items(reverse=True)) == expected[::-1]
    assert len(scope) == len(expected)
    for limit in (1, 16, 17, 100, 1000, 5000):
        assert list(scope.items(limit=limit)) == expected[:limit]
        assert list(scope.keys(reverse=True, limit=limit)) == [k for k, _ in expected[::-1][:limit]]
    with ks.transaction() as tx:
        inside = tx.scope("t", "users")
        assert list(inside.items()) == expected
        inside[b"plain-9999"] = b"new"
        assert list(inside.items(start=b"plain-9998", stop=b"plain-a")) == [(b"plain-9999", b"new")]


@pytest.mark.parametrize(
    "scheme", [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash(), Naive(True)], ids=str
)
def test_every_scheme_scans_like_its_reference(scheme: Scheme) -> None:
    with keyspace.open("memory:", scheme=scheme) as ks:
        path = ("t",)
        scope = ks.scope(*path)
        keys = [b"k%04d" % i for i in range(1200)] + [b"", b"\x00", b"\xff\x00", b"z\x00z"]
        scope.update({k: k[::-1] for k in keys})
        nested = scheme.separates_own_keys and scheme.max_depth is None
        if nested:
            ks.scope(*path, "child")[b"x"] = b"not own"
        expected = _reference(ks, path)
        assert sorted(k for k, _ in expected) == sorted(keys)
        assert list(scope.items()) == expected
        assert list(scope.items(reverse=True)) == expected[::-1]
        assert list(scope.items(limit=33)) == expected[:33]
        assert len(scope) == len(keys) and bool(scope)
        scope.clear()
        assert len(scope) == 0 and not scope
        assert len(scope.scopes()) == (1 if nested else 0)  # clear keeps the children


def test_fast_paths_after_close_raise_store_closed(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("t")
    scope.update({b"k%04d" % i: b"v" for i in range(200)})
    items = iter(scope.items())
    next(items)
    ks.close()
    with pytest.raises(StoreClosed):
        scope[b"k0001"]
    with pytest.raises(StoreClosed):
        scope[b"k0001"] = b"w"
    with pytest.raises(StoreClosed):
        list(scope.items())
