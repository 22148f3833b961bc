"""``LMDBStore.get_where``: a point read made only where another database of the
environment holds the expected bytes at a key, in the same read transaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keyspace.stores import LMDBStore
from keyspace.stores._checked import CheckFailed
from keyspace.stores._readonly import ReadOnlyStore


@pytest.fixture
def pair(tmp_path: Path) -> Any:
    data = LMDBStore(tmp_path, db="data", max_dbs=4)
    check = LMDBStore(tmp_path, db="check", max_dbs=4)
    data.put(b"k", b"v")
    check.put(b"who", b"me")
    yield data, check
    data.close()
    check.close()


def _state(store: LMDBStore) -> int:
    with store.snapshot() as snap:
        return int(snap._txn.id())


def test_the_value_where_the_check_holds_and_the_state_remembered(pair: Any) -> None:
    data, check = pair
    memo: list[Any] = [None]
    assert data.get_where(check, b"who", b"me", memo, b"k") == b"v"
    assert memo[0] == _state(data)
    assert data.get_where(check, b"who", b"me", memo, b"missing") is None


def test_check_failed_where_the_check_does_not_hold(pair: Any) -> None:
    data, check = pair
    memo: list[Any] = [None]
    for expected in (b"you", b"m", b"me\x00"):
        with pytest.raises(CheckFailed):
            data.get_where(check, b"who", expected, memo, b"k")
        with pytest.raises(CheckFailed):
            data.get_where(check, b"who", expected, memo, b"missing")
    with pytest.raises(CheckFailed):
        data.get_where(check, b"nobody", b"me", memo, b"k")
    assert memo[0] is None  # a failed check is never remembered


def test_a_new_state_is_checked_again(pair: Any) -> None:
    data, check = pair
    memo: list[Any] = [None]
    assert data.get_where(check, b"who", b"me", memo, b"k") == b"v"
    check.put(b"who", b"you")
    with pytest.raises(CheckFailed):
        data.get_where(check, b"who", b"me", memo, b"k")


def test_the_remembered_state_skips_the_check(pair: Any) -> None:
    """Two read transactions of one id read one state: a check that held in it
    holds in every read of it (the memo is what makes a point read cost one
    B-tree lookup)."""
    data, check = pair
    memo: list[Any] = [_state(data)]
    assert data.get_where(check, b"who", b"not what it holds", memo, b"k") == b"v"


def test_another_environment_or_a_closed_store_is_left_to_the_caller(pair: Any, tmp_path: Path) -> None:
    data, _ = pair
    with LMDBStore(tmp_path / "other", db="check", max_dbs=4) as elsewhere:
        elsewhere.put(b"who", b"me")
        with pytest.raises(CheckFailed):
            data.get_where(elsewhere, b"who", b"me", [None], b"k")
    data.close()
    with pytest.raises(CheckFailed):
        data.get_where(pair[1], b"who", b"me", [None], b"k")


def test_a_read_only_face_reads_through_its_inner_store(pair: Any) -> None:
    data, check = pair
    memo: list[Any] = [None]
    face, check_face = ReadOnlyStore(data), ReadOnlyStore(check)
    assert face.get_where(check_face, b"who", b"me", memo, b"k") == b"v"
    with pytest.raises(CheckFailed):
        face.get_where(check_face, b"who", b"you", [None], b"k")
