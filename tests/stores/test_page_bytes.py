"""The bytes a page of pairs holds, ``page_bytes`` (C and its Python reference
``page_bytes_py``): the sizes of its keys and values added up, any sized key or
value read as ``len()`` reads it; an item that is no pair, or a list that is no
page, is refused with :class:`TypeError` naming it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace.stores._page_bytes import page_bytes, page_bytes_py

SIZES = [page_bytes_py] if page_bytes is page_bytes_py else [page_bytes_py, page_bytes]
pairs = st.lists(st.tuples(st.binary(max_size=40), st.binary(max_size=60)), max_size=60)


@pytest.mark.parametrize("size_of", SIZES)
@given(page=pairs)
def test_a_page_holds_its_keys_and_values_bytes(size_of: object, page: list[tuple[bytes, bytes]]) -> None:
    assert size_of(page) == sum(len(k) + len(v) for k, v in page)  # type: ignore[operator]


@pytest.mark.parametrize("size_of", SIZES)
def test_a_sized_key_or_value_counts_as_len_reads_it(size_of: object) -> None:
    class Key(bytes):
        pass

    page = [(Key(b"abc"), memoryview(b"12345")), (b"", bytearray(b"xy"))]
    assert size_of(page) == 10  # type: ignore[operator]


@pytest.mark.parametrize("size_of", SIZES)
def test_what_is_no_pair_is_refused_naming_it(size_of: object) -> None:
    with pytest.raises(TypeError, match="item 1 of the page is not a"):
        size_of([(b"a", b"1"), (b"b", b"2", b"3")])  # type: ignore[operator]
    with pytest.raises(TypeError, match="item 0 of the page is not a"):
        size_of([[b"a", b"1"]])  # type: ignore[operator]
    with pytest.raises(TypeError):
        size_of([(b"a", 5)])  # type: ignore[operator]  # an int has no size


def test_the_c_pass_is_the_one_used_where_built() -> None:
    try:
        from keyspace.stores._pairs_accel import page_bytes as built
    except ImportError:  # pragma: no cover - built without a C compiler
        pytest.skip("keyspace.stores._pairs_accel was not built")
    assert page_bytes is built
