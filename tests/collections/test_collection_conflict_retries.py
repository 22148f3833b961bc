"""A collection operation that owns its transaction runs it again when it loses a race.

``IndexedMap.save``, ``Deque.push_back`` (a ``DequeMap``'s deques too),
``Item.update`` and ``SnapshotMap.update`` outside ``using(tx)`` read, then
write, in one transaction of their own. On LMDB with a small map, writing a
value over the free space grows the map inside that transaction, which
releases LMDB's writer lock between processes; when another process commits
meanwhile the transaction ends with ``TransactionConflict``, having written
nothing. The operation runs it again, so the caller sees it succeed (or fail
for what the other commit changed: ``UniqueViolation``), with exact results.
Under ``using(tx)`` the conflict reaches the caller. The race is forced as in
``_owned_conflict_worker``; a two-process run without forcing checks the
totals.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from _owned_conflict_worker import EMAIL, deque, held_race, keyed_deque, races, users

import keyspace
from keyspace._retry import ATTEMPTS
from keyspace.collections import Deque
from keyspace.errors import TransactionConflict

MAP = 1 << 20
ONE_DOUBLING = 1_500_000
"""Bytes over the free space of a new 1 MiB map that one doubling makes room for."""


def _store(tmp_path: Path) -> str:
    """A small-map store whose keyspace and collections' scope exist."""
    url = f"lmdb://{tmp_path / 'store'}?map_size={MAP}"
    with keyspace.open(url) as ks:
        users(ks).save("z", {"email": "z@example.com", "blob": ""})
    return url


def _race(tmp_path: Path, mode: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    url = _store(tmp_path)
    first, second = held_race(str(tmp_path), url, mode, ONE_DOUBLING)
    assert second["outcome"] == "ok", second
    assert first["conflicts"] == 1, first  # the race was taken
    return url, first, second


def _emails(ks: keyspace.Keyspace) -> dict[str, str]:
    """Each record's email, and the unique index checked against them."""
    indexed = users(ks)
    emails = {key: user["email"] for key, user in indexed.items()}
    index = indexed.index("email")
    assert {email: index.load(email)[0] for email in emails.values()} == {e: k for k, e in emails.items()}
    assert len(list(index.items())) == len(emails)
    return emails


def test_indexed_save_runs_again_and_both_records_are_indexed(tmp_path: Path) -> None:
    url, first, _ = _race(tmp_path, "save")
    assert first["outcome"] == "ok", first
    with keyspace.open(url) as ks:
        assert _emails(ks) == {"a": "a@example.com", "b": "b@example.com", "z": "z@example.com"}
        assert len(users(ks).load("a")["blob"]) == ONE_DOUBLING


def test_indexed_save_of_a_taken_email_runs_again_and_is_refused(tmp_path: Path) -> None:
    """B saves the same email while A's save grows the map: A, run again, sees
    B's index entry and raises UniqueViolation; the index stays whole."""
    url, first, _ = _race(tmp_path, "save-same")
    assert first["outcome"] == "UniqueViolation", first
    with keyspace.open(url) as ks:
        assert _emails(ks) == {"b": EMAIL, "z": "z@example.com"}


@pytest.mark.parametrize("mode", ["push", "deque-map"])
def test_push_back_runs_again_and_keeps_both_items(mode: str, tmp_path: Path) -> None:
    url, first, _ = _race(tmp_path, mode)
    assert first["outcome"] == "ok", first
    with keyspace.open(url) as ks:
        queue = deque(ks) if mode == "push" else keyed_deque(ks)
        items = list(queue)
        assert len(queue) == 2 and items[0] == b"B" and items[1] == b"x" * ONE_DOUBLING


@pytest.mark.parametrize("mode", ["item-update", "snapshot-update"])
def test_update_runs_again_and_counts_both(mode: str, tmp_path: Path) -> None:
    """Two updates adding one to a count: the second to commit counts 2."""
    _, first, second = _race(tmp_path, mode)
    assert second["result"] == 1, second
    assert first["outcome"] == "ok" and first["result"] == 2, first


@pytest.mark.parametrize("mode", ["tx-save", "tx-push"])
def test_under_using_the_conflict_reaches_the_caller(mode: str, tmp_path: Path) -> None:
    """Inside the caller's transaction (``using(tx)``) nothing runs again: the
    TransactionConflict reaches the caller, after one attempt, nothing of it
    written."""
    url, first, _ = _race(tmp_path, mode)
    assert first["outcome"] == "TransactionConflict", first
    assert "attempts" not in first["message"], first
    with keyspace.open(url) as ks:
        if mode == "tx-save":
            assert _emails(ks) == {"b": EMAIL, "z": "z@example.com"}
        else:
            assert list(deque(ks)) == [b"B"]


def test_two_processes_save_and_push_exactly(tmp_path: Path) -> None:
    """Two processes each make 30 rounds of an IndexedMap save (round i's email
    in both, the first values over the free space) and a deque push, with no
    retry of their own: exactly one save of each round holds the email, the
    index names it, and the deque holds every push once."""
    url = _store(tmp_path)
    rounds = 30
    reports = races(str(tmp_path), url, "save-push", rounds, ONE_DOUBLING)
    with keyspace.open(url) as ks:
        emails = _emails(ks)
        for i in range(rounds):
            saved = [r["rounds"][i][0] for r in reports if r["rounds"][i][1] == "saved"]
            refused = [r["rounds"][i][1] for r in reports if r["rounds"][i][1] != "saved"]
            assert len(saved) == 1 and refused == ["UniqueViolation"], [r["rounds"][i] for r in reports]
            assert emails[saved[0]] == f"{i}@example.com"
        assert len(emails) == rounds + 1
        pushed = sorted(name for r in reports for name, _ in r["rounds"])
        assert sorted(item.decode() for item in deque(ks)) == pushed
    print(f"conflicts run again: {[r['conflicts'] for r in reports]}")


# -- the bound, and who owns the transaction --------------------------------------


@contextmanager
def _always_conflicting(ks: keyspace.Keyspace, begun: list[int]) -> Iterator[None]:
    """Every transaction of ``ks``'s store ends in a conflict at its commit."""
    store = ks.store
    real = type(store).transaction

    @contextmanager
    def conflicting(self: Any) -> Iterator[Any]:
        begun.append(1)
        with real(self) as tx:
            yield tx
            raise TransactionConflict("another writer committed first (test)")

    with mock.patch.object(type(store), "transaction", conflicting):
        yield


def test_an_owned_operation_that_always_loses_stops_at_the_bound() -> None:
    with keyspace.open("memory:") as ks:
        queue = Deque(ks.scope("app"), "q", value="bytes")
        queue.push_back(b"1")
        begun: list[int] = []
        with _always_conflicting(ks, begun), pytest.raises(TransactionConflict) as info:
            queue.push_back(b"2")
        assert len(begun) == ATTEMPTS
        assert f"{ATTEMPTS} attempts" in str(info.value) and "Deque.push_back" in str(info.value)
        assert list(queue) == [b"1"]


def test_an_operation_using_a_callers_transaction_is_not_run_again() -> None:
    with keyspace.open("memory:") as ks:
        queue = Deque(ks.scope("app"), "q", value="bytes")
        queue.push_back(b"1")
        begun: list[int] = []
        with (
            _always_conflicting(ks, begun),
            pytest.raises(TransactionConflict) as info,
            ks.transaction() as tx,
        ):
            queue.using(tx).push_back(b"2")
        assert len(begun) == 1
        assert "attempts" not in str(info.value)
        assert list(queue) == [b"1"]
