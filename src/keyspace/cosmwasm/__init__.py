"""CosmWasm storage: cw-storage-plus's collections, key functions and state
decoding for indexers.

* Collections with cw-storage-plus's names and bytes: :class:`Item`,
  :class:`Map`, :class:`IndexedMap` with :class:`UniqueIndex` and
  :class:`MultiIndex`, :class:`Deque`, :class:`SnapshotMap`,
  :class:`SnapshotItem`, :class:`IndexedSnapshotMap`, and keyspace's
  :class:`DequeMap` (a deque per key; cw-storage-plus has none).
  :class:`PrefixBound` bounds ``prefix_range``. They are definitions (namespace and types);
  ``bind(storage)`` gives the working collection over a scope, ``key``/
  ``decompose`` compute and split stored keys.
* Key functions: :func:`to_cw_bytes`, :func:`from_slice`, :func:`key`,
  :func:`joined_key`, :func:`joined_extra_key`, :func:`prefix`,
  :func:`joined_prefix`, :func:`namespace_upper_bound`, and cosmwasm-std's
  :func:`to_length_prefixed`, :func:`to_length_prefixed_nested`,
  :func:`namespace_with_key`, :func:`encode_length`.
* :func:`decode_state` turns a ``wasmd query wasm contract-state all`` dump
  (:func:`parse_dump` reads its JSON or YAML) into :class:`Row` objects with a
  :class:`Schema` (:func:`load_schema`; shipped: ``cw20``, ``cw721``, ``cw4``),
  with a :class:`SchemaWarning` for a schema's item that lies in another
  collection's namespace (an item named like a map entry's stored key is that
  entry, as in cw-storage-plus; see :class:`Item`).

Key element types: ``addr``/``str``, ``bytes``, ``u8``–``u128``, ``i8``–``i128``
(signed: big-endian with the top bit flipped; ``legacy_signed=True`` for the
plain two's complement of cw-storage-plus before v0.11).
"""

from __future__ import annotations

from ..collections import PrefixBound
from ..schemes.length_prefixed import (
    encode_length,
    namespace_with_key,
    to_length_prefixed,
    to_length_prefixed_nested,
)
from ._defs import (
    Deque,
    DequeMap,
    IndexedMap,
    IndexedSnapshotMap,
    Item,
    Map,
    MultiIndex,
    SnapshotItem,
    SnapshotMap,
    UniqueIndex,
    decompose,
)
from ._dump import models_from_dump, parse_dump
from ._keys import (
    from_slice,
    joined_extra_key,
    joined_key,
    joined_prefix,
    key,
    namespace_upper_bound,
    prefix,
    to_cw_bytes,
)
from ._schema import SHIPPED_SCHEMAS, Schema, SchemaError, SchemaWarning, load_schema
from ._state import Row, decode_state, summarize

__all__ = [
    "SHIPPED_SCHEMAS",
    "Deque",
    "DequeMap",
    "IndexedMap",
    "IndexedSnapshotMap",
    "Item",
    "Map",
    "MultiIndex",
    "PrefixBound",
    "Row",
    "Schema",
    "SchemaError",
    "SchemaWarning",
    "SnapshotItem",
    "SnapshotMap",
    "UniqueIndex",
    "decode_state",
    "decompose",
    "encode_length",
    "from_slice",
    "joined_extra_key",
    "joined_key",
    "joined_prefix",
    "key",
    "load_schema",
    "models_from_dump",
    "namespace_upper_bound",
    "namespace_with_key",
    "parse_dump",
    "prefix",
    "summarize",
    "to_cw_bytes",
    "to_length_prefixed",
    "to_length_prefixed_nested",
]
