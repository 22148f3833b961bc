"""A scoped-heed registry entry removed while a keyspace holds the scope.

scoped-heed removes registry entries: ``prune_globally_unused_scopes`` drops the
name of every scope that is empty in the databases it is given, and
``unregister_scope`` drops one. After that another name of the same 32-bit hash
may register and write. A keyspace opened before kept the first name as the
owner of the hash for good (its scope stopped asking the registry and bound a
bare put), so it read the newcomer's keys as its own, wrote among them and
cleared them. Now each write and delete checks the registry inside its own
transaction, and every read checks it in the state it reads (a transaction, a
snapshot, or the committed store's own read transaction); a write of a name
whose entry is gone (and whose hash holds no key) registers it again, as
scoped-heed does with every write.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name
from xxhash import xxh32_intdigest

from keyspace import bincode, scoped_heed
from keyspace.codecs import BYTES
from keyspace.errors import HashCollision
from keyspace.scope_store import ScopeStore
from keyspace.stores import LMDBStore

pytestmark = pytest.mark.timeout(60)

OWNER = "owner"
TWIN = colliding_name(OWNER)
HASH = struct.pack("<I", xxh32_intdigest(OWNER.encode()))


def _registry(env: Path) -> LMDBStore:
    return LMDBStore(env, db=scoped_heed.REGISTRY_DB, max_dbs=64)


def _prune_owner(env: Path) -> None:
    """What ``prune_globally_unused_scopes`` does to the emptied scope: its entry goes."""
    with _registry(env) as registry:
        registry.delete(HASH)


def _named(env: Path) -> dict[bytes, bytes]:
    with LMDBStore(env, db="db_scoped", max_dbs=64) as store:
        return dict(store.scan(b"", None))


def _in_transaction(scope: Any, act: Callable[[Any], Any]) -> Any:
    with scope.keyspace.transaction() as tx:
        return act(tx.scope(*scope.path))


def _tx_put(scope: Any) -> None:
    with scope.keyspace.transaction() as tx:
        tx.scope(*scope.path)[b"mine"] = b"owner's"


def _in_snapshot(read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(scope: Any) -> Any:
        with scope.keyspace.snapshot() as snap:
            return read(snap.scope(*scope.path))

    return run


STEPS: dict[str, Callable[[Any], Any]] = {
    "get": lambda s: s.get(b"secret"),
    "getitem": lambda s: s[b"secret"],
    "in": lambda s: b"secret" in s,
    "items": lambda s: list(s.items()),
    "keys": lambda s: list(s.keys()),
    "values": lambda s: list(s.values()),
    "short scan": lambda s: list(s.items(limit=10)),
    "len": len,
    "bool": bool,
    "subtree": lambda s: list(s.subtree()),
    "pop": lambda s: s.pop(b"secret", None),
    "snapshot get": _in_snapshot(lambda s: s.get(b"secret")),
    "snapshot items": _in_snapshot(lambda s: list(s.items())),
    "snapshot len": _in_snapshot(len),
    "transaction get": lambda s: _in_transaction(s, lambda t: t.get(b"secret")),
    "put": lambda s: s.__setitem__(b"mine", b"owner's"),
    "update": lambda s: s.update({b"mine": b"owner's"}),
    "transaction put": _tx_put,
    "discard": lambda s: s.discard(b"secret"),
    "clear": lambda s: s.clear(),
    "drop": lambda s: s.drop(),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_scope_held_across_a_prune_never_reaches_the_new_owner(tmp_path: Path, step: str) -> None:
    with scoped_heed.open(tmp_path, "db") as ks:
        owner = ks.scope(OWNER)
        owner[b"k"] = b"v"  # registered, and written through the bound route since
        owner[b"k2"] = b"v2"
        assert owner[b"k"] == b"v" and len(owner) == 2
        owner.clear()
        _prune_owner(tmp_path)
        with scoped_heed.open(tmp_path, "db") as theirs:
            theirs.scope(TWIN)[b"secret"] = b"twin's"
        before = _named(tmp_path)
        with pytest.raises(HashCollision, match=re.escape(TWIN)):
            STEPS[step](owner)
        assert _named(tmp_path) == before
        assert ks.scope(TWIN)[b"secret"] == b"twin's"


def test_a_write_after_a_prune_registers_the_name_again(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path, "db") as ks:
        owner = ks.scope(OWNER)
        owner[b"k"] = b"v"
        owner[b"k2"] = b"v2"
        owner.clear()
        _prune_owner(tmp_path)
        owner[b"k3"] = b"v3"
        with _registry(tmp_path) as registry:
            assert registry.get(HASH) == bincode.STRING.encode(OWNER)
        assert dict(owner.items()) == {b"k3": b"v3"}
        with pytest.raises(HashCollision, match=re.escape(OWNER)):
            ks.scope(TWIN)[b"x"] = b"y"


READS: dict[str, Callable[[Any], Any]] = {
    "get": lambda s: s.get(b"secret"),
    "in": lambda s: b"secret" in s,
    "items": lambda s: list(s.items()),
    "len": len,
    "subtree": lambda s: list(s.subtree()),
}


@pytest.mark.parametrize("step", list(READS))
def test_a_read_only_scope_held_across_a_prune_never_reads_the_new_owner(tmp_path: Path, step: str) -> None:
    with scoped_heed.open(tmp_path, "db") as ks:
        ks.scope(OWNER)[b"k"] = b"v"
        with scoped_heed.open(tmp_path, "db", readonly=True) as reader:
            owner = reader.scope(OWNER)
            assert owner[b"k"] == b"v" and len(owner) == 1  # the registry was read, and held
            ks.scope(OWNER).clear()
            _prune_owner(tmp_path)
            ks.scope(TWIN)[b"secret"] = b"twin's"
            with pytest.raises(HashCollision, match=re.escape(TWIN)):
                READS[step](owner)
            assert reader.scope(TWIN)[b"secret"] == b"twin's"


def test_a_read_between_two_states_checks_the_registry_of_each(tmp_path: Path) -> None:
    """The check a point read remembers is for one state of the environment: a
    write anywhere (another database, another process) makes a new state, whose
    registry is read again."""
    with scoped_heed.open(tmp_path, "db") as ks:
        owner = ks.scope(OWNER)
        owner[b"k"] = b"v"
        assert owner.get(b"k") == b"v"
        assert owner.get(b"k") == b"v"  # the same state: the remembered check
        with _registry(tmp_path) as registry:
            registry.put(HASH, bincode.STRING.encode(TWIN))  # the entry rewritten under the scope
        with pytest.raises(HashCollision, match=re.escape(TWIN)):
            owner.get(b"k")
        with _registry(tmp_path) as registry:
            registry.put(HASH, bincode.STRING.encode(OWNER))
        assert owner.get(b"k") == b"v"


STORE_STEPS: dict[str, Callable[[ScopeStore], Any]] = {
    "write of deletes": lambda s: s.write([(b"secret", None), (b"other", None)]),
    "delete": lambda s: s.delete(b"secret"),
    "write": lambda s: s.write([(b"secret", None), (b"mine", b"owner's")]),
    "get": lambda s: s.get(b"secret"),
    "scan": lambda s: list(s.scan()),
}


@pytest.mark.parametrize("step", list(STORE_STEPS))
def test_a_scope_store_held_across_a_prune_never_reaches_the_new_owner(tmp_path: Path, step: str) -> None:
    """A scope as a store (the ``types`` api, whose keys keep their byte order)
    checks the registry on every path too, a batch of deletes only included."""

    def typed(path: Path) -> Any:
        return scoped_heed.open(path, "db", api="types", key=BYTES, value=BYTES)

    with typed(tmp_path) as ks:
        store = ScopeStore(ks.scope(OWNER))
        store.put(b"k", b"v")
        store.delete(b"k")
        _prune_owner(tmp_path)
        with typed(tmp_path) as theirs:
            theirs.scope(TWIN)[b"secret"] = b"twin's"
        before = _named(tmp_path)
        with pytest.raises(HashCollision, match=re.escape(TWIN)):
            STORE_STEPS[step](store)
        assert _named(tmp_path) == before


def test_a_scan_reads_no_page_after_the_entry_changed(tmp_path: Path) -> None:
    """A long scan reads pages of short read transactions, each where the
    registry gives the hash to the scope's name: the page after the entry was
    given to another name is refused, not read."""
    with scoped_heed.open(tmp_path, "db") as ks:
        owner = ks.scope(OWNER)
        owner.update({b"k%04d" % i: b"v" for i in range(3000)})
        items = iter(owner.items())
        seen = [next(items) for _ in range(10)]
        with _registry(tmp_path) as registry:
            registry.put(HASH, bincode.STRING.encode(TWIN))
        with pytest.raises(HashCollision, match=re.escape(TWIN)):
            seen.extend(items)
        assert 10 <= len(seen) < 3000
        assert all(v == b"v" for _, v in seen)
