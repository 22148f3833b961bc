"""A keyspace opened, with its scheme named, on a store another program wrote (no
scheme record) watches for a record written later: another keyspace's first
write may record a scheme whose keys overlap its scopes. It checks the records
once per state of the store (LMDB: per commit, in the read's own transaction;
per snapshot), not once per read, and a record written by another process after
a read is still honoured by the next one."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import _metadata
from keyspace.errors import SchemeMismatch
from keyspace.schemes import LengthPrefixed, ScopeHash, TupleScheme
from keyspace.schemes.scope_hash import registry_key

_TENANTS = [f"t{i:02d}" for i in range(20)]
_KEYS = [b"k%03d" % i for i in range(30)]

WRITE_RECORD = """
import sys, keyspace
with keyspace.open(sys.argv[1], scheme="asciihex") as other:
    other.scope("x")[b"k"] = b"other data"
"""

WRITE_RAW = """
import sqlite3, sys, lmdb
key = bytes.fromhex(sys.argv[2])
if sys.argv[1].endswith(".sqlite"):
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("INSERT INTO kv VALUES (?, ?)", (key, b"written by another program"))
    conn.close()
else:
    env = lmdb.open(sys.argv[1], max_dbs=0)
    with env.begin(write=True) as txn:
        txn.put(key, b"written by another program")
    env.close()
"""

ENGINES = ["lmdb", "sqlite"]


def _foreign_store(path: Path, engine: str = "lmdb") -> str:
    """A store of tuple-scheme keys written with py-lmdb or sqlite3 alone (no record)."""
    scheme = TupleScheme()
    pairs = [
        (scheme.encode((tenant, "users"), key), tenant.encode() + key) for tenant in _TENANTS for key in _KEYS
    ]
    if engine == "sqlite":
        conn = sqlite3.connect(f"{path}.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        conn.executemany("INSERT INTO kv VALUES (?, ?)", pairs)
        conn.close()
        return f"sqlite://{path}.sqlite"
    env = lmdb.open(str(path), max_dbs=0)
    with env.begin(write=True) as txn:
        for key, value in pairs:
            txn.put(key, value)
    env.close()
    return f"lmdb://{path}"


def _file(url: str) -> str:
    return url.split("://", 1)[1]


def _run(script: str, *args: str) -> None:
    subprocess.run([sys.executable, "-c", script, *args], check=True, timeout=60)


@pytest.fixture
def record_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times the scheme record was read (one per records check)."""
    calls = [0]
    read = _metadata.read

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return read(*args, **kwargs)

    monkeypatch.setattr(_metadata, "read", counted)
    yield calls


@pytest.mark.parametrize("engine", ENGINES)
def test_reads_of_one_state_check_the_records_once(
    engine: str, tmp_path: Path, record_reads: list[int]
) -> None:
    url = _foreign_store(tmp_path / "store", engine)
    with keyspace.open(url, scheme="tuple") as ks:
        held = ks.scope("t00", "users")
        assert held.get(b"k000") == b"t00k000"
        before = record_reads[0]
        for tenant in _TENANTS:
            for key in _KEYS:
                assert ks.scope(tenant, "users").get(key) == tenant.encode() + key
                assert held.get(key) == b"t00" + key
        assert record_reads[0] == before  # the store did not change: nothing checked again
        # another program commits: the next read checks again, once
        _run(WRITE_RAW, _file(url), TupleScheme().encode(("new",), b"k").hex())
        for key in _KEYS:
            assert held.get(key) == b"t00" + key
        assert record_reads[0] == before + 1


@pytest.mark.parametrize("engine", ENGINES)
def test_a_snapshot_checks_the_records_once(engine: str, tmp_path: Path, record_reads: list[int]) -> None:
    url = _foreign_store(tmp_path / "store", engine)
    with keyspace.open(url, scheme="tuple") as ks, ks.snapshot() as snap:
        before = record_reads[0]
        for tenant in _TENANTS:
            for key in _KEYS:
                assert snap.scope(tenant, "users").get(key) == tenant.encode() + key
        assert record_reads[0] - before <= 1


