"""Claims of docs/guarantees.md about opening stores, checked as written:
"Opening stores" (options, ``readonly``) and "Concurrency" (a second opener of
an LMDB store in the same process)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreError


@pytest.mark.parametrize("url", ["memory:", "memory:?readonly=true", "lmdb://{}/db", "sqlite://{}/db.sqlite"])
def test_readonly_is_listed_among_the_known_options_of_every_engine(tmp_path: Path, url: str) -> None:
    """An unknown option is refused "listing the known ones"; ``readonly`` is
    one for every engine (open_store takes it for all), memory included."""
    with pytest.raises(StoreError, match=r"unknown .*option 'bogus'") as caught:
        keyspace.open(url.format(tmp_path), bogus=1)
    assert "readonly" in str(caught.value)
    assert "none" not in str(caught.value).split("known options:")[1]


def test_a_readonly_memory_store_refuses_writes() -> None:
    ks = keyspace.open("memory:", readonly=True)
    with pytest.raises(StoreError, match="read-only"):
        ks.scope("t")[b"k"] = b"v"
    assert list(ks.store.scan()) == []


def test_a_second_lmdb_opener_in_the_same_process_shares_the_store(tmp_path: Path) -> None:
    """The stores of one LMDB path in one process share one environment: both
    keyspaces work and see each other's writes; a write through one from the
    thread that holds the other's transaction is a StoreError, never a hang."""
    first = keyspace.open(tmp_path / "db")
    second = keyspace.open(tmp_path / "db")
    first.scope("t")[b"k"] = b"1"
    assert second.scope("t")[b"k"] == b"1"
    second.scope("t")[b"k"] = b"2"
    assert first.scope("t")[b"k"] == b"2"
    outcome: list[BaseException | None] = []

    def write_inside() -> None:
        try:
            with first.transaction() as tx:
                tx.scope("t")[b"k"] = b"3"
                second.scope("t")[b"k"] = b"4"
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=write_inside, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "a write through the second store waited for the first's transaction"
    assert isinstance(outcome[0], StoreError) and "transaction" in str(outcome[0])
    assert first.scope("t")[b"k"] == b"2"  # the raising block committed nothing
    first.close()
    assert second.scope("t")[b"k"] == b"2"  # closing one leaves the other open
    second.close()


def test_a_writable_open_after_a_readonly_one_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with keyspace.open(tmp_path / "db") as ks:
        ks.scope("t")[b"k"] = b"1"
    reader = keyspace.open(tmp_path / "db", readonly=True)
    with pytest.raises(StoreError, match="read-only in this process"):
        keyspace.open(tmp_path / "db")
    assert reader.scope("t")[b"k"] == b"1"
    reader.close()
    with keyspace.open(tmp_path / "db") as ks:  # once the reader is closed
        ks.scope("t")[b"k"] = b"2"
        assert ks.scope("t")[b"k"] == b"2"
