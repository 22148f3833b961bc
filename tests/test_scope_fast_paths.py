"""Bytes scopes of the tuple scheme read through the store views' fast paths and in
chunks: every kind of own key decodes as through the general path, at chunk
boundaries, forwards and backwards, with limits; engine errors are translated."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed

MIXED: list[Any] = [b"plain-%04d" % i for i in range(1500)]
MIXED += [b"zero\x00%04d" % i for i in range(0, 1500, 7)]  # escaped zero bytes
MIXED += [(b"a", b"b"), (b"a", 5), "text", 42, (), b"", b"\x00", b"\xff\x00\xff"]


@pytest.fixture(params=["lmdb", "memory", "leveldb"])
def ks(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[keyspace.Keyspace]:
    url = {"lmdb": str(tmp_path / "db"), "memory": "memory:", "leveldb": f"leveldb://{tmp_path / 'ldb'}"}
    with keyspace.open(url[request.param]) as opened:
        yield opened


def test_chunked_scan_matches_the_general_decoder(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("t", "users")
    scope.update({k: repr(k).encode() for k in MIXED})
    ks.scope("t", "users", "child")[b"x"] = b"not own"
    general = list(ks.scope("t", "users", value="bytes", key="bytes")._scan())
    expected = [(scope._dec(rem), v) for rem, v in general]
    assert list(scope.items()) == expected
    assert list(scope.items(reverse=True)) == expected[::-1]
    for limit in (1, 16, 17, 100, 1000, 5000):
        assert list(scope.items(limit=limit)) == expected[:limit]
    with ks.transaction() as tx:
        inside = tx.scope("t", "users")
        assert list(inside.items()) == expected
        inside[b"plain-9999"] = b"new"
        assert list(inside.items(start=b"plain-9998", stop=b"plain-a")) == [(b"plain-9999", b"new")]


def test_fast_paths_after_close_raise_store_closed(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("t")
    scope.update({b"k%04d" % i: b"v" for i in range(200)})
    items = scope.items()
    next(items)
    ks.close()
    with pytest.raises(StoreClosed):
        scope[b"k0001"]
    with pytest.raises(StoreClosed):
        scope[b"k0001"] = b"w"
    with pytest.raises(StoreClosed):
        list(scope.items())
