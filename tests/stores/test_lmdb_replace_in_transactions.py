"""A write view's put that gives back the value it replaced: ``fast_replace``
(LMDB's ``replace``, one engine call) and ``replace_many`` (every view; LMDB's
a loop of ``cursor.replace`` in C, the others' reads then ``put_many``)."""

from __future__ import annotations

from pathlib import Path

import lmdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import KeyTooLarge, StoreError
from keyspace.stores.lmdb import LMDBStore
from keyspace.stores.memory import MemoryStore


def test_fast_replace_gives_the_value_it_replaced(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "db", sync=False) as store:
        store.put(b"a", b"1")
        with store.transaction() as tx:
            assert tx.fast_replace is not None
            assert tx.fast_replace(b"a", b"2") == b"1"
            assert tx.fast_replace(b"b", b"3") is None
        assert (store.get(b"a"), store.get(b"b")) == (b"2", b"3")


def test_fast_replace_errors_are_the_views_as_puts_are(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "db", sync=False) as store, store.transaction() as tx:
        assert tx.fast_replace is not None
        big = b"k" * 1000
        with pytest.raises(KeyTooLarge, match="1000") as raised:
            tx.fast_replace(big, b"v")
        assert isinstance(raised.value.__cause__, lmdb.Error)  # the engine's error, chained


def test_no_fast_replace_in_a_transaction_with_a_replay_log(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "db", sync=False, map_size=1 << 20) as store, store.transaction() as tx:
        assert tx.fast_replace is None


def test_replace_of_a_named_database_record_is_refused_as_a_put(tmp_path: Path) -> None:
    LMDBStore(tmp_path / "db", db="named", sync=False).close()
    with LMDBStore(tmp_path / "db", sync=False, max_dbs=2) as store:
        with pytest.raises(StoreError, match="record of a named database"), store.transaction() as tx:
            tx.replace_many([b"named"], [b"data"])
        with pytest.raises(StoreError, match="record of a named database"), store.transaction() as tx:
            assert tx.fast_replace is not None
            tx.fast_replace(b"named", b"data")


@pytest.mark.parametrize("map_size", [1 << 40, 1 << 20], ids=["fast", "replay-log"])
def test_replace_many_with_a_bad_key_writes_none_of_the_pairs(tmp_path: Path, map_size: int) -> None:
    with LMDBStore(tmp_path / "db", sync=False, map_size=map_size) as store:
        store.put(b"a", b"old")
        with store.transaction() as tx:
            with pytest.raises(KeyTooLarge):
                tx.replace_many([b"a", b"k" * 1000], [b"new", b"v"])
            assert tx.get(b"a") == b"old"
            assert tx.replace_many([], []) == []


def test_replace_many_grows_a_full_map_and_gives_the_old_values(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "db", sync=False, map_size=64 << 10) as store:
        store.put(b"k00003", b"was")
        pairs = [(b"k%05d" % i, b"x" * 1000) for i in range(300)]  # several times the map
        with store.transaction() as tx:
            old = tx.replace_many([k for k, _ in pairs], [v for _, v in pairs])
        assert old == [b"was" if k == b"k00003" else None for k, _ in pairs]
        assert all(store.get(k) == v for k, v in pairs)


ITEMS = st.dictionaries(st.binary(min_size=1, max_size=6), st.binary(max_size=8), max_size=20)


@settings(max_examples=60, deadline=None)
@given(before=ITEMS, items=ITEMS, map_size=st.sampled_from([1 << 40, 1 << 20]))
def test_replace_many_is_reads_then_put_many(
    tmp_path_factory: pytest.TempPathFactory,
    before: dict[bytes, bytes],
    items: dict[bytes, bytes],
    map_size: int,
) -> None:
    pairs = list(items.items())
    want = [before.get(k) for k, _ in pairs]
    after = {**before, **items}
    with LMDBStore(tmp_path_factory.mktemp("db"), sync=False, map_size=map_size) as store:
        store.write(list(before.items()))
        with store.transaction() as tx:
            assert tx.replace_many(list(items), list(items.values())) == want
        assert dict(store.scan(b"", None)) == after
    memory = MemoryStore()
    memory.write(list(before.items()))
    with memory.transaction() as mtx:
        assert (
            mtx.replace_many(list(items), list(items.values())) == want
        )  # the default: reads, then put_many
    assert dict(memory.scan(b"", None)) == after
