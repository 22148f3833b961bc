"""``LMDBStore.checked_reads``: reads made only where another database of the
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
    data.write([(b"k%04d" % i, b"v") for i in range(3000)])
    check.put(b"who", b"me")
    yield data, check
    data.close()
    check.close()


def _state(store: LMDBStore) -> int:
    with store.snapshot() as snap:
        return int(snap._txn.id())


def test_reads_where_the_check_holds(pair: Any) -> None:
    data, check = pair
    reads = data.checked_reads(check, b"who", b"me")
    assert reads.get(b"k0001") == b"v" and reads.get(b"missing") is None
    assert reads._state == _state(data)  # remembered for the state it held in
    pages = list(reads.pages(b"", None, False, None))
    assert [k for page in pages for k, _ in page] == [b"k%04d" % i for i in range(3000)]
    assert len(pages) > 1  # pages of short read transactions, as the store's own scans
    keys = [k for page in reads.pages(b"k0100", b"k0200", True, 5, keys=True) for k in page]
    assert keys == [b"k%04d" % i for i in range(199, 194, -1)]
    assert reads.count(b"k0100", b"k0200") == 100 and reads.count(b"k2", b"k1") == 0


@pytest.mark.parametrize("expected", [b"you", b"m", b"me\x00"])
def test_every_read_fails_where_the_check_does_not_hold(pair: Any, expected: bytes) -> None:
    data, check = pair
    reads = data.checked_reads(check, b"who", expected)
    for read in (
        lambda: reads.get(b"k0001"),
        lambda: reads.get(b"missing"),
        lambda: next(iter(reads.pages(b"", None, False, None))),
        lambda: reads.count(b"", None),
    ):
        with pytest.raises(CheckFailed):
            read()
    assert reads._state is None  # a failed check is never remembered
    with pytest.raises(CheckFailed):
        data.checked_reads(check, b"nobody", b"me").get(b"k0001")


def test_a_new_state_is_checked_again(pair: Any) -> None:
    data, check = pair
    reads = data.checked_reads(check, b"who", b"me")
    assert reads.get(b"k0001") == b"v"
    check.put(b"who", b"you")
    with pytest.raises(CheckFailed):
        reads.get(b"k0001")


def test_a_scan_stops_at_the_first_page_read_where_the_check_fails(pair: Any) -> None:
    data, check = pair
    reads = data.checked_reads(check, b"who", b"me")
    pages = reads.pages(b"", None, False, None)
    first = next(pages)
    check.put(b"who", b"you")
    with pytest.raises(CheckFailed):
        next(pages)
    assert first[0][0] == b"k0000"


def test_the_remembered_state_skips_the_check(pair: Any) -> None:
    """Two read transactions of one id read one state: a check that held in it
    holds in every read of it (what makes a point read cost one B-tree lookup)."""
    data, check = pair
    reads = data.checked_reads(check, b"who", b"not what it holds")
    reads._state = _state(data)
    assert reads.get(b"k0001") == b"v"


def test_another_environment_has_none_and_a_closed_store_fails(pair: Any, tmp_path: Path) -> None:
    data, check = pair
    with LMDBStore(tmp_path / "other", db="check", max_dbs=4) as elsewhere:
        assert data.checked_reads(elsewhere, b"who", b"me") is None
    reads = data.checked_reads(check, b"who", b"me")
    data.close()
    with pytest.raises(CheckFailed):
        reads.get(b"k0001")


def test_a_read_only_face_reads_through_its_inner_store(pair: Any) -> None:
    data, check = pair
    face, check_face = ReadOnlyStore(data), ReadOnlyStore(check)
    assert face.checked_reads(check_face, b"who", b"me").get(b"k0001") == b"v"
    with pytest.raises(CheckFailed):
        face.checked_reads(check_face, b"who", b"you").get(b"k0001")
