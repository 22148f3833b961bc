"""The loop that runs again a step the library owns (keyspace._retry) can be
bounded in time as well as in runs: no run begins once ``seconds`` have passed
since the first began, and the conflict it then raises names the runs made."""

from __future__ import annotations

import re
import time
from contextlib import nullcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace._retry import retry_conflicts, run_atomically
from keyspace.errors import TransactionConflict


def test_no_run_begins_after_the_time_bound() -> None:
    starts: list[float] = []

    def lose() -> None:
        starts.append(time.monotonic())
        time.sleep(0.02)
        raise TransactionConflict("lost")

    with pytest.raises(TransactionConflict) as info:
        retry_conflicts(lose, "an owned step", attempts=1000, seconds=0.5)
    # 0.5 s of 0.02 s runs: more than one run on a loaded machine, far fewer than 1000
    assert 2 <= len(starts) <= 26
    assert all(s - starts[0] < 0.5 for s in starts)
    assert f"{len(starts)} times in a row" in str(info.value)


@settings(max_examples=30, deadline=None)
@given(attempts=st.integers(1, 12), wins_at=st.integers(1, 15))
def test_run_atomically_makes_at_most_its_runs_with_a_time_bound(attempts: int, wins_at: int) -> None:
    runs: list[int] = []

    def step(_view: None) -> int:
        runs.append(1)
        if len(runs) < wins_at:
            raise TransactionConflict("lost")
        return len(runs)

    if wins_at <= attempts:
        assert run_atomically(nullcontext, step, "a step", attempts, seconds=60.0) == wins_at
    else:
        with pytest.raises(TransactionConflict, match=re.escape(f"{attempts} times in a row")):
            run_atomically(nullcontext, step, "a step", attempts, seconds=60.0)
        assert len(runs) == attempts
