"""A whole read of items on LevelDB (``read_pages`` with no limit, the keys given
without the scope's prefix) streams from plyvel's iterators: the items are read
as the caller reads them, so a scan of a whole scope holds one item at a time,
not a page of them, and a store closed under it ends it with ``StoreClosed``."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreClosed
from keyspace.schemes import Sublevel
from keyspace.stores import LevelDBStore

_VALUE = bytes(range(32))


def _peak_of(run: object) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        run()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_whole_scan_of_a_scope_holds_one_item_at_a_time(tmp_path: Path) -> None:
    ks = keyspace.open(f"leveldb://{tmp_path}/db", scheme=Sublevel())
    scope = ks.scope("tenant", "users")
    scope.update({i.to_bytes(4, "big") * 5: _VALUE for i in range(5_000)})
    try:

        def scan() -> None:
            seen = 0
            for key, value in scope.items():
                seen += len(key) + len(value)
            assert seen == 5_000 * (20 + 32)

        scan()  # the first run makes what is made once (the prefixed view, caches)
        # a page of 1,024 items alive at once is ~150 kB of tuples and bytes
        assert _peak_of(scan) < 40_000
    finally:
        ks.close()


def test_the_streamed_page_reads_the_ranges_in_turn_without_their_prefix(tmp_path: Path) -> None:
    store = LevelDBStore(tmp_path / "db")
    try:
        store.write([(b"p/" + bytes([c]), bytes([c])) for c in b"abcdxyz"] + [(b"q/a", b"-")])
        pages = list(store.read_pages([(b"p/a", b"p/c"), (b"p/x", b"p0")], cut=2))
        assert [list(page) for page in pages] == [
            [(b"a", b"a"), (b"b", b"b"), (b"x", b"x"), (b"y", b"y"), (b"z", b"z")]
        ]
    finally:
        store.close()


def test_a_store_closed_under_a_streamed_scan_ends_it_with_store_closed(tmp_path: Path) -> None:
    store = LevelDBStore(tmp_path / "db")
    store.write([(b"p/" + i.to_bytes(2, "big"), b"v") for i in range(100)])
    (page,) = store.read_pages([(b"p/", b"p0")], cut=2)
    items = iter(page)
    assert next(items) == (b"\x00\x00", b"v")
    store.close()
    with pytest.raises(StoreClosed):
        next(items)
