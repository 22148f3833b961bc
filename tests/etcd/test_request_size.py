"""etcd's request limit (``--max-request-bytes``, 1.5 MiB by default) at its edge,
on every write path a scope has, sync and async: a value that fits is stored
whether or not it is the scope's first write, and anything over the limit is a
:class:`TransactionTooLarge` naming the limit, with nothing applied (no key, and
on a first write no scheme record or registry entry either).

Before: the first write of a scope sends its value in one ``Txn`` with the
keyspace's hidden records, so a value that fits in a request on its own was
refused on the first write and stored on any later one."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from _etcd import own_url

import keyspace
import keyspace.aio
from keyspace.errors import TransactionTooLarge
from keyspace.schemes import ScopeHash
from keyspace.stores import keys_in, open_store
from keyspace.stores.etcd import MAX_KEY_SIZE
from keyspace.stores.etcd._rpc import MAX_REQUEST_BYTES

pytestmark = pytest.mark.etcd

_SCHEMES = ["tuple", "scopehash", "sublevel", "length-prefixed", "asciihex"]
_FITS = MAX_KEY_SIZE - 100
"""A value that fits in one request with a short key under the test's prefix."""


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("request-size")


def _keys(url: str) -> list[bytes]:
    store = open_store(url)
    try:
        return list(keys_in(store, b"", None))
    finally:
        store.close()


@pytest.mark.parametrize("scheme", _SCHEMES)
def test_a_value_that_fits_is_stored_by_a_first_write_too(url: str, scheme: str) -> None:
    big = b"x" * _FITS
    with keyspace.open(url, scheme=scheme) as ks:
        ks.scope("a")[b"k"] = big  # the keyspace's and the scope's first write
        assert ks.scope("a")[b"k"] == big
        ks.scope("b")[b"k"] = big  # a scope's first write in a recorded keyspace
        assert ks.scope("b")[b"k"] == big
        ks.scope("a")[b"k2"] = big  # a later write
        assert ks.scope("a")[b"k2"] == big


@pytest.mark.parametrize("scheme", _SCHEMES)
def test_a_value_over_the_limit_is_refused_with_nothing_recorded(url: str, scheme: str) -> None:
    over = b"x" * MAX_REQUEST_BYTES
    with keyspace.open(url, scheme=scheme) as ks:
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)):
            ks.scope("a")[b"k"] = over
        assert _keys(url) == []  # no scheme record, no registry entry, no layout
        ks.scope("a")[b"small"] = b"1"
        before = _keys(url)
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)):
            ks.scope("a")[b"k"] = over
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)):
            ks.scope("c")[b"k"] = over
        assert _keys(url) == before


@pytest.mark.parametrize("scheme", ["tuple", "scopehash"])
def test_batches_over_the_limit_write_nothing(url: str, scheme: str) -> None:
    batch = {b"k%d" % i: b"x" * 200_000 for i in range(8)}  # 1.6 MB in all
    with keyspace.open(url, scheme=scheme) as ks:
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)):
            ks.scope("a").update(batch)
        assert _keys(url) == []
        ks.scope("a")[b"small"] = b"1"
        before = _keys(url)
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)):
            ks.scope("a").update(batch)
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)), ks.transaction() as tx:
            for key, value in batch.items():
                tx.scope("a")[key] = value
        with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)), ks.transaction() as tx:
            tx.scope("a").update(dict(list(batch.items())[:4]))
            tx.scope("d").update(dict(list(batch.items())[4:]))
        # inside a transaction the hidden records commit first and stay (a registry
        # entry says only which name holds a hash); no key of the transaction does
        records = {ScopeHash().prefix(("d",))} if scheme == "scopehash" else set()
        assert set(_keys(url)) - set(before) <= records
        assert dict(ks.scope("a").items()) == {b"small": b"1"}
        assert dict(ks.scope("d").items()) == {}


@pytest.mark.parametrize("scheme", ["tuple", "scopehash", "sublevel"])
def test_the_async_keyspace_keeps_the_same_edge(url: str, scheme: str) -> None:
    big = b"x" * _FITS
    over = b"x" * MAX_REQUEST_BYTES

    async def run() -> None:
        async with await keyspace.aio.open(url, scheme=scheme) as aks:
            with pytest.raises(TransactionTooLarge, match=str(MAX_REQUEST_BYTES)):
                await aks.scope("a").put(b"k", over)
            assert _keys(url) == []
            await aks.scope("a").put(b"k", big)  # first write: stored
            assert await aks.scope("a").get(b"k") == big
            await aks.scope("b").put(b"k", big)
            assert await aks.scope("b").get(b"k") == big

    asyncio.run(run())
