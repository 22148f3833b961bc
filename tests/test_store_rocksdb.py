"""RocksDBStore runs the conformance suite."""

import uuid
from pathlib import Path

import pytest

from keyspace.stores import RocksDBStore, Store, open_store
from keyspace.testing import MakeStore, StoreSuite


class TestRocksDBStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return open_store(url or f"rocksdb://{tmp_path / uuid.uuid4().hex}")

        return make


def test_open_store_gives_rocksdb(tmp_path: Path) -> None:
    with open_store(f"rocksdb://{tmp_path / 'db'}") as store:
        assert isinstance(store, RocksDBStore)
