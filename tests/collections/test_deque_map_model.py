"""DequeMap against a dict of lists: pushes, pops, set, get, ranged and reversed
iteration on every key's deque, on the CosmWasm and the tuple layout; one key's
deque never sees another's items (keys chosen so that one is a byte prefix of
another, and positions wrap around u32)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import keyspace
from keyspace.collections import COSMWASM, TUPLE, DequeMap

KEYS = st.sampled_from([("a", 1), ("a", 2), ("ab", 1), ("", 0), ("a\x00", 1)])
VALUES = st.integers(-5, 5) | st.text("xy", max_size=2)


class DequeMapModel(RuleBasedStateMachine):
    layout = "cosmwasm"

    @initialize(wrap=st.booleans())
    def open_map(self, wrap: bool) -> None:
        if self.layout == "cosmwasm":
            ks = keyspace.open("memory:", scheme="length-prefixed")
            scope, lay = ks.scope(), COSMWASM
        else:
            ks = keyspace.open("memory:")
            scope, lay = ks.scope("app"), TUPLE
        self.map = DequeMap(scope, "q", key=("str", "u8"), layout=lay)
        self.model: dict[Any, list[Any]] = {}
        if wrap:  # every deque starts near the end of the u32 positions
            for key in (("a", 1), ("a", 2), ("ab", 1), ("", 0), ("a\x00", 1)):
                d = self.map.deque(key)
                d._set(d._base, ("h",), 2**32 - 2)
                d._set(d._base, ("t",), 2**32 - 2)

    @rule(key=KEYS, value=VALUES, front=st.booleans())
    def push(self, key: Any, value: Any, front: bool) -> None:
        d = self.map.deque(key)
        items = self.model.setdefault(key, [])
        if front:
            d.push_front(value)
            items.insert(0, value)
        else:
            d.push_back(value)
            items.append(value)

    @rule(key=KEYS, front=st.booleans())
    def pop(self, key: Any, front: bool) -> None:
        d = self.map.deque(key)
        items = self.model.setdefault(key, [])
        want = (items.pop(0) if front else items.pop()) if items else None
        assert (d.pop_front() if front else d.pop_back()) == want

    @rule(key=KEYS, index=st.integers(-4, 4), value=VALUES)
    def set(self, key: Any, index: int, value: Any) -> None:
        items = self.model.setdefault(key, [])
        if -len(items) <= index < len(items):
            self.map.deque(key).set(index, value)
            items[index] = value

    @rule(key=KEYS)
    def remove(self, key: Any) -> None:
        self.map.remove(key)
        self.model[key] = []

    @invariant()
    def every_deque_reads_as_its_list(self) -> None:
        for key, items in self.model.items():
            d = self.map.deque(key)
            assert list(d) == items
            assert list(reversed(d)) == items[::-1]
            assert len(d) == len(items)
            assert list(d.iter(1, -1)) == items[1:-1]
            assert list(d.iter(-2, reverse=True)) == items[-2:][::-1]
            for i in (-1, 0, 1):
                want = items[i] if -len(items) <= i < len(items) else None
                assert d.get(i) == want


_SETTINGS = settings(
    max_examples=40, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


class DequeMapTuple(DequeMapModel):
    layout = "tuple"


TestDequeMapCosmWasm = DequeMapModel.TestCase
TestDequeMapTuple = DequeMapTuple.TestCase
TestDequeMapCosmWasm.settings = _SETTINGS
TestDequeMapTuple.settings = _SETTINGS
