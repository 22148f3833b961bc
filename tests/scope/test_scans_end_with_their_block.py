"""An iterator begun in a snapshot or transaction block and read on after the block
raises StoreClosed (saying the snapshot or transaction has ended) at its next read
of the store, through the layers above the store: the views and ranged reads of a
scope, its subtree, and the iterators of the collections. Every engine available
here runs it, read-only stores and scoped-heed's joint views (a PrefixUnion of
LMDB databases) too.

Each case begins its iterator in the block and reads one item, ends the block,
changes what the iterator has not reached yet (where the store can be written),
then reads on: the iterator must raise StoreClosed before its end, and what it
handed out is the start of what it gives when read to its end inside a block (a
page read ahead may still come; nothing written after the block)."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import keyspace
from keyspace import scoped_heed
from keyspace.codecs import BYTES
from keyspace.collections import Deque, IndexedMap, Map, MultiIndex
from keyspace.errors import StoreClosed
from keyspace.keyspace import Keyspace

N = 3000
KEYS = [b"%04d" % i for i in range(N)]
LATE = [b"%04d+" % i for i in range(0, N, 100)]  # new keys put after the block
CHANGED = KEYS[50::100]  # keys given a new value after the block


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


ENGINES = [
    "memory",
    "lmdb",
    "sqlite",
    pytest.param("leveldb", marks=pytest.mark.skipif(not _available("plyvel"), reason="no plyvel")),
    pytest.param("rocksdb", marks=pytest.mark.skipif(not _available("rocksdict"), reason="no rocksdict")),
    "lmdb-readonly",
    "sqlite-readonly",
    pytest.param("leveldb-readonly", marks=pytest.mark.skipif(not _available("plyvel"), reason="no plyvel")),
    pytest.param(
        "rocksdb-readonly", marks=pytest.mark.skipif(not _available("rocksdict"), reason="no rocksdict")
    ),
    "scoped-heed",
]


@dataclass
class Opened:
    """The keyspace the iterators read (``reader``) and the one that writes after
    the block (``writer``; ``None`` where no other handle may write meanwhile)."""

    reader: Keyspace
    writer: Keyspace | None
    close: Callable[[], None]


def _open(engine: str, tmp_path: Path, fill: Callable[[Keyspace], None]) -> Opened:
    """A keyspace of ``engine`` filled by ``fill``; a read-only engine reopens the
    filled store read-only (LMDB and SQLite beside a writer; LevelDB and RocksDB
    lock their directory, so nothing writes after the block there)."""
    if engine == "scoped-heed":
        path = str(tmp_path / "heed")
        heed = scoped_heed.open(path, "tenants", api="types", key=BYTES, value=BYTES)
        fill(heed)
        return Opened(heed, heed, heed.close)
    base = engine.removesuffix("-readonly")
    url = "memory:" if base == "memory" else f"{base}://{tmp_path / 'store'}"
    ks = keyspace.open(url)
    fill(ks)
    if base == engine:
        return Opened(ks, ks, ks.close)
    if base in ("leveldb", "rocksdb"):
        ks.close()
        reader = keyspace.open(url, readonly=True)
        return Opened(reader, None, reader.close)
    reader = keyspace.open(url, readonly=True)

    def close() -> None:
        reader.close()
        ks.close()

    return Opened(reader, ks, close)


# -- what the cases read ---------------------------------------------------------------


def _fill_scope(ks: Keyspace) -> None:
    ks.scope("a").update({k: b"old" for k in KEYS})
    if not isinstance(ks, scoped_heed.ScopedHeedKeyspace):  # scoped-heed scopes have one level
        ks.scope("a", "child").update({k: b"kid" for k in KEYS[:40]})


def _change_scope(ks: Keyspace) -> None:
    scope = ks.scope("a")
    scope.update({k: b"new" for k in LATE + CHANGED})


def _map(ks: Any) -> Map:
    return Map(ks.scope("m"), "balances", key="bytes", value="bytes")


def _deque(ks: Any) -> Deque:
    return Deque(ks.scope("m"), "queue", value="bytes")


def _indexed(ks: Any) -> IndexedMap:
    return IndexedMap(
        ks.scope("m"),
        "users",
        key="bytes",
        value="json",
        indexes={"team": MultiIndex(lambda u: u["team"], "users__team", key="str")},
    )


def _fill_collections(ks: Keyspace) -> None:
    with ks.transaction() as tx:
        balances, queue, users = _map(ks).using(tx), _deque(ks).using(tx), _indexed(ks).using(tx)
        for k in KEYS:
            balances.save(k, b"old")
        for k in KEYS[:600]:
            queue.push_back(k)
            users.save(k, {"team": "red", "n": k.decode()})


def _change_collections(ks: Keyspace) -> None:
    with ks.transaction() as tx:
        balances, queue, users = _map(ks).using(tx), _deque(ks).using(tx), _indexed(ks).using(tx)
        for k in LATE + CHANGED:
            balances.save(k, b"new")
        for k in CHANGED[:6]:
            users.save(k, {"team": "red", "n": "new"})
        queue.push_front(b"new")
        queue.pop_back()


Begin = Callable[[Any], Iterator[Any]]
"""Begins an iterator on a transaction's or snapshot's handle (``tx``)."""


@dataclass(frozen=True)
class Case:
    name: str
    begin: Begin
    fill: Callable[[Keyspace], None] = _fill_scope
    change: Callable[[Keyspace], None] = _change_scope


CASES = [
    Case("items view", lambda tx: iter(tx.scope("a").items())),
    Case("keys view", lambda tx: iter(tx.scope("a").keys())),
    Case("values view", lambda tx: iter(tx.scope("a").values())),
    Case("iteration", lambda tx: iter(tx.scope("a"))),
    Case("ranged items", lambda tx: tx.scope("a").items(start=b"0100", stop=b"2950")),
    Case("reverse items", lambda tx: tx.scope("a").items(reverse=True)),
    Case("ranged keys", lambda tx: tx.scope("a").keys(start=b"0010")),
    Case("reverse keys", lambda tx: tx.scope("a").keys(stop=b"2990", reverse=True)),
    Case("ranged values", lambda tx: tx.scope("a").values(stop=b"2990")),
    Case("items beyond a short limit", lambda tx: tx.scope("a").items(start=b"0001", limit=2900)),
    Case("subtree", lambda tx: tx.scope("a").subtree()),
    Case("map items", lambda tx: _map(tx).using(tx).items(), _fill_collections, _change_collections),
    Case("map keys", lambda tx: _map(tx).using(tx).keys(), _fill_collections, _change_collections),
    Case("map values", lambda tx: _map(tx).using(tx).values(), _fill_collections, _change_collections),
    Case(
        "map range_raw",
        lambda tx: _map(tx).using(tx).range_raw(start=b"0005", reverse=True),
        _fill_collections,
        _change_collections,
    ),
    Case("deque", lambda tx: iter(_deque(tx).using(tx)), _fill_collections, _change_collections),
    Case(
        "index items",
        lambda tx: _indexed(tx).using(tx).index("team").prefix("red").items(),
        _fill_collections,
        _change_collections,
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["transaction", "snapshot"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_an_iterator_read_on_after_its_block_raises(
    engine: str, kind: str, case: Case, tmp_path: Path
) -> None:
    opened = _open(engine, tmp_path, case.fill)
    try:
        ks = opened.reader
        with getattr(ks, kind)() as tx:
            whole = list(case.begin(tx))  # what it gives read to its end in the block
            items = case.begin(tx)
            got = [next(items)]
        assert len(whole) > 512
        if opened.writer is not None:
            case.change(opened.writer)
        with pytest.raises(StoreClosed, match="ended"):
            got.extend(items)
        assert got == whole[: len(got)], "it read on after its block ended"
    finally:
        opened.close()


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_scope_scan_of_a_transaction_s_own_writes_ends_with_it(engine: str, tmp_path: Path) -> None:
    """The items a transaction put itself (the pending writes of an overlay
    transaction; the engine's own transaction elsewhere) end with it too."""
    opened = _open(engine, tmp_path, lambda ks: None)
    try:
        with opened.reader.transaction() as tx:
            scope = tx.scope("mine")
            scope.update({k: b"mine" for k in KEYS})
            items = iter(scope.items())
            got = [next(items)]
        with pytest.raises(StoreClosed, match="ended"):
            got.extend(items)
        assert got == [(k, b"mine") for k in KEYS[: len(got)]]
    finally:
        opened.close()


class _StandInClient:
    """What an asyncio view of etcd asks of its client, answering every range with
    no stored keys: enough to read a transaction's own writes, with no server."""

    def check_open(self, what: str) -> None:
        pass

    async def call(self, what: str, method: str, request: Any, *, retry: bool = True) -> Any:
        return SimpleNamespace(kvs=[], more=False, header=SimpleNamespace(revision=7))


def test_an_async_server_transaction_s_own_writes_end_with_it() -> None:
    """etcd's asyncio transaction view (with a stand-in client: no server runs):
    a scan of its pending writes read on after the transaction ended raises."""
    from keyspace.stores.etcd._aio import _EtcdView

    store = SimpleNamespace(_client=_StandInClient(), _prefix=b"p/", _check_key=lambda key: None)
    view = _EtcdView(store, 7, track=False, writable=True)

    async def run() -> None:
        for k in KEYS[:300]:
            await view.put(k, b"mine")
        items = view.scan(b"", None)
        got = [await anext(items)]
        await view.discard()
        with pytest.raises(StoreClosed, match="ended"):
            async for item in items:
                got.append(item)  # noqa: PERF401 (what came before the error must stay in got)
        assert got == [(k, b"mine") for k in KEYS[: len(got)]]

    asyncio.run(run())
