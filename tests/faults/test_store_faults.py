"""Stores under faults that need no special set-up: threads in transactions,
failing pairs of an update, a store closed under a running scan."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import InvalidKey, KeyTooLarge, StoreClosed, StoreError

ENGINES = ["memory", "lmdb", "sqlite", "leveldb", "rocksdb"]


def _url(engine: str, tmp_path: Path) -> str:
    return "memory:" if engine == "memory" else f"{engine}://{tmp_path / 'store'}"


@pytest.mark.parametrize("engine", ENGINES)
def test_read_modify_write_transactions_lose_no_update(tmp_path: Path, engine: str) -> None:
    threads, rounds = 8, 40
    errors: list[BaseException] = []
    with keyspace.open(_url(engine, tmp_path)) as ks:
        ks.scope("c", value="int")[b"n"] = 0
        start = threading.Barrier(threads)

        def work() -> None:
            try:
                start.wait(timeout=30)
                for _ in range(rounds):
                    with ks.transaction() as tx:
                        counter = tx.scope("c", value="int")
                        value = counter[b"n"]
                        counter[b"n"] = value + 1
            except BaseException as exc:  # reported below
                errors.append(exc)

        workers = [threading.Thread(target=work) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
        assert not errors, errors
        assert ks.scope("c", value="int")[b"n"] == threads * rounds


@pytest.mark.parametrize("engine", ["memory", "leveldb", "rocksdb"])
def test_a_second_transaction_in_the_same_thread_is_refused(tmp_path: Path, engine: str) -> None:
    with keyspace.open(_url(engine, tmp_path)) as ks:
        with ks.transaction() as tx:
            tx.scope("a")[b"k"] = b"1"
            with pytest.raises(StoreError, match="already open in this thread"), ks.transaction():
                pass
        with ks.transaction() as tx:  # the gate opened again
            tx.scope("a")[b"k"] = b"2"
        assert ks.scope("a")[b"k"] == b"2"


def _update_all_or_nothing(url: str, in_transaction: bool, pairs: Any, error: type[Exception]) -> None:
    """``update(pairs)`` of a scope that has written (in a transaction, or not) raises
    ``error`` and writes none of ``pairs``; the writes around it stay."""
    with keyspace.open(url) as ks:
        ks.scope("s")[b"old"] = b"0"
        if in_transaction:
            with ks.transaction() as tx:
                scope = tx.scope("s")
                scope[b"before"] = b"b"  # the scope has written: its next writes go straight on
                with pytest.raises(error):
                    scope.update(pairs)
                scope[b"after"] = b"4"  # the caller carries on; the transaction commits
        else:
            scope = ks.scope("s")
            scope[b"before"] = b"b"
            with pytest.raises(error):
                scope.update(pairs)
        expected = {b"old": b"0", b"before": b"b", **({b"after": b"4"} if in_transaction else {})}
        assert dict(ks.scope("s").items()) == expected


@pytest.mark.parametrize("in_transaction", [False, True])
def test_update_is_all_or_nothing_when_a_key_is_over_the_engine_limit(
    tmp_path: Path, in_transaction: bool
) -> None:
    pairs = {b"first": b"1", b"x" * 600: b"too long for LMDB", b"last": b"3"}
    _update_all_or_nothing(str(tmp_path / "s"), in_transaction, pairs, KeyTooLarge)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("in_transaction", [False, True])
def test_update_is_all_or_nothing_when_a_pair_cannot_be_encoded(
    tmp_path: Path, engine: str, in_transaction: bool
) -> None:
    pairs: list[tuple[object, bytes]] = [(b"first", b"1"), ([1], b"2"), (b"last", b"3")]
    _update_all_or_nothing(_url(engine, tmp_path), in_transaction, pairs, InvalidKey)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_scan_running_when_the_store_closes_raises_store_closed(tmp_path: Path, engine: str) -> None:
    ks = keyspace.open(_url(engine, tmp_path))
    ks.scope("s").update({b"k%04d" % i: b"v" for i in range(2000)})
    items = iter(ks.scope("s").items())
    assert next(items) == (b"k0000", b"v")
    ks.close()
    with pytest.raises(StoreClosed):
        for _ in range(5000):  # bounded: a scan that "ends" early fails the test below
            next(items)
