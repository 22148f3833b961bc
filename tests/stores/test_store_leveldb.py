"""LevelDBStore runs the conformance suite."""

import uuid
from pathlib import Path

import pytest

from keyspace.stores import LevelDBStore, Store, open_store
from keyspace.testing import MakeStore, StoreSuite


class TestLevelDBStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return open_store(url or f"leveldb://{tmp_path / uuid.uuid4().hex}")

        return make


def test_open_store_gives_leveldb(tmp_path: Path) -> None:
    with open_store(f"leveldb://{tmp_path / 'db'}") as store:
        assert isinstance(store, LevelDBStore)
