"""Expiring keys (``ttl=True``): no read returns a key at or after its deadline.

A Hypothesis state machine over puts with and without ``ttl``, deletes,
transactions, clock advances (a fake clock), sweeps and reopening, on the
memory store, LMDB, SQLite, LevelDB and RocksDB, with accounting and the change log on: after
every step every read path (point reads, ``in``, scans either way with limits,
keys, ``len``, the children listing, a snapshot's, a transaction's) equals a
model that hides the keys whose deadline has passed; a sweep deletes exactly
the expired keys left, at most its limit; the accounting counters equal a
recount."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import keyspace
from keyspace import _expiry
from keyspace._accounting import accounting_of

KEYS = [b"", b"a", b"ab", b"b", b"c\x00", b"d"]
SCOPES = [("t", "x"), ("t", "y")]
TTLS = [0.25, 0.5, 1.0, 2.0, 3.75]


def _micros(seconds: float) -> int:
    return int(seconds * 1_000_000)  # the machine's times are exact in binary


class ExpiryMachine(RuleBasedStateMachine):
    engine = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0
        self._saved = _expiry.clock
        _expiry.clock = lambda: self.now
        self.dir = tempfile.mkdtemp(prefix="ks-ttl-")
        self.url = "memory:" if self.engine == "memory" else f"{self.engine}:///{self.dir}/db"
        self.ks = keyspace.open(self.url, ttl=True, accounting=True, changes=True)
        # model: (scope, key) -> (value, deadline in microseconds or None)
        self.model: dict[tuple[tuple[str, str], bytes], tuple[bytes, int | None]] = {}
        self.counter = 0

    def teardown(self) -> None:
        self.ks.close()
        _expiry.clock = self._saved
        shutil.rmtree(self.dir, ignore_errors=True)

    def _value(self) -> bytes:
        self.counter += 1
        return b"v%d" % self.counter

    def _visible(self, path: tuple[str, str]) -> dict[bytes, bytes]:
        now = _micros(self.now)
        return {k: v for (p, k), (v, d) in self.model.items() if p == path and (d is None or d > now)}

    def _write(self, scope: Any, path: tuple[str, str], op: tuple[str, bytes, float | None]) -> None:
        kind, key, ttl = op
        if kind == "delete":
            scope.discard(key)
            self.model.pop((path, key), None)
            return
        value = self._value()
        scope.put(key, value, ttl=ttl)
        self.model[(path, key)] = (value, None if ttl is None else _micros(self.now + ttl))

    ops = st.tuples(
        st.sampled_from(["put", "put", "delete"]), st.sampled_from(KEYS), st.none() | st.sampled_from(TTLS)
    )

    @rule(path=st.sampled_from(SCOPES), op=ops)
    def write(self, path: tuple[str, str], op: tuple[str, bytes, float | None]) -> None:
        self._write(self.ks.scope(*path), path, op)

    @rule(batch=st.lists(st.tuples(st.sampled_from(SCOPES), ops), min_size=1, max_size=5))
    def transaction(self, batch: list[tuple[tuple[str, str], tuple[str, bytes, float | None]]]) -> None:
        with self.ks.transaction() as tx:
            for path, op in batch:
                self._write(tx.scope(*path), path, op)
                self._check_view(tx, path)  # the transaction's reads, its own writes included

    @rule(path=st.sampled_from(SCOPES))
    def clear(self, path: tuple[str, str]) -> None:
        self.ks.scope(*path).clear()
        for key in [k for k in self.model if k[0] == path]:
            del self.model[key]

    @rule(quarters=st.integers(1, 12))
    def advance(self, quarters: int) -> None:
        self.now += quarters / 4

    @rule(limit=st.integers(0, 6))
    def sweep(self, limit: int) -> None:
        now = _micros(self.now)
        inner = self.ks.store.inner
        left = [
            (p, k)
            for (p, k), (_, d) in self.model.items()
            if d is not None and d <= now and inner.get(self.ks.scope(*p)._stored(k)) is not None
        ]
        swept = self.ks.expire(limit)
        assert swept == min(limit, len(left))

    @precondition(lambda self: self.engine != "memory" and self.counter > 0)  # a put made the records
    @rule()
    def reopen(self) -> None:
        self.ks.close()
        self.ks = keyspace.open(self.url)  # the recorded features: ttl, accounting, changes

    # -- the reads -----------------------------------------------------------------------

    def _check_view(self, view: Any, path: tuple[str, str]) -> None:
        want = self._visible(path)
        scope = view.scope(*path)
        ordered = sorted(want.items())
        assert list(scope.items()) == ordered
        assert list(scope.items(reverse=True)) == ordered[::-1]
        for limit in (1, 2):
            assert list(scope.items(limit=limit)) == ordered[:limit]
            assert list(scope.items(reverse=True, limit=limit)) == ordered[::-1][:limit]
        assert list(scope.keys()) == [k for k, _ in ordered]
        assert list(scope.items(start=b"a", stop=b"c")) == [kv for kv in ordered if b"a" <= kv[0] < b"c"]
        assert len(scope) == len(want)  # the accounting counter, less the expired keys
        assert sum(scope._data.count(lo, hi) for lo, hi in scope._ranges) == len(want)  # the view's count
        for key in KEYS:
            assert scope.get(key) == want.get(key)
            assert (key in scope) == (key in want)
        children = {p[1] for p in SCOPES if self._visible(p)}
        assert sorted(view.scope("t").scopes()) == sorted(children)

    def _check_subtree(self, view: Any) -> None:
        want = sorted((p, k, v) for p in SCOPES for k, v in self._visible(p).items())
        assert sorted(view.scope("t").subtree()) == want
        assert bool(view.scope("t", "x")) == bool(self._visible(("t", "x")))

    @invariant()
    def reads_match_the_model(self) -> None:
        for path in SCOPES:
            self._check_view(self.ks, path)
        self._check_subtree(self.ks)
        with self.ks.snapshot() as snap:
            for path in SCOPES:
                self._check_view(snap, path)
            self._check_subtree(snap)

    @invariant()
    def counters_match_a_recount(self) -> None:
        counts = accounting_of(self.ks.store)
        assert counts is not None
        with self.ks.store.inner.snapshot() as view:
            assert counts.differences(view) == []


_SETTINGS = settings(
    max_examples=20,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite", "leveldb", "rocksdb"])
def test_no_read_returns_a_key_after_its_deadline(engine: str) -> None:
    machine = type(f"ExpiryMachine_{engine}", (ExpiryMachine,), {"engine": engine})
    machine.TestCase.settings = _SETTINGS
    machine.TestCase().runTest()
