"""``decode_state``: contract-state entries -> rows naming their collection."""

from __future__ import annotations

import base64
import binascii
import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from .._metadata import LAYOUT_START, LAYOUT_STOP
from ..collections import KeySpec
from ..errors import DecodeError, InvalidArgument, InvalidName, show_bytes
from ..schemes._base import component_bytes
from ..schemes.length_prefixed import decompose as _split
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
)
from ._dump import decode_model
from ._schema import Schema, SchemaError, SchemaWarning, load_schema

__all__ = ["Row", "decode_state", "summarize"]


class Row(NamedTuple):
    """One decoded entry: ``collection`` (namespace; ``None`` when unknown),
    ``kind`` (``item``, ``map``, ``indexed_map``, ``unique_index``,
    ``multi_index``, ``deque``, ``deque_map`` (key: the map key's elements,
    then the position), ``deque_head``, ``deque_tail`` (key: the map key's
    elements for a deque map, else empty), ``snapshot_map``, ``snapshot_item``,
    ``indexed_snapshot_map``, ``changelog``, ``checkpoints``, ``keyspace_record``
    (a record keyspace keeps in a store it owns, see :func:`decode_state`) or
    ``unknown``), ``key``
    (the decoded key elements), ``value`` (RFC 8259 JSON parsed: a number no
    float holds, such as ``1e400``, is its exact :class:`~decimal.Decimal`;
    ``NaN`` and ``Infinity`` are not JSON) and the raw bytes. ``error`` says
    why an entry that looked like a collection's did not decode."""

    collection: str | None
    kind: str
    key: tuple[Any, ...]
    value: Any
    raw_key: bytes
    raw_value: bytes
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form: ``{"collection", "kind", "key", "value"}``; unknown rows
        carry ``key_hex`` and ``value_base64`` instead; bytes key elements and
        values are ``{"hex": …}``."""
        if self.kind == "unknown":
            doc: dict[str, Any] = {
                "collection": None,
                "kind": "unknown",
                "key_hex": self.raw_key.hex(),
                "value_base64": base64.b64encode(self.raw_value).decode(),
            }
            if self.error:
                doc["error"] = self.error
            return doc
        return {
            "collection": self.collection,
            "kind": self.kind,
            "key": [{"hex": k.hex()} if isinstance(k, bytes) else k for k in self.key],
            "value": self.value if not isinstance(self.value, bytes) else {"hex": self.value.hex()},
        }


_Decoder = Callable[[bytes, bytes, bytes], Row]
"""``(stored key, key after the namespace, value) -> row``."""
_new = tuple.__new__  # a row without the Python frame of Row.__new__


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (RFC 8259 has no NaN or Infinity)")


def _number(text: str) -> float | Decimal:
    """A JSON number with a fraction or exponent: a float, as ``json.loads``
    reads it, unless a float cannot hold it (``1e400`` would be infinite,
    ``1e-400`` zero): then its exact :class:`~decimal.Decimal`."""
    value = float(text)
    if value in (_INF, -_INF) or (value == 0.0 and any(c in "123456789" for c in text.lower().split("e")[0])):
        return Decimal(text)
    return value


def _integer(text: str) -> int | Decimal:
    """A JSON integer: an int, or a :class:`~decimal.Decimal` past the digits
    Python converts to int (``sys.get_int_max_str_digits``)."""
    try:
        return int(text)
    except ValueError:
        return Decimal(text)


_INF = float("inf")
_STRICT_DECODER = json.JSONDecoder(parse_float=_number, parse_constant=_not_json)
_STRICT = _STRICT_DECODER.decode
_STRICT_SCAN: Callable[[str, int], tuple[Any, int]] = _STRICT_DECODER.scan_once  # type: ignore[attr-defined]
"""The decoder's C scanner: one value at an index, with no Python frame around it
(``decode`` adds two and two whitespace matches)."""
_STRICT_BIG = json.JSONDecoder(parse_float=_number, parse_int=_integer, parse_constant=_not_json).decode


def _json(raw: bytes) -> Any:
    """A stored JSON value, read as RFC 8259 JSON (what serde_json writes and
    reads): ``NaN``, ``Infinity`` and ``-Infinity``, which Python's ``json``
    would take, are :class:`DecodeError`, as are bytes that are not JSON, nested
    too deep included. A number keeps its value: one no float can hold is a
    :class:`~decimal.Decimal` (see :func:`_number`, :func:`_integer`)."""
    try:
        text = raw.decode("utf-8")
        try:  # the C scanner alone, where one value fills the text (serde_json writes no whitespace)
            value, end = _STRICT_SCAN(text, 0)
            if end == len(text):
                return value
        except (StopIteration, ValueError):
            pass
        try:
            return _STRICT(text)
        except ValueError:  # an integer with more digits than int() converts, or not JSON
            return _STRICT_BIG(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise DecodeError(f"value {show_bytes(raw)} is not JSON: {exc}", getattr(exc, "pos", None)) from None


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"value {show_bytes(raw)} is not UTF-8: {exc.reason}") from None


def _raw(raw: bytes) -> bytes:
    return raw


_VALUE: dict[Any, Callable[[bytes], Any]] = {None: _json, "json": _json, "str": _text, "bytes": _raw}


def _value_decoder(spec: Any) -> Callable[[bytes], Any]:
    try:
        return _VALUE[spec]
    except (KeyError, TypeError):
        raise SchemaError(f"value type {spec!r} cannot be decoded; use json, str or bytes") from None


def _keys_decoder(spec: KeySpec) -> Callable[[bytes], tuple[Any, ...]]:
    """Bytes after the namespace -> key elements (last element raw)."""
    types = spec.types
    if len(types) == 1:
        only = types[0].from_bytes
        return lambda rest: (only(rest),)
    depth = len(types) - 1
    if depth == 1:
        first, last = types[0].from_bytes, types[1].from_bytes

        def decode2(rest: bytes) -> tuple[Any, ...]:
            end = 2 + ((rest[0] << 8) | rest[1]) if len(rest) >= 2 else len(rest) + 1
            if end > len(rest):
                raise DecodeError(f"key remainder {show_bytes(rest)} ends inside its first element", 0)
            return first(rest[:end][2:]), last(rest[end:])

        return decode2

    def decode(rest: bytes) -> tuple[Any, ...]:
        parts, last = _split(rest, depth)
        return tuple(t.from_bytes(p) for t, p in zip(types, (*parts, last), strict=True))

    return decode


def _map_decoder(name: str, kind: str, spec: KeySpec, value: Callable[[bytes], Any]) -> _Decoder:
    keys = _keys_decoder(spec)
    return lambda key, rest, raw: _new(Row, (name, kind, keys(rest), value(raw), key, raw, None))


def _deque_decoder(name: str, value: Callable[[bytes], Any]) -> _Decoder:
    def decode(key: bytes, rest: bytes, raw: bytes) -> Row:
        if len(rest) == 4:
            return Row(name, "deque", (int.from_bytes(rest, "big"),), value(raw), key, raw)
        if rest in (b"h", b"t") and len(raw) == 4:
            kind = "deque_head" if rest == b"h" else "deque_tail"
            return Row(name, kind, (), int.from_bytes(raw, "big"), key, raw)
        raise DecodeError(f"deque key remainder {show_bytes(rest)} is no position, 'h' or 't'")

    return decode


def _deque_map_decoder(name: str, spec: KeySpec, value: Callable[[bytes], Any]) -> _Decoder:
    """A deque map's entry: the map key's elements, each length-prefixed, then a
    u32 position (an item) or ``h``/``t`` (its head or tail, a raw u32)."""
    types = spec.types
    depth = len(types)

    def decode(key: bytes, rest: bytes, raw: bytes) -> Row:
        parts, tail = _split(rest, depth)
        elements = tuple(t.from_bytes(p) for t, p in zip(types, parts, strict=True))
        if len(tail) == 4:
            return Row(name, "deque_map", (*elements, int.from_bytes(tail, "big")), value(raw), key, raw)
        if tail in (b"h", b"t") and len(raw) == 4:
            kind = "deque_head" if tail == b"h" else "deque_tail"
            return Row(name, kind, elements, int.from_bytes(raw, "big"), key, raw)
        raise DecodeError(f"deque map key remainder {show_bytes(tail)} is no position, 'h' or 't'")

    return decode


_U64 = KeySpec("u64")


def _namespace(key: bytes) -> bytes | None:
    """The namespace a stored key lies in when it starts with a whole
    ``len(ns) ns`` (as every key of a map, index, deque or snapshot log does);
    ``None`` when it cannot."""
    if len(key) < 2:
        return None
    end = 2 + ((key[0] << 8) | key[1])
    return key[2:end] if end <= len(key) else None


class _Decoders:
    """Every stored key a schema knows: items by whole key, the rest by namespace.

    An item whose key lies in another collection's namespace shares stored bytes
    with that collection (cw-storage-plus stores an item at its raw name): a
    :class:`SchemaWarning` says so, and an entry there decodes as the item."""

    def __init__(self, schema: Schema) -> None:
        self.items: dict[bytes, tuple[str, str, Callable[[bytes], Any]]] = {}
        self.spaces: dict[bytes, _Decoder] = {}
        for d in schema.collections:
            self._add(d)
        for key, (name, kind, _) in self.items.items():
            ns = _namespace(key)
            if ns is not None and ns in self.spaces:
                warnings.warn(
                    SchemaWarning(
                        f"{kind} {name!r} (stored key {show_bytes(key)}) lies in the namespace "
                        f"{ns.decode('utf-8', 'backslashreplace')!r} of another collection of the "
                        "schema: a contract stores the item and that collection's entry at the same "
                        "bytes as one entry (as cw-storage-plus does); an entry there is decoded as the item"
                    ),
                    stacklevel=3,
                )

    def _space(self, ns: str | bytes, decoder: _Decoder) -> None:
        try:
            key = component_bytes(ns)
        except InvalidName as exc:
            raise SchemaError(f"namespace {ns!r} of the schema is not a namespace: {exc}") from None
        if key in self.spaces:
            raise SchemaError(f"two collections of the schema use namespace {ns!r}")
        self.spaces[key] = decoder

    def _add(self, d: Item | Map | Deque | DequeMap) -> None:
        value = _value_decoder(d.value)
        name = str(d.namespace)
        if isinstance(d, Item):
            self.items[d.storage_key] = (name, d.kind, value)
            if isinstance(d, SnapshotItem):
                self._space(d.changelog, _map_decoder(str(d.changelog), "changelog", _U64, _json))
                self._space(d.checkpoints, _map_decoder(str(d.checkpoints), "checkpoints", _U64, _json))
        elif isinstance(d, Deque):
            self._space(d.namespace, _deque_decoder(name, value))
        elif isinstance(d, DequeMap):
            self._space(d.namespace, _deque_map_decoder(name, d.spec, value))
        else:
            self._space(d.namespace, _map_decoder(name, d.kind, d.spec, value))
            if isinstance(d, (SnapshotMap, IndexedSnapshotMap)):
                log = d.spec + _U64
                self._space(d.changelog, _map_decoder(str(d.changelog), "changelog", log, _json))
                self._space(d.checkpoints, _map_decoder(str(d.checkpoints), "checkpoints", _U64, _json))
            if isinstance(d, IndexedMap):
                for idx in d.indexes.values():
                    spec = idx.spec + d.spec if isinstance(idx, MultiIndex) else idx.spec
                    self._space(idx.namespace, _map_decoder(str(idx.namespace), idx.kind, spec, _json))


def decode_state(
    models: Iterable[Any] | Mapping[str, Any], schema: Schema | Mapping[str, Any] | str | Any
) -> list[Row]:
    """Decode the entries of a contract-state dump with ``schema``.

    ``models``: the ``models`` list of ``wasmd query wasm contract-state all -o
    json`` (``{"key": hex, "value": base64}`` objects), the whole document, or
    ``(key, value)`` byte pairs. ``schema``: a :class:`Schema`, a parsed JSON
    schema, a JSON file path or a shipped name (``cw20``, ``cw721``, ``cw4``).

    Returns one :class:`Row` per entry, in input order; an entry that matches no
    collection (or does not decode as the one it names) is an ``unknown`` row
    with its raw bytes, never dropped. A schema with an item whose key lies in
    another collection's namespace (stored bytes both share, as in
    cw-storage-plus) gives a :class:`SchemaWarning`, once per such item and
    call; an entry at that key is reported as the item.

    An entry that no collection of the schema claims and that lies where
    keyspace keeps its own records (the leaf-layout records under ``ff ff
    "keyspace-layout" 00`` that a ``LengthPrefixed`` keyspace owning its store
    writes, keys under ``ff "keyspace"``) is a ``keyspace_record`` row (``key``:
    the scope path a layout record names; ``value``: its text), not an unknown
    one: keyspace refuses user keys there, and no map, index or deque key of a
    contract starts with ``ff ff`` (it would announce a 65535-byte namespace);
    an item of the schema at such a key is still reported as the item. A
    keyspace opened with ``leaf_depth=0`` writes no such record: the store then
    holds exactly the contract's keys. Cost: O(1)
    dictionary lookups per entry plus decoding its key and value.
    """
    if isinstance(models, (str, bytes, bytearray, memoryview)):
        raise InvalidArgument(
            f"decode_state takes the models of a dump, not its text ({show_bytes(models)}): "
            "pass models_from_dump(text)"
        )
    if isinstance(models, Mapping):
        if not isinstance(models.get("models"), list):
            raise DecodeError(
                f"the dump document has no 'models' list (it has keys {sorted(map(str, models))}); "
                "give the output of `wasmd query wasm contract-state all ADDR -o json`"
            )
        models = models["models"]
    decoders = _Decoders(load_schema(schema))
    items, spaces = decoders.items.get, decoders.spaces.get
    out: list[Row] = []
    append = out.append
    fromhex, a2b = bytes.fromhex, binascii.a2b_base64
    for i, model in enumerate(models):
        try:
            key, raw = fromhex(model["key"]), a2b(model["value"], strict_mode=True)
        except (KeyError, TypeError, ValueError, binascii.Error):
            key, raw = decode_model(i, model)  # a pair of bytes, or an error naming the entry
        try:
            item = items(key)
            if item is not None:
                append(_new(Row, (item[0], item[1], (), item[2](raw), key, raw, None)))
                continue
            if len(key) >= 2:
                end = 2 + ((key[0] << 8) | key[1])
                decoder = spaces(key[2:end])
                if decoder is not None and end <= len(key):
                    append(decoder(key, key[end:], raw))
                    continue
            if LAYOUT_START <= key < LAYOUT_STOP or key.startswith(_RECORDS):
                append(_keyspace_record(key, raw))
                continue
            append(_new(Row, (None, "unknown", (), None, key, raw, None)))
        except DecodeError as exc:
            append(_new(Row, (None, "unknown", (), None, key, raw, str(exc))))
    return out


_RECORDS = b"\xffkeyspace"
"""Where keyspace keeps scheme records and its registry (see :mod:`keyspace._metadata`)."""


def _text_or_bytes(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _keyspace_record(key: bytes, raw: bytes) -> Row:
    """The row of one of keyspace's own records; a layout record's key is the
    scope path it names (its components, length-prefixed, fill the rest of the key)."""
    path: tuple[Any, ...] = ()
    if key.startswith(LAYOUT_START):
        rest, parts = key[len(LAYOUT_START) :], []
        while len(rest) >= 2 and 2 + ((rest[0] << 8) | rest[1]) <= len(rest):
            end = 2 + ((rest[0] << 8) | rest[1])
            parts.append(_text_or_bytes(rest[2:end]))
            rest = rest[end:]
        path = tuple(parts) if not rest else (key[len(LAYOUT_START) :],)
    return Row(None, "keyspace_record", path, _text_or_bytes(raw), key, raw)


def summarize(rows: Iterable[Row]) -> dict[str, int]:
    """How many rows each collection matched (``"unknown"`` for the others,
    ``"keyspace_record"`` for keyspace's own records), in order of first
    appearance."""
    counts: dict[str, int] = {}
    for r in rows:
        name = r.kind if r.collection is None else f"{r.collection} ({r.kind})"
        counts[name] = counts.get(name, 0) + 1
    return counts
