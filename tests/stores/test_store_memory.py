"""MemoryStore, the reference adapter, runs the conformance suite."""

import pytest

from keyspace.stores import MemoryStore, Store, open_store
from keyspace.testing import MakeStore, StoreSuite


class TestMemoryStore(StoreSuite):
    model_examples = 40

    @pytest.fixture
    def make_store(self) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return MemoryStore() if url is None else open_store(url)

        return make


def test_open_store_memory() -> None:
    assert isinstance(open_store("memory:"), MemoryStore)
