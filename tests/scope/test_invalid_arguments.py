"""Arguments a call does not take raise :class:`InvalidArgument` (a ValueError and a
TypeError, as Python's own argument errors are) naming the argument and the
value, and change nothing in the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace import scoped_heed
from keyspace.errors import InvalidArgument, KeyspaceError
from keyspace.schemes import LengthPrefixed, ScopeHash, Sublevel, TupleScheme


@pytest.fixture(params=["memory", "lmdb"])
def ks(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    url = "memory:" if request.param == "memory" else f"lmdb://{tmp_path}/db"
    opened = keyspace.open(url)
    opened.scope("t")[b"a"] = b"1"
    opened.scope("t")[b"b"] = b"2"
    yield opened
    opened.close()


def _refused(call: Callable[[], Any], *words: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        call()
    assert isinstance(caught.value, KeyspaceError)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)
    for word in words:
        assert word in str(caught.value)


@pytest.mark.parametrize("method", ["items", "keys", "values"])
@pytest.mark.parametrize("limit", ["3", 2.5, b"1", True])
def test_a_limit_that_is_not_an_int(ks: Any, method: str, limit: Any) -> None:
    scope = ks.scope("t")
    before = list(ks.store.scan())
    _refused(lambda: list(getattr(scope, method)(limit=limit)), "limit", repr(limit))
    assert list(ks.store.scan()) == before
    assert list(getattr(scope, method)(limit=1)) != []  # an int limit still answers


@pytest.mark.parametrize(
    "scheme", [TupleScheme(), Sublevel(), LengthPrefixed(), ScopeHash()], ids=lambda s: s.name
)
def test_prefix_with_start_or_stop(scheme: Any) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    scope = ks.scope("t")
    scope[b"pa"] = b"1"
    scope[b"pb"] = b"2"
    before = list(ks.store.scan())
    _refused(lambda: list(scope.items(start=b"pa", prefix=b"p")), "prefix", "b'p'", "b'pa'")
    _refused(lambda: list(scope.keys(stop=b"pb", prefix=b"p")), "prefix", "b'pb'")
    _refused(lambda: scope.clear_range(start=b"pa", prefix=b"p"), "prefix", "b'pa'")
    assert list(ks.store.scan()) == before
    ks.close()


@pytest.mark.parametrize("codec", ["nope", 42, object()])
def test_a_codec_that_is_not_one(ks: Any, codec: Any) -> None:
    _refused(lambda: ks.scope("t", key=codec), repr(codec))
    _refused(lambda: ks.scope("t", value=codec), repr(codec))


def test_scoped_heed_options(tmp_path: Path) -> None:
    _refused(lambda: scoped_heed.open(tmp_path / "env", "db", api="nope"), "'nope'")
    _refused(lambda: scoped_heed.open(tmp_path / "env", ""), "''")
    _refused(
        lambda: scoped_heed.open(tmp_path / "env", "db", api="types", unnamed_default=True), "unnamed_default"
    )


@pytest.mark.parametrize("length", [-1, 2.0, "3", None, True])
def test_a_component_length_that_is_not_a_count(length: Any) -> None:
    """``encode_length`` let ``struct.error`` and ``TypeError`` escape."""
    from keyspace.schemes.length_prefixed import encode_length

    with pytest.raises(InvalidArgument, match="component length"):
        encode_length(length)
    assert encode_length(0) == b"\x00\x00" and encode_length(65535) == b"\xff\xff"


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite", "leveldb", "rocksdb"])
def test_a_limit_past_sys_maxsize_cuts_nothing(tmp_path: Path, engine: str) -> None:
    """``islice`` refuses a stop past ``sys.maxsize``: a valid int limit raised a
    bare ValueError on memory, and in transactions of memory, LevelDB and RocksDB."""
    import sys

    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path / 'store'}"
    with keyspace.open(url) as ks:
        scope = ks.scope("s")
        scope.update({b"k%d" % i: b"v" for i in range(5)})
        for huge in (sys.maxsize, sys.maxsize + 1, 2**64):
            assert len(list(scope.items(limit=huge))) == 5
            assert len(list(scope.keys(reverse=True, limit=huge))) == 5
            assert len(list(ks.store.scan(limit=huge))) >= 5
            with ks.transaction() as tx:
                assert len(list(tx.scope("s").values(limit=huge))) == 5
            with ks.snapshot() as snap:
                assert len(list(snap.scope("s").items(start=b"k1", limit=huge))) == 4
