"""The ``read_pages`` of an SQLite store, of its snapshots and of its transactions
(a read of up to a page is one statement run at once, a longer one in pages)
gives exactly the items of their ``scan``, as non-empty pages: every range, direction and limit,
across the page size, a transaction's own writes included; and it raises
:class:`StoreClosed` on a closed store or an ended view, as ``scan`` does."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import StoreClosed
from keyspace.stores import ReadView, SQLiteStore

_keys = st.binary(max_size=3)


def _read(
    view: ReadView, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
) -> list[tuple[bytes, bytes]]:
    """The items of ``read_pages`` of one range; each page a non-empty list."""
    pages = list(view.read_pages([(start, stop)], reverse, limit))
    assert all(type(page) is list and page for page in pages)
    return [item for page in pages for item in page]


@settings(max_examples=80, deadline=None)
@given(
    keys=st.lists(_keys, max_size=40, unique=True),
    start=st.binary(max_size=2),
    stop=st.none() | st.binary(max_size=2),
    reverse=st.booleans(),
    limit=st.none() | st.integers(min_value=0, max_value=300),
)
def test_read_pages_gives_the_items_of_scan(
    keys: list[bytes], start: bytes, stop: bytes | None, reverse: bool, limit: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "db", sync=False)
        try:
            store.write([(k, b"v" + k) for k in keys])
            got = _read(store, start, stop, reverse, limit)
            assert got == list(store.scan(start, stop, reverse=reverse, limit=limit))
            inside = sorted(k for k in keys if k >= start and (stop is None or k < stop))
            if reverse:
                inside.reverse()
            assert got == [(k, b"v" + k) for k in inside[:limit]]
        finally:
            store.close()


def test_read_pages_across_the_page_size(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "db", sync=False)
    try:
        items = [(b"k%04d" % i, b"v%d" % i) for i in range(600)]
        store.write(items)
        for limit in (0, 1, 255, 256, 257, 512, 513, 600, 601, None):
            assert _read(store, b"", None, False, limit) == items[:limit]
            assert _read(store, b"", b"k9", True, limit) == items[::-1][:limit]
    finally:
        store.close()


@pytest.mark.parametrize("limit", [None, 0, 10, 256, 1000])
def test_read_pages_of_a_closed_store_raises_store_closed(tmp_path: Path, limit: int | None) -> None:
    store = SQLiteStore(tmp_path / "db", sync=False)
    store.put(b"k", b"v")
    store.close()
    with pytest.raises(StoreClosed):
        _read(store, b"", None, False, limit)


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(_keys, max_size=30, unique=True),
    written=st.lists(_keys, max_size=10, unique=True),
    start=st.binary(max_size=2),
    stop=st.none() | st.binary(max_size=2),
    reverse=st.booleans(),
    limit=st.none() | st.integers(min_value=0, max_value=300),
)
def test_a_snapshot_and_a_transaction_read_pages_as_they_scan(
    keys: list[bytes],
    written: list[bytes],
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
) -> None:
    """Their ``read_pages`` gives the items of their own ``scan``: the snapshot's
    state, the transaction's own writes included."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "db", sync=False)
        try:
            store.write([(k, b"v" + k) for k in keys])
            with store.snapshot() as snap:
                store.write([(k, b"later") for k in written])  # after the snapshot's state: not seen
                got = _read(snap, start, stop, reverse, limit)
                assert got == list(snap.scan(start, stop, reverse=reverse, limit=limit))
            with store.transaction() as tx:
                tx.put_many([(k, b"mine") for k in written])
                got = _read(tx, start, stop, reverse, limit)
                assert got == list(tx.scan(start, stop, reverse=reverse, limit=limit))
                inside = sorted(k for k in {*keys, *written} if k >= start and (stop is None or k < stop))
                if reverse:
                    inside.reverse()
                assert [k for k, _ in got] == inside[:limit]
        finally:
            store.close()


@pytest.mark.parametrize("limit", [None, 10])
def test_read_pages_of_an_ended_snapshot_or_transaction_raises_store_closed(
    tmp_path: Path, limit: int | None
) -> None:
    store = SQLiteStore(tmp_path / "db", sync=False)
    try:
        store.put(b"k", b"v")
        with store.snapshot() as snap:
            pass
        with pytest.raises(StoreClosed):
            _read(snap, b"", None, False, limit)
        with store.transaction() as tx:
            pass
        with pytest.raises(StoreClosed):
            _read(tx, b"", None, False, limit)
    finally:
        store.close()
