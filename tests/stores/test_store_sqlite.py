"""SQLiteStore runs the conformance suite."""

import uuid
from pathlib import Path

import pytest

from keyspace.stores import SQLiteStore, Store, open_store
from keyspace.testing import MakeStore, StoreSuite


class TestSQLiteStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return open_store(url or f"sqlite://{tmp_path / uuid.uuid4().hex}", sync=False)

        return make


def test_open_store_gives_sqlite(tmp_path: Path) -> None:
    with open_store(f"sqlite://{tmp_path / 'db'}") as store:
        assert isinstance(store, SQLiteStore)


def _file_state(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())}


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)",
        "CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL)",  # a rowid table
        "CREATE TABLE kv (k BLOB, v BLOB NOT NULL, extra INT)",
    ],
)
def test_another_applications_kv_table_is_refused_and_left_unchanged(tmp_path: Path, schema: str) -> None:
    """A ``kv(k TEXT, v TEXT)`` table was taken for a store: its TEXT rows were
    invisible to scans of BLOB keys, so the store looked empty, and keyspace
    switched the file to WAL and wrote its scheme record and keys into it."""
    import sqlite3

    import keyspace
    from keyspace.errors import StoreError

    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute(schema)
    conn.execute("INSERT INTO kv (k, v) VALUES ('theme', 'dark')")
    conn.commit()
    conn.close()
    before = _file_state(path)
    for readonly in (False, True):
        with pytest.raises(StoreError, match=r"its kv table is not keyspace's.*left unchanged"):
            keyspace.open(f"sqlite://{path}", readonly=readonly)
        assert _file_state(path) == before


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1, 3_000_000, True, "5"])
def test_a_busy_timeout_sqlite_cannot_hold_is_refused(tmp_path: Path, timeout: object) -> None:
    """``timeout=inf`` (meant as: wait for ever), ``nan``, negative numbers and
    any past 2**31 ms were taken, and SQLite then waited not at all."""
    from keyspace.errors import StoreError
    from keyspace.stores.sqlite import TIMEOUT_MOST

    path = tmp_path / "s.db"
    with pytest.raises(StoreError, match=f"timeout=.* must be a number of seconds from 0 to {TIMEOUT_MOST}"):
        SQLiteStore(path, timeout=timeout)  # type: ignore[arg-type]
    assert not path.exists()
    text = "inf" if timeout == float("inf") else str(timeout)
    if not isinstance(timeout, bool) and timeout != "5":
        with pytest.raises(StoreError, match="must be a number of seconds"):
            open_store(f"sqlite://{path}?timeout={text}")
    assert not path.exists()
    with SQLiteStore(path, timeout=TIMEOUT_MOST) as store:
        store.put(b"k", b"v")
