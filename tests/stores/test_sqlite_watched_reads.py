"""An SQLite store's watched reads (``watched_reads(check)``: the reads of a
keyspace that watches for records other writers may add) answer only from a
state of the database that the check has seen: a commit that lands right after
a check is never read unchecked. Both marks of a state are checked: the
WAL-index header (a store opened for writing) and ``data_version`` (a
read-only open)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.stores import SQLiteStore, keys_in
from keyspace.stores._base import ReadView

_keys = st.binary(min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    initial=st.lists(_keys, max_size=12, unique=True),
    late=_keys,
    read=st.sampled_from(["scan", "reverse", "keys", "count", "count without", "get"]),
    limit=st.none() | st.integers(min_value=1, max_value=5),
    start=st.binary(max_size=2),
    stop=st.none() | st.binary(min_size=1, max_size=2),
    mark=st.sampled_from(["header", "data_version"]),
)
def test_a_read_never_answers_from_a_state_no_check_saw(
    initial: list[bytes],
    late: bytes,
    read: str,
    limit: int | None,
    start: bytes,
    stop: bytes | None,
    mark: str,
) -> None:
    """The check, the first time it runs, sees the store and then another
    connection commits a key: the read answers from the state the check saw, or
    runs the check again after reading the later one. Every key a read returns
    (every counted key, of ``count``, with and without its ``without`` filter) is one the last
    check saw."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db"
        writer, other = SQLiteStore(path, sync=False), SQLiteStore(path, sync=False)
        store = writer if mark == "header" else SQLiteStore(path, readonly=True)
        try:
            writer.write([(k, b"v") for k in initial if k != late])
            seen: list[set[bytes]] = []

            def check(view: ReadView) -> None:
                seen.append(set(keys_in(view)))
                if len(seen) == 1:
                    other.put(late, b"late")  # a commit right after the first check

            reads = store.watched_reads(check)
            assert (reads._header is not None) == (mark == "header")
            if read == "count":
                counted = reads.count(start, None)
                assert counted == len([k for k in seen[-1] if k >= start])
                return
            if read == "count without":  # the keys with no 00 byte from index 1 on
                counted = reads.count(start, None, (0, 1))
                assert counted == len([k for k in seen[-1] if k >= start and b"\x00" not in k[1:]])
                return
            if read == "get":
                got = reads.get(late)
                assert (got is not None) == (late in seen[-1])
                return
            pages = reads.pages(start, stop, read == "reverse", limit, read == "keys")
            found = [item if read == "keys" else item[0] for page in pages for item in page]
            assert seen, "no check ran"
            assert set(found) <= seen[-1], (found, seen)
            inside = sorted(k for k in seen[-1] if k >= start and (stop is None or k < stop))
            if read == "reverse":
                inside.reverse()
            assert found == inside[:limit], "not the range's first keys of a state the check saw"
            assert found == sorted(found, reverse=read == "reverse")
        finally:
            store.close()
            writer.close()
            other.close()


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["commit", "get", "scan", "store get", "store scan"]), _keys), max_size=30
    ),
    initial=st.lists(_keys, min_size=2, max_size=8),
    mark=st.sampled_from(["header", "data_version"]),
)
def test_every_read_sees_the_last_commit_at_once(
    steps: list[tuple[str, bytes]], initial: list[bytes], mark: str
) -> None:
    """Watched reads and the store's own reads on the same reading connection,
    between commits of another connection: each answers the last committed
    state (no read leaves a read transaction open behind it for the next)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db"
        writer, other = SQLiteStore(path, sync=False), SQLiteStore(path, sync=False)
        store = writer if mark == "header" else SQLiteStore(path, readonly=True)
        try:
            reads = store.watched_reads(lambda view: None)
            model = {key: b"initial" for key in initial}
            other.write(list(model.items()))
            for n, (step, key) in enumerate([("scan", b""), *steps]):
                if step == "commit":
                    other.put(key, b"%d" % n)
                    model[key] = b"%d" % n
                elif step == "get":
                    assert reads.get(key) == model.get(key)
                elif step == "store get":
                    assert store.get(key) == model.get(key)
                elif step == "scan":
                    got = [item for page in reads.pages(key, None, False, 3) for item in page]
                    assert got == sorted((k, v) for k, v in model.items() if k >= key)[:3]
                else:
                    assert list(store.scan(key)) == sorted((k, v) for k, v in model.items() if k >= key)
        finally:
            store.close()
            writer.close()
            other.close()


def test_a_limit_below_one_reads_nothing_on_every_route(tmp_path: Path) -> None:
    """A limit of 0 or less reads no item, on the one-statement route of short
    scans as on the paged one (SQLite's LIMIT -1 would mean no limit)."""
    writer = SQLiteStore(tmp_path / "db", sync=False)
    reader = SQLiteStore(tmp_path / "db", readonly=True)
    try:
        writer.write([(b"k%d" % i, b"v") for i in range(5)])
        for store in (writer, reader):  # the header mark, and data_version
            reads = store.watched_reads(lambda view: None)
            for limit in (0, -1, -300):
                for keys in (False, True):
                    assert [page for page in reads.pages(b"", None, False, limit, keys) if page] == []
    finally:
        reader.close()
        writer.close()
