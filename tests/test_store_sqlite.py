"""SQLiteStore runs the conformance suite."""

import uuid
from pathlib import Path

import pytest

from keyspace.stores import SQLiteStore, Store, open_store
from keyspace.testing import MakeStore, StoreSuite


class TestSQLiteStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return open_store(url or f"sqlite://{tmp_path / uuid.uuid4().hex}", sync=False)

        return make


def test_open_store_gives_sqlite(tmp_path: Path) -> None:
    with open_store(f"sqlite://{tmp_path / 'db'}") as store:
        assert isinstance(store, SQLiteStore)
