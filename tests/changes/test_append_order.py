"""Scope.append: keys filled at commit with the commit's place in the change log,
so a scope's appended keys are in commit order: on every engine, from several
processes at once (strictly increasing, none twice), inside transactions, and
never for a transaction that does not commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_keyspace, four_appenders
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidArgument
from keyspace.schemes import LengthPrefixed, Sublevel
from keyspace.tuples import Versionstamp

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_appended_keys_follow_the_commit_order(engine: str) -> None:
    with engine_keyspace(engine) as ks:
        log = ks.scope("log")
        first = log.append(b"a")
        with ks.transaction() as tx:
            inside = [tx.scope("log").append(b"b"), tx.scope("log").append(b"c")]
            assert [s.is_complete() for s in inside] == [False, False]
            tx.scope("other")[b"k"] = b"v"
        with pytest.raises(LookupError), ks.transaction() as tx:
            tx.scope("log").append(b"never")
            raise LookupError
        last = log.append(b"d")
        assert isinstance(first, Versionstamp) and first.is_complete() and first < last
        assert list(log.values()) == [b"a", b"b", b"c", b"d"]
        keys = list(log.keys())
        assert keys == sorted(keys) and keys[0] == first and keys[-1] == last
        assert [k.user_version for k in keys] == [0, 0, 1, 0]  # the two of one commit share its number
        assert keys[1].tr_version == keys[2].tr_version


@settings(max_examples=40)
@given(steps=st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=20))
def test_appends_in_any_mix_of_commits_come_back_in_that_order(steps: list[tuple[int, bool]]) -> None:
    with engine_keyspace("sqlite") as ks:
        expected: list[bytes] = []
        for n, in_tx in steps:
            values = [b"%d" % (len(expected) + i) for i in range(n)]
            if in_tx:
                with ks.transaction() as tx:
                    for v in values:
                        tx.scope("log").append(v)
            else:
                for v in values:
                    ks.scope("log").append(v)
            expected += values
        assert list(ks.scope("log").values()) == expected


@pytest.mark.parametrize("scheme", [Sublevel(), LengthPrefixed()])
def test_byte_schemes_append_the_versionstamps_bytes(scheme: object, tmp_path: Path) -> None:
    with keyspace.open(f"lmdb:///{tmp_path / 'db'}", scheme=scheme, changes=True) as ks:
        log = ks.scope("log")
        stamps = [log.append(b"%d" % i) for i in range(3)]
        assert list(log.keys()) == [s.to_bytes() for s in stamps]


@pytest.mark.parametrize("options", [{}, {"ttl": True}])
@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_append_needs_the_change_log(tmp_path: Path, engine: str, options: dict[str, Any]) -> None:
    url = "memory:" if engine == "memory" else f"{engine}:///{tmp_path / 'db'}"
    with keyspace.open(url, **options) as ks:
        with pytest.raises(InvalidArgument, match="changes=True"):
            ks.scope("log").append(b"x")
        with pytest.raises(InvalidArgument, match="changes=True"), ks.transaction() as tx:
            tx.scope("log").append(b"x")
        assert list(ks.scope("log").items()) == []


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_four_processes_appending_at_once_get_strictly_increasing_keys(engine: str, tmp_path: Path) -> None:
    url = f"{engine}:///{tmp_path / 'db'}"
    with keyspace.open(url, changes=True) as ks:
        ks.scope("log")[b"\x00"] = b"first"  # the store and its records exist before the race
        ks.scope("log").discard(b"\x00")
    four_appenders(url, 300, timeout=120)
