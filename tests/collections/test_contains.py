"""``key in map`` answers False for a key that no map can hold, as ``key in
scope`` does: a key of the wrong shape or type, and a key whose CosmWasm form
cannot be written (an element other than the last over 65535 bytes, which
cw-storage-plus's two-byte length prefix cannot state). ``has`` still raises
the named error."""

from __future__ import annotations

import pytest

import keyspace
from keyspace.collections import COSMWASM, IndexedMap, Map
from keyspace.errors import KeyTooLarge


@pytest.mark.parametrize("scheme", ["length-prefixed", "tuple"])
def test_a_key_too_long_to_store_is_not_in_the_map(scheme: str) -> None:
    app = keyspace.open("memory:", scheme=scheme).scope("app")
    for cls in (Map, IndexedMap):
        m = cls(app, "m", key=("str", "u8"), layout=COSMWASM)
        m.save(("x" * 65535, 1), 1)
        assert ("x" * 65535, 1) in m
        assert ("x" * 65536, 1) not in m
        assert ("x", "not an int") not in m
        with pytest.raises(KeyTooLarge):
            m.has(("x" * 65536, 1))
