"""A transaction or snapshot that has ended is freed when its last reference
goes, not kept by a reference cycle until the cyclic collector runs: a view
whose ``get`` or ``put`` is set on the instance (an engine's call, translated)
must not hold the view itself in it once the block is over. A hooked
transaction's dicts of old and new values (a large transaction's are large)
would otherwise outlive it. Checked with the collector off: the objects of the
view's type are as many after the block as before it."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.stores import open_store


@contextmanager
def _collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _alive(name: str) -> int:
    return sum(1 for o in gc.get_objects() if type(o).__name__ == name)


def _freed_after(name: str, block: Callable[[], object]) -> None:
    with _collector_off():
        before = _alive(name)
        block()
        assert _alive(name) == before, f"an ended {name} is kept by a reference cycle"


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("memory:", "OverlayTransaction"),
        ("sqlite", "OverlayTransaction"),
        ("leveldb", "OverlayTransaction"),
        ("lmdb", "LMDBTransaction"),
        ("lmdb-small", "LMDBTransaction"),  # a replay log: get and put are its methods
    ],
)
def test_an_ended_store_transaction_is_freed(url: str, name: str, tmp_path: Path) -> None:
    target = {
        "memory:": "memory:",
        "sqlite": f"sqlite:///{tmp_path / 'db.sqlite'}",
        "leveldb": f"leveldb://{tmp_path / 'db'}",
        "lmdb": f"lmdb://{tmp_path / 'db'}",
        "lmdb-small": f"lmdb://{tmp_path / 'db'}?map_size=65536",
    }[url]
    with open_store(target) as store:

        def block() -> None:
            with store.transaction() as tx:
                tx.put(b"k", b"v")
                assert tx.get(b"k") == b"v"

        block()  # warm: what a first transaction makes once
        _freed_after(name, block)


def test_an_ended_leveldb_snapshot_is_freed(tmp_path: Path) -> None:
    with open_store(f"leveldb://{tmp_path / 'db'}") as store:
        store.put(b"k", b"v")

        def block() -> None:
            with store.snapshot() as snap:
                assert snap.get(b"k") == b"v"

        block()
        _freed_after("_LevelDBSnapshot", block)


@pytest.mark.parametrize("features", [{"changes": True}, {"accounting": True}])
def test_an_ended_hooked_transaction_is_freed(features: dict[str, Any], tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path / 'db'}", **features) as ks:

        def block() -> None:
            with ks.transaction() as tx:
                tx.scope("t")[b"k"] = b"v"

        block()
        _freed_after("HookedTransaction", block)
