"""An SQLite store's seeker reads one read transaction (the state of its first
seek) on a connection of its own, as a snapshot does; the connections of ended
snapshots and seekers are kept for the next ones, their read transactions ended."""

from __future__ import annotations

import sqlite3
import tempfile
from bisect import bisect_left
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.stores import SQLiteStore

_keys = st.binary(min_size=0, max_size=4)


def _first_at(keys: list[bytes], start: bytes, stop: bytes | None) -> bytes | None:
    at = bisect_left(keys, start)
    if at == len(keys) or (stop is not None and keys[at] >= stop):
        return None
    return keys[at]


@settings(max_examples=60, deadline=None)
@given(
    initial=st.lists(_keys, max_size=20, unique=True),
    steps=st.lists(st.tuples(st.booleans(), _keys), min_size=1, max_size=20),
    stop=st.none() | _keys,
)
def test_a_seeker_reads_the_state_of_its_first_seek(
    initial: list[bytes], steps: list[tuple[bool, bytes]], stop: bytes | None
) -> None:
    """Seeks and another connection's commits interleaved: every seek answers
    from the store as it was at the first seek (the seeks read one read
    transaction); a seeker made after the commits sees them all."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db"
        store, other = SQLiteStore(path, sync=False), None
        try:
            store.write([(k, b"v") for k in initial])
            other = SQLiteStore(path, sync=False)  # another writer of the file
            now = sorted(initial)
            with store.seeker(stop) as seeker:
                first = sorted(initial)
                assert seeker.seek(b"") == _first_at(first, b"", stop)
                for is_write, key in steps:
                    if is_write:
                        other.put(key, b"w")
                        now = sorted({*now, key})
                    else:
                        assert seeker.seek(key) == _first_at(first, key, stop), key
            with store.seeker(stop) as seeker:
                for _, key in steps:
                    assert seeker.seek(key) == _first_at(now, key, stop)
        finally:
            store.close()
            if other is not None:
                other.close()


def test_ended_snapshots_and_seekers_hold_no_read_transaction(tmp_path: Path) -> None:
    """Their kept connections end their read transactions: a full checkpoint
    (which waits for no reader, and reports one still reading an old state as
    busy) moves every commit into the file, and a snapshot taken then reads the
    latest commit, not the state its connection read before."""
    path = tmp_path / "db"
    store = SQLiteStore(path, sync=False)
    try:
        store.put(b"a", b"1")
        for round_ in range(3):
            snap = store.snapshot()
            assert snap.get(b"a") == str(round_ + 1).encode()
            seeker = store.seeker()
            assert seeker.seek(b"") == b"a"
            snap.release()
            seeker.release()
            store.put(b"a", str(round_ + 2).encode())
            check = sqlite3.connect(path, isolation_level=None)
            try:
                busy, _log, _moved = check.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                check.close()
            assert busy == 0, f"round {round_}: a released view still holds a read transaction"
        with store.snapshot() as snap:
            assert snap.get(b"a") == b"4"
    finally:
        store.close()


def test_a_seeker_of_a_closed_store_refuses_and_close_ends_kept_connections(tmp_path: Path) -> None:
    """close() ends an open seeker (its next seek raises StoreClosed) and closes
    the kept connections: the store's connections were the file's last, so
    SQLite removes the ``-wal`` file as the last one closes."""
    from keyspace.errors import StoreClosed

    path = tmp_path / "db"
    store = SQLiteStore(path, sync=False)
    store.put(b"a", b"1")
    with store.snapshot(), store.seeker() as done:  # two connections, both kept after
        assert done.seek(b"") == b"a"
    seeker = store.seeker()  # one of them; the other stays kept
    assert seeker.seek(b"") == b"a"
    assert Path(f"{path}-wal").exists()
    store.close()
    with pytest.raises(StoreClosed):
        seeker.seek(b"")
    assert not Path(f"{path}-wal").exists(), "a connection of the store is still open"
