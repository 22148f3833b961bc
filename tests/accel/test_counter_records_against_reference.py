"""The C update of accounting's counter records
(``keyspace._counter_records_accel.bump``) against its pure-Python reference
(``python_bump``): for any records there before (none, a record with or
without quotas, one that is not 48 bytes) and any rows of deltas, both make
the same gets, puts and deletes and give the same answer (written, a quota
passed, a record unreadable); an engine error passes through raw; the C
function holds no reference after its calls."""

from __future__ import annotations

from typing import Any

import pytest
from _leaks import holds_nothing
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import _counter_records
from keyspace._counter_records import NONE, RECORD, python_bump

BUMPS: list[Any] = (
    [python_bump] if _counter_records.bump is python_bump else [_counter_records.bump, python_bump]
)
_KEYS = [b"r0", b"r1", b"r2"]


class Engine:
    """A dict with get, put and delete, a log of the calls, and a key that fails."""

    def __init__(self, records: dict[bytes, bytes]) -> None:
        self.records = dict(records)
        self.calls: list[tuple[Any, ...]] = []

    def get(self, key: bytes) -> bytes | None:
        if key == b"broken":
            raise OSError("the engine failed")
        self.calls.append(("get", key))
        return self.records.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.calls.append(("put", key, value))
        self.records[key] = value

    def delete(self, key: bytes) -> None:
        self.calls.append(("delete", key))
        self.records.pop(key, None)


_small = st.integers(min_value=-50, max_value=50)
_record = st.one_of(
    st.tuples(
        _small, _small, _small, _small, st.sampled_from([NONE, 0, 3, 20]), st.sampled_from([NONE, 0, 40, 200])
    ).map(lambda r: RECORD.pack(*r)),
    st.binary(max_size=60).filter(lambda b: len(b) != RECORD.size),
)
_rows = st.lists(
    st.tuples(st.sampled_from(_KEYS), _small, _small, _small, _small).map(
        lambda r: ((r[0].decode(),), r[0], r[1], r[2], r[3], r[4])
    ),
    max_size=5,
)


@settings(max_examples=400, deadline=None)
@given(
    before=st.dictionaries(st.sampled_from(_KEYS), _record, max_size=3),
    rows=_rows,
    check=st.booleans(),
)
def test_c_and_reference_make_the_same_calls_and_answer(
    before: dict[bytes, bytes], rows: list[Any], check: bool
) -> None:
    results = []
    for bump in BUMPS:
        engine = Engine(before)
        answer = bump(engine.get, engine.put, engine.delete, rows, check)
        results.append((answer, engine.calls, engine.records))
    assert all(r == results[0] for r in results)
    answer, _, records = results[0]
    if answer is None:  # every row added: a record it left all zero with no quota is gone
        for key in {row[1] for row in rows} & set(records):
            fields = RECORD.unpack(records[key])
            assert any(fields[:4]) or fields[4] != NONE or fields[5] != NONE, key


@pytest.mark.parametrize("bump", BUMPS, ids=lambda f: f.__module__)
def test_a_quota_passed_is_answered_and_its_record_not_written(bump: Any) -> None:
    engine = Engine({b"r0": RECORD.pack(1, 10, 2, 20, 2, NONE)})
    rows = [(("a",), b"r0", 1, 5, 1, 5)]
    assert bump(engine.get, engine.put, engine.delete, rows, True) == ("keys", 0, 2, 3)
    assert engine.records[b"r0"] == RECORD.pack(1, 10, 2, 20, 2, NONE)
    assert bump(engine.get, engine.put, engine.delete, rows, False) is None  # unchecked: written
    assert RECORD.unpack(engine.records[b"r0"])[:4] == (2, 15, 3, 25)


@pytest.mark.parametrize("bump", BUMPS, ids=lambda f: f.__module__)
def test_an_engine_error_passes_through(bump: Any) -> None:
    engine = Engine({})
    with pytest.raises(OSError, match="the engine failed"):
        bump(engine.get, engine.put, engine.delete, [((), b"broken", 1, 1, 1, 1)], True)


def test_the_c_function_is_the_one_used_where_built() -> None:
    try:
        from keyspace._counter_records_accel import bump
    except ImportError:  # pragma: no cover - built without a C compiler
        pytest.skip("keyspace._counter_records_accel was not built")
    assert _counter_records.bump is bump


@pytest.mark.skipif(
    _counter_records.bump is python_bump, reason="keyspace._counter_records_accel was not built"
)
def test_the_c_function_holds_nothing_after_its_calls() -> None:
    key = b"r-" + bytes(range(30))
    rows = [((), key, 1, 5, 1, 5)]
    records: dict[bytes, bytes] = {}

    def one() -> None:
        _counter_records.bump(records.get, records.__setitem__, records.pop, rows, True)
        _counter_records.bump(records.get, records.__setitem__, records.pop, [((), b"bad", 1, 1, 1, 1)], True)
        records[b"bad"] = b"short"

    assert holds_nothing(one, key)
