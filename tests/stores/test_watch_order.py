"""The memory store's watch while several threads write: every event once, in
revision order, and replaying the events ends on what the store holds.

The store's event contract ("in revision order, each exactly once") holds only
if a write applies its change, takes its revision and queues its events as one
step: two threads writing one key would otherwise apply in one order and report
in another. The thread switch interval is cut to a microsecond while the writers
run, so that the interpreter switches threads inside a write often enough for a
wrong order to show within a few trials.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import WatchEvent

TRIALS = 10
THREADS = 4
WRITES = 1000
"""Writes per thread per trial, all to one key."""
REPEAT = 20
"""How many times each thread of the property test runs its drawn operations."""
JOIN_S = 30


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Threads switch every microsecond (the default is 5 ms) while the test runs."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _run_threads(targets: list[Callable[[], None]]) -> None:
    """Run ``targets`` in threads at once; fails on a writer's exception or one
    still running after :data:`JOIN_S` seconds."""
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_S)
    assert not any(t.is_alive() for t in threads), f"a writer was still running after {JOIN_S} s"
    assert not errors, f"a writer failed: {errors[0]!r}"


def _events(watch: keyspace.ScopeWatch, count: int) -> list[WatchEvent]:
    """The ``count`` events the writers made (every one is queued before the
    writers end), then checks that no other is queued."""
    out = []
    for _ in range(count):
        event = watch.get(5)
        assert event is not None, f"only {len(out)} of {count} events came"
        out.append(event)
    assert watch.get(0) is None
    return out


def _writer(scope: keyspace.Scope, name: str) -> Callable[[], None]:
    def run() -> None:
        for i in range(WRITES):
            scope[b"k"] = f"{name}{i}".encode()

    return run


def _one_key_trial(trial: int) -> None:
    ks = keyspace.open("memory:")
    try:
        scope = ks.scope("w")
        scope[b"k"] = b"start"
        names = "abcdefgh"[:THREADS]
        with scope.watch() as watch:
            _run_threads([_writer(scope, name) for name in names])
            events = _events(watch, THREADS * WRITES)
        revisions = [e.revision for e in events]
        late = [(a, b) for a, b in itertools.pairwise(revisions) if b <= a]
        assert not late, f"trial {trial}: events out of revision order, e.g. {late[:3]}"
        assert events[-1].value == scope[b"k"], (
            f"trial {trial}: the last event says {events[-1].value!r}, the store holds {scope[b'k']!r}"
        )
        for name in names:  # one thread's writes keep their own order too
            mine = [e.value for e in events if e.value.startswith(name.encode())]
            assert mine == [f"{name}{i}".encode() for i in range(WRITES)]
    finally:
        ks.close()


def test_threads_writing_one_key_are_reported_in_the_order_applied(fast_switching: None) -> None:
    for trial in range(TRIALS):
        _one_key_trial(trial)


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "delete", "batch", "clear"]),
        st.sampled_from([b"a", b"b", b"c"]),
        st.binary(min_size=1, max_size=3),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(per_thread=st.lists(_OPS, min_size=2, max_size=3))
def test_replaying_the_events_of_concurrent_writers_gives_the_store(
    fast_switching: None, per_thread: list[list[tuple[str, bytes, bytes]]]
) -> None:
    """Threads put, delete, write batches and clear a few keys of one scope (each
    its drawn operations :data:`REPEAT` times): the
    events' revisions never go back (one atomic write's events share one), and
    applying the events in order to the state before the watch gives the scope's
    items afterwards."""
    ks = keyspace.open("memory:")
    try:
        scope = ks.scope("p")
        scope[b"a"] = b"0"
        before = dict(scope.items())
        with scope.watch() as watch:

            def writer(ops: list[tuple[str, bytes, bytes]]) -> Callable[[], None]:
                def run() -> None:
                    for kind, key, value in ops * REPEAT:
                        if kind == "put":
                            scope[key] = value
                        elif kind == "delete":
                            scope.pop(key, None)
                        elif kind == "batch":
                            with ks.transaction():
                                scope[key] = value
                                scope[key + b"+"] = value
                        else:
                            scope.clear()

                return run

            _run_threads([writer(ops) for ops in per_thread])
            after = dict(scope.items())
            events = []
            while (event := watch.get(0)) is not None:
                events.append(event)
        revisions = [e.revision for e in events]
        assert revisions == sorted(revisions)
        state = dict(before)
        for event in events:
            if event.kind == "put":
                state[event.key] = event.value
            else:
                assert event.key in state, f"a delete of {event.key!r}, which the events never put"
                del state[event.key]
        assert state == after
    finally:
        ks.close()
