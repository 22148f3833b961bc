"""A SnapshotMap or SnapshotItem with the ``"never"`` strategy records no change
sets, so it cannot say what a value was at a height: ``may_load_at_height``
raises InvalidArgument (cw-storage-plus: "checkpoint not found") instead of
answering the current value for every height. Its plain reads still work."""

from __future__ import annotations

import pytest

import keyspace
from keyspace.collections import COSMWASM, TUPLE, Layout, SnapshotItem, SnapshotMap
from keyspace.errors import InvalidArgument


@pytest.mark.parametrize("layout", [TUPLE, COSMWASM], ids=lambda x: x.name)
def test_never_strategy_has_no_value_at_a_height(layout: Layout) -> None:
    ks = keyspace.open("memory:", scheme="tuple" if layout is TUPLE else "length-prefixed")
    app = ks.scope("app")
    sm = SnapshotMap(app, "sm", "sm__cp", "sm__cl", key="str", strategy="never", layout=layout)
    item = SnapshotItem(app, "si", "si__cp", "si__cl", strategy="never", layout=layout)
    sm.save("a", 1, height=3)
    sm.save("a", 2, height=5)
    item.save(1, height=3)
    item.save(2, height=5)
    with pytest.raises(InvalidArgument):
        sm.may_load_at_height("a", 4)
    with pytest.raises(InvalidArgument):
        item.may_load_at_height(4)
    assert sm.load("a") == 2 and item.load() == 2 and list(sm.changes("a")) == []
