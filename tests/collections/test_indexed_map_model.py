"""IndexedMap against a dict model: records, a unique and a multi index, saves
that break uniqueness (outside and inside transactions, committed and rolled
back), removals, clear, and reopening the store. After every step the records,
both indexes and the raw count of index entries must match the model exactly
(no entry left behind, none missing), under both layouts."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

import keyspace
from keyspace.collections import COSMWASM, TUPLE, IndexedMap, Layout, MultiIndex, UniqueIndex
from keyspace.errors import UniqueViolation

KEYS = st.sampled_from(["alice", "bob", "carol", "dan", "é", ""])
EMAILS = st.sampled_from(["a@x", "b@x", "c@x", "d@x"])
TEAMS = st.sampled_from(["red", "blue", "green"])
BOOLS = st.booleans()
RECORDS = st.fixed_dictionaries({"email": EMAILS, "team": TEAMS, "n": st.integers(-5, 5)})


class _Rollback(Exception):
    """Raised inside a transaction to discard it."""


def _machine(layout: Layout) -> type[RuleBasedStateMachine]:
    class IndexedMapModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.dir = tempfile.mkdtemp(prefix="ks-imap-")
            self.model: dict[str, dict[str, Any]] = {}
            self._open()

        def _open(self) -> None:
            if layout is TUPLE:
                self.ks = keyspace.open(f"{self.dir}/db.lmdb")
                scope = self.ks.scope("app")
            else:
                self.ks = keyspace.open(
                    f"sqlite:///{self.dir}/db.sqlite", scheme="length-prefixed", leaf_depth=0
                )
                scope = self.ks.scope()
            self.users = IndexedMap(
                scope,
                "users",
                key="str",
                indexes={
                    "email": UniqueIndex(lambda u: u["email"], "users__email", key="str"),
                    "team": MultiIndex(lambda u: (u["team"], u["n"]), "users__team", key=("str", "i8")),
                },
                layout=layout,
            )

        def teardown(self) -> None:
            self.ks.close()
            shutil.rmtree(self.dir, ignore_errors=True)

        def _taken(self, key: str, record: dict[str, Any], model: dict[str, dict[str, Any]]) -> bool:
            return any(k != key and r["email"] == record["email"] for k, r in model.items())

        @rule(key=KEYS, record=RECORDS)
        def save(self, key: str, record: dict[str, Any]) -> None:
            if self._taken(key, record, self.model):
                with pytest.raises(UniqueViolation):
                    self.users.save(key, record)
            else:
                self.users.save(key, record)
                self.model[key] = record

        @rule(key=KEYS)
        def remove(self, key: str) -> None:
            self.users.remove(key)
            self.model.pop(key, None)

        @rule(ops=st.lists(st.tuples(KEYS, st.none() | RECORDS), min_size=1, max_size=5), commit=BOOLS)
        def transaction(self, ops: list[tuple[str, dict[str, Any] | None]], commit: bool) -> None:
            staged = dict(self.model)
            try:
                with self.ks.transaction() as tx:
                    users = self.users.using(tx)
                    for key, record in ops:
                        if record is None:
                            users.remove(key)
                            staged.pop(key, None)
                        elif self._taken(key, record, staged):
                            with pytest.raises(UniqueViolation):
                                users.save(key, record)
                        else:
                            users.save(key, record)
                            staged[key] = record
                        # reads inside the transaction see its own writes
                        assert users.may_load(key) == staged.get(key)
                    if not commit:
                        raise _Rollback
            except _Rollback:
                return
            self.model = staged

        @rule()
        def clear(self) -> None:
            self.users.clear()
            self.model.clear()

        @rule()
        def reopen(self) -> None:
            self.ks.close()
            self._open()

        @invariant()
        def matches_model(self) -> None:
            users = self.users
            assert dict(users.items()) == self.model
            by_email = sorted((r["email"], k) for k, r in self.model.items())
            email = users.index("email")
            assert [k for k, _ in email.items()] == [k for _, k in by_email]
            for mail, k in by_email:
                assert email.load(mail) == (k, self.model[k])
            team = users.index("team")
            expected = sorted((r["team"], r["n"], k) for k, r in self.model.items())
            if layout is COSMWASM:  # every element but the last is length-prefixed
                expected.sort(key=lambda e: (len(e[0].encode()), e[0], e[1], e[2].encode()))
            assert [k for k, _ in team.items()] == [k for _, _, k in expected]
            for name in ("red", "blue", "green"):
                want = [k for t, _, k in expected if t == name]
                assert [k for k, _ in team.prefix(name).items()] == want
            # no stale or missing index entries
            assert len(email) == len(team) == len(self.model)
            if layout is COSMWASM:
                assert sum(1 for _ in self.ks.store.scan()) == 3 * len(self.model)

    return IndexedMapModel


@pytest.mark.parametrize("layout", [TUPLE, COSMWASM], ids=["tuple", "cosmwasm"])
def test_indexed_map_matches_a_dict_model(layout: Layout) -> None:
    run_state_machine_as_test(
        _machine(layout), settings=settings(max_examples=25, stateful_step_count=25, deadline=None)
    )
