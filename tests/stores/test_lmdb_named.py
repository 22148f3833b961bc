"""LMDB named databases: db=NAME opens one named database of an environment; the
stores of one environment share it, transactions can span them, and the
environment lists its named databases."""

from __future__ import annotations

from pathlib import Path

import lmdb
import pytest

import keyspace
from keyspace.errors import KeyTooLarge, StoreError
from keyspace.stores import LMDBStore


def _raw(path: Path, name: str | None) -> dict[bytes, bytes]:
    """Every item of one database, read with py-lmdb directly."""
    env = lmdb.open(str(path), max_dbs=8, readonly=True, lock=False)
    try:
        db = env.open_db(name.encode()) if name else None
        with env.begin(db=db) as txn:
            return dict(txn.cursor())
    finally:
        env.close()


def test_named_databases_are_separate_and_share_the_environment(tmp_path: Path) -> None:
    a = keyspace.open(tmp_path, db="alpha", scheme="scopehash")
    b = keyspace.open(tmp_path, db="beta")  # the same path again: shared, not refused
    main = LMDBStore(tmp_path)  # the unnamed database (it holds the databases' records)
    a.scope("t")[b"k"] = b"in alpha"
    b.scope("t")[b"k"] = b"in beta"
    main.put(b"plain", b"unnamed")
    assert a.scope("t")[b"k"] == b"in alpha" and b.scope("t")[b"k"] == b"in beta"
    assert a.store.url.endswith("?db=alpha")
    assert main.databases() == ["alpha", "beta"]
    for ks in (a, b):
        ks.close()
    main.close()
    alpha, beta, unnamed = _raw(tmp_path, "alpha"), _raw(tmp_path, "beta"), _raw(tmp_path, None)
    assert b"in alpha" in alpha.values() and b"in alpha" not in beta.values()
    assert b"in beta" in beta.values()
    assert unnamed[b"plain"] == b"unnamed" and set(unnamed) == {b"plain", b"alpha", b"beta"}


def test_environment_closes_with_its_last_store(tmp_path: Path) -> None:
    a, b = LMDBStore(tmp_path, db="a"), LMDBStore(tmp_path, db="b")
    a.put(b"k", b"1")
    a.close()
    b.put(b"k", b"2")  # still open
    b.close()
    env = lmdb.open(str(tmp_path), max_dbs=4)  # no store of this process holds it now
    env.close()
    again = LMDBStore(tmp_path, db="a")
    assert again.get(b"k") == b"1"
    again.close()


def test_nested_transactions_on_two_databases_commit_together(tmp_path: Path) -> None:
    a = keyspace.open(tmp_path, db="a")
    b = keyspace.open(tmp_path, db="b")
    with a.transaction() as ta, b.transaction() as tb:
        ta.scope("x")[b"k"] = b"a1"
        tb.scope("x")[b"k"] = b"b1"
        assert tb.scope("x")[b"k"] == b"b1"
        with a.snapshot() as snap:  # another reader: nothing committed yet
            assert snap.scope("x").get(b"k") is None
    assert a.scope("x")[b"k"] == b"a1" and b.scope("x")[b"k"] == b"b1"

    with pytest.raises(RuntimeError), a.transaction() as ta, b.transaction() as tb:
        ta.scope("x")[b"k"] = b"a2"
        tb.scope("x")[b"k"] = b"b2"
        raise RuntimeError("abort both")
    assert a.scope("x")[b"k"] == b"a1" and b.scope("x")[b"k"] == b"b1"


def test_a_raising_joined_block_discards_the_joint_transaction(tmp_path: Path) -> None:
    a = keyspace.open(tmp_path, db="a")
    b = keyspace.open(tmp_path, db="b")
    with pytest.raises(StoreError, match="joined to this transaction"), a.transaction() as ta:
        ta.scope("x")[b"k"] = b"a"
        try:
            with b.transaction() as tb:
                tb.scope("x")[b"k"] = b"b"
                raise ValueError("inner")
        except ValueError:
            pass
    assert a.scope("x").get(b"k") is None and b.scope("x").get(b"k") is None


@pytest.mark.parametrize("map_size", [1 << 40, 256 << 10], ids=["large map", "small map (logged)"])
def test_a_refused_update_in_a_joined_transaction_writes_none_of_its_pairs(
    tmp_path: Path, map_size: int
) -> None:
    """A joined transaction's ``put_many`` checked each key as it put it: the pairs
    before a key over LMDB's limit stayed in the transaction and committed with
    it, where a plain transaction writes none of them."""
    a = keyspace.open(tmp_path, db="a", map_size=map_size)
    b = keyspace.open(tmp_path, db="b")
    b.scope("s")[b"pre"] = b"1"  # written before: its writes need no check of their own
    pairs = [(b"k%03d" % i, b"v") for i in range(10)] + [(b"x" * 600, b"v"), (b"z", b"v")]
    with a.transaction() as ta, b.transaction() as tb:
        ta.scope("t")[b"a"] = b"1"
        with pytest.raises(KeyTooLarge, match="511"):
            tb.scope("s").update(pairs)
        with pytest.raises(KeyTooLarge, match="511"):
            tb.scope("s").update(iter(pairs))
    assert dict(b.scope("s")) == {b"pre": b"1"} and dict(a.scope("t")) == {b"a": b"1"}


