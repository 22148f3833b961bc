"""DESIGN.md, "Public names are a contract": the names programs outside the
repository use exist where the design puts them, and the errors keep the
hierarchy it gives (a program that catches ``StoreError`` catches a closed
store and an unreachable etcd; one that catches ``KeyspaceError`` catches all)."""

from __future__ import annotations

import pytest

import keyspace
import keyspace.cosmwasm
import keyspace.errors
import keyspace.schemes
import keyspace.stores
import keyspace.testing
import keyspace.tuples
from keyspace.schemes import length_prefixed

SCHEMES = ["TupleScheme", "LengthPrefixed", "AsciiHex", "Sublevel", "ScopeHash", "Delimited", "Naive"]
STORES = ["MemoryStore", "SQLiteStore", "LMDBStore", "LevelDBStore", "RocksDBStore", "EtcdStore"]
SCOPE_METHODS = [
    "get", "items", "keys", "values", "update", "pop", "popitem", "setdefault", "clear",
    "scopes", "drop", "subtree", "scope", "watch", "__getitem__", "__setitem__",
    "__delitem__", "__contains__", "__len__", "__iter__",
]  # fmt: skip
KEYSPACE_ERRORS = [
    "InvalidName", "KeyTooLarge", "DecodeError", "SchemeMismatch", "HashCollision",
    "LayoutError", "TransactionTooLarge", "StoreError",
]  # fmt: skip
STORE_ERRORS = ["StoreClosed", "EtcdUnavailable", "CommitOutcomeUnknown", "AccessDenied"]


@pytest.mark.parametrize("name", SCHEMES)
def test_the_scheme_classes_are_public(name: str) -> None:
    cls = getattr(keyspace.schemes, name)
    assert getattr(keyspace, name) is cls
    for method in ("encode", "decode", "own_range", "subtree_range", "properties", "layout"):
        assert hasattr(cls, method), f"{name}.{method}"


@pytest.mark.parametrize("name", STORES)
def test_the_store_classes_are_public(name: str) -> None:
    assert isinstance(getattr(keyspace.stores, name), type)


def test_the_module_functions_are_public() -> None:
    assert callable(keyspace.open) and callable(keyspace.stores.open_store)
    for name in ("pack", "unpack", "range"):
        assert callable(getattr(keyspace.tuples, name))
    for name in ("to_length_prefixed", "to_length_prefixed_nested", "namespace_with_key", "decompose"):
        assert callable(getattr(length_prefixed, name))
        assert callable(getattr(keyspace.cosmwasm, name))
    for name in ("scope", "transaction", "close"):
        assert callable(getattr(keyspace.Keyspace, name))
    for name in SCOPE_METHODS:
        assert callable(getattr(keyspace.Scope, name)), name
    assert isinstance(keyspace.testing.StoreSuite, type)


@pytest.mark.parametrize("name", KEYSPACE_ERRORS + STORE_ERRORS)
def test_every_error_is_a_keyspace_error(name: str) -> None:
    cls = getattr(keyspace.errors, name)
    assert issubclass(cls, keyspace.errors.KeyspaceError)
    if name in STORE_ERRORS:
        assert issubclass(cls, keyspace.errors.StoreError)


def test_the_public_names_work_together() -> None:
    """The design's own examples of the three byte formats."""
    assert keyspace.LengthPrefixed().encode((b"bar", b"cool"), b"foo") == b"\x00\x03bar\x00\x04coolfoo"
    assert keyspace.Sublevel().encode(("tenant1", "users"), b"alice") == b"!tenant1!!users!alice"
    stored = keyspace.ScopeHash().encode(("tenant1",), b"k")
    assert stored[4:] == (1).to_bytes(8, "little") + b"k"
    assert length_prefixed.decompose(b"\x00\x03bar\x00\x04coolfoo", 2) == ((b"bar", b"cool"), b"foo")
    assert keyspace.tuples.unpack(keyspace.tuples.pack((("a",), b"k"))) == (("a",), b"k")
