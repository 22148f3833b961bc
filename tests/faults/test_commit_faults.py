"""The engine failing at the one atomic write that ends an operation or commits a
transaction (LevelDB's and RocksDB's write batch raising an I/O error), on every
write path, for every scheme.

- The failed operation or commit raises a :class:`StoreError` naming the engine's
  error, and the raw store is exactly as before, records included.
- The keyspace learnt nothing from the failed write: the same scope written
  again records its scheme, ScopeHash name and LengthPrefixed leaf with it, so a
  fresh keyspace reads it, and a name colliding with it is refused.
- The store's transaction gate is free again: the next transaction commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import plyvel
import pytest
from _schemes import SCOPE_AND_SIBLING
from _xxh32 import colliding_name

import keyspace
from keyspace.errors import HashCollision, StoreError
from keyspace.stores import open_store
from keyspace.stores._base import Store
from keyspace.stores.leveldb import LevelDBStore

SCHEMES = SCOPE_AND_SIBLING
WRITES: dict[str, Callable[[Any], object]] = {
    "setitem": lambda s: s.__setitem__(b"n", b"new"),
    "update": lambda s: s.update({b"x": b"1", b"a": b"changed"}),
    "update-long": lambda s: s.update((b"k%05d" % i, b"v") for i in range(5000)),
    "setdefault": lambda s: s.setdefault(b"n", b"new"),
    "pop": lambda s: s.pop(b"b"),
    "popitem": lambda s: s.popitem(),
    "delitem": lambda s: s.__delitem__(b"b"),
    "clear": lambda s: s.clear(),
    "clear_range": lambda s: s.clear_range(start=b"a", stop=b"c"),
    "drop": lambda s: s.drop(),
}
SINGLE = {"setitem", "delitem"}


class _Failing:
    """A RocksDB handle whose write batches fail as a full or broken disk makes them."""

    def __init__(self, db: Any) -> None:
        self._real = db

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def write(self, *args: Any, **kwargs: Any) -> None:
        raise Exception("IO error: injected: the write batch failed")  # as rocksdict raises them


class _Fault:
    """Turns the engine's batch writes into failures and back."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store, self.monkeypatch = store, monkeypatch

    def on(self) -> None:
        if isinstance(self.store, LevelDBStore):

            def write_batch(*args: Any) -> None:
                raise plyvel.IOError(b"IO error: injected: the write batch failed")

            self.monkeypatch.setattr(self.store, "_write_batch", write_batch)
        else:
            self.monkeypatch.setattr(self.store, "_db", _Failing(self.store._db))  # type: ignore[attr-defined]

    def off(self) -> None:
        self.monkeypatch.undo()


@pytest.fixture(params=["leveldb", "rocksdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_store(f"{request.param}://{tmp_path / 'db'}")
    yield s
    s.close()


def _raw(store: Store) -> list[tuple[bytes, bytes]]:
    return list(store.scan(b"", None))


def _refused(call: Callable[[], object]) -> None:
    with pytest.raises(StoreError, match="injected"):
        call()


@pytest.mark.parametrize("op", list(WRITES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_write_whose_batch_fails_changes_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch, name: str, op: str
) -> None:
    make, path, sibling = SCHEMES[name]
    ks = keyspace.attach(store, scheme=make(), close_store=False)
    ks.scope(*path).update({b"a": b"1", b"b": b"2", b"c": b"3"})
    ks.scope(*sibling)[b"s"] = b"s"
    if len(path) > 1 and ks.scheme.separates_own_keys:
        ks.scope(*path, "c")[b"k"] = b"child"
    before = _raw(store)
    fault = _Fault(store, monkeypatch)
    fault.on()
    if op not in SINGLE:  # (one put or delete of the engine's own, no batch: atomic by nature)
        _refused(lambda: WRITES[op](ks.scope(*path)))

    def in_transaction() -> None:
        with ks.transaction() as tx:
            tx.scope(*sibling)[b"before"] = b"1"
            WRITES[op](tx.scope(*path))

    _refused(in_transaction)
    fault.off()
    assert _raw(store) == before
    with ks.transaction() as tx:  # the gate is free again
        tx.scope(*sibling)[b"after"] = b"1"
    assert ks.scope(*sibling)[b"after"] == b"1"


@pytest.mark.parametrize("in_transaction", [False, True], ids=["alone", "in-transaction"])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_first_write_whose_batch_fails_teaches_the_keyspace_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch, name: str, in_transaction: bool
) -> None:
    make, path, _ = SCHEMES[name]
    ks = keyspace.attach(store, scheme=make(), close_store=False)
    fault = _Fault(store, monkeypatch)
    fault.on()
    if in_transaction:

        def write() -> None:
            with ks.transaction() as tx:
                tx.scope(*path)[b"k"] = b"v"

        _refused(write)
    else:
        _refused(lambda: ks.scope(*path).update({b"k": b"v", b"j": b"w"}))
    fault.off()
    assert _raw(store) == []
    ks.scope(*path)[b"k"] = b"v"  # now it lands, with the records the first write makes
    # (naive keys record no layout: only the keyspace that wrote them reads them)
    fresh = ks if name == "naive" else keyspace.attach(store, scheme=make(), close_store=False)
    assert dict(fresh.scope(*path).items()) == {b"k": b"v"}
    if name == "scopehash":
        with pytest.raises(HashCollision):
            fresh.scope(colliding_name("a"))[b"k"] = b"twin"
