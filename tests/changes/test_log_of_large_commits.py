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
