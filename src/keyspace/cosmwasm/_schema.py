"""Contract state schemas: which collections a contract keeps, as JSON.

::

    {"items": {"token_info": "json"},
     "maps": {"balance": {"key": ["addr"], "value": "json"},
              "allowance": {"key": ["addr", "addr"], "value": "json"}},
     "indexed_maps": {"tokens": {"key": ["str"], "value": "json", "indexes": {
         "owner": {"kind": "multi", "namespace": "tokens__owner", "key": ["addr"]}}}},
     "deques": {"queue": {"value": "json"}},
     "snapshot_maps": {"members": {"key": ["addr"], "checkpoints": "members__checkpoints",
                                   "changelog": "members__changelog"}},
     "snapshot_items": {"total": {"checkpoints": "total__checkpoints",
                                  "changelog": "total__changelog"}},
     "indexed_snapshot_maps": {"groups": {"key": ["str"], "checkpoints": "groups__check",
         "changelog": "groups__change", "indexes": {
         "admin": {"kind": "multi", "namespace": "groups__admin", "key": ["addr"]}}}},
     "deque_maps": {"inbox": {"key": ["addr"], "value": "json"}},
     "legacy_signed_keys": false}

Names are namespaces. Keys are element types (``addr``/``str``, ``bytes``,
``u8``–``u128``, ``i8``–``i128``); values ``json`` (default), ``bytes`` or
``str``. ``legacy_signed_keys`` reads signed int keys as written before
cw-storage-plus v0.11. cw2's ``contract_info`` item is always part of a schema.
Shipped: ``cw20`` (cw20-base), ``cw721`` (cw721-base), ``cw4`` (cw4-group).

An item's key is its raw name and every other collection's keys start with its
length-prefixed namespace, so an item whose name starts with another
collection's ``len(ns) ns`` shares stored bytes with that collection's entries,
exactly as in cw-storage-plus; :func:`~keyspace.cosmwasm.decode_state` then
warns (:class:`SchemaWarning`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

from ..errors import InvalidName, KeyspaceError, KeyTooLarge, show_bytes
from ..schemes.length_prefixed import to_length_prefixed
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
)

__all__ = ["SHIPPED_SCHEMAS", "Schema", "SchemaError", "SchemaWarning", "load_schema"]

SHIPPED_SCHEMAS = {"cw20": "cw20-base", "cw721": "cw721-base", "cw4": "cw4-group"}
"""Short name -> file name (without ``.json``) of the schemas shipped in the package."""

_VALUES = ("json", "bytes", "str")
_SECTIONS = (
    "items",
    "maps",
    "indexed_maps",
    "deques",
    "snapshot_maps",
    "snapshot_items",
    "indexed_snapshot_maps",
    "deque_maps",
)
Definition = Item | Map | Deque | DequeMap


class SchemaError(KeyspaceError, ValueError):
    """A schema that is not valid: what is wrong and where."""


class SchemaWarning(UserWarning):
    """A schema that loads, but where two collections share stored bytes: an
    item whose key lies in the namespace of another collection (its name starts
    with that collection's ``len(ns) ns``). A contract with these collections
    reads and writes one stored entry for both, as cw-storage-plus does, and a
    decoder cannot tell which of them wrote it; :func:`decode_state` reports
    such an entry as the item."""


class Schema:
    """The collections of one contract (definitions of :mod:`keyspace.cosmwasm`).
    ``Schema.from_json(doc)`` reads the JSON form; ``collections`` lists them."""

    def __init__(self, collections: list[Definition], name: str = "", legacy_signed: bool = False) -> None:
        self.collections = collections
        self.name = name
        self.legacy_signed = legacy_signed
        if not any(isinstance(d, Item) and d.storage_key == b"contract_info" for d in collections):
            self.collections.insert(0, Item("contract_info"))

    def __repr__(self) -> str:
        return f"<Schema {self.name!r}: {len(self.collections)} collections>"

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Schema:
        """The schema described by a parsed JSON document (:class:`SchemaError`)."""
        if not isinstance(doc, Mapping):
            raise SchemaError(f"a schema is a JSON object, not {type(doc).__name__}")
        unknown = set(doc) - {*_SECTIONS, "name", "source", "legacy_signed_keys"}
        if unknown:
            raise SchemaError(f"unknown schema section(s) {sorted(unknown)}; known: {', '.join(_SECTIONS)}")
        legacy = doc.get("legacy_signed_keys", False)
        if type(legacy) is not bool:
            raise SchemaError(f"legacy_signed_keys must be true or false, not {legacy!r}")
        out: list[Definition] = []
        for section in _SECTIONS:
            entries = doc.get(section, {})
            if not isinstance(entries, Mapping):
                raise SchemaError(f"schema section {section!r} must be an object of namespace -> spec")
            for ns, spec in entries.items():
                where = f"{section}.{ns}"
                try:
                    out.append(_definition(section, ns, spec, legacy))
                except SchemaError:
                    raise
                except (ValueError, TypeError, KeyError) as exc:
                    raise SchemaError(f"schema entry {where}: {exc}") from None
        return cls(out, str(doc.get("name", "")), legacy)


def _value(spec: Any, where: str) -> str:
    value = spec.get("value", "json") if isinstance(spec, Mapping) else spec
    if value not in _VALUES:
        raise SchemaError(f"schema entry {where}: value type {value!r} is not one of {', '.join(_VALUES)}")
    return str(value)


def _key(spec: Mapping[str, Any], where: str) -> Any:
    if "key" not in spec:
        raise SchemaError(f"schema entry {where} needs a 'key' (a list of element types)")
    key = spec["key"]
    return tuple(key) if isinstance(key, list) else key


def _field(spec: Mapping[str, Any], name: str, where: str) -> Any:
    """``spec[name]``, or :class:`SchemaError` saying the entry needs it."""
    if name not in spec:
        raise SchemaError(f"schema entry {where} needs {name!r}")
    return spec[name]


def _namespace(spec: Mapping[str, Any], name: str, where: str) -> str:
    """``spec[name]``, a namespace: a JSON string of at most 65535 UTF-8 bytes;
    :class:`SchemaError` naming the entry for anything else (a number, a list,
    an object: ``5`` would otherwise be five NUL bytes)."""
    ns = _field(spec, name, where)
    if not isinstance(ns, str):
        raise SchemaError(
            f"schema entry {where}: {name} must be a string (a namespace), "
            f"not {type(ns).__name__} {show_bytes(ns)}"
        )
    try:
        to_length_prefixed(ns)
    except (InvalidName, KeyTooLarge) as exc:
        raise SchemaError(f"schema entry {where}: {name} {exc}") from None
    return ns


def _definition(section: str, ns: str, spec: Any, legacy: bool) -> Definition:
    where = f"{section}.{ns}"
    if section == "items":
        return Item(ns, value=_value(spec, where))
    if not isinstance(spec, Mapping):
        raise SchemaError(f"schema entry {where} must be an object")
    value = _value(spec, where)
    if section == "maps":
        return Map(ns, key=_key(spec, where), value=value, legacy_signed=legacy)
    if section == "deques":
        return Deque(ns, value=value)
    if section == "deque_maps":
        return DequeMap(ns, key=_key(spec, where), value=value, legacy_signed=legacy)
    if section == "snapshot_items":
        checkpoints, changelog = _namespace(spec, "checkpoints", where), _namespace(spec, "changelog", where)
        return SnapshotItem(ns, checkpoints, changelog, value=value)
    if section == "snapshot_maps":
        return SnapshotMap(
            ns,
            _namespace(spec, "checkpoints", where),
            _namespace(spec, "changelog", where),
            key=_key(spec, where),
            value=value,
            legacy_signed=legacy,
        )
    indexes: dict[str, UniqueIndex | MultiIndex] = {}
    specs = spec.get("indexes", {})
    if not isinstance(specs, Mapping):
        raise SchemaError(f"schema entry {where}.indexes must be an object of index name -> spec")
    for name, idx in specs.items():
        at = f"{where}.indexes.{name}"
        if not isinstance(idx, Mapping):
            raise SchemaError(
                f"schema entry {at} must be an object with kind, namespace and key, not {idx!r}"
            )
        kind = idx.get("kind")
        idx_key = _key(idx, at)
        if kind == "multi":
            indexes[name] = MultiIndex(None, ns, _namespace(idx, "namespace", at), key=idx_key)
        elif kind == "unique":
            indexes[name] = UniqueIndex(None, _namespace(idx, "namespace", at), key=idx_key)
        else:
            raise SchemaError(
                f"schema entry {where}.indexes.{name}: kind {kind!r} is not 'multi' or 'unique'"
            )
    if section == "indexed_snapshot_maps":
        return IndexedSnapshotMap(
            ns,
            _namespace(spec, "checkpoints", where),
            _namespace(spec, "changelog", where),
            "every_block",
            indexes,
            key=_key(spec, where),
            value=value,
            legacy_signed=legacy,
        )
    return IndexedMap(ns, indexes, key=_key(spec, where), value=value, legacy_signed=legacy)


def load_schema(source: str | os.PathLike[str] | Mapping[str, Any] | Schema) -> Schema:
    """A schema from a shipped name (``cw20``, ``cw721``, ``cw4``, or their file
    names such as ``cw20-base``), a JSON file path, or a parsed JSON document.
    :class:`SchemaError` for an unreadable or invalid one."""
    if isinstance(source, Schema):
        return source
    if isinstance(source, Mapping):
        return Schema.from_json(source)
    text_source = os.fspath(source)
    shipped = SHIPPED_SCHEMAS.get(text_source, text_source)
    if shipped in SHIPPED_SCHEMAS.values() and not os.path.exists(text_source):
        text = resources.files(__package__).joinpath("schemas", f"{shipped}.json").read_text("utf-8")
        where = f"shipped schema {shipped!r}"
    else:
        try:
            with open(text_source, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise SchemaError(
                f"cannot read schema {text_source!r}: {exc.strerror}; "
                f"give a JSON file or one of {', '.join(SHIPPED_SCHEMAS)}"
            ) from None
        where = f"schema file {text_source!r}"
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past Python's limit
        raise SchemaError(f"{where} is not JSON (or nested too deeply): {exc}") from None
    return Schema.from_json(doc)
