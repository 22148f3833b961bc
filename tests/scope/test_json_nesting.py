"""JSON nested deeper than the interpreter can follow, stored or given.

A stored JSON value is bytes someone else may have written: read through a
``json`` scope, a collection (record values and unique index entries) or the
CosmWasm state reader, a value nested too deep for the decoder is a
:class:`DecodeError` naming it, as any other value that is not JSON, never a
bare ``RecursionError``. An object nested too deep to encode is refused with
:class:`InvalidKey` before anything is written, as any other object JSON
cannot hold.
"""

from __future__ import annotations

from typing import Any

import pytest

import keyspace
from keyspace.codecs import JSON, JsonCodec
from keyspace.collections import IndexedMap, Map, UniqueIndex
from keyspace.errors import DecodeError, InvalidKey

DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000


@pytest.mark.parametrize("codec", [JSON, JsonCodec(sort_keys=False)], ids=["sorted", "serde"])
@pytest.mark.parametrize("raw", [DEEP_ARRAY, DEEP_OBJECT, b"[" * 100_000], ids=["array", "object", "open"])
def test_decoding_json_nested_too_deep_is_a_decode_error(codec: JsonCodec, raw: bytes) -> None:
    with pytest.raises(DecodeError, match="is not JSON"):
        codec.decode(raw)


def test_a_json_scope_reads_a_stored_value_nested_too_deep_as_a_decode_error() -> None:
    ks = keyspace.open("memory:")
    ks.scope("s")[b"k"] = DEEP_ARRAY
    scope = ks.scope("s", value="json")
    with pytest.raises(DecodeError):
        scope[b"k"]
    with pytest.raises(DecodeError):
        list(scope.values())


def test_a_map_reads_a_stored_value_nested_too_deep_as_a_decode_error() -> None:
    ks = keyspace.open("memory:")
    scores = Map(ks.scope("app"), "scores", key="str")
    scores["alice"] = 1
    scores._scope()[scores.key("alice")] = DEEP_OBJECT  # the stored value, corrupt
    with pytest.raises(DecodeError):
        scores["alice"]


def test_a_unique_index_entry_nested_too_deep_is_a_decode_error() -> None:
    ks = keyspace.open("memory:", scheme="length-prefixed")
    people = IndexedMap(
        ks.scope(),
        "people",
        key="str",
        indexes={"email": UniqueIndex(lambda v: v["email"], "people__email", key="str")},
    )
    people["alice"] = {"email": "a@example.com"}
    index = people.index("email")
    entry_key = index._ns.key(("a@example.com",))
    index._scope()[entry_key] = DEEP_ARRAY
    with pytest.raises(DecodeError):
        index.load("a@example.com")


def test_the_cosmwasm_reader_reads_a_value_nested_too_deep_as_a_decode_error() -> None:
    from keyspace.cosmwasm import _state

    with pytest.raises(DecodeError):
        _state._json(DEEP_ARRAY)


@pytest.mark.parametrize("codec", [JSON, JsonCodec(sort_keys=False)], ids=["sorted", "serde"])
def test_encoding_an_object_nested_too_deep_is_refused_and_writes_nothing(codec: JsonCodec) -> None:
    deep: list[Any] = []
    inner = deep
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    with pytest.raises(InvalidKey, match="cannot be encoded as JSON"):
        codec.encode(deep)
    ks = keyspace.open("memory:")
    scope = ks.scope("s", value=codec)
    with pytest.raises(InvalidKey):
        scope[b"k"] = deep
    assert dict(ks.scope("s")) == {}
    items = Map(ks.scope("app"), "items", key="str")
    with pytest.raises(InvalidKey):
        items["a"] = deep
    assert dict(ks.scope("app")) == {}
