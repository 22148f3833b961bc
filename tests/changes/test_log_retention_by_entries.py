"""The change log bounded by entries (``changes={"max_entries": E}``): it keeps
whole commits, at least the latest ``E`` entries and those of fewer than
``2 * TRIM_EVERY`` commits more, on every engine with a log; the bound is
recorded like the others, a store recorded without it is left as it was, bad
values are refused by name, and a feed behind it gets a named error."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from _changes_engines import ENGINES, engine_url
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace._changes import DEFAULT_RETENTION, TRIM_EVERY, ChangeLog
from keyspace.errors import FeedBehind, InvalidArgument
from keyspace.stores import keys_in

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


def _log(ks: keyspace.Keyspace) -> ChangeLog:
    hook = ks.store.hook("changes")  # type: ignore[attr-defined]
    assert isinstance(hook, ChangeLog)
    return hook


def _commits_needed(sizes: list[int], max_entries: int) -> int:
    """How many of the latest commits hold the latest ``max_entries`` entries."""
    held = 0
    for n, size in enumerate(reversed(sizes), 1):
        held += size
        if held >= max_entries:
            return n
    return len(sizes)


def _check_bounds(url: str, sizes: list[int], max_entries: int) -> None:
    """Commits of ``sizes`` distinct keys each; after every one the log holds
    every commit after its trimmed mark, at least the latest ``max_entries``
    entries, fewer than ``2 * TRIM_EVERY`` commits more than those need, and
    no mark of a commit trimmed."""
    with keyspace.open(url, changes={"max_entries": max_entries}) as ks:
        log = _log(ks)
        trimmed_any = False
        for n, size in enumerate(sizes):
            with ks.transaction() as tx:
                scope = tx.scope("t")
                for i in range(size):
                    scope[b"%d-%d" % (n, i)] = b"v"
            last, trimmed = log.last(), log.trimmed()
            trimmed_any = trimmed_any or trimmed > 0
            upto, entries = log.read_since(trimmed)  # no gap: every commit kept reads
            assert upto == last and {seq for seq, _, _ in entries} == set(range(trimmed + 1, last + 1))
            done = sizes[: n + 1]
            assert len(entries) >= min(max_entries, sum(done)), (n, len(entries))
            assert last - trimmed < _commits_needed(done, max_entries) + 2 * TRIM_EVERY
            marks = sum(1 for _ in keys_in(ks.store.inner, log.marks_start, log.marks_stop))
            assert marks <= (last - trimmed) // TRIM_EVERY + 1  # the marks of commits trimmed go too
        if sum(sizes) > max_entries and len(sizes) >= 3 * TRIM_EVERY:
            assert trimmed_any


@settings(max_examples=20, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 30), min_size=3 * TRIM_EVERY, max_size=5 * TRIM_EVERY),
    max_entries=st.integers(1, 400),
)
def test_the_log_keeps_the_latest_entries_and_few_commits_more(sizes: list[int], max_entries: int) -> None:
    _check_bounds("memory:", sizes, max_entries)


@pytest.mark.parametrize("engine", [e for e in LOG_ENGINES if e != "memory"])
def test_every_engine_keeps_the_latest_entries_and_few_commits_more(tmp_path: Path, engine: str) -> None:
    sizes = [1 + (n * 7) % 23 for n in range(4 * TRIM_EVERY)]
    _check_bounds(engine_url(engine, str(tmp_path)), sizes, 100)


def test_the_bound_is_recorded_and_a_store_recorded_without_it_is_left_as_it_was(tmp_path: Path) -> None:
    plain = f"lmdb:///{tmp_path / 'plain'}"
    with keyspace.open(plain, changes=True) as ks:
        ks.scope("a")[b"k"] = b"v"
        assert _log(ks).params() == {"retention": DEFAULT_RETENTION, "max_age": None}  # as before the bound
    url = f"lmdb:///{tmp_path / 'db'}"
    with keyspace.open(url, changes={"max_entries": 500}) as ks:
        ks.scope("a")[b"k"] = b"v"
    with keyspace.open(url) as ks:  # a later opener without options keeps it
        assert _log(ks).max_entries == 500
        ks.scope("a")[b"k2"] = b"v"
    with keyspace.open(url, changes={"max_entries": None}) as ks:  # asked: it wins, and is recorded
        ks.scope("a")[b"k3"] = b"v"
    with keyspace.open(url) as ks:
        assert _log(ks).max_entries is None


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "100"])
def test_a_bad_bound_is_refused_by_name(tmp_path: Path, bad: object) -> None:
    url = f"lmdb:///{tmp_path / 'db'}"
    with pytest.raises(InvalidArgument, match=r"max_entries must be an int of 1 or more \(entries kept\)"):
        keyspace.open(url, changes={"max_entries": bad})
    with pytest.raises(InvalidArgument, match="'retention', 'max_entries' and 'max_age'"):
        keyspace.open(url, changes={"entries": 10})


def test_a_feed_behind_the_bound_gets_a_named_error() -> None:
    directory = tempfile.mkdtemp(prefix="ks-entries-")
    try:
        with keyspace.open(f"sqlite:///{directory}/db", changes={"max_entries": 10}) as ks:
            ks.feed("slow", ("a",)).close()  # its consumer stopped at revision 0
            for i in range(3 * TRIM_EVERY):
                ks.scope("a")[b"%d" % i] = b"v"
            assert _log(ks).trimmed() > 0
            with pytest.raises(FeedBehind, match=r"slow.*trimmed"):
                ks.feed("slow", ("a",))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
