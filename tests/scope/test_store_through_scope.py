"""The conformance suite again, through a nested scope (as abstract-level runs its
suite on a sublevel): a scope seen as a store must be indistinguishable from a
whole store, and must never touch keys outside its own range. It runs for every
scheme that keeps key order within a scope (property 3) and takes every bytes key:
tuple, length-prefixed, asciihex, naive and delimited (Sublevel refuses keys that
start with its separator, which the store contract allows)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import KeyspaceError
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Naive, Property, Scheme, TupleScheme
from keyspace.scope_store import ScopeStore
from keyspace.stores import Store
from keyspace.testing import MakeStore, StoreSuite

PATH = ("conformance", b"\x00\xff", "nested")
DECOYS = {  # parent, child and sibling keys the scope's view must never see or change
    (("conformance", b"\x00\xff"),): b"parent",
    ((*PATH, "child"),): b"child",
    (("conformance", b"\x00\xff", "nestee"),): b"sibling",
}


SCHEMES: list[Scheme] = [
    TupleScheme(),
    LengthPrefixed(),
    AsciiHex(),
    Naive(allow_collisions=True),
    Delimited(":", depth=len(PATH)),
]
assert all(Property.ORDER_WITHIN in s.properties for s in SCHEMES)


@pytest.fixture(params=SCHEMES, ids=[s.name for s in SCHEMES])
def scheme(request: pytest.FixtureRequest) -> Scheme:
    chosen: Scheme = request.param
    return chosen


def _valid(scheme: Scheme, path: tuple[object, ...]) -> bool:
    """Whether a scope at ``path`` may hold keys (a Delimited branch may not)."""
    try:
        scheme.encode(path, b"decoy")
    except KeyspaceError:
        return False
    return True


def _decoys(scheme: Scheme) -> dict[tuple[tuple[object, ...]], bytes]:
    """Where a scope holds keys or child scopes, not both, only the sibling; only
    the paths the scheme takes (Delimited: one depth)."""
    return {
        (path,): value
        for (path,), value in DECOYS.items()
        if (scheme.separates_own_keys or value == b"sibling") and _valid(scheme, path)
    }


def _open(url: str, scheme: Scheme) -> ScopeStore:
    # schemes that cannot tell own keys from children's are told which scopes hold keys
    depth = None if scheme.separates_own_keys else len(PATH)
    ks = keyspace.open(url, scheme=scheme, leaf_depth=depth)
    return ScopeStore(ks.scope(*PATH), owns_keyspace=True)


def _plant_decoys(store: ScopeStore) -> None:
    ks = store.scope.keyspace
    for (path,), value in _decoys(ks.scheme).items():
        ks.scope(*path)[b"decoy"] = value


def _check_decoys(url: str, scheme: Scheme) -> None:
    depth = None if scheme.separates_own_keys else len(PATH)
    with keyspace.open(url, scheme=scheme, leaf_depth=depth) as ks:
        for (path,), value in _decoys(scheme).items():
            assert dict(ks.scope(*path)) == {b"decoy": value}, path


class TestScopeOverLMDB(StoreSuite):
    model_examples = 15

    @pytest.fixture
    def make_store(self, tmp_path: Path, scheme: Scheme) -> Iterator[MakeStore]:
        urls: dict[str, str] = {}

        def make(url: str | None = None) -> Store:
            if url is not None:
                return _open(urls[url], scheme)
            raw = f"lmdb://{tmp_path / uuid.uuid4().hex}"
            store = _open(raw, scheme)
            _plant_decoys(store)
            urls[store.url] = raw
            return store

        yield make
        for raw in urls.values():  # every store is closed by now (the suite's teardown)
            _check_decoys(raw, scheme)


class TestScopeOverMemory(StoreSuite):
    model_examples = 15

    @pytest.fixture
    def make_store(self, scheme: Scheme) -> MakeStore:
        def make(url: str | None = None) -> Store:
            store = _open("memory:", scheme)
            _plant_decoys(store)
            return store

        return make


@pytest.mark.parametrize("engine", ["memory", "lmdb"])
def test_a_batch_with_a_value_that_is_not_bytes_writes_nothing(tmp_path: Path, engine: str) -> None:
    """``write`` never ran its values through the scope's check: on memory an int
    was stored (and scanned back), on LMDB a raw TypeError escaped."""
    from keyspace.errors import InvalidArgument, InvalidKey

    url = "memory:" if engine == "memory" else str(tmp_path / "s.lmdb")
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"
        store = ScopeStore(ks.scope("a"))
        before = list(ks.store.scan())
        with pytest.raises(InvalidKey, match=r"^value 5 has type int"):
            store.write([(b"x", b"1"), (b"y", 5)])  # type: ignore[list-item]
        for bad in ([(b"x",)], [b"xy"], [(b"x", b"1", b"2")]):
            with pytest.raises(InvalidArgument, match="pair"):
                store.write(bad)  # type: ignore[arg-type]
        assert list(ks.store.scan()) == before
        store.write([(b"x", bytearray(b"1")), (b"k", None)])  # a bytes-like value is its bytes
        assert list(store.scan()) == [(b"x", b"1")]


class _Reversed:
    """A value codec whose stored bytes differ from the value (reversed, tagged)."""

    def encode(self, value: bytes) -> bytes:
        return b"R" + value[::-1]

    def decode(self, raw: bytes) -> bytes:
        assert raw[:1] == b"R", raw
        return raw[1:][::-1]


def test_every_path_of_a_scope_store_uses_the_scopes_codecs(tmp_path: Path) -> None:
    """``transaction()`` and ``snapshot()`` rebuilt the scope from its path, with
    the keyspace's default codecs: a put in a transaction stored the value
    unencoded (a later get failed in the codec), a snapshot read returned stored
    bytes undecoded; ``write`` stored values unencoded too."""
    with keyspace.open(tmp_path / "db") as ks:
        scope = ks.scope("app", value=_Reversed())
        st = ScopeStore(scope)
        st.put(b"a", b"plain")
        with st.transaction() as tx:
            tx.put(b"b", b"in tx")
            assert tx.get(b"a") == b"plain"
        st.write([(b"c", b"batch"), (b"a", None)])
        with st.snapshot() as snap:
            assert snap.get(b"b") == b"in tx"
            assert list(snap.scan()) == [(b"b", b"in tx"), (b"c", b"batch")]
        assert dict(scope.items()) == {b"b": b"in tx", b"c": b"batch"}
        assert dict(ks.scope("app").items()) == {b"b": b"Rxt ni", b"c": b"Rhctab"}
