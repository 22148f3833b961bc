"""The conformance suite again, through a nested scope (as abstract-level runs its
suite on a sublevel): a scope seen as a store must be indistinguishable from a
whole store, and must never touch keys outside its own range."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import keyspace
from keyspace.scope_store import ScopeStore
from keyspace.stores import Store
from keyspace.testing import MakeStore, StoreSuite

PATH = ("conformance", b"\x00\xff", "nested")
DECOYS = {  # parent, child and sibling keys the scope's view must never see or change
    (("conformance", b"\x00\xff"),): b"parent",
    ((*PATH, "child"),): b"child",
    (("conformance", b"\x00\xff", "nestee"),): b"sibling",
}


def _open(url: str) -> ScopeStore:
    ks = keyspace.open(url)
    return ScopeStore(ks.scope(*PATH), owns_keyspace=True)


def _plant_decoys(store: ScopeStore) -> None:
    ks = store.scope.keyspace
    for (path,), value in DECOYS.items():
        ks.scope(*path)[b"decoy"] = value


def _check_decoys(url: str) -> None:
    with keyspace.open(url) as ks:
        for (path,), value in DECOYS.items():
            assert dict(ks.scope(*path)) == {b"decoy": value}, path


class TestScopeOverLMDB(StoreSuite):
    model_examples = 15

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Iterator[MakeStore]:
        urls: dict[str, str] = {}

        def make(url: str | None = None) -> Store:
            if url is not None:
                return _open(urls[url])
            raw = f"lmdb://{tmp_path / uuid.uuid4().hex}"
            store = _open(raw)
            _plant_decoys(store)
            urls[store.url] = raw
            return store

        yield make
        for raw in urls.values():  # every store is closed by now (the suite's teardown)
            _check_decoys(raw)


class TestScopeOverMemory(StoreSuite):
    model_examples = 15

    @pytest.fixture
    def make_store(self) -> MakeStore:
        def make(url: str | None = None) -> Store:
            store = _open("memory:")
            _plant_decoys(store)
            return store

        return make
