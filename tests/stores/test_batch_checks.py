"""Batches check every key once, in C passes, before anything is written: a bad key
anywhere in a bulk load, a first write or an LMDB batch is refused with the error
naming the first bad key, and the store keeps nothing of the batch."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.errors import InvalidName, KeyTooLarge
from keyspace.stores import LMDBStore

_GOOD = [(bytes([i, j]), b"v") for i in range(1, 40) for j in range(1, 40)]


@pytest.mark.parametrize("at", [0, 700, len(_GOOD)])
def test_lmdb_batches_refuse_a_bad_key_anywhere(tmp_path: Path, at: int) -> None:
    store = LMDBStore(tmp_path / "db", sync=False)
    long_key = b"L" * 600
    for bad, error, words in (
        (b"", InvalidName, "empty key"),
        (long_key, KeyTooLarge, "600 bytes"),
    ):
        batch = [*_GOOD[:at], (bad, b"x"), *_GOOD[at:]]
        with pytest.raises(error, match=words):
            store.write(batch)
        with pytest.raises(error, match=words), store.transaction() as tx:
            tx.put_many(batch)
        assert list(store.scan()) == []
    # both kinds in one batch: the first one is named
    with pytest.raises(KeyTooLarge, match="600 bytes"):
        store.write([*_GOOD[:at], (long_key, b"x"), (b"", b"x"), *_GOOD[at:]])
    with pytest.raises(InvalidName, match="empty key"):
        store.write([*_GOOD[:at], (b"", b"x"), (long_key, b"x"), *_GOOD[at:]])
    store.put_many(_GOOD)
    assert len(list(store.scan())) == len(_GOOD)
    store.close()


def test_a_first_write_with_a_key_too_long_records_nothing(tmp_path: Path) -> None:
    ks = keyspace.open(f"lmdb://{tmp_path}/db")
    pairs = dict(_GOOD)
    pairs[b"K" * 600] = b"x"
    with pytest.raises(KeyTooLarge, match="limit of 511 bytes"):
        ks.scope("t").update(pairs)
    with pytest.raises(KeyTooLarge, match="limit of 511 bytes"), ks.transaction() as tx:
        tx.scope("t").update(pairs)
    assert list(ks.store.scan()) == []  # no scheme record, no pair
    # the error caught inside the transaction, which then commits
    with ks.transaction() as tx, pytest.raises(KeyTooLarge, match="limit of 511 bytes"):
        tx.scope("t").update(pairs)
    assert list(ks.store.scan()) == []  # and holds nothing of the refused update
    del pairs[b"K" * 600]
    with ks.transaction() as tx:
        tx.scope("t").update(pairs)
    assert dict(ks.scope("t").items()) == pairs
    ks.close()
