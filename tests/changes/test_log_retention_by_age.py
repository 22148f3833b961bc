"""The change log bounded by age (``changes={"max_age": S}``): a commit older
than ``S`` seconds goes at a trim (whole, every 32 commits), a younger one is
kept, and each bound (commits, entries, age) trims what it alone would; on
every engine with a log, the commit times read from a clock the test sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from _changes_engines import ENGINES, engine_url

import keyspace
from keyspace import _changes
from keyspace._changes import TRIM_EVERY, ChangeLog

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]
SECOND = 1_000_000_000


def _log(ks: keyspace.Keyspace) -> ChangeLog:
    hook = ks.store.hook("changes")  # type: ignore[attr-defined]
    assert isinstance(hook, ChangeLog)
    return hook


class _Clock:
    """``time.time_ns`` as the change log reads it: ``now`` nanoseconds."""

    def __init__(self) -> None:
        self.now = 1_700_000_000 * SECOND

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def log_clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(_changes.time, "time_ns", fake)
    return fake


@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_commits_older_than_the_age_go_and_younger_ones_stay(
    tmp_path: Path, log_clock: _Clock, engine: str
) -> None:
    with keyspace.open(engine_url(engine, str(tmp_path)), changes={"retention": None, "max_age": 10}) as ks:
        log = _log(ks)
        times: dict[int, int] = {}
        for n in range(6 * TRIM_EVERY):
            log_clock.now += SECOND  # a commit a second
            ks.scope("t")[b"%d" % n] = b"v"
            times[log.last()] = log_clock.now
            last, trimmed = log.last(), log.trimmed()
            young = [seq for seq, at in times.items() if at >= log_clock.now - 10 * SECOND]
            assert trimmed < min(young)  # no commit of the last ten seconds trimmed
            # and none older kept past the next trim: the commits of ten seconds and of one cadence
            assert last - trimmed <= 11 + TRIM_EVERY, (n, last - trimmed)
        assert trimmed > 0
        upto, entries = log.read_since(trimmed)
        assert upto == last and len(entries) == last - trimmed


def test_each_bound_trims_what_it_alone_would(tmp_path: Path, log_clock: _Clock) -> None:
    """Commits a minute apart under a bound of an hour of age and of 10 commits:
    the commit bound trims; commits a second apart under an age of 5 seconds and
    a retention of 1,000 commits: the age trims."""
    url = f"lmdb:///{tmp_path / 'a'}"
    with keyspace.open(url, changes={"retention": 10, "max_age": 3600}) as ks:
        for n in range(3 * TRIM_EVERY):
            log_clock.now += 60 * SECOND
            ks.scope("t")[b"%d" % n] = b"v"
        log = _log(ks)
        assert log.last() - log.trimmed() <= 10 + TRIM_EVERY
    url = f"lmdb:///{tmp_path / 'b'}"
    with keyspace.open(url, changes={"retention": 1000, "max_age": 5}) as ks:
        for n in range(3 * TRIM_EVERY):
            log_clock.now += SECOND
            ks.scope("t")[b"%d" % n] = b"v"
        log = _log(ks)
        assert log.last() - log.trimmed() <= 6 + TRIM_EVERY
