"""LMDBStore runs the conformance suite."""

import uuid
from pathlib import Path

import pytest

from keyspace.stores import LMDBStore, Store, open_store
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
