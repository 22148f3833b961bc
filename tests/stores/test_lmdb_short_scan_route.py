"""A scan of an LMDB store limited to a few items (``SHORT_SCAN_MOST``), through
the store's ``read_pages`` (and ``scan``) or its watched reads, is one page read in one read
transaction, with no paged route; where a record of a named database lies among
those items it reads on past it, and it answers exactly what the paged route
answers, records left out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.stores import LMDBStore
from keyspace.stores._base import ReadView
from keyspace.stores.lmdb._cursor import SHORT_SCAN_MOST
from keyspace.stores.lmdb._records import RECORD_SIZE

_DATA = {b"k%02d" % i: (b"v" * RECORD_SIZE if i % 3 else b"w") for i in range(40)}
_NAMES = ("k10x", "k20")  # two named databases: their records lie among the data


def _environment(path: Path) -> LMDBStore:
    for name in _NAMES:
        with LMDBStore(path, db=name) as inner:
            inner.put(b"inside", b"x")
    store = LMDBStore(path)
    store.write([(k, v) for k, v in _DATA.items() if k.decode() not in _NAMES])
    return store


def _paged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    paged = LMDBStore._pages

    def counted(self: LMDBStore, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return paged(self, *args, **kwargs)

    monkeypatch.setattr(LMDBStore, "_pages", counted)
    return calls


def _checked(view: ReadView) -> None:
    view.get(b"\x00")


def test_a_short_scan_is_one_page_without_the_paged_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _environment(tmp_path) as store:
        calls = _paged(monkeypatch)
        watched = store.watched_reads(_checked)
        first = [(b"k%02d" % i, _DATA[b"k%02d" % i]) for i in range(5)]
        assert list(store.scan(b"k00", None, limit=5)) == first
        assert list(store.read_pages([(b"k00", None)], False, 5)) == [first]
        pages = list(watched.pages(b"k00", b"k05", True, 10))
        assert pages == [[(b"k%02d" % i, _DATA[b"k%02d" % i]) for i in range(4, -1, -1)]]
        assert calls == []
        # the record of "k20" among the items: the short page reads on past it itself
        got = [item for page in store.read_pages([(b"k18", None)], False, 4) for item in page]
        assert [k for k, _ in got] == [b"k18", b"k19", b"k21", b"k22"]
        got = [item for page in watched.pages(b"k18", None, False, 4) for item in page]
        assert [k for k, _ in got] == [b"k18", b"k19", b"k21", b"k22"]
        assert calls == []


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LMDBStore]:
    store = _environment(tmp_path_factory.mktemp("short"))
    try:
        yield store
    finally:
        store.close()


@settings(max_examples=150, deadline=None)
@given(
    start=st.binary(max_size=3),
    stop=st.one_of(st.none(), st.binary(max_size=3)),
    reverse=st.booleans(),
    limit=st.integers(1, SHORT_SCAN_MOST + 2),
)
def test_a_short_scan_answers_as_the_paged_route(
    shared: LMDBStore, start: bytes, stop: bytes | None, reverse: bool, limit: int
) -> None:
    store = shared
    expected = [item for page in store._pages(start, stop, reverse, limit) for item in page]
    model = sorted(
        (k, v)
        for k, v in _DATA.items()
        if k.decode() not in _NAMES and k >= start and (stop is None or k < stop)
    )
    assert expected == (model[::-1] if reverse else model)[:limit]
    assert list(store.scan(start, stop, reverse=reverse, limit=limit)) == expected
    assert [item for page in store.read_pages([(start, stop)], reverse, limit) for item in page] == expected
    watched = store.watched_reads(_checked)
    assert [item for page in watched.pages(start, stop, reverse, limit) for item in page] == expected
