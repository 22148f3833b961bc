"""LMDB keeps each named database as a record of the unnamed database: such a
record is never data of the unnamed database, on every read route, and data is
never taken for one (a 48-byte value under a key holding NUL, a SHA-384 under a
tuple key, is data)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from itertools import chain
from pathlib import Path

import lmdb
import pytest
from _cli import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import StoreError
from keyspace.stores import LMDBStore, keys_in
from keyspace.stores.lmdb._records import RECORD_SIZE, name_candidates_py

NAMES = ("a", "m", "orders", "zz")
DATA = {
    b"0": b"zero",
    b"b": b"x" * RECORD_SIZE,  # a record's size, and no NUL: LMDB says it is data
    b"n": b"n-value",
    b"m\x00": b"y" * RECORD_SIZE,  # a NUL: never a database name (LMDB would open "m")
    b"ordersX": b"after orders",
    b"\xff": b"last",
}


def _environment(path: Path, names: tuple[str, ...] = NAMES) -> None:
    """An environment whose unnamed database holds ``DATA`` and the records of
    the named databases ``names`` (each holding one entry)."""
    for name in names:
        with LMDBStore(path, db=name) as store:
            store.put(b"inside", name.encode())
    with LMDBStore(path) as store:
        store.write(list(DATA.items()))


def _raw_unnamed(path: Path, store: LMDBStore | None = None) -> dict[bytes, bytes]:
    """Every key of the unnamed database as py-lmdb reads it (through ``store``'s
    environment where it is open: one environment per path per process)."""
    if store is not None:
        with store._env.begin() as txn:
            return dict(txn.cursor())
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=0)
    try:
        with env.begin() as txn:
            return dict(txn.cursor())
    finally:
        env.close()


def test_every_read_of_the_unnamed_database_leaves_the_records_out(tmp_path: Path) -> None:
    _environment(tmp_path)
    assert len(_raw_unnamed(tmp_path)) == len(DATA) + len(NAMES)  # the engine holds both
    store = LMDBStore(tmp_path, max_dbs=0)  # no slot: LMDB is asked in a slot kept for it
    try:
        assert dict(store.scan()) == DATA
        assert list(store.scan(reverse=True)) == sorted(DATA.items(), reverse=True)
        assert list(store.scan(b"l", limit=2)) == [(b"m\x00", DATA[b"m\x00"]), (b"n", b"n-value")]
        assert list(store.scan(b"", b"n", reverse=True, limit=2)) == [
            (b"m\x00", DATA[b"m\x00"]),
            (b"b", DATA[b"b"]),
        ]
        assert list(keys_in(store)) == sorted(DATA)
        assert store.count() == len(DATA) and store.count(b"a", b"p") == 4
        for name in NAMES:
            assert store.get(name.encode()) is None
        for key, value in DATA.items():
            assert store.get(key) == value
        seeker = store.seeker()
        assert seeker.seek(b"o") == b"ordersX" and seeker.seek(b"a") == b"b"
        seeker.release()
        with store.snapshot() as snap:
            assert dict(snap.scan()) == DATA and snap.count() == len(DATA)
            assert snap.get(b"orders") is None
            assert [k for page in snap.read_pages([(b"", None)]) for k, _ in page] == sorted(DATA)
            assert dict(chain.from_iterable(snap.read_pages([(b"", None)], False, 3))) == dict(
                list(sorted(DATA.items()))[:3]
            )
            assert list(keys_in(snap, limit=3)) == sorted(DATA)[:3]
        with store.transaction() as tx:
            assert tx.get(b"orders") is None and dict(tx.scan()) == DATA and tx.count() == len(DATA)
            if tx.fast_replace is not None:  # no replay log: the engine's calls and cursor pages
                assert dict(chain.from_iterable(tx.read_pages([(b"", None)]))) == DATA
            tx.delete_range(b"", None)  # every datum goes, the records stay
            assert dict(tx.scan()) == {}
        assert dict(store.scan()) == {} and store.count() == 0
        assert sorted(_raw_unnamed(tmp_path, store)) == sorted(n.encode() for n in NAMES)
        store.write(list(DATA.items()))
        store.delete_range(b"", None)
        assert sorted(_raw_unnamed(tmp_path, store)) == sorted(n.encode() for n in NAMES)
        with pytest.raises(StoreError, match="record of a named database"):
            store.put(b"orders", b"data over a database")
        assert store.databases() == sorted(NAMES)
    finally:
        store.close()
    with LMDBStore(tmp_path, db="orders") as orders:  # each named database is intact
        assert dict(orders.scan()) == {b"inside": b"orders"}


def test_the_unnamed_database_joined_to_a_named_ones_transaction(tmp_path: Path) -> None:
    _environment(tmp_path)
    with LMDBStore(tmp_path, db="orders", max_dbs=8) as orders, LMDBStore(tmp_path) as main:
        with orders.transaction() as tx:
            joined = main.join(tx)
            assert joined.get(b"zz") is None and dict(joined.scan()) == DATA
            assert joined.count() == len(DATA)
            joined.delete_range(b"", None)
        assert dict(main.scan()) == {} and main.databases() == sorted(NAMES)


def test_a_named_database_does_not_bar_the_keyspace_at_the_environment(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path}?db=orders") as ks:
        ks.scope("t")[b"k"] = b"v"
    with keyspace.open(tmp_path) as ks:  # was SchemeMismatch: the record "orders" taken for data
        ks.scope("u")[b"k"] = b"w"
        assert dict(ks.scope("u").items()) == {b"k": b"w"}
        assert ks.scope().scopes() == ["u"]
    with keyspace.open(f"lmdb://{tmp_path}?db=orders") as ks:
        assert dict(ks.scope("t").items()) == {b"k": b"v"}


def test_a_sha384_under_a_tuple_key_is_data_for_inspect(tmp_path: Path) -> None:
    digest = hashlib.sha384(b"x").digest()
    assert len(digest) == RECORD_SIZE
    with keyspace.open(tmp_path) as ks:
        ks.scope("hashes")[b"k"] = digest  # a tuple key: it holds NUL bytes
    LMDBStore(tmp_path, db="orders").close()
    shown = json.loads(run("inspect", str(tmp_path), "--json").stdout)
    assert shown["databases"] == ["orders"]
    assert [(c["path"], c["keys"]) for c in shown["children"]] == [(["hashes"], 1)]


@pytest.mark.parametrize("scheme", ["tuple", "sublevel", "length-prefixed"])
def test_migrate_copies_no_database_record(tmp_path: Path, scheme: str) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    with keyspace.open(src, scheme=scheme) as ks:
        ks.scope("s")[b"k"] = b"v"
    for name in ("orders", "zz"):
        LMDBStore(src, db=name).close()
    depth = ["--depth", "1"] if scheme == "length-prefixed" else []
    run("migrate", str(src), str(dst), "--from-scheme", scheme, "--to-scheme", scheme, *depth)
    expected = {k: v for k, v in _raw_unnamed(src).items() if k not in (b"orders", b"zz")}
    copied = _raw_unnamed(dst)
    assert {k: v for k, v in copied.items() if v == b"v"} == {k: v for k, v in expected.items() if v == b"v"}
    assert b"orders" not in copied and b"zz" not in copied
    assert not any(len(v) == RECORD_SIZE for v in copied.values())


def test_name_candidates_in_c_agree_with_the_reference() -> None:
    pytest.importorskip("keyspace.stores._pairs_accel")
    from keyspace.stores._pairs_accel import name_candidates

    items = [(b"a", b"x" * RECORD_SIZE), (b"a\x00", b"x" * RECORD_SIZE), (b"b", b"x"), b"c", b"c\x00", b""]
    assert name_candidates(items, RECORD_SIZE) == name_candidates_py(items, RECORD_SIZE) == [0, 3, 5]


_names = st.lists(
    st.text(st.characters(min_codepoint=1, max_codepoint=0x2FF), min_size=1, max_size=6),
    max_size=4,
    unique=True,
)
_data = st.dictionaries(
    st.binary(min_size=1, max_size=8),
    st.one_of(st.binary(max_size=4), st.binary(min_size=RECORD_SIZE, max_size=RECORD_SIZE)),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=_names, data=_data)
def test_the_unnamed_database_reads_exactly_its_data(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], data: dict[bytes, bytes]
) -> None:
    path = tmp_path_factory.mktemp("env")
    records = {n.encode() for n in names}
    data = {k: v for k, v in data.items() if k not in records}  # LMDB refuses data under a database's name
    for name in names:
        LMDBStore(path, db=name, max_dbs=8).close()
    with LMDBStore(path) as store:
        store.write(list(data.items()))
        assert dict(store.scan()) == data
        assert list(store.scan(reverse=True)) == sorted(data.items(), reverse=True)
        assert store.count() == len(data) and list(keys_in(store)) == sorted(data)
        for key in records | set(data):
            assert store.get(key) == data.get(key)
        with store.snapshot() as snap:
            assert dict(snap.scan()) == data and snap.count() == len(data)
        store.delete_range(b"\x00", None)
        assert dict(store.scan()) == {}
        assert store.databases() == sorted(names, key=str.encode)


def test_checked_reads_of_the_unnamed_database_leave_the_records_out(tmp_path: Path) -> None:
    _environment(tmp_path)
    with LMDBStore(tmp_path, db="orders", max_dbs=8) as orders, LMDBStore(tmp_path) as main:
        reads = main.checked_reads(orders, b"inside", b"orders")
        assert reads is not None
        assert reads.get(b"zz") is None and reads.get(b"n") == b"n-value"
        assert [kv for page in reads.pages(b"", None, False, None) for kv in page] == sorted(DATA.items())
        assert reads.count(b"", None) == len(DATA)


@settings(max_examples=200, deadline=None)
@given(
    stored=st.dictionaries(
        st.binary(min_size=1, max_size=4), st.binary(min_size=RECORD_SIZE - 1, max_size=RECORD_SIZE + 1)
    ),
    asked=st.lists(st.binary(min_size=1, max_size=4), max_size=8),
)
def test_the_c_record_getter_agrees_with_the_reference(
    stored: dict[bytes, bytes], asked: list[bytes]
) -> None:
    accel = pytest.importorskip("keyspace.stores._pairs_accel")
    from keyspace.stores.lmdb._records import getter_py

    class Odd:  # "records": the keys of odd first byte
        def is_record(self, key: bytes, value: bytes) -> bool:
            assert len(value) == RECORD_SIZE and b"\x00" not in key
            return key[0] % 2 == 1

    fast = accel.RecordGetter(stored.get, Odd().is_record, RECORD_SIZE)
    slow = getter_py(Odd(), stored.get)  # type: ignore[arg-type]
    for key in [*stored, *asked]:
        assert fast(key) == slow(key)


def test_deleting_a_record_as_data_deletes_nothing(tmp_path: Path) -> None:
    # a record is no datum: its delete is a delete of an absent key, and the
    # transaction goes on (LMDB itself refuses it and spoils the transaction)
    _environment(tmp_path)
    with LMDBStore(tmp_path, db="orders", max_dbs=8) as orders, LMDBStore(tmp_path) as main:
        main.delete(b"zz")
        main.write([(b"zz", None), (b"n", None), (b"new", b"1")])
        with main.transaction() as tx:
            tx.delete(b"orders")
            tx.put(b"after", b"2")
        with orders.transaction() as tx:
            main.join(tx).delete(b"a")
            main.join(tx).put(b"joined", b"3")
        assert {b"after", b"joined", b"new"} <= set(dict(main.scan())) and b"n" not in dict(main.scan())
        assert main.databases() == sorted(NAMES)
        assert dict(orders.scan()) == {b"inside": b"orders"}


def test_a_checked_batch_deletes_no_record_as_data(tmp_path: Path) -> None:
    # write_if (a batch committed where a key holds what is expected) deletes as
    # write does: a named database's record holds no datum, so its delete is a
    # delete of nothing and the batch commits
    _environment(tmp_path)
    with LMDBStore(tmp_path) as main:
        main.put(b"check", b"held")
        assert main.write_if(b"check", b"held", [(b"orders", None), (b"n", None), (b"new", b"1")])
        stored = dict(main.scan())
        assert b"n" not in stored and stored[b"new"] == b"1"
        assert main.databases() == sorted(NAMES)
        assert not main.write_if(b"check", b"other", [(b"new", None)])
        assert main.get(b"new") == b"1"


_DROP_AND_WRITE = """
import sys, lmdb
env = lmdb.open(sys.argv[1], max_dbs=4)
db = env.open_db(b"orders")
with env.begin(write=True) as txn:
    txn.drop(db, delete=True)
