"""LMDBStore runs the conformance suite."""

import uuid
from pathlib import Path

import lmdb
import pytest

from keyspace.errors import KeyTooLarge, StoreClosed, StoreError
from keyspace.stores import LMDBStore, Store, open_store
from keyspace.stores.lmdb import _growth as _lmdb_growth
from keyspace.testing import MakeStore, StoreSuite


class TestLMDBStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return open_store(url or f"lmdb://{tmp_path / uuid.uuid4().hex}", sync=False)

        return make


def test_open_store_gives_lmdb(tmp_path: Path) -> None:
    with open_store(f"lmdb://{tmp_path / 'db'}") as store:
        assert isinstance(store, LMDBStore)


def test_full_map_grows_instead_of_failing(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "small", map_size=64 << 10, sync=False) as store:
        value = b"v" * 200
        for i in range(400):  # outside a transaction: each write retried after growing
            store.put(b"k%05d" % i, value)
        store.write([(b"w%05d" % i, value) for i in range(400)])
        with store.transaction() as tx:  # inside: the transaction is replayed on the grown map
            for i in range(2000):
                tx.put(b"t%05d" % i, value)
            assert tx.get(b"k00000") == value
        assert sum(1 for _ in store.scan()) == 2800
        assert store.get(b"t01999") == value


def test_small_map_transaction_keeps_a_replay_log(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "small", map_size=64 << 10, sync=False) as store, store.transaction() as tx:
        assert tx.fast_replace is None  # the Python methods, which log


def test_transaction_begins_by_growing_a_half_full_map(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "small", map_size=64 << 10, sync=False) as store:
        store.write([(b"k%05d" % i, b"v" * 200) for i in range(100)])  # well over half of 64 KiB
        size = store._env.info()["map_size"]
        with store.transaction() as tx:
            tx.put(b"a", b"1")
        assert store._env.info()["map_size"] > size


def test_fast_transaction_that_outgrows_the_map_raises_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lmdb_growth, "FAST_HEADROOM", 16 << 10)  # the fast path on a small map
    with LMDBStore(tmp_path / "small", map_size=256 << 10, sync=False) as store:
        with pytest.raises(StoreError, match="outgrew the free space of the map"), store.transaction() as tx:
            assert tx.fast_replace is not None
            for i in range(5000):
                tx.put(b"t%05d" % i, b"v" * 200)
        assert store.get(b"t00000") is None  # nothing of it was committed
        with pytest.raises(StoreError, match="outgrew"), store.transaction() as tx:
            tx.put_many([(b"t%05d" % i, b"v" * 200) for i in range(5000)])
        store.put(b"after", b"1")  # the store is still usable
        assert store.get(b"after") == b"1"


def test_the_engine_calls_of_a_transaction_raise_its_errors(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db", sync=False)
    big = b"k" * 1000
    with store.transaction() as tx:
        assert tx.fast_replace is not None  # no replay log: get and put are py-lmdb's, translated
        with pytest.raises(KeyTooLarge, match="1000") as raised:
            tx.put(big, b"v")
        assert isinstance(raised.value.__cause__, lmdb.Error)
        with pytest.raises(KeyTooLarge, match="1000"):
            tx.put_many([(b"a", b"1"), (big, b"v")])
        tx.put(b"a", b"1")
        assert list(tx.read_pages([(b"", None)])) == [[(b"a", b"1")]]
    with pytest.raises(StoreClosed):
        tx.get(b"a")
    for limit in (5, None):  # the ended transaction's pages: its own error, translated
        with pytest.raises(StoreClosed):
            list(tx.read_pages([(b"", None)], False, limit))
    store.close()
    with pytest.raises(StoreClosed):
        store.read_pages([(b"", None)], False, 5)
