"""``keyspace.attach(ks.store)``: a second keyspace over the store object of a
keyspace whose features are on (its ``store`` runs their hooks) runs each hook
once per commit, not once for its own store and once more for the store below:
its writes are counted once and a quota holds at its limit."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace._accounting import accounting_of
from keyspace.errors import QuotaExceeded


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_keyspace_attached_to_an_accounted_store_counts_each_write_once(
    engine: str, tmp_path: Path
) -> None:
    url = {"memory": "memory:", "lmdb": f"lmdb://{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db.sqlite"}[
        engine
    ]
    ks = keyspace.open(url, accounting=True)
    ks.scope("a")[b"w"] = b"1"
    other = keyspace.attach(ks.store, close_store=False)
    other.scope("a")[b"x"] = b"1"
    with other.transaction() as tx:
        tx.scope("a")[b"y"] = b"2"
        tx.scope("a", "b")[b"z"] = b"3"
    other.scope("a").update({b"u": b"4", b"v": b"5"})
    del other.scope("a")[b"u"]
    assert len(ks.scope("a")) == len(other.scope("a")) == 4
    assert ks.stats().subtree_keys == 5
    counts = accounting_of(ks.store)
    assert counts is not None
    with ks.store.snapshot() as view:
        assert counts.differences(view) == []
    ks.set_quota(("a",), keys=6)
    other.scope("a")[b"t"] = b"6"  # 6 keys: allowed
    with pytest.raises(QuotaExceeded, match="would make it 7 keys"):
        other.scope("a")[b"s"] = b"7"
    assert b"s" not in ks.scope("a") and ks.stats().subtree_keys == 6
    other.close()
    ks.close()
