"""The key order docs/collections.md states: element by element under the tuple
layout; under the CosmWasm layout a str or bytes element that is not the last
is length-prefixed, so it sorts by length first (cw-storage-plus's byte order),
for ranges, prefixes and index ranges alike."""

from __future__ import annotations

import keyspace
from keyspace.collections import IndexedMap, Map, MultiIndex

KEYS = [("aa", 0), ("b", 0), ("a", 1), ("", 5)]


def test_tuple_layout_orders_element_by_element() -> None:
    m = Map(keyspace.open("memory:", scheme="tuple").scope("app"), "m", key=("str", "u8"))
    for k in KEYS:
        m.save(k, 1)
    assert list(m.keys()) == [("", 5), ("a", 1), ("aa", 0), ("b", 0)]


def test_cosmwasm_layout_sorts_a_leading_text_element_by_length_first() -> None:
    app = keyspace.open("memory:", scheme="length-prefixed").scope("app")
    m = Map(app, "m", key=("str", "u8"))
    for k in KEYS:
        m.save(k, 1)
    assert list(m.keys()) == [("", 5), ("a", 1), ("b", 0), ("aa", 0)]
    assert list(m.keys(start=("b", 0))) == [("b", 0), ("aa", 0)]
    last = Map(app, "n", key=("u8", "str"))  # the last element is raw: plain byte order
    for k in [(1, "b"), (1, "aa")]:
        last.save(k, 1)
    assert list(last.prefix(1).keys()) == ["aa", "b"]
    im = IndexedMap(app, "im", key="u8", indexes={"t": MultiIndex(lambda v: v, "im_t", key="str")})
    for pk, team in [(1, "aa"), (2, "b")]:
        im.save(pk, team)
    assert [k for k, _ in im.index("t").items()] == [2, 1]
