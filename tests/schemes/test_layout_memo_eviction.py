"""Bounded memos of compiled paths under threads: making scopes of many distinct
paths from several threads at once never raises, and the memos stay bounded.

A full memo drops its oldest entry before it keeps a new one. Two threads that
find it full at the same moment pick the same oldest entry; the second delete
must not fail (a ``KeyError`` out of ``scope.scope(...)`` reads to a caller as a
missing key), nor may a dict changed by another thread between ``iter`` and
``next`` break the eviction.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

import keyspace
from keyspace.catalog import records
from keyspace.schemes import Sublevel, TupleScheme
from keyspace.schemes._layouts import LayoutCache


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads as often as the interpreter can, so that races show."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _race(make: Callable[[int], object], threads: int = 8, each: int = 4000) -> list[BaseException]:
    """Run ``make(i)`` for distinct ``i`` from ``threads`` threads; the errors raised."""
    counter = itertools.count()
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work() -> None:
        start.wait()
        try:
            for _ in range(each):
                make(next(counter))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return errors


@pytest.mark.parametrize("scheme", [TupleScheme(), Sublevel()], ids=["tuple", "sublevel"])
def test_scopes_of_many_paths_from_many_threads_never_raise(
    fast_switching: None, monkeypatch: pytest.MonkeyPatch, scheme: keyspace.schemes.Scheme
) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    ks._space.layouts.size = 4  # a full cache at every new path
    monkeypatch.setattr(records, "_RANGES_MEMO", 4)
    root = ks.scope("r")
    errors = _race(lambda i: root.scope(str(i)))
    assert errors == []
    assert len(ks._space.layouts) <= 4
    assert len(ks.catalog._ranges) <= 4
    child = root.scope("x")
    child[b"k"] = b"v"
    assert dict(root.scope("x")) == {b"k": b"v"}


def test_a_layout_cache_of_many_threads_stays_bounded_and_answers_each_path(fast_switching: None) -> None:
    cache = LayoutCache(TupleScheme(), size=8)

    def make(i: int) -> object:
        path = ("p", str(i))
        layout = cache.get(path)
        assert layout.path == path
        return layout

    assert _race(make) == []
    assert len(cache) <= 8


def test_a_layout_cache_of_size_zero_keeps_nothing_and_still_answers() -> None:
    cache = LayoutCache(TupleScheme(), size=0)
    assert cache.get(("a",)).prefix == TupleScheme().prefix(("a",))
    assert cache.get(("b",)).prefix == TupleScheme().prefix(("b",))
    assert len(cache) == 0
