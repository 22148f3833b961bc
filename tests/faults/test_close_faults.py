"""A ``with`` block that raises ends with its own error even when closing what it
opened fails too (that failure is added to it as a note); a block that ends
normally gets the close's error. Store, keyspace and snapshot alike."""

from __future__ import annotations

from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed, StoreError
from keyspace.stores import MemoryStore


class _CloseFails(MemoryStore):
    def close(self) -> None:
        super().close()
        raise StoreError("closing failed: the writer reports an earlier failed write")


class _BlockError(Exception):
    pass


def test_the_block_error_goes_on_with_the_close_error_as_a_note() -> None:
    with pytest.raises(_BlockError) as caught, keyspace.attach(_CloseFails()) as ks:
        ks.scope("a")[b"k"] = b"v"
        raise _BlockError("the write that failed first")
    assert "closing failed" in "".join(getattr(caught.value, "__notes__", []))


def test_a_store_block_error_goes_on_too() -> None:
    with pytest.raises(_BlockError) as caught, _CloseFails() as store:
        store.put(b"k", b"v")
        raise _BlockError("first")
    assert any("closing failed" in note for note in getattr(caught.value, "__notes__", []))


def test_a_block_that_ends_normally_gets_the_close_error() -> None:
    with pytest.raises(StoreError, match="closing failed"), keyspace.attach(_CloseFails()) as ks:
        ks.scope("a")[b"k"] = b"v"


def test_an_interrupt_in_the_block_goes_on() -> None:
    with pytest.raises(KeyboardInterrupt), keyspace.attach(_CloseFails()):
        raise KeyboardInterrupt


ENGINES = {
    "lmdb": lambda d: str(d / "s.lmdb"),
    "sqlite": lambda d: f"sqlite://{d / 's.db'}",
    "leveldb": lambda d: f"leveldb://{d / 's.ldb'}",
    "rocksdb": lambda d: f"rocksdb://{d / 's.rdb'}",
    "memory": lambda d: "memory:",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_close_inside_this_threads_transaction_ends_it_uncommitted(tmp_path: Any, engine: str) -> None:
    """SQLite's close waited for the lock of the transaction open in its own
    thread: for ever. On every engine the close returns, the transaction's end
    raises StoreClosed (and its operations, where they reach the engine), and
    nothing of it is committed."""
    url = ENGINES[engine](tmp_path)
    ks = keyspace.open(url)
    ks.scope("a")[b"x"] = b"before"
    store = ks.store
    with pytest.raises(StoreClosed), ks.transaction() as tx:
        tx.scope("a")[b"x"] = b"in the transaction"
        tx.scope("a")[b"y"] = b"new"
        ks.close()
        if engine in ("lmdb", "sqlite"):  # the others buffer a transaction's writes until its end
            with pytest.raises(StoreClosed):
                tx.scope("a")[b"z"] = b"after the close"
    with pytest.raises(StoreClosed):
        store.get(b"")
    if engine == "memory":
        return  # nothing to reopen
    with keyspace.open(url) as again:
        assert dict(again.scope("a")) == {b"x": b"before"}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_close_ends_the_open_snapshots(tmp_path: Any, engine: str) -> None:
    """SQLite's snapshots, each on a connection of its own, read on after the
    store was closed; on every engine their reads and running scans now raise
    StoreClosed."""
    ks = keyspace.open(ENGINES[engine](tmp_path))
    ks.scope("a").update({b"k%04d" % i: b"v" for i in range(3000)})
    with ks.snapshot() as snap:
        scope = snap.scope("a")
        running = iter(scope.items())
        next(running)
        ks.close()
        with pytest.raises(StoreClosed):
            scope.get(b"k0001")
        with pytest.raises(StoreClosed):
            for _ in running:
                pass
