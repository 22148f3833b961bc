"""The one read route of the store contract, ``read_pages``: its default (built on
``scan``) gives the items of several ranges in turn, at most
``limit`` in all, as non-empty lists, and keys alone with empty values; the
helpers an engine builds its own route with translate its raw errors once, for a
short read at once and for a long one as its pages are read; and no fast scan
twin is left in the contract."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import KeyspaceError, StoreError
from keyspace.stores import ReadView, Store, WriteView, keys_in, pages_by_range, pages_in_turn
from keyspace.stores._base import PAGE_MOST


class _Sorted(ReadView):
    """A view of a dict with nothing but the contract's abstract reads."""

    def __init__(self, data: dict[bytes, bytes]) -> None:
        self.data = data
        self.scans = 0

    def get(self, key: bytes) -> bytes | None:
        return self.data.get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        self.scans += 1
        items = sorted((k, v) for k, v in self.data.items() if k >= start and (stop is None or k < stop))
        return iter((items[::-1] if reverse else items)[:limit])


_keys = st.binary(min_size=1, max_size=2)
_range = st.tuples(st.binary(max_size=2), st.none() | st.binary(max_size=2))


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(_keys, st.binary(max_size=2), max_size=30),
    ranges=st.lists(_range, max_size=4),
    reverse=st.booleans(),
    limit=st.none() | st.integers(0, 40),
    keys_only=st.booleans(),
)
def test_the_default_reads_each_range_in_turn(
    data: dict[bytes, bytes],
    ranges: list[tuple[bytes, bytes | None]],
    reverse: bool,
    limit: int | None,
    keys_only: bool,
) -> None:
    view = _Sorted(data)
    pages = list(view.read_pages(ranges, reverse, limit, keys_only))
    assert all(type(page) is list and page for page in pages)
    want = []
    for lo, hi in ranges:
        inside = sorted(
            (k, b"" if keys_only else v) for k, v in data.items() if k >= lo and (hi is None or k < hi)
        )
        want += inside[::-1] if reverse else inside
    assert list(chain.from_iterable(pages)) == want[:limit]


def test_the_default_reads_no_range_past_the_limit() -> None:
    view = _Sorted({b"a": b"1", b"b": b"2", b"c": b"3"})
    assert list(chain.from_iterable(view.read_pages([(b"a", b"c"), (b"c", None)], False, 2))) == [
        (b"a", b"1"),
        (b"b", b"2"),
    ]
    assert view.scans == 1  # the second range was never asked for


def _raising(pages: list[list[Any]], exc: Exception) -> Iterator[list[Any]]:
    yield from pages
    raise exc


class _Translating(_Sorted):
    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return StoreError(f"translated: {exc}")


def _engine(
    *answers: Iterator[list[Any]],
) -> Callable[[bytes, bytes | None, bool, int | None], Iterator[list[Any]]]:
    """An engine's raw pages of one range: each call gives the next of ``answers``."""
    given = iter(answers)
    return lambda start, stop, reverse, limit: next(given)


_A = (b"a", b"1")


@pytest.mark.parametrize("limit", [1, PAGE_MOST])
def test_a_short_read_of_one_range_is_read_at_once_and_translated(limit: int) -> None:
    view = _Translating({})
    got = pages_by_range(view, _engine(iter([[_A, _A], [_A]])), [(b"", None)], False, limit, False)
    assert got == [[_A, _A], [_A]]  # a list: nothing left to read
    with pytest.raises(StoreError, match="translated: engine") as caught:
        pages_by_range(view, _engine(_raising([[_A]], OSError("engine"))), [(b"", None)], False, limit, False)
    assert isinstance(caught.value.__cause__, OSError)


@pytest.mark.parametrize(("limit", "ranges"), [(None, 1), (PAGE_MOST + 1, 1), (5, 2)])
def test_a_long_read_is_translated_as_its_pages_are_read(limit: int | None, ranges: int) -> None:
    engine = _engine(_raising([[_A], [_A]], OSError("engine")), iter([[_A]]))
    got = pages_by_range(_Translating({}), engine, [(b"", None)] * ranges, False, limit, False)
    assert not isinstance(got, list)
    reader = iter(got)
    assert next(reader) == [_A] and next(reader) == [_A]  # pages read before the error come out
    with pytest.raises(StoreError, match="translated: engine") as caught:
        next(reader)
    assert isinstance(caught.value.__cause__, OSError)


def test_a_keyspace_error_passes_as_it_is() -> None:
    own = StoreError("the view has ended")
    view = _Translating({})
    with pytest.raises(StoreError) as caught:
        pages_by_range(view, _engine(_raising([], own)), [(b"", None)], False, 5, False)
    assert caught.value is own
    with pytest.raises(StoreError) as caught:
        list(pages_by_range(view, _engine(_raising([], own)), [(b"", None)], False, None, False))
    assert caught.value is own


def test_keys_alone_without_key_pages_drop_the_values_of_the_scan() -> None:
    view = _Translating({b"a": b"1", b"b": b"2"})
    got = pages_by_range(view, _engine(), [(b"", None)], False, None, True)
    assert list(chain.from_iterable(got)) == [(b"a", b""), (b"b", b"")]


@pytest.mark.parametrize("limit", [None, 1, 3])
def test_keys_alone_are_the_engines_key_pages_when_given(limit: int | None) -> None:
    view = _Translating({b"a": b"1", b"b": b"2", b"c": b"3"})
    asked: list[tuple[bytes, bytes | None, bool, int | None]] = []

    def key_pages(
        start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[bytes]]:
        asked.append((start, stop, reverse, limit))
        keys = [k for k in sorted(view.data) if k >= start and (stop is None or k < stop)]
        keys = (keys[::-1] if reverse else keys)[:limit]
        yield from (keys[i : i + 2] for i in range(0, len(keys), 2))

    def items(start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> Iterator[list[Any]]:
        raise AssertionError("keys alone read no item")

    got = pages_by_range(view, items, [(b"b", None)], True, limit, True, 0, key_pages)
    want = [b"c", b"b"][:limit]
    assert list(chain.from_iterable(got)) == [(k, b"") for k in want]
    assert list(keys_in(view, b"b", reverse=True, limit=limit)) == want  # the default: through scan
    assert asked == [(b"b", None, True, limit)]


def test_pages_in_turn_asks_each_range_for_what_is_left() -> None:
    asked: list[tuple[bytes, int | None]] = []

    def pages(start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> Iterator[list[bytes]]:
        asked.append((start, limit))
        yield [start] * 3

    got = list(pages_in_turn(pages, [(b"a", b"b"), (b"b", b"c"), (b"c", None)], False, 5))
    assert got == [[b"a"] * 3, [b"b"] * 3] and asked == [(b"a", 5), (b"b", 2)]


def test_the_contract_has_one_read_route_and_no_fast_scan_twins() -> None:
    assert callable(ReadView.read_pages)
    for twin in ("fast_scan", "fast_pages", "fast_scan_ranges", "fast_scan_under", "scan_keys"):
        assert not hasattr(ReadView, twin), twin
    # nor point twins whose errors are the engine's, nor a second count
    for name in ("fast_get", "fast_put", "checked_put", "count_without"):
        assert not hasattr(WriteView, name) and not hasattr(Store, name), name
