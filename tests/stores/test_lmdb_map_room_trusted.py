"""A write transaction on LMDB begins by knowing whether the map has
``FAST_HEADROOM`` free; it asks LMDB (``env.info()``) only when its last answer
may be out of date: an answer that left ``m`` bytes to spare holds for
``m / MAP_WRITE_RATE`` seconds, no writer being able to take the map up faster.
A small map is measured by every transaction, as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.stores.lmdb import LMDBStore
from keyspace.stores.lmdb import _growth as _lmdb_growth


class CountingEnv:
    """The store's LMDB environment, counting ``info()`` calls."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.infos = 0

    def info(self) -> Any:
        self.infos += 1
        return self.env.info()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


def _counted(store: LMDBStore) -> CountingEnv:
    counting = CountingEnv(store._env)
    store._env = counting
    return counting


def _close(store: LMDBStore, counting: CountingEnv) -> None:
    store._env = counting.env
    store.close()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_roomy_map_is_measured_once_for_many_transactions(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db", sync=False)  # the default map: 1 TiB
    counting = _counted(store)
    try:
        for i in range(200):
            with store.transaction() as tx:
                assert tx.fast_replace is not None
                tx.put(b"k%d" % i, b"v")
        assert counting.infos <= 1  # was two info() calls (and a stat()) per transaction
        assert store.get(b"k199") == b"v"
    finally:
        _close(store, counting)


def test_the_answer_is_trusted_for_the_time_the_spare_room_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(_lmdb_growth, "monotonic", clock)
    store = LMDBStore(tmp_path / "db", sync=False)
    counting = _counted(store)
    try:
        with store.transaction() as tx:
            tx.put(b"a", b"1")
        asked = counting.infos
        assert asked == 1
        until = store._shared.roomy_until
        info = counting.env.info()
        used = (info["last_pgno"] + 1) * counting.env.stat()["psize"]
        spare = min(info["map_size"] - used - _lmdb_growth.FAST_HEADROOM, info["map_size"] // 2 - used)
        assert until == pytest.approx(clock.now + spare / _lmdb_growth.MAP_WRITE_RATE)
        clock.now = until - 1e-3
        with store.transaction() as tx:
            tx.put(b"b", b"2")
        assert counting.infos == asked  # still trusted
        clock.now = until
        with store.transaction() as tx:
            tx.put(b"c", b"3")
        assert counting.infos == asked + 1  # measured again
    finally:
        _close(store, counting)


def test_a_small_map_is_measured_by_every_transaction(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db", sync=False, map_size=1 << 20)  # under FAST_HEADROOM free
    counting = _counted(store)
    try:
        for i in range(20):
            with store.transaction() as tx:
                assert tx.fast_replace is None  # a replay log: the map may have to grow
                tx.put(b"k%d" % i, b"v" * 100)
        assert counting.infos == 20
    finally:
        _close(store, counting)


def test_a_headroom_set_at_run_time_is_measured_against(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LMDBStore(tmp_path / "db", sync=False)
    counting = _counted(store)
    try:
        with store.transaction() as tx:
            assert tx.fast_replace is not None
        monkeypatch.setattr(_lmdb_growth, "FAST_HEADROOM", 1 << 62)  # more than the map holds
        with store.transaction() as tx:
            assert tx.fast_replace is None  # the trusted answer was for another headroom
    finally:
        _close(store, counting)


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 40), st.floats(1.0, 3.0)),
        min_size=1,
        max_size=25,
    )
)
def test_a_trusted_answer_is_the_answer_lmdb_would_give(steps: list[tuple[int, float]]) -> None:
    """With a write rate bound of 1 MiB/s and a fast-path headroom of 256 KiB on a
    map of 4 MiB, transactions of random sizes, the clock advancing by at least
    the time the map's growth takes at that rate: every transaction that did not
    measure the map took the fast path, and measuring would have said so too."""
    import tempfile

    clock = Clock()
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as d:
        patch.setattr(_lmdb_growth, "monotonic", clock)
        patch.setattr(_lmdb_growth, "MAP_WRITE_RATE", 1 << 20)
        patch.setattr(_lmdb_growth, "FAST_HEADROOM", 256 << 10)
        store = LMDBStore(Path(d) / "db", sync=False, map_size=4 << 20)
        counting = _counted(store)
        psize = counting.env.stat()["psize"]
        try:
            n = 0
            for count, slack in steps:
                info = counting.env.info()
                size, used = info["map_size"], (info["last_pgno"] + 1) * psize
                exact = used <= size // 2 and size - used >= _lmdb_growth.FAST_HEADROOM
                asked = counting.infos
                with store.transaction() as tx:
                    fast = tx.fast_replace is not None
                    for _ in range(count):
                        tx.put(b"k%06d" % n, b"v" * 1000)
                        n += 1
                if counting.infos == asked:  # trusted, not measured
                    assert fast and exact
                after = (counting.env.info()["last_pgno"] + 1) * psize
                clock.now += slack * max(after - used, 0) / _lmdb_growth.MAP_WRITE_RATE + 1e-9
            assert store.get(b"k%06d" % (n - 1)) in (None, b"v" * 1000)
        finally:
            _close(store, counting)
