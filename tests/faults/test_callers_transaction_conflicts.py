"""Inside the caller's transaction a conflict reaches the caller.

A scope's ``setdefault`` through ``tx.scope`` inside ``with ks.transaction()``
(or ``async with`` through ``keyspace.aio``) writes into the caller's
transaction, whose block may have computed other writes from its reads: when
that transaction grows a small LMDB map while another process commits, it ends
with ``TransactionConflict`` and keyspace does not run anything again; the
caller does. The race is forced as in ``_owned_conflict_worker``. The
operations that own their transaction and run it again:
tests/faults/test_owned_transaction_conflicts.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _owned_conflict_worker import held_race

import keyspace

MAP = 1 << 20
ONE_DOUBLING = 1_500_000
"""Bytes over the free space of a new 1 MiB map that one doubling makes room for."""


def _url(tmp_path: Path) -> str:
    return f"lmdb://{tmp_path / 'store'}?map_size={MAP}"


@pytest.mark.parametrize("mode", ["tx-setdefault", "aio-tx-setdefault"])
def test_in_a_callers_transaction_the_conflict_reaches_the_caller(mode: str, tmp_path: Path) -> None:
    """The same setdefault through ``tx.scope`` inside ``with ks.transaction()``
    (``async with`` through ``keyspace.aio``):
    the caller's block may rest on reads that cannot be made again here, so
    the TransactionConflict reaches it, after one attempt, nothing written."""
    url = _url(tmp_path)
    with keyspace.open(url) as ks:
        ks.scope("c")[b"other"] = b"1"
    first, second = held_race(str(tmp_path), url, mode, ONE_DOUBLING)
    assert second["outcome"] == "ok" and second["result"] == "B", second
    assert first["outcome"] == "TransactionConflict", first
    assert first["conflicts"] == 1, first
    assert "attempts" not in first["message"], first  # not run again
    with keyspace.open(url) as ks:
        assert ks.scope("c")[b"k"] == b"B"
