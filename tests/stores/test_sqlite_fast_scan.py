"""An SQLite store's ``fast_scan`` (a scan of up to a page read by one statement
at once, a longer one in pages) gives exactly the items of ``scan``: every
range, direction and limit, across the page size; and it raises
:class:`StoreClosed` on a closed store, as ``scan`` does."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import StoreClosed
from keyspace.stores import SQLiteStore

_keys = st.binary(max_size=3)


@settings(max_examples=80, deadline=None)
@given(
    keys=st.lists(_keys, max_size=40, unique=True),
    start=st.binary(max_size=2),
    stop=st.none() | st.binary(max_size=2),
    reverse=st.booleans(),
    limit=st.none() | st.integers(min_value=0, max_value=300),
)
def test_fast_scan_gives_the_items_of_scan(
    keys: list[bytes], start: bytes, stop: bytes | None, reverse: bool, limit: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "db", sync=False)
        try:
            store.write([(k, b"v" + k) for k in keys])
            assert store.fast_scan is not None
            got = list(store.fast_scan(start, stop, reverse, limit))
            assert got == list(store.scan(start, stop, reverse=reverse, limit=limit))
            inside = sorted(k for k in keys if k >= start and (stop is None or k < stop))
            if reverse:
                inside.reverse()
            assert got == [(k, b"v" + k) for k in inside[:limit]]
        finally:
            store.close()


def test_fast_scan_across_the_page_size(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "db", sync=False)
    try:
        items = [(b"k%04d" % i, b"v%d" % i) for i in range(600)]
        store.write(items)
        assert store.fast_scan is not None
        for limit in (0, 1, 255, 256, 257, 512, 513, 600, 601, None):
            assert list(store.fast_scan(b"", None, False, limit)) == items[:limit]
            assert list(store.fast_scan(b"", b"k9", True, limit)) == items[::-1][:limit]
    finally:
        store.close()


@pytest.mark.parametrize("limit", [None, 0, 10, 256, 1000])
def test_fast_scan_of_a_closed_store_raises_store_closed(tmp_path: Path, limit: int | None) -> None:
    store = SQLiteStore(tmp_path / "db", sync=False)
    store.put(b"k", b"v")
    fast = store.fast_scan
    assert fast is not None
    store.close()
    with pytest.raises(StoreClosed):
        list(fast(b"", None, False, limit))
