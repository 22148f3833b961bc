"""LMDB scans with a small limit read the items at once and cut them at ``stop``
with a binary search: they return exactly what a sorted model does, in the
store, its transactions and its snapshots, and so do the scopes above them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.stores import open_store
from keyspace.stores._base import ReadView, Store

keys = st.binary(min_size=1, max_size=3)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    made = open_store(f"lmdb://{tmp_path_factory.mktemp('short') / 'db'}")
    try:
        yield made
    finally:
        made.close()


def _model(
    items: dict[bytes, bytes], start: bytes, stop: bytes | None, reverse: bool, limit: int
) -> list[tuple[bytes, bytes]]:
    inside = sorted((k, v) for k, v in items.items() if k >= start and (stop is None or k < stop))
    if reverse:
        inside.reverse()
    return inside[:limit]


def _fast(
    view: ReadView, start: bytes, stop: bytes | None, reverse: bool, limit: int
) -> list[tuple[bytes, bytes]]:
    return [item for page in view.read_pages([(start, stop)], reverse, limit) for item in page]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.dictionaries(keys, st.binary(max_size=3), max_size=40),
    start=keys,
    stop=st.one_of(st.none(), keys),
    reverse=st.booleans(),
    limit=st.integers(0, 20),
)
def test_short_scans_match_a_model(
    store: Store, content: dict[bytes, bytes], start: bytes, stop: bytes | None, reverse: bool, limit: int
) -> None:
    store.delete_range(b"\x00", None)
    store.write(list(content.items()))
    want = _model(content, start, stop, reverse, limit)
    assert list(store.scan(start, stop, reverse=reverse, limit=limit)) == want
    assert _fast(store, start, stop, reverse, limit) == want
    with store.snapshot() as snap:
        assert list(snap.scan(start, stop, reverse=reverse, limit=limit)) == want
        assert _fast(snap, start, stop, reverse, limit) == want
    with store.transaction() as tx:
        assert list(tx.scan(start, stop, reverse=reverse, limit=limit)) == want
        assert _fast(tx, start, stop, reverse, limit) == want


def test_the_short_scan_of_a_scope_stops_at_its_end(tmp_path: Path) -> None:
    import keyspace
    from keyspace.schemes import LengthPrefixed

    ks = keyspace.open(f"lmdb://{tmp_path / 'db'}", scheme=LengthPrefixed())
    ks.scope(b"a")[b"1"] = b"x"
    ks.scope(b"b")[b"1"] = b"y"  # the next keys in the store, past the scope's end
    with ks.transaction() as tx:
        assert list(tx.scope(b"a").items(start=b"0", limit=10)) == [(b"1", b"x")]
    assert list(ks.scope(b"a").items(limit=10)) == [(b"1", b"x")]
    ks.close()
