"""A SnapshotMap's or SnapshotItem's ``may_load_at_height`` takes a u64 height,
as its writes do: anything else (a negative int, 2**64, a str, a float, a bool)
raises InvalidKey on every layout, instead of an answer read at a height that no
change set can have (or a builtin OverflowError)."""

from __future__ import annotations

from typing import Any

import pytest

import keyspace
from keyspace.collections import COSMWASM, TUPLE, Layout, SnapshotItem, SnapshotMap
from keyspace.errors import InvalidKey

BAD = [-1, 2**64, "x", 1.5, True, None]


@pytest.mark.parametrize("layout", [TUPLE, COSMWASM], ids=lambda x: x.name)
@pytest.mark.parametrize("height", BAD, ids=repr)
def test_a_height_that_is_no_u64_is_refused(layout: Layout, height: Any) -> None:
    ks = keyspace.open("memory:", scheme="tuple" if layout is TUPLE else "length-prefixed")
    app = ks.scope("app")
    sm = SnapshotMap(app, "sm", "sm__cp", "sm__cl", key="str", layout=layout)
    item = SnapshotItem(app, "si", "si__cp", "si__cl", layout=layout)
    sm.save("a", 1, height=2)
    sm.save("a", 2, height=4)
    item.save(1, height=2)
    with pytest.raises(InvalidKey):
        sm.may_load_at_height("a", height)
    with pytest.raises(InvalidKey):
        item.may_load_at_height(height)
    assert [sm.may_load_at_height("a", h) for h in (0, 2, 3, 4, 2**64 - 1)] == [None, None, 1, 1, 2]