@pytest.mark.parametrize("engine", ENGINES)
def test_a_record_written_after_a_read_is_honoured_by_the_next(engine: str, tmp_path: Path) -> None:
    url = _foreign_store(tmp_path / "store", engine)
    with keyspace.open(url, scheme="tuple") as ks:
        held = ks.scope("t01", "users")
        assert held.get(b"k001") == b"t01k001"
        assert list(held.keys(limit=2)) == _KEYS[:2]
        with ks.snapshot() as before:
            assert before.scope("t01", "users").get(b"k001") == b"t01k001"
            _run(WRITE_RECORD, url)  # records AsciiHex, which this keyspace may not read beside
            # the snapshot reads the state it began in, which holds no record
            assert before.scope("t02", "users").get(b"k001") == b"t02k001"
        with pytest.raises(SchemeMismatch):
            held.get(b"k001")
        with pytest.raises(SchemeMismatch):
            ks.scope("t03", "users").get(b"k001")
        with pytest.raises(SchemeMismatch):
            list(held.keys(limit=2))
        with pytest.raises(SchemeMismatch):
            len(held)
        with ks.snapshot() as after, pytest.raises(SchemeMismatch):
            after.scope("t01", "users").get(b"k001")


@settings(max_examples=25, deadline=None)
@given(
    asks=st.lists(
        st.tuples(st.sampled_from([*_TENANTS, "none"]), st.sampled_from([*_KEYS, b"", b"\x00", b"missing"])),
        max_size=40,
    ),
    in_snapshot=st.booleans(),
)
def test_reads_answer_what_the_store_holds(
    tmp_path_factory: pytest.TempPathFactory, asks: list[Any], in_snapshot: bool
) -> None:
    url = _foreign_store(tmp_path_factory.mktemp("store") / "store")
    with keyspace.open(url, scheme="tuple") as ks:
        if in_snapshot:
            with ks.snapshot() as snap:
                got = [snap.scope(t, "users").get(k) for t, k in asks]
        else:
            got = [ks.scope(t, "users").get(k) for t, k in asks]
    expected = [t.encode() + k if t != "none" and k in _KEYS else None for t, k in asks]
    assert got == expected


@pytest.mark.parametrize("engine", ENGINES)
def test_a_hashed_name_checks_the_records_once_per_state(
    engine: str, tmp_path: Path, record_reads: list[int]
) -> None:
    """A ScopeHash scope whose name the writing program registered: its guard (the
    registry) settles, and the records are then read once per state, not per read."""
    scheme = ScopeHash()
    pairs = [(scheme.encode(("t.users",), key), key) for key in _KEYS]
    pairs.append((registry_key("t.users"), b"t.users"))
    if engine == "sqlite":
        conn = sqlite3.connect(f"{tmp_path}/store.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        conn.executemany("INSERT INTO kv VALUES (?, ?)", pairs)
        conn.close()
        url = f"sqlite://{tmp_path}/store.sqlite"
    else:
        env = lmdb.open(f"{tmp_path}/store", max_dbs=0)
        with env.begin(write=True) as txn:
            for key, value in pairs:
                txn.put(key, value)
        env.close()
        url = f"lmdb://{tmp_path}/store"
    with keyspace.open(url, scheme="scopehash") as ks:
        held = ks.scope("t.users")
        assert held.get(_KEYS[0]) == _KEYS[0]
        before = record_reads[0]
        for _ in range(5):
            for key in _KEYS:
                assert held.get(key) == key
                assert ks.scope("t.users").get(key) == key
        assert record_reads[0] == before


def test_a_snapshot_of_a_store_without_layout_records_reads_none_per_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A length-prefixed keyspace with a declared leaf depth, on a store another
    program wrote (no layout record): a snapshot asks once whether the store
    holds any layout record, not each scope whether one contradicts it."""
    from keyspace.catalog.leaves import LeafRecords

    scheme = LengthPrefixed()
    env = lmdb.open(f"{tmp_path}/store", max_dbs=0)
    with env.begin(write=True) as txn:
        for tenant in _TENANTS:
            for key in _KEYS[:3]:
                txn.put(scheme.encode((tenant, "users"), key), tenant.encode() + key)
    env.close()
    checks = [0]
    check = LeafRecords._check_declared

    def counted(self: Any, *args: Any) -> None:
        checks[0] += 1
        check(self, *args)

    monkeypatch.setattr(LeafRecords, "_check_declared", counted)
    with keyspace.open(f"lmdb://{tmp_path}/store", scheme="length-prefixed", leaf_depth=2) as ks:
        for _ in range(2):
            with ks.snapshot() as snap:
                got = {t: snap.scope(t, "users").get(_KEYS[1]) for t in _TENANTS}
            assert got == {t: t.encode() + _KEYS[1] for t in _TENANTS}
        assert checks[0] == 0
