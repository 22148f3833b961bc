"""The size check of a batch of stored keys: the C helper and its Python reference
agree on every batch, and the stores and the catalog refuse through it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidName, KeyTooLarge
from keyspace.stores import _key_sizes

try:
    from keyspace.stores import _pairs_accel as accel
except ImportError:  # pragma: no cover - setup.py builds it where it can
    accel = None  # type: ignore[assignment]
needs_c = pytest.mark.skipif(accel is None, reason="the optional C module is not built")

keys = st.binary(max_size=12)
batches = st.one_of(
    st.lists(keys, max_size=20),
    st.lists(st.tuples(keys, st.binary(max_size=3)), max_size=20),
)
limits = st.one_of(st.none(), st.integers(min_value=0, max_value=12))


def _expected(batch: list[Any], max_size: int | None, empty_ok: bool) -> int:
    for i, item in enumerate(batch):
        key = item[0] if type(item) is tuple else item
        if (max_size is not None and len(key) > max_size) or (not key and not empty_ok):
            return i
    return -1


@given(batches, limits, st.booleans())
def test_reference_finds_the_first_bad_key(batch: list[Any], max_size: int | None, empty_ok: bool) -> None:
    assert _key_sizes.first_bad_key_py(batch, max_size, empty_ok) == _expected(batch, max_size, empty_ok)


@needs_c
@given(batches, limits, st.booleans())
def test_c_finds_the_first_bad_key(batch: list[Any], max_size: int | None, empty_ok: bool) -> None:
    assert accel.first_bad_key(batch, max_size, empty_ok) == _expected(batch, max_size, empty_ok)


class _Lying(bytes):
    def __len__(self) -> int:
        return 0


mixed = st.lists(
    st.one_of(
        keys,
        st.tuples(keys, st.binary(max_size=3)),
        st.lists(keys, min_size=2, max_size=2),  # a list is no pair: its own length is its size
        st.just(()),
        keys.map(_Lying),  # a bytes subclass is sized by its bytes, not its __len__
        st.tuples(keys.map(_Lying), st.binary(max_size=3)),
    ),
    max_size=12,
)


@needs_c
@given(mixed, limits, st.booleans())
def test_c_and_the_reference_agree_on_mixed_items(
    batch: list[Any], max_size: int | None, empty_ok: bool
) -> None:
    """Items of several kinds in one batch: the reference took the kind of the
    first for all (missing a bad key, or raising IndexError), and sized a bytes
    subclass by its own ``__len__``."""
    assert _key_sizes.first_bad_key_py(batch, max_size, empty_ok) == accel.first_bad_key(
        batch, max_size, empty_ok
    )


@needs_c
def test_c_helper_takes_sized_keys_and_refuses_the_rest() -> None:
    assert accel.first_bad_key([bytearray(b"abc"), memoryview(b"")], 2, True) == 0
    assert accel.first_bad_key([bytearray(b"ab"), memoryview(b"")], 2, False) == 1
    with pytest.raises(TypeError):
        accel.first_bad_key([b"a", 5], 2, True)
    with pytest.raises(TypeError):
        accel.first_bad_key((b"a",), 2, True)  # a list only


@pytest.mark.parametrize("reference", [False, True], ids=["C", "Python"])
def test_lmdb_bulk_write_with_one_bad_key_names_it_and_writes_nothing(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, reference: bool
) -> None:
    if reference:  # the one name the catalog's and LMDB's checks go through
        monkeypatch.setattr(_key_sizes, "first_bad_key", _key_sizes.first_bad_key_py)
    ks = keyspace.open(f"lmdb://{tmp_path}/db")
    try:
        scope = ks.scope("t", "users")
        big = b"k" * 600
        pairs = [(b"a%d" % i, b"v") for i in range(50)] + [(big, b"v")] + [(b"z", b"v")]
        with pytest.raises(KeyTooLarge, match="over"):
            scope.update(pairs)  # the scope's first write: the catalog's check
        assert list(scope.items()) == []
        scope[b"first"] = b"1"
        with pytest.raises(KeyTooLarge, match="511"):
            scope.update(pairs)  # later writes: the store's check
        with pytest.raises(KeyTooLarge, match="511"), ks.transaction() as tx:
            tx.scope("t", "users").update(pairs)
        assert dict(scope.items()) == {b"first": b"1"}
    finally:
        ks.close()


def test_empty_key_is_refused_by_name(tmp_path: Any) -> None:
    ks = keyspace.open(f"lmdb://{tmp_path}/db", scheme=keyspace.schemes.Sublevel())
    try:
        raw = ks.store
        with pytest.raises(InvalidName, match="empty key"):
            raw.write([(b"a", b"1"), (b"", b"2")])
        assert raw.get(b"a") is None
    finally:
        ks.close()
