"""The engine side of a directory handle's checks on LMDB: ``write_if`` writes a
batch only where a key holds the expected bytes, in the same write transaction,
and reads of the committed store take the engine's checked reads (the node read
in the read transaction of the read, once per state) rather than a snapshot per
read."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StaleDirectory
from keyspace.stores import LMDBStore
from keyspace.stores._checked import CheckedReads


def test_write_if_writes_only_where_the_check_holds(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "db", sync=False) as store:
        store.put(b"check", b"yes")
        assert store.write_if(b"check", b"yes", [(b"a", b"1"), (b"b", b"2")]) is True
        assert store.write_if(b"check", b"no", [(b"c", b"3")]) is False
        assert store.write_if(b"missing", b"", [(b"d", b"4")]) is False
        assert store.write_if(b"check", b"yes", [(b"a", None)]) is True
        assert dict(store.scan(b"", None)) == {b"b": b"2", b"check": b"yes"}


def test_committed_reads_of_a_directory_use_the_engines_checked_reads(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path / 'db'}", sync=False) as ks:
        d = ks.directory("a")
        d[b"k"] = b"v"
        data = d._data
        assert isinstance(data, CheckedReads) and data._fast is not None
        assert d[b"k"] == b"v" and len(d) == 1 and list(d.items()) == [(b"k", b"v")]
        ks.store.delete(d._state.check_key)  # the node gone, as a remove by anyone leaves it
        with pytest.raises(StaleDirectory):
            d[b"k"]
        with pytest.raises(StaleDirectory):
            list(d.items())
        with pytest.raises(StaleDirectory):
            d[b"n"] = b"1"
        assert ks.store.get(d.prefix + b"\x01n\x00") is None
