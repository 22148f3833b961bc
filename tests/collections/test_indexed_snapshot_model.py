"""IndexedSnapshotMap against a model that keeps the whole map at every height:
records, both index kinds and every past height read back as the model says,
on the CosmWasm and the tuple layout, with the ``every_block`` strategy and with
``selected`` (heights read back at their checkpoints, refused elsewhere)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import keyspace
from keyspace.collections import COSMWASM, TUPLE, IndexedSnapshotMap, MultiIndex, UniqueIndex
from keyspace.errors import InvalidArgument, UniqueViolation

KEYS = st.sampled_from(["a", "b", "bb", "c", "dd"])
TEAMS = st.sampled_from(["red", "blue", "g"])
NUMBERS = st.integers(min_value=0, max_value=5)


class IndexedSnapshotModel(RuleBasedStateMachine):
    strategy = "every_block"
    layout = "cosmwasm"

    @initialize()
    def open_map(self) -> None:
        if self.layout == "cosmwasm":
            self.ks = keyspace.open("memory:", scheme="length-prefixed")
            scope, lay = self.ks.scope(), COSMWASM
        else:
            self.ks = keyspace.open("memory:")
            scope, lay = self.ks.scope("app"), TUPLE
        self.map = IndexedSnapshotMap(
            scope,
            "recs",
            "recs__check",
            "recs__change",
            key="str",
            indexes={
                "team": MultiIndex(lambda r: r["team"], "recs__team", key="str"),
                "n": UniqueIndex(lambda r: r["n"], "recs__n", key="u8"),
            },
            strategy=self.strategy,
            layout=lay,
        )
        self.height = 1
        self.current: dict[str, Any] = {}
        # the map as it was at the start of each height a write happened at or after
        self.at_start: dict[int, dict[str, Any]] = {}
        self.checkpoints: set[int] = set()
        self.written_at_height = False
        if self.strategy == "selected":
            self.map.add_checkpoint(self.height)
            self.checkpoints.add(self.height)

    def _before_write(self) -> None:
        self.at_start.setdefault(self.height, dict(self.current))
        self.written_at_height = True

    @rule(key=KEYS, team=TEAMS, n=NUMBERS)
    def save(self, key: str, team: str, n: int) -> None:
        record = {"team": team, "n": n}
        holder = next((k for k, r in self.current.items() if r["n"] == n and k != key), None)
        if holder is not None:
            with pytest.raises(UniqueViolation):
                self.map.save(key, record, self.height)
            return
        self._before_write()
        self.map.save(key, record, self.height)
        self.current[key] = record

    @rule(key=KEYS)
    def remove(self, key: str) -> None:
        self._before_write()
        self.map.remove(key, self.height)
        self.current.pop(key, None)

    @rule(key=KEYS, team=TEAMS)
    def update_team(self, key: str, team: str) -> None:
        old = self.current.get(key)
        n = old["n"] if old else None
        if n is None:
            return
        self._before_write()
        self.map.update(key, lambda r: {**r, "team": team}, self.height)
        self.current[key] = {**old, "team": team}

    @rule(step=st.integers(min_value=1, max_value=3), checkpoint=st.booleans())
    def advance(self, step: int, checkpoint: bool) -> None:
        self.height += step
        self.written_at_height = False
        if checkpoint:
            self.map.add_checkpoint(self.height)
            self.checkpoints.add(self.height)

    @precondition(lambda self: not self.written_at_height and self.height in self.checkpoints)
    @rule()
    def drop_checkpoint(self) -> None:
        self.map.remove_checkpoint(self.height)
        self.checkpoints.discard(self.height)

    def _model_at(self, height: int) -> dict[str, Any]:
        later = [h for h in self.at_start if h >= height]
        return self.at_start[min(later)] if later else self.current

    @invariant()
    def records_and_indexes_match(self) -> None:
        assert dict(self.map.items()) == self.current
        by_team = sorted((r["team"], k) for k, r in self.current.items())
        got = sorted((r["team"], k) for k, r in self.map.index("team").items())
        assert got == by_team
        for team in ("red", "blue", "g"):
            want = sorted(k for k, r in self.current.items() if r["team"] == team)
            assert sorted(k for k, _ in self.map.index("team").prefix(team).items()) == want
        for key, r in self.current.items():
            assert self.map.index("n").load(r["n"]) == (key, r)

    @invariant()
    def every_height_reads_back(self) -> None:
        for h in range(1, self.height + 2):
            want = self._model_at(h)
            answerable = self.strategy == "every_block" or h in self.checkpoints
            for key in ("a", "b", "bb", "c", "dd"):
                if answerable:
                    assert self.map.may_load_at_height(key, h) == want.get(key), (key, h)
                else:
                    with pytest.raises(InvalidArgument):
                        self.map.may_load_at_height(key, h)


_SETTINGS = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


class EveryBlockCosmWasm(IndexedSnapshotModel):
    strategy, layout = "every_block", "cosmwasm"


class EveryBlockTuple(IndexedSnapshotModel):
    strategy, layout = "every_block", "tuple"


class SelectedCosmWasm(IndexedSnapshotModel):
    strategy, layout = "selected", "cosmwasm"


class SelectedTuple(IndexedSnapshotModel):
    strategy, layout = "selected", "tuple"


TestEveryBlockCosmWasm = EveryBlockCosmWasm.TestCase
TestEveryBlockTuple = EveryBlockTuple.TestCase
TestSelectedCosmWasm = SelectedCosmWasm.TestCase
TestSelectedTuple = SelectedTuple.TestCase
for _case in (TestEveryBlockCosmWasm, TestEveryBlockTuple, TestSelectedCosmWasm, TestSelectedTuple):
    _case.settings = _SETTINGS
del _case
