"""The conformance suite every store adapter runs (and, through a scope, runs again).

An adapter opts in by subclassing :class:`StoreSuite` in a test module and providing
a ``make_store`` fixture: a factory that, called with no argument, returns a new,
empty, isolated store, and called with a store's ``url`` reopens that store::

    import uuid
    import pytest
    from keyspace.stores import open_store
    from keyspace.testing import StoreSuite

    class TestLMDBStore(StoreSuite):
        @pytest.fixture
        def make_store(self, tmp_path):
            def make(url=None):
                return open_store(url or f"lmdb://{tmp_path / uuid.uuid4().hex}", sync=False)
            return make

The suite uses only the :class:`~keyspace.stores.Store` contract, and reads
``store.capabilities`` to decide what to expect: where a capability is absent it
asserts the documented alternative behaviour, never skips silently.

:mod:`keyspace.testing.etcd_cluster` finds or starts a throwaway etcd cluster on
127.0.0.1 for tests of the etcd adapter (it needs the ``etcd`` binary); it is not
imported here.
"""

from __future__ import annotations

from ._model import StoreModelMachine
from ._suite import MakeStore, StoreSuite

__all__ = ["MakeStore", "StoreModelMachine", "StoreSuite"]