with env.begin(write=True) as txn:
    txn.put(b"orders", sys.argv[2].encode())
env.close()
"""


def test_a_database_dropped_by_another_process_is_read_as_data_after(tmp_path: Path) -> None:
    # another process drops the named database "orders" and writes a datum of
    # that name whose value has a record's size: this process, which has read
    # the record before, reads and deletes the datum (it took it for the record)
    _environment(tmp_path)
    value = "v" * RECORD_SIZE
    with LMDBStore(tmp_path) as main:
        assert main.get(b"orders") is None and b"orders" not in dict(main.scan())
        subprocess.run([sys.executable, "-c", _DROP_AND_WRITE, str(tmp_path), value], check=True, timeout=60)
        assert main.get(b"orders") == value.encode()
        assert dict(main.scan())[b"orders"] == value.encode() and main.count() == len(DATA) + 1
        with main.snapshot() as snap:
            assert snap.get(b"orders") == value.encode()
        assert main.databases() == sorted(set(NAMES) - {"orders"})
        main.delete(b"orders")
        assert main.get(b"orders") is None and b"orders" not in _raw_unnamed(tmp_path, main)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.sampled_from([b"", b"a", b"b", b"m", b"n", b"o", b"p"]),
    stop=st.sampled_from([None, b"a", b"n", b"ordersX", b"z"]),
    reverse=st.booleans(),
    limit=st.integers(0, 8),
)
def test_short_scans_leave_the_records_out_and_still_fill_their_limit(
    tmp_path_factory: pytest.TempPathFactory, start: bytes, stop: bytes | None, reverse: bool, limit: int
) -> None:
    path = tmp_path_factory.mktemp("env")
    _environment(path)
    inside = sorted(k for k in DATA if k >= start and (stop is None or k < stop))
    want = [(k, DATA[k]) for k in (inside[::-1] if reverse else inside)][:limit]
    with LMDBStore(path) as store:
        assert list(store.scan(start, stop, reverse=reverse, limit=limit)) == want
        with store.snapshot() as snap:
            assert list(chain.from_iterable(snap.read_pages([(start, stop)], reverse, limit))) == want
            assert list(snap.scan(start, stop, reverse=reverse, limit=limit)) == want
        with store.transaction() as tx:
            assert tx.fast_replace is not None  # the transaction's own cursors
            assert list(chain.from_iterable(tx.read_pages([(start, stop)], reverse, limit))) == want
            assert list(tx.scan(start, stop, reverse=reverse, limit=limit)) == want


@pytest.mark.parametrize("limit", [None, 0, 3, 64, 65, 200, 5000])
@pytest.mark.parametrize("reverse", [False, True])
def test_cut_pages_leave_the_records_out_on_every_view_across_pages(
    tmp_path_factory: pytest.TempPathFactory, reverse: bool, limit: int | None
) -> None:
    """``read_pages(..., cut=n)`` of a range whose data and database records
    interleave (values of a record's size, keys with no NUL: each one asked),
    read in several pages: the data alone, each key without the prefix, on the
    store (a short read transaction a page, going on after the last key), a
    snapshot and a transaction."""
    path = tmp_path_factory.mktemp("env")
    names = [f"p/k{i:03d}r" for i in range(0, 400, 7)]
    for name in names:
        LMDBStore(path, db=name, max_dbs=len(names) + 1).close()
    data = {b"p/k%03d" % i: bytes([65 + i % 26]) * RECORD_SIZE for i in range(400)}
    data[b"p0"] = b"after the range"
    with LMDBStore(path) as store:
        store.write(list(data.items()))
        inside = sorted((k for k in data if k.startswith(b"p/")), reverse=reverse)
        want = [(k[2:], data[k]) for k in inside][:limit]
        assert list(chain.from_iterable(store.read_pages([(b"p/", b"p0")], reverse, limit, False, 2))) == want
        with store.snapshot() as snap:
            assert (
                list(chain.from_iterable(snap.read_pages([(b"p/", b"p0")], reverse, limit, False, 2))) == want
            )
        with store.transaction() as tx:
            assert (
                list(chain.from_iterable(tx.read_pages([(b"p/", b"p0")], reverse, limit, False, 2))) == want
            )
