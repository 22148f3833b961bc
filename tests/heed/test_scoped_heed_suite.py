"""The store conformance suite through a named scope of a scoped-heed ``types``
database (three LMDB databases presented as one byte space), with decoys in the
default scope, a sibling scope and a scope whose hash ends in ff that must never
change; and the declared scheme properties, proven or refuted with Hypothesis."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace import scoped_heed
from keyspace.codecs import BYTES
from keyspace.schemes import Property
from keyspace.schemes.scoped_heed import ScopedHeed
from keyspace.scope_store import ScopeStore
from keyspace.stores import Store
from keyspace.testing import MakeStore, StoreSuite

DECOYS = {(): b"default", ("carry-259",): b"ff scope", ("tenant2",): b"sibling"}


def _open(path: str) -> ScopeStore:
    ks = scoped_heed.open(path, "suite", api="types", key=BYTES, value=BYTES)
    return ScopeStore(ks.scope("tenant1"), owns_keyspace=True)


def _check_decoys(path: str) -> None:
    with scoped_heed.open(path, "suite", api="types", key=BYTES, value=BYTES) as ks:
        for scope, value in DECOYS.items():
            assert dict(ks.scope(*scope)) == {b"decoy": value}, scope


class TestScopeOverScopedHeed(StoreSuite):
    model_examples = 15

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Iterator[MakeStore]:
        paths: dict[str, str] = {}

        def make(url: str | None = None) -> Store:
            if url is not None:
                return _open(paths[url])
            path = str(tmp_path / os.urandom(8).hex())
            store = _open(path)
            ks = store.scope.keyspace
            for scope, value in DECOYS.items():
                ks.scope(*scope)[b"decoy"] = value
            paths[store.url] = path
            return store

        yield make
        for path in paths.values():
            _check_decoys(path)


NAMES = st.text(min_size=1, max_size=12)


@given(NAMES, st.binary(max_size=20), st.binary(max_size=20))
def test_types_keep_byte_order_within_a_scope(name: str, a: bytes, b: bytes) -> None:
    scheme = ScopedHeed("types")
    assert Property.ORDER_WITHIN in scheme.properties
    for path in ((), (name,)):
        assert (scheme.encode(path, a) < scheme.encode(path, b)) == (a < b)


@given(NAMES, st.binary(max_size=20), st.binary(max_size=20))
def test_bytes_databases_order_by_length_first(name: str, a: bytes, b: bytes) -> None:
    scheme = ScopedHeed("raw_bytes")
    assert Property.ORDER_WITHIN not in scheme.properties
    assert (scheme.encode((name,), a) < scheme.encode((name,), b)) == ((len(a), a) < (len(b), b))
    assert (scheme.encode((), a) < scheme.encode((), b)) == (a < b)  # the default scope is raw


def test_bytes_databases_refute_order_within() -> None:
    scheme = ScopedHeed("bytes_keys")
    assert scheme.encode(("t",), b"b") < scheme.encode(("t",), b"aa")  # b"aa" < b"b"


@given(NAMES, NAMES, st.binary(max_size=20), st.binary(max_size=20))
def test_ranges_are_exact(n1: str, n2: str, a: bytes, b: bytes) -> None:
    """A stored key is in a scope's own range exactly when it is that scope's:
    also for hashes whose low byte is ff."""
    for api in ("raw_bytes", "types"):
        scheme = ScopedHeed(api)
        for p1, p2 in (((n1,), (n2,)), ((), (n1,)), ((n1,), ())):
            lo, hi = scheme.own_range(p1)
            stored = scheme.encode(p2, b)
            inside = lo <= stored and (hi is None or stored < hi)
            same = p1 == p2 or (p1 and p2 and scheme.hash_name(p1[0]) == scheme.hash_name(p2[0]))
            assert inside == bool(same)
            assert scheme.decode(scheme.encode(p1, a))[1] == a
    ff = ScopedHeed("types").own_range(("carry-259",))
    assert ff == (b"\x01\xff\xd1\x89\x25", b"\x01\xff\xd1\x89\x26")


@pytest.mark.parametrize("api", ["raw_bytes", "bytes_keys", "types"])
def test_the_schemes_layout_of_every_scope_stores_what_encode_stores(api: str) -> None:
    """``scheme.layout(path)`` asked directly (not through ``scope_scheme``) is the
    layout of that scope: the default scope's keys unframed, named scopes' framed
    where the api frames them."""
    scheme = ScopedHeed(api)
    for path in [(), ("tenant1",), (b"tenant1",)]:
        for key in [b"k", b"", b"\x00\xff" * 9]:
            assert scheme.layout(path).stored(key) == scheme.encode(path, key)
    assert scheme.layout(()).stored(b"k") == b"\x00k"
