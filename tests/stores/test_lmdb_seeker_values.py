"""A seeker of an LMDB store's unnamed database steps over LMDB's records of
named databases, reading the value of the key it finds only where that key may
be one (no NUL byte in it): a skip scan over keys holding NUL (every AsciiHex
and tuple child) reads no value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keyspace.stores import LMDBStore
from keyspace.stores.lmdb._keys import CursorSeeker
from keyspace.stores.lmdb._records import RECORD_SIZE


class _CountedCursor:
    """A py-lmdb cursor that counts the values read through it."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        self.values = 0

    def set_range(self, key: bytes) -> bool:
        return bool(self._cursor.set_range(key))

    def key(self) -> bytes:
        return bytes(self._cursor.key())

    def value(self) -> bytes:
        self.values += 1
        return bytes(self._cursor.value())

    def next(self) -> bool:
        return bool(self._cursor.next())


def test_a_seek_to_a_key_holding_nul_reads_no_value(tmp_path: Path) -> None:
    with LMDBStore(tmp_path, db="inner") as inner:
        inner.put(b"x", b"y")
    with LMDBStore(tmp_path) as store:
        store.write([(b"a\x00%d" % i, b"v" * RECORD_SIZE) for i in range(5)] + [(b"j", b"w" * RECORD_SIZE)])
        with store._env.begin() as txn:
            cursor = _CountedCursor(txn.cursor())
            seeker = CursorSeeker(cursor, None, store.translate, None, store._records)
            assert [seeker.seek(b"a\x00%d" % i) for i in range(5)] == [b"a\x00%d" % i for i in range(5)]
            assert cursor.values == 0
            assert seeker.seek(b"b") == b"j"  # the record of "inner" stepped over
            assert cursor.values > 0
            seeker.release()
