"""PrefixUnion: LMDB named databases laid end to end under one-byte tags behave as
one ordered byte store (checked against a sorted model), and every write across
them is one transaction."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.errors import InvalidName, StoreError
from keyspace.stores._union import PrefixUnion
from keyspace.stores.lmdb import LMDBStore

TAGS = (b"\x00", b"\x01", b"\x02")


@pytest.fixture(scope="module")
def union() -> Iterator[PrefixUnion]:
    with tempfile.TemporaryDirectory() as path:
        parts = [(tag, LMDBStore(path, db=f"part{tag[0]}")) for tag in TAGS]
        store = PrefixUnion(parts, url=f"lmdb://{path}?union")
        yield store
        store.close()


KEYS = st.builds(lambda tag, rest: tag + rest, st.sampled_from(TAGS), st.binary(min_size=1, max_size=6))
BOUND = st.none() | st.binary(max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=st.dictionaries(KEYS, st.binary(max_size=4), max_size=20),
    start=BOUND,
    stop=BOUND,
    reverse=st.booleans(),
    limit=st.none() | st.integers(0, 8),
    doomed=st.tuples(BOUND, BOUND),
)
def test_matches_a_sorted_model(
    union: PrefixUnion,
    items: dict[bytes, bytes],
    start: bytes | None,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    doomed: tuple[bytes | None, bytes | None],
) -> None:
    union.delete_range(b"", None)
    union.write(list(items.items()))
    lo = start or b""
    want = sorted((k, v) for k, v in items.items() if k >= lo and (stop is None or k < stop))
    if reverse:
        want.reverse()
    if limit is not None:
        want = want[:limit]
    assert list(union.scan(lo, stop, reverse=reverse, limit=limit)) == want
    with union.snapshot() as snap:
        assert list(snap.scan(lo, stop, reverse=reverse, limit=limit)) == want
    for key, value in items.items():
        assert union.get(key) == value
    a, b = doomed[0] or b"", doomed[1]
    union.delete_range(a, b)
    left = {k: v for k, v in items.items() if not (k >= a and (b is None or k < b))}
    assert dict(union.scan()) == left


def test_one_transaction_across_parts(union: PrefixUnion) -> None:
    union.delete_range(b"", None)
    with pytest.raises(RuntimeError), union.transaction() as tx:
        tx.put(b"\x00a", b"1")
        tx.put(b"\x02b", b"2")
        assert tx.get(b"\x02b") == b"2"
        raise RuntimeError
    assert list(union.scan()) == []
    with pytest.raises(InvalidName, match="outside every database"):
        union.write([(b"\x00ok", b"1"), (b"\x07no", b"2")])
    assert list(union.scan()) == []  # refused before anything was written
    assert union.get(b"\x07no") is None


def test_tags_must_not_overlap() -> None:
    with tempfile.TemporaryDirectory() as path:
        a, b = LMDBStore(path, db="a"), LMDBStore(path, db="b")
        with pytest.raises(StoreError, match="overlap"):
            PrefixUnion([(b"\x01", a), (b"\x01\x02", b)], url="x")
        with pytest.raises(StoreError, match="empty"):
            PrefixUnion([(b"", a)], url="x")
        a.close()
        b.close()
