"""``count(start, stop, without=(byte, at))`` of every store view: the keys of the
range holding no ``byte`` from their index ``at`` on, exactly as many as a
recount of the keys (``keys_in``) gives, on the store, its snapshot and a transaction with
writes of its own (LMDB, SQLite, memory; LMDB's unnamed database beside named
ones, whose records are never counted), and a named error for a byte or index
it cannot take, nothing read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.errors import InvalidArgument
from keyspace.stores import keys_in, open_store
from keyspace.stores._base import ReadView, Store, count_lacking

_KEYS = st.lists(
    st.binary(max_size=6).map(lambda b: b"p" + b), unique=True, max_size=60
)  # a few without any 00, some with 00 at any place
_URLS = ["memory:", "lmdb://{d}/env?max_dbs=4", "lmdb://{d}/named?db=data&max_dbs=4", "sqlite://{d}/s.db"]


def _recount(view: ReadView, start: bytes, stop: bytes | None, byte: int, at: int) -> int:
    return sum(1 for k in keys_in(view, start, stop) if bytes((byte,)) not in k[at:])


@contextmanager
def _store(url: str, d: Path) -> Iterator[Store]:
    if "/env" in url:  # a named database beside the data: its record (key "pnamed") is no key to count
        named = open_store(f"lmdb://{d}/env?db=pnamed&max_dbs=4")
        named.put(b"k", b"v")
        named.close()
    store = open_store(url.format(d=d))
    try:
        yield store
    finally:
        store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    keys=_KEYS,
    more=_KEYS,
    byte=st.sampled_from([0, 0x21, 0xFF]),
    at=st.integers(0, 4),
    bounds=st.tuples(st.binary(max_size=3), st.one_of(st.none(), st.binary(max_size=3))),
    empty=st.booleans(),
    url=st.sampled_from(_URLS),
)
def test_a_count_without_a_byte_is_a_recount_of_the_keys(
    tmp_path_factory: pytest.TempPathFactory,
    keys: list[bytes],
    more: list[bytes],
    byte: int,
    at: int,
    bounds: tuple[bytes, bytes | None],
    url: str,
    empty: bool,
) -> None:
    start, stop = b"p" + bounds[0], None if bounds[1] is None else b"p" + bounds[1]
    if empty and not url.startswith("lmdb"):  # the empty key (LMDB holds none), from the start
        keys, start = [b"", *keys], b""
    with _store(url, tmp_path_factory.mktemp("s")) as store:
        store.put_many([(k, b"v" * (len(k) % 3)) for k in keys])
        assert store.count(start, stop, (byte, at)) == _recount(store, start, stop, byte, at)
        with store.snapshot() as snap:
            store.put_many([(k, b"x") for k in more])  # after the snapshot began: not in it
            assert snap.count(start, stop, (byte, at)) == _recount(snap, start, stop, byte, at)
        assert store.count(start, stop, (byte, at)) == _recount(store, start, stop, byte, at)
        with store.transaction() as tx:
            for k in keys[::2]:
                tx.delete(k)
            for k in more[:5]:
                tx.put(b"p" + k, b"t")
            assert tx.count(start, stop, (byte, at)) == _recount(tx, start, stop, byte, at)


@pytest.mark.parametrize("url", _URLS)
@pytest.mark.parametrize(("byte", "at"), [(-1, 0), (256, 0), (0, -1), (True, 0), (0, 1.5)])
def test_a_byte_or_index_it_cannot_take_is_named(url: str, byte: object, at: object, tmp_path: Path) -> None:
    with _store(url, tmp_path) as store:
        store.put(b"k", b"v")
        with pytest.raises(InvalidArgument, match="its byte must be an int of 0-255"):
            store.count(b"", None, (byte, at))  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument), store.snapshot() as snap:
            snap.count(b"", None, (byte, at))  # type: ignore[arg-type]


def test_count_lacking_counts_by_chunks() -> None:
    keys = [b"a\x00b", b"ab", b"\x00ab", b"abc"] * 3000  # more than one chunk
    assert count_lacking(iter(keys), 0, 1) == 3 * 3000  # a 00 before index 1 is not looked at
    assert count_lacking(keys, 0, 0) == 2 * 3000
    assert count_lacking(keys, ord("a"), 1) == 3 * 3000
