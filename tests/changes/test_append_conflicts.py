"""Scope.append outside a transaction owns its commit: when that commit loses a
race (``TransactionConflict``, nothing written) it is made again, as a plain
put's is, at most :data:`~keyspace._retry.ATTEMPTS` times. On LMDB with a small
map the append's commit reads the commit counter and then grows the map, which
lets another process commit in between: the race is forced as in
``_owned_conflict_worker``."""

from __future__ import annotations

from pathlib import Path

from _owned_conflict_worker import held_race

import keyspace

MAP = 1 << 20
ONE_DOUBLING = 1_500_000
"""Bytes over the free space of a new 1 MiB map that one doubling makes room for."""


def test_an_append_that_loses_the_race_is_made_again_after_the_other_commit(tmp_path: Path) -> None:
    """A appends a value that grows the map; B appends meanwhile. A's commit
    ends in a conflict and is made again: both succeed, B's commit first, and
    the scope holds both values in that order (A's append raised
    TransactionConflict to its caller)."""
    url = f"lmdb://{tmp_path / 'store'}?map_size={MAP}"
    with keyspace.open(url, changes=True) as ks:
        ks.scope("c")[b"other"] = b"1"
    first, second = held_race(str(tmp_path), url, "append", ONE_DOUBLING)
    assert second["outcome"] == "ok", second
    assert first["conflicts"] == 1, first
    assert first["outcome"] == "ok", first
    assert first["result"] == second["result"] + 1, (first, second)
    with keyspace.open(url) as ks:
        values = [v for k, v in ks.scope("c").items() if k != b"other"]
        assert [len(v) for v in values] == [1, ONE_DOUBLING]
