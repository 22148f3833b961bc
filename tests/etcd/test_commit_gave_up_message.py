"""The error of an etcd commit that never got an answer says what was tried: how
many sends, over how long, and which bound stopped it (``max_attempts`` or the
retry budget). It said "the etcd cluster gave no answer within 15.0 s" also when
``max_attempts`` stopped it after one send of a few milliseconds.

The commit's steps (:func:`commit_steps`) are driven here as a client drives
them, every call answered with :class:`EtcdUnavailable` and the sleeps taken, so
no cluster is needed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import CommitOutcomeUnknown, EtcdUnavailable
from keyspace.stores.etcd._plan import Call, Step, commit_plan, commit_steps

SNAPSHOT = 7


def _steps(max_attempts: int, retry_budget: float) -> Generator[Step, Any, None]:
    plan = commit_plan(b"p/", [], [(b"k", b"v")])
    assert plan is not None
    request = plan.request({}, [], SNAPSHOT, lambda: True, [])
    return commit_steps(
        plan,
        request,
        SNAPSHOT,
        max_attempts=max_attempts,
        retry_budget=retry_budget,
        budget_end=time.monotonic() + retry_budget,
    )


def _drive_unanswered(steps: Generator[Step, Any, None]) -> tuple[CommitOutcomeUnknown, int, float]:
    """Drive ``steps``, every call failing; the error they end with, the number of
    commit sends, and the seconds taken."""
    started = time.monotonic()
    sends = 0
    step = next(steps)
    while True:
        try:
            if isinstance(step, Call):
                sends += step.what == "commit"
                step = steps.throw(EtcdUnavailable(f"{step.what}: etcd cluster unavailable"))
            else:
                time.sleep(step.seconds)
                step = steps.send(None)
        except CommitOutcomeUnknown as exc:
            return exc, sends, time.monotonic() - started


@settings(max_examples=10, deadline=None)
@given(max_attempts=st.integers(min_value=1, max_value=4), retry_budget=st.sampled_from([0.05, 0.3, 15.0]))
def test_the_message_claims_only_the_sends_and_the_time_taken(max_attempts: int, retry_budget: float) -> None:
    error, sends, took = _drive_unanswered(_steps(max_attempts, retry_budget))
    text = str(error)
    found = re.search(r"no answer to (\d+) sends of the commit in ([0-9.]+) s \((.*?)\)", text)
    assert found is not None, text
    assert int(found.group(1)) == sends
    assert float(found.group(2)) <= took + 0.05, (took, text)
    if "max_attempts" in found.group(3):
        assert found.group(3) == f"max_attempts={max_attempts} reached"
    else:
        assert found.group(3) == f"retry_budget={retry_budget} s left no time for another attempt"
        assert took >= retry_budget - 1.5, (took, text)  # less the pause (at most 1.5 s) that would pass it
    assert isinstance(error.__cause__, EtcdUnavailable)


def test_one_attempt_does_not_claim_the_budget() -> None:
    error, sends, took = _drive_unanswered(_steps(1, 15.0))
    assert sends == 1 and took < 5
    assert "15.0 s" not in str(error).split("(")[0]
    assert "max_attempts=1 reached" in str(error)


def test_a_spent_budget_is_named() -> None:
    error, _sends, _took = _drive_unanswered(_steps(60, 0.3))
    assert "retry_budget=0.3 s left no time for another attempt" in str(error)


@pytest.mark.parametrize("max_attempts", [1, 2])
def test_the_outcome_stays_unknown(max_attempts: int) -> None:
    error, _, _ = _drive_unanswered(_steps(max_attempts, 15.0))
    assert "may or may not have been applied" in str(error)
