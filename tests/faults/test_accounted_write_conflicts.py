"""With accounting on, a plain write outside a transaction runs its transaction again.

The counters a write updates (and the old values it replaces) are read inside
the write's own transaction, so a plain ``s[k] = v`` reads. When that
transaction grows a small LMDB map while another process commits, it ends
with ``TransactionConflict``, nothing written; it is the write's own, so it
runs again, and the counts stay equal to a recount. The race is forced as in
``_owned_conflict_worker``.
"""

from __future__ import annotations

from pathlib import Path

from _owned_conflict_worker import held_race

import keyspace
from keyspace._accounting import accounting_of

MAP = 1 << 20
ONE_DOUBLING = 1_500_000
"""Bytes over the free space of a new 1 MiB map that one doubling makes room for."""


def _url(tmp_path: Path) -> str:
    return f"lmdb://{tmp_path / 'store'}?map_size={MAP}"


def test_a_plain_put_with_accounting_runs_its_transaction_again(tmp_path: Path) -> None:
    """With accounting on, a put's transaction reads the counters it updates:
    when it grows the map while another process commits, it ends in a
    conflict; it is the put's own, so it runs again and the counts stay exact
    (it raised TransactionConflict for a plain ``s[k] = v``)."""
    url = _url(tmp_path)
    with keyspace.open(url, accounting=True) as ks:
        ks.scope("c")[b"other"] = b"1"
    first, second = held_race(str(tmp_path), url, "accounting-put", ONE_DOUBLING)
    assert second["outcome"] == "ok", second
    assert first["conflicts"] == 1, first
    assert first["outcome"] == "ok", first
    with keyspace.open(url) as ks:
        scope = ks.scope("c")
        assert sorted(scope.keys()) == [b"big", b"other", b"small"]
        assert scope.stats().keys == 3
        counts = accounting_of(ks.store)
        assert counts is not None
        with ks.store.snapshot() as view:
            assert counts.differences(view) == []  # every count equal to a recount
