"""A count of the unnamed database whose keys may be records of named databases
(no NUL byte in them: every Sublevel key) reads their values once per state of
the environment: a range found holding no record in one read transaction is
counted from its keys alone in every later read transaction of the same state,
and read again, values and all, once any commit moved the state (another
program may have made a named database there)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace.stores.lmdb._keys as lmdb_keys
from keyspace.stores import LMDBStore, keys_in
from keyspace.stores.lmdb._records import RECORD_SIZE

_MAKE_DATABASE = """
import sys, lmdb
env = lmdb.open(sys.argv[1], max_dbs=4)
with env.begin(write=True) as txn:
    db = env.open_db(sys.argv[2].encode(), txn=txn)
    txn.put(b"inside", b"x", db=db)
env.close()
"""


def _value_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a count reads items (values) to tell
    LMDB's records from data."""
    calls: list[int] = []
    pages = lmdb_keys.cursor_pages

    def counted(*args: Any, **kwargs: Any) -> Iterator[list[tuple[bytes, bytes]]]:
        calls.append(1)
        return pages(*args, **kwargs)

    monkeypatch.setattr(lmdb_keys, "cursor_pages", counted)
    return calls


def _recount(store: LMDBStore, start: bytes, stop: bytes | None, names: set[bytes]) -> int:
    """The data keys of ``[start, stop)``: py-lmdb's keys less the named databases ``names``."""
    with store._env.begin() as txn:
        keys = list(txn.cursor().iternext(values=False))
    return sum(1 for k in keys if k >= start and (stop is None or k < stop) and k not in names)


def test_a_range_counted_again_in_one_state_reads_no_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LMDBStore(tmp_path) as store:
        store.write([(b"!t!k%04d" % i, b"v") for i in range(300)])
        reads = _value_reads(monkeypatch)
        assert store.count(b"!t!", b"!t\x22") == 300
        assert len(reads) == 1  # every key may be a record: values read once
        for _ in range(3):
            assert store.count(b"!t!", b"!t\x22") == 300
            with store.snapshot() as snap:
                assert snap.count(b"!t!", b"!t\x22") == 300
        assert len(reads) == 1
        assert store.count(b"!t!", b"!t\x22", (0, 3)) == 300  # the same range: known
        assert len(reads) == 1
        store.put(b"!t!new", b"v")  # a commit: the next count reads values again
        assert store.count(b"!t!", b"!t\x22") == 301
        assert len(reads) == 2


def test_a_range_of_keys_that_cannot_be_records_is_tested_once_per_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys holding a NUL byte (every tuple-scheme key) are never records: a count
    of a range whose bounds do not say so finds none among them in one C pass a
    chunk, and counted again in the same state it makes no such pass at all."""
    passes: list[int] = []
    candidates = lmdb_keys.name_candidates

    def counted(*args: Any) -> list[int]:
        passes.append(1)
        return candidates(*args)

    monkeypatch.setattr(lmdb_keys, "name_candidates", counted)
    with LMDBStore(tmp_path) as store:
        store.write([(b"t\x00k%04d" % i, b"v") for i in range(3000)])
        assert store.count(b"t", b"u") == 3000
        first = len(passes)
        assert first >= 2  # a pass a chunk: 64, 256, 1024, ... keys
        for _ in range(3):
            assert store.count(b"t", b"u") == 3000
            with store.snapshot() as snap:
                assert snap.count(b"t", b"u") == 3000
        assert len(passes) == first
        store.put(b"t\x00new", b"v")  # a commit: tested again
        assert store.count(b"t", b"u") == 3001
        assert len(passes) > first


def test_a_database_another_process_makes_in_a_counted_range_is_not_counted(tmp_path: Path) -> None:
    with LMDBStore(tmp_path) as store:
        store.write([(b"k%03d" % i, b"v" * RECORD_SIZE) for i in range(100)])
        assert store.count(b"k", b"l") == 100
        assert store.count(b"k", b"l") == 100  # remembered for this state
        subprocess.run([sys.executable, "-c", _MAKE_DATABASE, str(tmp_path), "k050x"], check=True, timeout=60)
        assert store.databases() == ["k050x"]
        assert store.count(b"k", b"l") == 100  # its record is no data
        with store.snapshot() as snap:
            assert snap.count(b"k", b"l") == 100
            assert list(keys_in(snap, b"k050", b"k051")) == [b"k050"]


def test_a_range_holding_a_record_is_told_again_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LMDBStore(tmp_path, db="inner") as inner:
        inner.put(b"x", b"y")
    with LMDBStore(tmp_path) as store:
        store.write([(b"h%02d" % i, b"v") for i in range(30)])
        reads = _value_reads(monkeypatch)
        for _ in range(3):
            assert store.count(b"a", b"z") == 30  # "inner" lies in the range: never counted
        assert len(reads) == 3


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("count"), st.binary(max_size=2), st.one_of(st.none(), st.binary(max_size=2))),
        st.tuples(
            st.just("put"), st.binary(min_size=1, max_size=3), st.sampled_from([b"v", b"r" * RECORD_SIZE])
        ),
        st.tuples(st.just("database"), st.binary(min_size=1, max_size=3).filter(lambda b: b"\x00" not in b)),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_counts_equal_a_recount_whatever_was_counted_before(tmp_path_factory: Any, ops: list[Any]) -> None:
    path = tmp_path_factory.mktemp("env")
    with LMDBStore(path, max_dbs=8) as store:
        env = store._env  # databases made on the environment directly: as another program does
        names: set[bytes] = set()
        for op in ops:
            if op[0] == "put":
                if op[1] not in names:
                    store.put(op[1], op[2])
            elif op[0] == "database":
                with env.begin(write=True) as txn:
                    if txn.get(op[1]) is None and len(names) < 8:  # each takes one of max_dbs's slots
                        env.open_db(op[1], txn=txn)
                        names.add(op[1])
            else:
                start, stop = op[1], op[2]
                if stop is not None and stop <= start:
                    continue
                expected = _recount(store, start, stop, names)
                assert store.count(start, stop) == expected
                assert store.count(start, stop) == expected
                with store.snapshot() as snap:
                    assert snap.count(start, stop) == expected
