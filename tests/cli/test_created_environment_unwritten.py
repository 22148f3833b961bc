"""Whether an LMDB environment holds data, as the command's clean-up after a
failure asks it: a key holding a NUL byte is data, never a database's record
(LMDB reads a database name up to its first NUL)."""

from __future__ import annotations

from pathlib import Path

import lmdb

from keyspace.cli._created import _lmdb_unwritten


def _environment(path: Path, data: dict[bytes, bytes], names: tuple[bytes, ...]) -> None:
    env = lmdb.open(str(path), max_dbs=len(names) + 1)
    try:
        for name in names:
            env.open_db(name)
        with env.begin(write=True) as txn:
            for key, value in data.items():
                txn.put(key, value)
    finally:
        env.close()


def test_a_key_holding_nul_beside_an_empty_database_is_data(tmp_path: Path) -> None:
    _environment(tmp_path, {b"a\x00user": b"user data"}, (b"a",))
    assert not _lmdb_unwritten(str(tmp_path))  # was: taken for the empty database "a"


def test_only_empty_databases_is_unwritten(tmp_path: Path) -> None:
    _environment(tmp_path, {}, (b"a", b"b"))
    assert _lmdb_unwritten(str(tmp_path))
