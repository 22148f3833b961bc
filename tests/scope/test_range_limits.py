"""A negative ``limit`` is refused, naming the value, wherever a limit is taken:
abstract-level code passes ``limit=-1`` for "no limit", which read as a range of
nothing (and a clear of nothing) with no word said."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from _etcd import own_url

import keyspace
import keyspace.aio
from keyspace.collections import IndexedMap, Map, MultiIndex
from keyspace.errors import InvalidArgument
from keyspace.stores import keys_in, open_store

SCHEMES = ["tuple", "sublevel", "asciihex", "scopehash", "length-prefixed", "delimited"]


def _filled(scheme: str) -> keyspace.Keyspace:
    ks = keyspace.open("memory:", scheme=scheme)
    ks.scope("a").update({b"k%d" % i: b"v" for i in range(5)})
    return ks


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("limit", [-1, -2, -(2**70)])
def test_scope_ranges_refuse_a_negative_limit(scheme: str, limit: int) -> None:
    with _filled(scheme) as ks:
        scope = ks.scope("a")
        before = list(ks.store.scan())
        calls: list[Callable[[], Any]] = [
            lambda: list(scope.items(limit=limit)),
            lambda: list(scope.keys(limit=limit)),
            lambda: list(scope.values(limit=limit)),
            lambda: list(scope.items(b"k1", limit=limit, reverse=True)),
            lambda: list(scope.items(prefix=b"k", limit=limit)),
            lambda: scope.clear_range(limit=limit),
        ]
        for call in calls:
            with pytest.raises(
                InvalidArgument, match=rf"limit must be 0 or more \(None for no limit\), not {limit}"
            ):
                call()
        assert list(ks.store.scan()) == before
        assert list(scope.items(limit=0)) == [] and len(list(scope.items(limit=2))) == 2


def test_the_asyncio_scope_refuses_a_negative_limit() -> None:
    async def main() -> None:
        async with await keyspace.aio.open("memory:") as aks:
            scope = aks.scope("a")
            await scope.update({b"k1": b"v", b"k2": b"v"})
            with pytest.raises(InvalidArgument, match="not -1"):
                [x async for x in scope.items(limit=-1)]
            with pytest.raises(InvalidArgument, match="not -1"):
                [x async for x in scope.keys(limit=-1, reverse=True)]
            with pytest.raises(InvalidArgument, match="not -1"):
                await scope.clear_range(limit=-1)
            assert await scope.clear_range(limit=1, reverse=True) == 1
            assert [k async for k in scope.keys(limit=5)] == [b"k1"]

    asyncio.run(main())


def test_collections_refuse_a_negative_limit() -> None:
    with keyspace.open("memory:") as ks:
        app = ks.scope("app")
        m = Map(app, "m", key="str", value="json")
        for n in range(3):
            m.save(f"k{n}", n)
        people = IndexedMap(
            app,
            "people",
            key="str",
            indexes={"team": MultiIndex(lambda p: p["team"], "people__team", key="str")},
        )
        people.save("alice", {"team": "red"})
        calls: list[Callable[[], Any]] = [
            lambda: list(m.range(limit=-1)),
            lambda: list(m.keys(limit=-1)),
            lambda: list(m.values(limit=-1)),
            lambda: list(m.items(limit=-1)),
            lambda: list(people.range(limit=-1)),
            lambda: list(people.index("team").prefix("red").range(limit=-1)),
        ]
        for call in calls:
            with pytest.raises(InvalidArgument, match="-1"):
                call()


def test_the_command_line_refuses_a_negative_limit(tmp_path: Path) -> None:
    url = str(tmp_path / "data.lmdb")
    run("put", url, "a", "--key", "k", "--value", "v")
    proc = run("scan", url, "a", "--limit", "-1", ok=False)
    assert proc.returncode == 1 and "-1" in proc.stderr and "--limit" in proc.stderr


@pytest.fixture(params=["memory", "sqlite", "lmdb", "leveldb", "rocksdb", "etcd"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    engine = request.param
    if engine == "etcd":
        yield from own_url("range-limits")
    elif engine == "memory":
        yield "memory:"
    elif engine == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.sqlite'}"
    else:
        yield f"{engine}://{tmp_path / 'store'}"


def test_every_store_view_refuses_a_negative_limit(store_url: str) -> None:
    with open_store(store_url) as store:
        store.put(b"a", b"1")
        with store.snapshot() as snap, store.transaction() as tx:
            for view in (store, snap, tx):
                for scan in (view.scan, partial(keys_in, view)):
                    with pytest.raises(InvalidArgument, match="not -1"):
                        list(scan(b"", None, limit=-1))
                    with pytest.raises(InvalidArgument, match="not -5"):
                        list(scan(reverse=True, limit=-5))
                    assert list(scan(limit=0)) == [] and len(list(scan(limit=1))) == 1
        assert list(store.scan()) == [(b"a", b"1")]


def test_the_asyncio_store_refuses_a_negative_limit() -> None:
    async def main() -> None:
        async with await keyspace.aio.open("memory:") as aks:
            await aks.scope("a").put(b"k", b"v")
            with pytest.raises(InvalidArgument, match="not -1"):
                [x async for x in aks.store.scan(limit=-1)]

    asyncio.run(main())


def test_a_view_with_parameters_of_its_own_keeps_them_and_refuses_a_negative_limit() -> None:
    # a scan whose parameters are not the contract's (defaults of its own, a
    # keyword more) is called as it is: only the limit is checked first
    from keyspace.stores._base import ReadView

    class Own(ReadView):
        def get(self, key: bytes) -> bytes | None:
            return None

        def scan(  # type: ignore[override]
            self,
            start: bytes = b"s",
            stop: bytes | None = b"t",
            *,
            reverse: bool = True,
            limit: Any = 7,
            step: int = 1,
        ) -> Iterator[tuple[bytes, bytes]]:
            yield start, b"%r %r %r %d" % (stop, reverse, limit, step)

    own = Own()
    assert list(own.scan()) == [(b"s", b"b't' True 7 1")]
    assert list(own.scan(b"a", step=2, limit=None)) == [(b"a", b"b't' True None 2")]
    with pytest.raises(InvalidArgument, match="not -1"):
        own.scan(limit=-1)
    assert Own.scan.__name__ == "scan"
