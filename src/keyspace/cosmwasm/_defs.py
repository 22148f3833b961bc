"""cw-storage-plus's collections as definitions: a namespace and types, no store.

A definition computes keys (``Map("balance", key="addr").key("alice")``), splits
stored keys back (``decompose``), and ``bind(storage)`` gives the working
collection of :mod:`keyspace.collections` with the CosmWasm layout over
``storage`` (a scope; the root scope of a ``LengthPrefixed`` or ``Naive``
keyspace stores exactly cw-storage-plus's bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import collections as c
from ..codecs import Codec
from ..collections._namespaces import check_distinct
from ..errors import DecodeError, InvalidArgument, show_bytes
from ..schemes._base import component_bytes
from ..schemes.length_prefixed import to_length_prefixed, to_length_prefixed_nested
from ..scope import Scope

__all__ = [
    "Deque",
    "DequeMap",
    "IndexedMap",
    "IndexedSnapshotMap",
    "Item",
    "Map",
    "MultiIndex",
    "SnapshotItem",
    "SnapshotMap",
    "UniqueIndex",
    "decompose",
]

_LAYOUT = c.COSMWASM


class Item:
    """``Item::new(namespace)``: one JSON value stored at the raw namespace.

    The namespace is not length-prefixed (cw-storage-plus's ``Item`` stores at
    its name as it is), so an item named like the stored key of a :class:`Map`
    entry *is* that entry: ``Item(b"\\x00\\x07balancealice")`` and
    ``Map("balance", key="addr")``'s key ``"alice"`` are both the bytes
    ``00 07 "balance" "alice"``. Bound to one storage, saving either changes
    what the other loads, removing the map entry removes the item, and the
    item is among the map's keys; nothing refuses it, in cw-storage-plus as
    here. The same holds for any item whose name starts with another
    collection's ``len(ns) ns`` (a deque's, an index's, a snapshot log's).
    :func:`decode_state` warns (:class:`SchemaWarning`) when a schema has such
    an item, and decodes the shared entry as the item."""

    kind = "item"

    def __init__(self, namespace: str | bytes, *, value: str | Codec | None = None) -> None:
        self.namespace = namespace
        self.value = value
        self.storage_key = component_bytes(namespace)

    def bind(self, storage: Scope) -> c.Item:
        """The working :class:`keyspace.collections.Item` over ``storage``."""
        return c.Item(storage, self.namespace, value=self.value, layout=_LAYOUT)

    def decompose(self, stored: bytes) -> tuple[()]:
        """``()`` when ``stored`` is this item's key, else :class:`DecodeError`."""
        if stored != self.storage_key:
            raise DecodeError(f"stored key {show_bytes(stored)} is not item {self.namespace!r}", 0)
        return ()


class Map:
    """``Map::new(namespace)`` with keys of ``key`` (an element type or a tuple of
    them): stored at ``len(ns) ns len(k1) k1 … kn``, values JSON.

    An :class:`Item` whose name equals one of these stored keys shares its
    bytes with that entry (an item is stored at its raw name), exactly as in
    cw-storage-plus: the two read and write one entry. See :class:`Item`."""

    kind = "map"

    def __init__(
        self,
        namespace: str | bytes,
        *,
        key: c._keys.SpecLike,
        value: str | Codec | None = None,
        legacy_signed: bool = False,
    ) -> None:
        self.namespace = namespace
        self.spec = c.KeySpec(key, legacy_signed=legacy_signed)
        self.value = value
        self._ns = _LAYOUT.namespace(namespace, self.spec)
        self.head = to_length_prefixed(namespace)

    def key(self, key: Any) -> bytes:
        """The stored key of ``key`` (``Map::key``)."""
        stored = self._ns.key(self.spec.elements(key))
        assert isinstance(stored, bytes)
        return stored

    def prefix_key(self, prefix: Any) -> bytes:
        """The stored prefix of ``map.prefix(prefix)`` (``Prefix::new``): the
        namespace and every prefix element length-prefixed."""
        elements = self.spec.prefix_elements(prefix)
        return self.head + to_length_prefixed_nested(self.spec.to_bytes(elements))

    def decompose(self, stored: bytes) -> Any:
        """The key stored as ``stored``; :class:`DecodeError` when it is not a key
        of this map."""
        return self.spec.key_of(self._ns.elements(stored))

    def bind(self, storage: Scope) -> c.Map:
        """The working :class:`keyspace.collections.Map` over ``storage``."""
        return c.Map(storage, self.namespace, key=self.spec, value=self.value, layout=_LAYOUT)


