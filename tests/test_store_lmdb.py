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
