"""Typed collections over any scope: ``Item``, ``Map``, ``IndexedMap`` (with
``UniqueIndex`` and ``MultiIndex``), ``Deque``, ``DequeMap`` (a deque per key),
``SnapshotMap``, ``SnapshotItem`` and ``IndexedSnapshotMap``; ``PrefixBound``
for ``prefix_range`` and ``Path`` (``map.path(key)``).

::

    import keyspace
    from keyspace.collections import IndexedMap, Map, MultiIndex, UniqueIndex

    ks = keyspace.open("data.lmdb")
    app = ks.scope("app")
    balances = Map(app, "balance", key="addr", value="json")
    balances.save("alice", "100")
    users = IndexedMap(
        app, "users", key="str",
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "users__email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "users__team", key="str"),
        },
    )
    users.save("alice", {"email": "a@example.com", "team": "red"})
    list(users.index("team").prefix("red").items())   # [("alice", {...})]
    with ks.transaction() as tx:
        users.using(tx).save("bob", {"email": "b@example.com", "team": "red"})

Keys are typed by a spec (``"str"``/``"addr"``, ``"bytes"``, ``"u8"``–``"u128"``,
``"i8"``–``"i128"``, or a tuple of them for composite keys) and kept in element
order (under :data:`COSMWASM` a text or bytes element other than the last sorts
by its length first, as cw-storage-plus's length-prefixed bytes do). The layout
decides the stored form: :data:`TUPLE` (the default in the tuple scheme;
tuple-layer keys in a child scope per namespace) or :data:`COSMWASM` (the default
in the byte schemes; cw-storage-plus's bytes; :mod:`keyspace.cosmwasm` names these
collections as cw-storage-plus does). On a scheme that does not keep
keys in order within a scope (ScopeHash) a range reads the scope, keeps the keys
under its prefix and sorts them: the same items in the same order, holding them
all in memory.
"""

from __future__ import annotations

from ._base import Collection
from ._bounds import PrefixBound
from ._deque import Deque
from ._deque_map import DequeMap
from ._indexed import Index, IndexedMap, IndexView, MultiIndex, UniqueIndex
from ._indexed_snapshot import IndexedSnapshotMap
from ._keys import KEY_TYPES, KeySpec, KeyType, key_type
from ._layouts import COSMWASM, TUPLE, CosmWasmLayout, Layout, Namespace, TupleLayout, joined_key
from ._map import Item, Map, Prefix
from ._path import Path
from ._snapshot import SnapshotItem, SnapshotMap

__all__ = [
    "COSMWASM",
    "KEY_TYPES",
    "TUPLE",
    "Collection",
    "CosmWasmLayout",
    "Deque",
    "DequeMap",
    "Index",
    "IndexView",
    "IndexedMap",
    "IndexedSnapshotMap",
    "Item",
    "KeySpec",
    "KeyType",
    "Layout",
    "Map",
    "MultiIndex",
    "Namespace",
    "Path",
    "Prefix",
    "PrefixBound",
    "SnapshotItem",
    "SnapshotMap",
    "TupleLayout",
    "UniqueIndex",
    "joined_key",
    "key_type",
]