class UniqueIndex:
    """``UniqueIndex::new(idx_fn, idx_namespace)``: index key -> JSON
    ``{"pk": base64(joined pk), "value": record}``. ``idx_fn(value)`` gives the
    index key (``None`` for an index that is only decoded)."""

    kind = "unique_index"

    def __init__(
        self, idx_fn: Callable[[Any], Any] | None, idx_namespace: str | bytes, *, key: c._keys.SpecLike
    ) -> None:
        to_length_prefixed(idx_namespace)  # InvalidName, KeyTooLarge: no namespace
        self.index = c.UniqueIndex(idx_fn, idx_namespace, key=key)
        self.namespace = idx_namespace
        self.spec = self.index.spec


class MultiIndex:
    """``MultiIndex::new(idx_fn, pk_namespace, idx_namespace)``: keys
    ``len(idx) idx len(ik…) ik… pk`` (pk raw), value the JSON length of pk."""

    kind = "multi_index"

    def __init__(
        self,
        idx_fn: Callable[[Any], Any] | None,
        pk_namespace: str | bytes,
        idx_namespace: str | bytes,
        *,
        key: c._keys.SpecLike,
    ) -> None:
        to_length_prefixed(idx_namespace)  # InvalidName, KeyTooLarge: no namespace
        self.index = c.MultiIndex(idx_fn, idx_namespace, key=key)
        self.pk_namespace = pk_namespace
        self.namespace = idx_namespace
        self.spec = self.index.spec


class IndexedMap(Map):
    """``IndexedMap::new(pk_namespace, indexes)``: a :class:`Map` of records plus
    the named indexes, kept in the same atomic batch once bound."""

    kind = "indexed_map"

    def __init__(
        self,
        pk_namespace: str | bytes,
        indexes: Mapping[str, UniqueIndex | MultiIndex],
        *,
        key: c._keys.SpecLike,
        value: str | Codec | None = None,
        legacy_signed: bool = False,
    ) -> None:
        super().__init__(pk_namespace, key=key, value=value, legacy_signed=legacy_signed)
        self.indexes = dict(indexes)
        for name, idx in self.indexes.items():
            if not isinstance(idx, (UniqueIndex, MultiIndex)):
                raise InvalidArgument(
                    f"index {show_bytes(name)} is {show_bytes(idx)}, not a cosmwasm UniqueIndex or MultiIndex"
                )
        roles = [(f"index {name!r}", idx.namespace) for name, idx in self.indexes.items()]
        check_distinct(f"{type(self).__name__} {pk_namespace!r}", [("the map", pk_namespace), *roles])

    def bind(self, storage: Scope) -> c.IndexedMap:
        return c.IndexedMap(
            storage,
            self.namespace,
            key=self.spec,
            value=self.value,
            indexes={name: idx.index for name, idx in self.indexes.items()},
            layout=_LAYOUT,
        )


class Deque:
    """``Deque::new(namespace)``: items at ``len(ns) ns u32be(pos)``, head and tail
    positions at ``len(ns) ns "h"`` / ``"t"`` (raw u32)."""

    kind = "deque"

    def __init__(self, namespace: str | bytes, *, value: str | Codec | None = None) -> None:
        self.namespace = namespace
        self.value = value
        self.head = to_length_prefixed(namespace)

    def bind(self, storage: Scope) -> c.Deque:
        return c.Deque(storage, self.namespace, value=self.value, layout=_LAYOUT)


class _Snapshotted:
    """The history half of a snapshot definition: its checkpoints and changelog
    namespaces and its strategy."""

    namespace: str | bytes
    value: str | Codec | None

    def _keep_history(self, checkpoints: str | bytes, changelog: str | bytes, strategy: str) -> None:
        roles = [("the checkpoints map", checkpoints), ("the changelog", changelog)]
        for _, ns in roles:
            to_length_prefixed(ns)  # InvalidName, KeyTooLarge: no namespace
        if isinstance(self, Map):  # an item is stored at its raw name, apart from both maps
            roles.insert(0, ("the map", self.namespace))
        if isinstance(self, IndexedMap):
            roles += [(f"index {name!r}", idx.namespace) for name, idx in self.indexes.items()]
        check_distinct(f"{type(self).__name__} {self.namespace!r}", roles)
        self.checkpoints = checkpoints
        self.changelog = changelog
        self.strategy = strategy

    def _bind_history(self, cls: Callable[..., Any], storage: Scope, **key: Any) -> Any:
        return cls(
            storage,
            self.namespace,
            self.checkpoints,
            self.changelog,
            **key,
            value=self.value,
            strategy=self.strategy,
            layout=_LAYOUT,
        )


