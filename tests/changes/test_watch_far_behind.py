"""A watch far behind the change log (a feed's consumer after a long stop, a
``start_revision`` long past) reads the log a run of ``CATCH_UP_COMMITS``
commits at a time, one part decoded at a time, and each part once: it read
and decoded the whole log twice, all of it held at once (a watch of one
scope from revision 1 over 300 commits of 1,000 keys of another scope held
56 MB; now 3 MB). Its events are the same, in order, each once."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace import _changes
from keyspace._changes import CATCH_UP_COMMITS, ChangeLog
from keyspace.errors import WatchCompacted


def _log(ks: keyspace.Keyspace) -> ChangeLog:
    hook = ks.store.hook("changes")  # type: ignore[attr-defined]
    assert isinstance(hook, ChangeLog)
    return hook


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_watch_from_long_ago_reads_each_part_once_a_run_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    with keyspace.open(f"{engine}:///{tmp_path}/db", changes=True) as ks:
        commits = 3 * CATCH_UP_COMMITS + 5
        for n in range(commits):
            with ks.transaction() as tx:
                for i in range(20):
                    tx.scope("other")[b"%d" % i] = b"%d" % n
                if n % 7 == 0:
                    tx.scope("a")[b"%03d" % n] = b"v"
        log = _log(ks)
        decoded: list[int] = []
        spans: list[int] = []
        real_decode, real_entries = _changes.decode_part, ChangeLog.entries

        def decode(raw: bytes) -> list[tuple[bytes, bytes | None]]:
            decoded.append(1)
            return real_decode(raw)

        def entries(self: ChangeLog, after: int, upto: int, view: object) -> object:
            spans.append(upto - after)
            return real_entries(self, after, upto, view)  # type: ignore[arg-type]

        monkeypatch.setattr(_changes, "decode_part", decode)
        monkeypatch.setattr(ChangeLog, "entries", entries)
        watch = ks.scope("a").watch(start_revision=1)
        got = []
        while (event := watch.get(0)) is not None:
            got.append(event.key)
        watch.close()
        assert got == [b"%03d" % n for n in range(0, commits, 7)]
        assert len(decoded) == log.last()  # each commit's one part, once
        assert spans and max(spans) <= CATCH_UP_COMMITS


def test_a_watch_from_a_trimmed_revision_is_refused_before_any_part_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with keyspace.open(f"lmdb:///{tmp_path}/db", changes={"retention": 5}) as ks:
        for n in range(3 * _changes.TRIM_EVERY):
            ks.scope("a")[b"%d" % n] = b"v"
        decoded: list[int] = []
        real_decode = _changes.decode_part

        def decode(raw: bytes) -> list[tuple[bytes, bytes | None]]:
            decoded.append(1)
            return real_decode(raw)

        monkeypatch.setattr(_changes, "decode_part", decode)
        with pytest.raises(WatchCompacted):
            ks.scope("a").watch(start_revision=1)
        assert decoded == []


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_watch_far_behind_holds_no_more_than_its_consumer_is_about_to_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """A watch of a scope with a backlog of 200 commits reads no further while
    8 commits' events wait (made small here), and goes on as they are taken:
    every event comes, in order, once; it queued the whole backlog at once."""
    monkeypatch.setattr(_changes, "CATCH_UP_COMMITS", 4)
    monkeypatch.setattr(_changes, "QUEUED_COMMITS", 8)
    with keyspace.open(f"{engine}:///{tmp_path}/db", changes=True) as ks:
        for n in range(200):
            ks.scope("a")[b"%03d" % n] = b"v"
        watch = ks.scope("a").watch(start_revision=1)
        source = watch.store_watch
        assert source._queue.qsize() <= 8 + 4  # one run read past the bound at most
        got = []
        most = 0
        while len(got) < 200:
            most = max(most, source._queue.qsize())
            event = watch.get(5)
            assert event is not None, len(got)
            got.append(event.key)
        assert got == [b"%03d" % n for n in range(200)]
        assert most <= 8 + 4
        ks.scope("a")[b"after"] = b"v"  # caught up: a new commit comes as before
        event = watch.get(5)
        assert event is not None and event.key == b"after"
        watch.close()
