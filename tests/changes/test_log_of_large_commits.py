"""A commit of more changed keys than a log part holds
(:data:`~keyspace._changes.PART_ENTRIES`, made small here) is logged as several
parts under its one number, part 0 first: every reader sees each changed key
once, in the order first written, all at that number, and the next commit
takes the next number. Puts alone (the seam's lists) and a commit with a
delete (the merged changes) alike, on LMDB and the memory store."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace import _changes
from keyspace._changes import ChangeLog


@pytest.mark.parametrize("url", ["lmdb", "memory"])
@pytest.mark.parametrize("with_delete", [False, True], ids=["puts", "with a delete"])
def test_a_commit_of_several_parts_reads_as_one_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, with_delete: bool
) -> None:
    monkeypatch.setattr(_changes, "PART_ENTRIES", 3)
    with keyspace.open(f"lmdb://{tmp_path}/db" if url == "lmdb" else "memory://", changes=True) as ks:
        ks.scope("t")[b"there"] = b"before"
        log = ks.store.hook("changes")
        assert isinstance(log, ChangeLog)
        start = log.last()
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for i in range(10):
                scope[b"k%d" % i] = b"v%d" % i
            if with_delete:
                del scope[b"there"]
        encode = ks.store.scheme.encode
        expected = [(encode(("t",), b"k%d" % i), b"v%d" % i) for i in range(10)]
        if with_delete:
            expected.append((encode(("t",), b"there"), None))
        upto, entries = log.read_since(start)
        assert upto == start + 1
        assert [(key, value) for _, key, value in entries] == expected
        assert {seq for seq, _, _ in entries} == {start + 1}
        parts = [key for key, _ in ks.store.inner.scan(log.part_key(start + 1), log.part_key(start + 2))]
        assert parts == [log.part_key(start + 1, n) for n in range(4)]  # 11 or 10 entries, 3 a part
        ks.scope("t")[b"after"] = b"x"
        assert log.last() == start + 2


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "memory"])
def test_a_log_of_commits_of_several_parts_stays_at_its_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """A trim removes whole commits, as many as are made between two trims and
    more: commits of four parts each, retention 5, and the log holds at most
    the retention and the commits made since the last trim (it grew without
    bound when a trim removed a number of parts)."""
    monkeypatch.setattr(_changes, "PART_ENTRIES", 3)
    url = "memory://" if engine == "memory" else f"{engine}:///{tmp_path}/db"
    with keyspace.open(url, changes={"retention": 5}) as ks:
        log = ks.store.hook("changes")
        assert isinstance(log, ChangeLog)
        off = len(log.log_start)
        for n in range(8 * _changes.TRIM_EVERY):
            with ks.transaction() as tx:
                scope = tx.scope("t")
                for i in range(10):
                    scope[b"k%d" % i] = b"%d" % n
            held = {key[off : off + 8] for key, _ in ks.store.inner.scan(log.log_start, log.log_stop)}
            assert len(held) <= 5 + _changes.TRIM_EVERY, (n, len(held))
        last, trimmed = log.last(), log.trimmed()
        assert len(held) == last - trimmed and last - trimmed <= 5 + _changes.TRIM_EVERY
        upto, entries = log.read_since(trimmed)  # every commit kept reads whole
        assert upto == last and len(entries) == 10 * (last - trimmed)