class SnapshotMap(_Snapshotted, Map):
    """``SnapshotMap::new(pk, checkpoints, changelog, strategy)``: the primary map,
    ``checkpoints`` (``u64`` height -> count) and ``changelog`` (``(*key, u64
    height)`` -> ``{"old": value or null}``)."""

    kind = "snapshot_map"

    def __init__(
        self,
        pk: str | bytes,
        checkpoints: str | bytes,
        changelog: str | bytes,
        strategy: str = "every_block",
        *,
        key: c._keys.SpecLike,
        value: str | Codec | None = None,
        legacy_signed: bool = False,
    ) -> None:
        super().__init__(pk, key=key, value=value, legacy_signed=legacy_signed)
        self._keep_history(checkpoints, changelog, strategy)

    def bind(self, storage: Scope) -> c.SnapshotMap:
        bound: c.SnapshotMap = self._bind_history(c.SnapshotMap, storage, key=self.spec)
        return bound


class SnapshotItem(_Snapshotted, Item):
    """``SnapshotItem::new(pk, checkpoints, changelog, strategy)``: the primary item
    and its ``u64``-keyed changelog and checkpoints maps."""

    kind = "snapshot_item"

    def __init__(
        self,
        pk: str | bytes,
        checkpoints: str | bytes,
        changelog: str | bytes,
        strategy: str = "every_block",
        *,
        value: str | Codec | None = None,
    ) -> None:
        super().__init__(pk, value=value)
        self._keep_history(checkpoints, changelog, strategy)

    def bind(self, storage: Scope) -> c.SnapshotItem:
        bound: c.SnapshotItem = self._bind_history(c.SnapshotItem, storage)
        return bound


class IndexedSnapshotMap(_Snapshotted, IndexedMap):
    """``IndexedSnapshotMap::new(pk_namespace, checkpoints, changelog, strategy,
    indexes)``: the records (a :class:`Map`), their indexes (current records
    only) and the ``checkpoints``/``changelog`` maps of a :class:`SnapshotMap`."""

    kind = "indexed_snapshot_map"

    def __init__(
        self,
        pk_namespace: str | bytes,
        checkpoints: str | bytes,
        changelog: str | bytes,
        strategy: str,
        indexes: Mapping[str, UniqueIndex | MultiIndex],
        *,
        key: c._keys.SpecLike,
        value: str | Codec | None = None,
        legacy_signed: bool = False,
    ) -> None:
        super().__init__(pk_namespace, indexes, key=key, value=value, legacy_signed=legacy_signed)
        self._keep_history(checkpoints, changelog, strategy)

    def bind(self, storage: Scope) -> c.IndexedSnapshotMap:
        return c.IndexedSnapshotMap(
            storage,
            self.namespace,
            self.checkpoints,
            self.changelog,
            key=self.spec,
            value=self.value,
            indexes={name: idx.index for name, idx in self.indexes.items()},
            strategy=self.strategy,
            layout=_LAYOUT,
        )


class DequeMap:
    """A deque per key of ``key`` (keyspace's, as cw-storage-plus has none; see
    :mod:`keyspace.collections._deque_map`): the deque of key ``k`` keeps its
    items at ``len(ns) ns joined_prefix(k) u32be(pos)`` and its head and tail at
    ``len(ns) ns joined_prefix(k) "h"``/``"t"`` (raw u32), the keys a
    ``Map<(K, u32)>`` and a ``Map<(K, &str)>`` of namespace ``ns`` give."""

    kind = "deque_map"

    def __init__(
        self,
        namespace: str | bytes,
        *,
        key: c._keys.SpecLike,
        value: str | Codec | None = None,
        legacy_signed: bool = False,
    ) -> None:
        self.namespace = namespace
        self.spec = c.KeySpec(key, legacy_signed=legacy_signed)
        self.value = value
        self.head = to_length_prefixed(namespace)

    def prefix_key(self, key: Any) -> bytes:
        """The bytes every stored key of ``key``'s deque starts with."""
        return self.head + to_length_prefixed_nested(self.spec.to_bytes(self.spec.elements(key)))

    def item_key(self, key: Any, position: int) -> bytes:
        """The stored key of the item at u32 ``position`` of ``key``'s deque."""
        (position,) = c.KeySpec(("u32",)).elements((position,))
        return self.prefix_key(key) + int(position).to_bytes(4, "big")

    def head_key(self, key: Any) -> bytes:
        """The stored key of the head position of ``key``'s deque."""
        return self.prefix_key(key) + b"h"

    def tail_key(self, key: Any) -> bytes:
        """The stored key of the tail position of ``key``'s deque."""
        return self.prefix_key(key) + b"t"

    def bind(self, storage: Scope) -> c.DequeMap:
        """The working :class:`keyspace.collections.DequeMap` over ``storage``."""
        return c.DequeMap(storage, self.namespace, key=self.spec, value=self.value, layout=_LAYOUT)


def decompose(stored: bytes, collection: Item | Map) -> Any:
    """The key that ``stored`` holds in ``collection`` (``()`` for an item);
    :class:`DecodeError` when it is not one of the collection's keys."""
    return collection.decompose(stored)
