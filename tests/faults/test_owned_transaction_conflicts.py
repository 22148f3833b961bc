"""A scope operation that owns its transaction runs it again when it loses a race.

``pop``, ``popitem`` and ``setdefault`` outside a transaction read then write in
one transaction of the store, their own. On LMDB with a small map that
transaction may have to grow the map, which releases LMDB's writer lock
between processes: when another process commits meanwhile the transaction
ends with ``TransactionConflict``, having written nothing. The operation runs
it again (it then reads the other commit), so the caller sees the operation
succeed, with the answer a serial order gives. Inside the caller's ``with
ks.transaction()`` the conflict reaches the caller. The race is forced: the
first process's first map growth waits until the other has committed (see
``_owned_conflict_worker``). And when every attempt loses, the conflict says
how many attempts were made. Inside a caller's transaction:
tests/faults/test_callers_transaction_conflicts.py. The same race on etcd:
tests/etcd/test_etcd_owned_conflicts.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from _owned_conflict_worker import fill_map, held_race, races

import keyspace
from keyspace._retry import ATTEMPTS, run_atomically
from keyspace._space import Space
from keyspace.errors import TransactionConflict

MAP = 1 << 20
ONE_DOUBLING = 1_500_000
"""Bytes over the free space of a new 1 MiB map that one doubling makes room for."""


def _url(tmp_path: Path) -> str:
    return f"lmdb://{tmp_path / 'store'}?map_size={MAP}"


def _full_store(tmp_path: Path, items: dict[bytes, bytes], scope: str) -> str:
    """A store whose scope ``scope`` holds ``items`` and whose map is full, so
    that deleting one of them grows the map."""
    url = _url(tmp_path)
    with keyspace.open(url) as ks:
        ks.scope(scope).update(items)
    assert fill_map(str(tmp_path / "store"), MAP) > 0
    return url


@pytest.mark.parametrize("mode", ["pop", "popitem"])
def test_pops_in_a_full_map_never_return_an_item_twice(mode: str, tmp_path: Path) -> None:
    """A pops in a full map, B pops the same meanwhile. A pop's transaction
    grows the map as it begins (more than half of it is used), before it
    reads, so B's commit comes before A's read: A finds k gone (the default),
    or takes the item before B's; one item, popped once."""
    items = {b"a": b"1", b"b": b"2"} if mode == "popitem" else {b"k": b"v"}
    url = _full_store(tmp_path, items, "q" if mode == "popitem" else "c")
    first, second = held_race(str(tmp_path), url, mode, 0)
    if mode == "popitem":
        assert (first["result"], second["result"]) == (["a", "1"], ["b", "2"]), (first, second)
    else:
        assert (first["result"], second["result"]) == (None, "v"), (first, second)
    assert first["outcome"] == second["outcome"] == "ok", (first, second)
    with keyspace.open(url) as ks:
        assert list(ks.scope("q" if mode == "popitem" else "c").items()) == []


@pytest.mark.parametrize("mode", ["setdefault", "aio-setdefault"])
def test_setdefault_runs_again_and_returns_the_stored_value(mode: str, tmp_path: Path) -> None:
    """A's setdefault of a missing key to a value over the free space grows the
    map; B's setdefault of the same key commits meanwhile. A runs again, finds
    B's value and returns it, storing nothing (it raised TransactionConflict):
    every caller gets the value stored."""
    url = _url(tmp_path)
    with keyspace.open(url) as ks:
        ks.scope("c")[b"other"] = b"1"
    first, second = held_race(str(tmp_path), url, mode, ONE_DOUBLING)
    assert second["outcome"] == "ok" and second["result"] == "B", second
    assert first["conflicts"] == 1, first
    assert first["outcome"] == "ok" and first["result"] == "B", first
    with keyspace.open(url) as ks:
        assert ks.scope("c")[b"k"] == b"B"


