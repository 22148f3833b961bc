"""An asyncio read of a scoped-heed scope checks the registry in the state it reads.

scoped-heed removes registry entries (``unregister_scope``,
``prune_globally_unused_scopes``), after which another name of the same 32-bit
hash may register and write. The asyncio face runs a read as the synchronous
code over views that fetch each read when it is needed, so the registry entry
and the keys it guards were two requests to the store: a prune and the other
name's write landing between them handed that name's keys to this scope. Such a
read now runs in one snapshot of the store, as the synchronous API reads such a
scope (``tests/heed/test_pruned_registry_entry.py``).
"""

from __future__ import annotations

import asyncio
import re
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name
from xxhash import xxh32_intdigest

import keyspace.aio
from keyspace import scoped_heed
from keyspace.aio import _plan
from keyspace.errors import HashCollision
from keyspace.stores import LMDBStore

pytestmark = pytest.mark.timeout(60)

OWNER = "owner"
TWIN = colliding_name(OWNER)
HASH = struct.pack("<I", xxh32_intdigest(OWNER.encode()))


async def _collect(items: Any) -> list[Any]:
    return [item async for item in items]


READS: dict[str, Callable[[Any], Awaitable[Any]]] = {
    "get": lambda s: s.get(b"secret"),
    "getitem": lambda s: s.getitem(b"secret"),
    "contains": lambda s: s.contains(b"secret"),
    "items": lambda s: _collect(s.items()),
    "keys": lambda s: _collect(s.keys()),
    "values": lambda s: _collect(s.values()),
    "short scan": lambda s: _collect(s.items(limit=5)),
    "len": lambda s: s.len(),
    "subtree": lambda s: _collect(s.subtree()),
}

EMPTY: dict[str, Any] = {"contains": False, "len": 0, "get": None}


def _prune_and_take(env: Path) -> None:
    """scoped-heed's prune of the emptied scope, then the same-hash name's write."""
    with LMDBStore(env, db=scoped_heed.REGISTRY_DB, max_dbs=64) as registry:
        registry.delete(HASH)
    with scoped_heed.open(env, "db") as theirs:
        theirs.scope(TWIN)[b"secret"] = b"twin's"


@pytest.mark.parametrize("read", list(READS))
def test_a_prune_between_the_registry_check_and_the_read_is_not_read(
    tmp_path: Path, read: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch = _plan.Hub._fetch
    raced: list[bytes] = []

    async def fetch_then_race(self: Any, miss: Any, *args: Any) -> None:
        await fetch(self, miss, *args)
        if not raced and miss.request[0] == "get" and miss.request[1].endswith(HASH):
            raced.append(miss.request[1])  # the registry entry is read: the race lands now
            _prune_and_take(tmp_path)

    monkeypatch.setattr(_plan.Hub, "_fetch", fetch_then_race)

    async def main() -> None:
        with scoped_heed.open(tmp_path, "db") as ks:
            owner = ks.scope(OWNER)
            owner[b"k"] = b"v"
            owner.clear()  # registered, and empty: what a prune removes
            aks = keyspace.aio.AsyncKeyspace(ks)
            scope = aks.scope(OWNER)
            if read == "getitem":
                with pytest.raises(KeyError):
                    await READS[read](scope)
            else:
                assert await READS[read](scope) == EMPTY.get(read, [])
            assert raced, "the registry entry was never read"
            # the next read is of the new state: the hash is the other name's
            with pytest.raises(HashCollision, match=re.escape(TWIN)):
                await READS[read](scope)
            assert await aks.scope(TWIN).get(b"secret") == b"twin's"

    asyncio.run(main())


def test_reads_of_a_scope_whose_facts_stay_take_no_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot is for catalogs whose facts other writers remove: a tuple
    keyspace's point read is one request, as before."""
    begun: list[int] = []

    async def main() -> None:
        with keyspace.open(tmp_path / "t.lmdb") as ks:
            ks.scope("a")[b"k"] = b"v"
            aks = keyspace.aio.AsyncKeyspace(ks)
            snapshot = type(aks.store).begin_snapshot

            async def counted(store: Any) -> Any:
                begun.append(1)
                return await snapshot(store)

            monkeypatch.setattr(type(aks.store), "begin_snapshot", counted)
            assert await aks.scope("a").get(b"k") == b"v"
            assert [k async for k, _ in aks.scope("a").items()] == [b"k"]
            assert not begun
            with scoped_heed.open(tmp_path / "heed", "db") as heed:
                heed.scope(OWNER)[b"k"] = b"v"
                assert await keyspace.aio.AsyncKeyspace(heed).scope(OWNER).get(b"k") == b"v"
            assert begun == [1]

    asyncio.run(main())