def test_join_gives_one_snapshot_across_databases(tmp_path: Path) -> None:
    a, b = LMDBStore(tmp_path, db="a"), LMDBStore(tmp_path, db="b")
    a.put(b"k", b"a0")
    b.put(b"k", b"b0")
    with a.snapshot() as sa:
        sb = b.join(sa)
        b.put(b"k", b"b1")  # after the snapshot began: not seen through it
        assert sa.get(b"k") == b"a0" and sb.get(b"k") == b"b0"
        assert list(sb.scan()) == [(b"k", b"b0")]
    with a.transaction() as ta:
        tb = b.join(ta)
        tb.put(b"j", b"joined")
        tb.delete(b"k")
        assert tb.get(b"j") == b"joined" and ta.get(b"j") is None
    assert b.get(b"j") == b"joined" and b.get(b"k") is None
    other = LMDBStore(tmp_path / "other")
    with other.snapshot() as so, pytest.raises(StoreError, match="same environment"):
        a.join(so)
    for s in (a, b, other):
        s.close()


def test_named_database_errors(tmp_path: Path) -> None:
    main = LMDBStore(tmp_path)  # max_dbs=0: no named database in this process
    with pytest.raises(StoreError, match="max_dbs"):
        LMDBStore(tmp_path, db="a")
    main.close()
    small = LMDBStore(tmp_path, db="a", max_dbs=1)
    with pytest.raises(StoreError, match="max_dbs"):
        LMDBStore(tmp_path, db="b")
    again = LMDBStore(tmp_path, db="a", max_dbs=4)  # shares the environment as it is
    with pytest.raises(StoreError, match="max_dbs=1"):
        LMDBStore(tmp_path, db="c", max_dbs=4)
    again.close()
    small.close()
    small = LMDBStore(tmp_path, db="a")
    unnamed = LMDBStore(tmp_path)  # shares the environment (max_dbs 16)
    unnamed.put(b"k", b"v")
    with pytest.raises(StoreError, match="not a named database"):
        LMDBStore(tmp_path, db="k")  # a plain key of the unnamed database
    assert unnamed.databases() == ["a"]
    small.close()
    unnamed.close()


def test_url_names_the_database(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path}?db=alpha&max_dbs=4") as ks:
        ks.scope("t")[b"k"] = b"v"
        assert ks.store.url == f"lmdb://{tmp_path}?db=alpha"
    assert _raw(tmp_path, None).keys() == {b"alpha"}
    with keyspace.open(f"lmdb://{tmp_path}?db=alpha", readonly=True) as ks:
        assert ks.scope("t")[b"k"] == b"v"
    with pytest.raises(StoreError, match="no named database 'beta'"):
        keyspace.open(f"lmdb://{tmp_path}?db=beta", readonly=True)


def test_listing_takes_no_database_slot(tmp_path: Path) -> None:
    # LMDB is asked in a slot kept for the question: any max_dbs lists them all
    for name in ("a", "b", "c"):
        LMDBStore(tmp_path, db=name).close()
    for slots in (0, 2, 3):
        few = LMDBStore(tmp_path, max_dbs=slots)
        assert few.databases() == ["a", "b", "c"]
        assert list(few.scan()) == []  # the records are no data
        few.close()


def test_a_joint_transaction_that_fills_a_small_map_grows_and_replays_both(tmp_path: Path) -> None:
    """With a small map a transaction logs its writes; the joined database's
    writes are in the same log, so growing and replaying keeps both."""
    a = LMDBStore(tmp_path, db="a", map_size=256 << 10)
    b = LMDBStore(tmp_path, db="b")
    value = b"x" * 1000
    with a.transaction() as ta, b.transaction() as tb:
        for i in range(600):  # about 1.2 MB: several times the map
            ta.put(b"a%05d" % i, value)
            tb.put(b"b%05d" % i, value)
        tb.delete(b"b00000")
        tb.delete_range(b"b00001", b"b00003")
    assert len(list(a.scan())) == 600 and a.get(b"a00599") == value
    assert [k for k, _ in b.scan(limit=2)] == [b"b00003", b"b00004"] and len(list(b.scan())) == 597
    # growing the map outside a transaction keeps every store of the environment working
    for i in range(600):
        b.put(b"c%05d" % i, value)
    assert a.get(b"a00000") == value and len(list(b.scan())) == 1197
    a.close()
    b.close()
