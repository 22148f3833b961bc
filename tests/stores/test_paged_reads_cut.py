"""``read_pages(..., cut=n)`` of the views that read in pages (an engine's
watched reads, the checked reads of a scope whose name another record
guards): the keys come without the prefix every key of the ranges shares, cut
as they are read, over several pages, short reads and long, each direction,
LMDB's database records left out, and the same where a check fails and the
rest is read from a snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import pytest

from keyspace.stores import LMDBStore, ReadView, SQLiteStore
from keyspace.stores._checked import CheckedReads
from keyspace.stores._watched import WatchedReads
from keyspace.stores.lmdb._records import RECORD_SIZE

DATA = {b"p/k%04d" % i: bytes([65 + i % 26]) * (RECORD_SIZE if i % 2 else 5) for i in range(1500)}
DATA[b"p0"] = b"past the prefix"
DATA[b"o"] = b"before it"
NAMES = [f"p/k{i:04d}r" for i in range(0, 1500, 97)]  # LMDB records among the data
RANGES = [[(b"p/", b"p0")], [(b"p/k0010", b"p/k0020"), (b"p/k1400", b"p0")]]


def _want(
    ranges: list[tuple[bytes, bytes | None]], reverse: bool, limit: int | None
) -> list[tuple[bytes, bytes]]:
    out = []
    for lo, hi in ranges:
        keys = sorted((k for k in DATA if k >= lo and (hi is None or k < hi)), reverse=reverse)
        out += [(k[2:], DATA[k]) for k in keys]
    return out[:limit]


def _lmdb(path: Path) -> LMDBStore:
    for name in NAMES:
        LMDBStore(path, db=name, max_dbs=len(NAMES) + 2).close()
    store = LMDBStore(path, max_dbs=len(NAMES) + 2)
    store.write(list(DATA.items()))
    return store


def _sqlite(path: Path) -> SQLiteStore:
    store = SQLiteStore(path / "db.sqlite")
    store.write(list(DATA.items()))
    return store


def _seen(view: ReadView) -> None:
    view.get(b"\x00")


@pytest.fixture(params=["lmdb watched", "sqlite watched", "lmdb checked", "lmdb checked, failing"])
def view(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    kind = request.param
    store = _sqlite(tmp_path) if kind.startswith("sqlite") else _lmdb(tmp_path)
    try:
        if kind.endswith("watched"):
            offered = store.watched_reads(_seen)  # type: ignore[attr-defined]
            assert offered is not None
            yield WatchedReads(store, offered)
        else:
            store.put(b"check", b"yes")
            expected = b"no" if kind.endswith("failing") else b"yes"
            yield CheckedReads(store, store, b"", b"check", expected, lambda snap: True)
    finally:
        store.close()


@pytest.mark.parametrize("ranges", RANGES)
@pytest.mark.parametrize("limit", [None, 0, 1, 10, 64, 65, 1024, 1025, 5000])
@pytest.mark.parametrize("reverse", [False, True])
def test_cut_pages_hold_the_data_without_the_prefix(
    view: Any, ranges: list[tuple[bytes, bytes | None]], reverse: bool, limit: int | None
) -> None:
    got = list(view.read_pages(ranges, reverse, limit, False, 2))
    assert all(got), "a page is never empty"
    assert list(chain.from_iterable(got)) == _want(ranges, reverse, limit)
    whole = list(chain.from_iterable(view.read_pages(ranges, reverse, limit)))
    assert [(k[2:], v) for k, v in whole] == _want(ranges, reverse, limit)
