"""MemoryStore: the reference adapter."""

from keyspace.stores import MemoryStore, open_store


def test_memory_basics() -> None:
    with open_store("memory:") as store:
        assert isinstance(store, MemoryStore)
        store.put(b"b", b"2")
        store.write([(b"a", b"1"), (b"c", b"3"), (b"b", None)])
        assert store.get(b"b") is None
        assert list(store.scan()) == [(b"a", b"1"), (b"c", b"3")]
        assert list(store.scan(reverse=True, limit=1)) == [(b"c", b"3")]
        with store.snapshot() as snap:
            store.delete_range(b"a", b"b")
            assert snap.get(b"a") == b"1"
        assert store.get(b"a") is None
        with store.transaction() as tx:
            tx.put(b"x", b"9")
            assert tx.get(b"x") == b"9"
            assert store.get(b"x") is None
        assert store.get(b"x") == b"9"
