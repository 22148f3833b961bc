"""Bytes scopes of the tuple scheme read through the store views' fast paths and in
chunks: every kind of own key decodes as through the general path, at chunk
boundaries, forwards and backwards, with limits; engine errors are translated."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace import scope as scope_module
from keyspace import tuples
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


@pytest.mark.skipif(tuples._accel_decode_bytes_chunk is None, reason="keyspace._tuples_accel was not built")
def test_chunks_decode_alike_with_and_without_the_c_decoder(
    ks: keyspace.Keyspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    scope = ks.scope("t", "users")
    scope.update({k: repr(k).encode() for k in MIXED})
    scope.update({b"zz\x00" * i: b"only escaped keys at the end" for i in range(1, 100)})
    accel = tuples._accel_decode_bytes_chunk
    assert accel is not None
    outcomes: list[bool] = []

    def spy(items: list[tuple[bytes, bytes]], plen: int) -> Any:
        got = accel(items, plen)
        outcomes.append(got is not None)
        return got

    monkeypatch.setattr(scope_module, "_accel_decode_bytes_chunk", spy)
    runs = [
        list(scope.items()),
        list(scope.items(reverse=True))[::-1],
        list(scope.items(start=b"plain-0100", limit=900)),
    ]
    assert True in outcomes and False in outcomes  # C-decoded chunks and handed-over ones
    monkeypatch.setattr(scope_module, "_accel_decode_bytes_chunk", None)
    assert runs == [
        list(scope.items()),
        list(scope.items(reverse=True))[::-1],
        list(scope.items(start=b"plain-0100", limit=900)),
    ]
    general = list(ks.scope("t", "users", value="bytes", key="bytes")._scan())
    assert runs[0] == [(scope._dec(rem), v) for rem, v in general]


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