def test_two_processes_setdefault_and_pop_shared_keys_exactly(tmp_path: Path) -> None:
    """Two processes each setdefault keys 0..23 (the first values of 0.75 to
    1.5 MB, kept, so that a 1 MiB map grows while the other process may
    commit), then pop each, with no retry of their own: no call
    fails, a setdefault returns its own value or the other's, and every value
    stored is popped exactly once (a key popped by one process may be set
    again by the other)."""
    url = _url(tmp_path)
    with keyspace.open(url) as ks:
        ks.scope("c")[b"other"] = b"1"
    rounds = 24
    reports = races(str(tmp_path), url, "pop-setdefault", rounds, ONE_DOUBLING)
    tags = [report["tag"] for report in reports]
    for i in range(rounds):
        seen = [report["rounds"][i] for report in reports]
        assert {got for got, _ in seen} <= set(tags), (i, seen)
        stored = sorted(got for tag, (got, _) in zip(tags, seen, strict=True) if got == tag)
        popped = sorted(took for _, took in seen if took is not None)
        assert stored and popped == stored, (i, seen)
    with keyspace.open(url) as ks:
        assert list(ks.scope("c").keys()) == [b"other"]
    print(f"conflicts run again: {[r['conflicts'] for r in reports]}")


# -- the bound --------------------------------------------------------------------


@contextmanager
def _losing(calls: list[int]) -> Iterator[Any]:
    calls.append(1)
    yield object()
    raise TransactionConflict("another writer committed first (test)")


def test_run_atomically_gives_up_after_the_bound_saying_so() -> None:
    calls: list[int] = []
    with pytest.raises(TransactionConflict, match=f"{ATTEMPTS} attempts") as info:
        run_atomically(lambda: _losing(calls), lambda view: None, "Scope.pop")
    assert len(calls) == ATTEMPTS == 8
    assert "Scope.pop" in str(info.value) and "(test)" in str(info.value)


@pytest.mark.parametrize("operation", ["pop", "popitem", "setdefault", "append"])
def test_a_scope_operation_that_always_loses_stops_at_the_bound(operation: str) -> None:
    """Every transaction the operation begins ends in a conflict: it begins
    :data:`ATTEMPTS` of them, then raises the conflict naming the count, and
    the store is as it was (``append``: its own commit, on a keyspace with the
    change log it numbers its keys by)."""
    with keyspace.open("memory:", changes=operation == "append") as ks:
        scope = ks.scope("c")
        scope[b"k"] = b"v"
        real = Space.transaction
        begun: list[int] = []

        @contextmanager
        def conflicting(space: Space[Any]) -> Iterator[Any]:
            begun.append(1)
            with real(space) as pair:
                yield pair
                raise TransactionConflict("another writer committed first (test)")

        with (
            mock.patch.object(Space, "transaction", conflicting),
            pytest.raises(TransactionConflict, match=f"{ATTEMPTS} attempts") as info,
        ):
            if operation == "pop":
                scope.pop(b"k")
            elif operation == "popitem":
                scope.popitem()
            elif operation == "append":
                scope.append(b"x")
            else:
                scope.setdefault(b"new", b"d")
        assert len(begun) == ATTEMPTS, begun
        assert f"{ATTEMPTS} attempts" in str(info.value)
        assert dict(scope.items()) == {b"k": b"v"}


def test_set_quota_that_always_loses_stops_at_the_bound() -> None:
    """``set_quota`` reads the counter record it rewrites in a transaction of its
    own: it is run again on a conflict, :data:`ATTEMPTS` times in all."""
    with keyspace.open("memory:", accounting=True) as ks:
        ks.scope("c")[b"k"] = b"v"
        store = ks.store
        real = type(store).transaction
        begun: list[int] = []

        @contextmanager
        def conflicting(self: Any) -> Iterator[Any]:
            begun.append(1)
            with real(self) as tx:
                yield tx
                raise TransactionConflict("another writer committed first (test)")

        with (
            mock.patch.object(type(store), "transaction", conflicting),
            pytest.raises(TransactionConflict, match=f"{ATTEMPTS} attempts"),
        ):
            ks.set_quota(("c",), keys=10)
        assert len(begun) == ATTEMPTS
        assert ks.quotas() == {}
        ks.set_quota(("c",), keys=10)
        assert ks.quotas() == {("c",): (10, None)}
