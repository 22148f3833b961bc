"""The WAL-index header an SQLite store's watched reads take as the mark of the
database's state: it moves whenever ``PRAGMA data_version`` of the reading
connection moves (every commit of another connection, of this process or
another), it is offered only where it is the reading connection's, and it is
read only while the store is open."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import StoreClosed
from keyspace.stores import SQLiteStore
from keyspace.stores._sqlite_wal_index import wal_index_header

_OPS = st.lists(
    st.sampled_from(
        ["put", "same put", "delete", "empty transaction", "passive", "full", "restart", "truncate", "read"]
    ),
    max_size=25,
)


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def _do(conn: sqlite3.Connection, op: str, n: int) -> None:
    if op == "put":
        conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (b"k%d" % (n % 3), b"v%d" % n))
    elif op == "same put":
        conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (b"same", b"same"))
    elif op == "delete":
        conn.execute("DELETE FROM kv WHERE k = ?", (b"k%d" % (n % 3),))
    elif op == "empty transaction":
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("COMMIT")
    elif op == "read":
        conn.execute("SELECT count(*) FROM kv").fetchone()
    else:
        conn.execute(f"PRAGMA wal_checkpoint({op.upper()})").fetchone()


@settings(max_examples=40, deadline=None)
@given(ops=_OPS)
def test_the_header_moves_whenever_data_version_does(
    tmp_path_factory: pytest.TempPathFactory, ops: list[str]
) -> None:
    """After each operation of another connection (commits, checkpoints of every
    kind, which restart or truncate the WAL, empty transactions, reads), a
    ``data_version`` of the reader that moved comes with a header that moved,
    and a commit that changed the data always moves both."""
    path = tmp_path_factory.mktemp("wal") / "db"
    store = SQLiteStore(path)
    other = _connect(path)
    try:
        header = store._wal_header()
        assert header is not None
        reader = store._reader
        marks = [(reader.execute("PRAGMA data_version").fetchone()[0], header.read())]
        for n, op in enumerate(ops):
            before = other.total_changes
            _do(other, op, n)
            version = reader.execute("PRAGMA data_version").fetchone()[0]
            mark = header.read()
            last_version, last_mark = marks[-1]
            if version != last_version:
                assert mark != last_mark, (op, n)
            if other.total_changes != before:  # a commit that wrote a row
                assert version != last_version and mark != last_mark, (op, n)
            marks.append((version, mark))
    finally:
        other.close()
        store.close()


WRITE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("INSERT INTO kv VALUES (?, ?)", (b"from another process", b"v"))
conn.close()
"""


def test_a_commit_of_another_process_moves_the_header(tmp_path: Path) -> None:
    path = tmp_path / "db"
    store = SQLiteStore(path)
    try:
        header = store._wal_header()
        assert header is not None
        before = header.read()
        assert header.read() == before  # nothing committed: the same bytes
        subprocess.run([sys.executable, "-c", WRITE, str(path)], check=True, timeout=60)
        assert header.read() != before
        assert store.get(b"from another process") == b"v"
    finally:
        store.close()


def test_watched_reads_take_the_header_of_a_store_opened_for_writing(tmp_path: Path) -> None:
    """The one store point read: its own statement, no ``data_version`` read."""
    store = SQLiteStore(tmp_path / "db")
    try:
        store.put(b"k", b"v")
        reads = store.watched_reads(lambda view: None)
        assert reads._header is not None
        ran: list[str] = []
        store._reader.set_trace_callback(ran.append)
        assert reads.get(b"k") == b"v"
        store._reader.set_trace_callback(None)
        assert ran == ["SELECT v FROM kv WHERE k = x'6b'"]
    finally:
        store.close()


def test_no_header_where_the_connection_reads_none_of_its_own(tmp_path: Path) -> None:
    """A database not in WAL mode, one in memory, one in exclusive locking mode:
    ``data_version`` is the mark there."""
    rollback = _connect(tmp_path / "rollback")
    rollback.execute("CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
    assert wal_index_header(rollback) is None
    rollback.close()
    memory = sqlite3.connect(":memory:", isolation_level=None)
    assert wal_index_header(memory) is None
    memory.close()
    exclusive = _connect(tmp_path / "exclusive")
    exclusive.execute("PRAGMA locking_mode=EXCLUSIVE")
    exclusive.execute("PRAGMA journal_mode=WAL")
    exclusive.execute("CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
    assert wal_index_header(exclusive) is None
    exclusive.close()


def test_reads_after_close_raise_store_closed(tmp_path: Path) -> None:
    """The header is read only while the store's reading connection is open:
    every watched read of a closed store raises, none reads the header."""
    store = SQLiteStore(tmp_path / "db")
    store.put(b"k", b"v")
    reads = store.watched_reads(lambda view: None)
    assert reads._header is not None
    assert reads.get(b"k") == b"v"
    store.close()
    with pytest.raises(StoreClosed):
        reads.get(b"k")
    with pytest.raises(StoreClosed):
        list(reads.pages(b"", None, False, 3))
    with pytest.raises(StoreClosed):
        list(reads.pages(b"", None, False, None))
    with pytest.raises(StoreClosed):
        reads.hold()
    with pytest.raises(StoreClosed):
        reads.count(b"", None)
