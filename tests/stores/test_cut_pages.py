"""Pages read without the prefix their keys share: ``cut_keys`` (C and its
Python reference) and ``cut_pages``/``cut_ranges`` of ``keyspace.stores``, which
an engine reads ``read_pages(..., cut=n)`` with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace.stores import cut_pages, cut_ranges
from keyspace.stores._cut import cut_keys, cut_keys_py

CUTS = [cut_keys_py] if cut_keys is cut_keys_py else [cut_keys_py, cut_keys]
pairs = st.lists(st.tuples(st.binary(max_size=6), st.binary(max_size=3)), max_size=20)


@pytest.mark.parametrize("cut_keys_of", CUTS)
@given(page=pairs, cut=st.integers(0, 6))
def test_cut_keys_drops_the_first_bytes_of_every_key(cut_keys_of: object, page: list, cut: int) -> None:
    fits = all(len(k) >= cut for k, _ in page)
    if not fits:
        with pytest.raises(ValueError, match=f"the {cut} bytes to cut"):
            cut_keys_of(page, cut)  # type: ignore[operator]
        return
    got = cut_keys_of(page, cut)  # type: ignore[operator]
    assert got == [(k[cut:], v) for k, v in page]
    assert all(type(item) is tuple for item in got)
    assert all(value is v for (_, value), (_, v) in zip(got, page, strict=False))  # values are not copied


@pytest.mark.parametrize("cut_keys_of", CUTS)
def test_cut_keys_refuses_what_is_not_a_page_of_pairs(cut_keys_of: object) -> None:
    with pytest.raises(ValueError, match="negative"):
        cut_keys_of([(b"ab", b"")], -1)  # type: ignore[operator]
    with pytest.raises((ValueError, TypeError)):
        cut_keys_of([(b"ab",)], 1)  # type: ignore[operator]


def test_cut_pages_keeps_a_list_a_list_and_reads_the_rest_as_they_come() -> None:
    pages = [[(b"p/a", b"1")], [(b"p/b", b"2")]]
    assert cut_pages(pages, 0) is pages
    listed = cut_pages(pages, 2)
    assert type(listed) is list and listed == [[(b"a", b"1")], [(b"b", b"2")]]
    read: list[int] = []

    def lazy():  # type: ignore[no-untyped-def]
        for i, page in enumerate(pages):
            read.append(i)
            yield page

    cut = iter(cut_pages(lazy(), 2))
    assert read == []
    assert next(cut) == [(b"a", b"1")] and read == [0]


def test_cut_ranges_under_one_prefix() -> None:
    assert cut_ranges([(b"p/", b"p/c"), (b"p/x", b"p0"), (b"p/y", None)], 2) == (
        b"p/",
        [(b"", b"c"), (b"x", None), (b"y", None)],
    )
    assert cut_ranges([], 2) == (b"", [])
    with pytest.raises(ValueError, match="one 2-byte prefix"):
        cut_ranges([(b"p/a", b"p/c"), (b"q/a", b"q/c")], 2)
    with pytest.raises(ValueError, match="one 3-byte prefix"):
        cut_ranges([(b"p/", b"p0")], 3)
