"""A read or a range delete of a range whose bounds say every key of it holds a
NUL byte tests no item for LMDB's records of named databases (a database's name
holds no NUL): ``records_in`` says so only where it is true, every read route
still leaves the records out of the ranges it does test, and a range delete
still keeps them."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import lmdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace.stores import LMDBStore
from keyspace.stores.lmdb import _keys as lmdb_keys
from keyspace.stores.lmdb import _records
from keyspace.stores.lmdb._records import RECORD_SIZE, records_in

_ALPHABET = b"\x00\x01\x02"
_KEYS = [bytes(k) for n in range(5) for k in product(_ALPHABET, repeat=n)]
_bounds = st.binary(max_size=4).map(lambda b: bytes(_ALPHABET[c % 3] for c in b))


@given(_bounds, st.none() | _bounds)
def test_a_range_said_clear_holds_only_keys_with_a_nul(start: bytes, stop: bytes | None) -> None:
    records = object()
    said = records_in(records, start, stop)  # type: ignore[arg-type]
    assert records_in(None, start, stop) is None
    if said is None:
        inside = [k for k in _KEYS if start <= k and (stop is None or k < stop)]
        assert all(0 in k for k in inside), (start, stop)
    else:
        assert said is records


def test_the_ranges_of_a_scope_under_a_prefix_with_a_nul_are_clear() -> None:
    records = object()
    assert records_in(records, b"t\x00a", b"t\x00\xff") is None  # type: ignore[arg-type]
    assert records_in(records, b"t\x00", b"t\x01") is None  # type: ignore[arg-type]
    assert records_in(records, b"t\x00", b"t\x01\x00") is records  # type: ignore[arg-type]
    assert records_in(records, b"ta", b"tb") is records  # type: ignore[arg-type]
    assert records_in(records, b"t\x00", None) is records  # type: ignore[arg-type]


def _store_with_a_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[LMDBStore, list[bytes]]:
    """An LMDB store of the unnamed database of an environment holding the named
    database ``orders`` (its record), ``ordersX``, and under ``t 00`` a value of a
    record's size and another; and the keys :meth:`Records.is_record` is asked
    of from now on."""
    env = lmdb.open(str(tmp_path / "db"), max_dbs=4)
    env.open_db(b"orders")
    with env.begin(write=True) as txn:
        txn.put(b"t\x00a", b"x" * RECORD_SIZE)  # data of a record's size under a key with a NUL
        txn.put(b"t\x00b", b"y")
        txn.put(b"ordersX", b"data")
    env.close()
    asked: list[bytes] = []
    is_record = _records.Records.is_record

    def counted(self: _records.Records, key: bytes, value: bytes) -> bool:
        asked.append(key)
        return is_record(self, key, value)

    monkeypatch.setattr(_records.Records, "is_record", counted)
    return LMDBStore(str(tmp_path / "db")), asked


def test_reads_of_clear_ranges_test_nothing_and_others_leave_records_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, asked = _store_with_a_record(tmp_path, monkeypatch)
    passes: list[int] = []
    candidates = lmdb_keys.name_candidates

    def candidates_counted(*args: object) -> list[int]:
        passes.append(1)
        return candidates(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(lmdb_keys, "name_candidates", candidates_counted)
    try:
        clear = (b"t\x00", b"t\x01")
        assert list(store.scan(*clear)) == [(b"t\x00a", b"x" * RECORD_SIZE), (b"t\x00b", b"y")]
        assert store.count(*clear) == 2
        with store.snapshot() as snap:
            assert [len(p) for p in snap.read_pages([clear])] == [2]
            assert snap.count(*clear) == 2
        assert passes == []  # no pass over a chunk of keys
        everything = list(store.scan())
        assert [k for k, _ in everything] == [b"ordersX", b"t\x00a", b"t\x00b"]
        assert store.count() == 3
        assert b"orders" in asked and passes  # a range its bounds do not clear is still tested
    finally:
        store.close()


def test_a_range_delete_of_a_clear_range_tests_nothing_and_others_keep_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, asked = _store_with_a_record(tmp_path, monkeypatch)
    try:
        store.delete_range(b"t\x00", b"t\x01")  # its own write transaction
        assert asked == []
        assert list(store.scan()) == [(b"ordersX", b"data")]
        with store.transaction() as tx:
            tx.put(b"t\x00c", b"z" * RECORD_SIZE)
            asked.clear()
            tx.delete_range(b"t\x00", b"t\x01")  # a transaction's
            assert asked == []
        assert list(store.scan()) == [(b"ordersX", b"data")]
        store.delete_range(b"", None)  # a range its bounds do not clear: the record stays
        assert b"orders" in asked and list(store.scan()) == []
    finally:
        store.close()
    env = lmdb.open(str(tmp_path / "db"), max_dbs=4)
    try:
        env.open_db(b"orders", create=False)  # the named database is still there
    finally:
        env.close()
