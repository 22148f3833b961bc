"""Keys where a keyspace keeps its records are refused on every path.

The scheme records (``ff "keyspace"`` and the default schemes' record keys), the
footprint registry (``ff "keyspace" 00 …``) and the recorded LengthPrefixed
layout (``LAYOUT_START …``) live among the keys of any scope whose keys may be
any bytes (the root of LengthPrefixed, Sublevel, Naive): a user key there could
forge or overwrite a record. Every read and write of such a key raises
:class:`ReservedKey` with the store unchanged; scans, ``len``, ``clear`` and
``drop`` of those scopes never see or touch the records. Schemes whose stored
keys can never land there (tuple, AsciiHex, ScopeHash) refuse nothing.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.catalog import LAYOUT_START
from keyspace.errors import InvalidName, ReservedKey
from keyspace.keyspace import Keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._layouts import LayoutCache
from keyspace.scope import Scope
from keyspace.scope_store import ScopeStore
from keyspace.stores import MemoryStore

RECORD_KEYS = [TupleScheme().metadata_key, AsciiHex().metadata_key, ScopeHash().metadata_key]
"""The record keys an open reads (the scheme records of the default schemes)."""


def reserved(stored: bytes) -> bool:
    """Where keyspaces keep records, said independently of the library's table."""
    return stored.startswith((b"\xffkeyspace", LAYOUT_START)) or stored in RECORD_KEYS


ANY_BYTES_ROOTS: list[Scheme] = [LengthPrefixed(), Sublevel(), Naive(allow_collisions=True)]
SAFE: list[Scheme] = [TupleScheme(), AsciiHex(), ScopeHash()]

reserved_keys = st.one_of(
    st.sampled_from(RECORD_KEYS),
    st.binary(max_size=6).map(lambda tail: b"\xffkeyspace" + tail),
    st.binary(max_size=6).map(lambda tail: b"\xffkeyspace\x00" + tail),
    st.binary(max_size=6).map(lambda tail: LAYOUT_START + tail),
)
near_keys = st.one_of(
    st.binary(max_size=6),
    st.sampled_from([b"\xff", b"\xff\xff", b"\xffkeyspac", b"\xffkeyspacf", b"ks", b"ks\xfe", b"ks\xff\x00"]),
    reserved_keys,
)


def _fresh(scheme: Scheme) -> Keyspace:
    ks = keyspace.open("memory:", scheme=scheme)
    ks.scope()[b"a"] = b"root"  # the root holds keys: the layout records its leaf
    return ks


def _store_items(ks: Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b"", None))


def _in_transaction(ks: Keyspace, op: Callable[[Scope], object]) -> None:
    with ks.transaction() as tx:
        op(tx.scope())


_POINT_OPS: dict[str, Callable[[Scope, bytes], object]] = {
    "setitem": lambda s, k: s.__setitem__(k, b"v"),
    "getitem": lambda s, k: s[k],
    "get": lambda s, k: s.get(k),
    "contains": lambda s, k: k in s,
    "delitem": lambda s, k: s.__delitem__(k),
    "discard": lambda s, k: s.discard(k),
    "pop": lambda s, k: s.pop(k, None),
    "setdefault": lambda s, k: s.setdefault(k, b"v"),
    "update": lambda s, k: s.update({b"fine": b"v", k: b"v"}),
    "update-pairs": lambda s, k: s.update([(b"fine", b"v"), (k, b"v")]),
}


@pytest.mark.parametrize("scheme", ANY_BYTES_ROOTS, ids=lambda s: s.name)
@pytest.mark.parametrize("op", list(_POINT_OPS), ids=str)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=reserved_keys)
def test_every_point_operation_refuses_a_reserved_key(scheme: Scheme, op: str, key: bytes) -> None:
    ks = _fresh(scheme)
    before = _store_items(ks)
    run = _POINT_OPS[op]
    with pytest.raises(ReservedKey, match="reserves"):
        run(ks.scope(), key)
    with pytest.raises(ReservedKey):
        _in_transaction(ks, lambda s: run(s, key))
    with pytest.raises(ReservedKey):
        run(ks.scope(key="bytes", value="bytes"), key)
    assert _store_items(ks) == before


@pytest.mark.parametrize("scheme", ANY_BYTES_ROOTS, ids=lambda s: s.name)
@settings(max_examples=60, deadline=None)
@given(keys=st.lists(near_keys, min_size=1, max_size=6, unique=True))
def test_a_root_takes_every_other_key_and_never_shows_the_records(scheme: Scheme, keys: list[bytes]) -> None:
    """Model: the root holds exactly the keys accepted; a key is refused exactly
    when its stored key is reserved; scans, len, clear and drop leave the records
    alone."""
    ks = _fresh(scheme)
    root = ks.scope()
    model = {b"a": b"root"}
    for key in keys:
        if key[:1] == b"!" and isinstance(scheme, Sublevel):
            # a child's key in a sublevel root: the scheme refuses it
            with pytest.raises(InvalidName):
                root[key] = b"x"
            continue
        if reserved(scheme.encode((), key)):
            with pytest.raises(ReservedKey):
                root[key] = b"x"
        else:
            root[key] = b"v" + key
            model[key] = b"v" + key
    records = {k: v for k, v in _store_items(ks) if reserved(k)}
    assert dict(root.items()) == model
    assert len(root) == len(model)
    assert sorted(root) == sorted(model)
    high = sorted((k, v) for k, v in model.items() if k >= b"\xff")
    assert list(root.items(start=b"\xff", limit=100)) == high
    assert list(root.items(prefix=b"\xffkeyspace")) == []
    assert list(root.items(reverse=True, limit=2)) == sorted(model.items(), reverse=True)[:2]
    root.clear()
    assert len(root) == 0
    assert {k: v for k, v in _store_items(ks) if reserved(k)} == records
    root.update({b"b": b"v"})
    root.drop()
    assert {k: v for k, v in _store_items(ks) if reserved(k)} == records


@pytest.mark.parametrize("scheme", SAFE, ids=lambda s: s.name)
@settings(max_examples=40, deadline=None)
@given(key=near_keys)
def test_schemes_whose_keys_cannot_land_there_refuse_nothing(scheme: Scheme, key: bytes) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    for path in [(), ("users",)]:
        scope = ks.scope(*path)
        scope[key] = b"v"
        assert scope[key] == b"v"
        assert not reserved(scheme.encode(path, key))


def test_a_forged_record_cannot_be_written_through_a_sublevel_root() -> None:
    """Without the refusal, a sublevel root key at the tuple record key holding a
    record would make the next open see a TupleScheme keyspace."""
    store = MemoryStore()
    ks = keyspace.attach(store, scheme=Sublevel(), close_store=False)
    ks.scope()[b"k"] = b"v"
    with pytest.raises(ReservedKey):
        ks.scope()[b"\xffkeyspace"] = b'{"keyspace":1,"params":{},"scheme":"tuple"}'
    with pytest.raises(ReservedKey):
        ks.scope()[b"\xffkeyspace\x00p"] = b"not a record"
    again = keyspace.attach(store, scheme=Sublevel(), close_store=False)
    assert dict(again.scope()) == {b"k": b"v"}


def test_a_layout_record_cannot_be_forged_or_read_through_the_lp_root() -> None:
    ks = keyspace.open("memory:", scheme=LengthPrefixed())
    ks.scope(b"a", b"b")[b"k"] = b"v"  # records the leaf (a, b)
    record = LAYOUT_START + LengthPrefixed().prefix((b"a", b"b"))
    assert ks.store.get(record) == b"leaf"
    root = ks.scope()
    with pytest.raises(ReservedKey):
        root.get(record)
    with pytest.raises(ReservedKey):
        root[LAYOUT_START + LengthPrefixed().prefix((b"c",))] = b"leaf"  # would forge a leaf
    assert ks.store.get(LAYOUT_START + LengthPrefixed().prefix((b"c",))) is None


def test_a_scope_store_of_a_root_refuses_reserved_keys() -> None:
    ks = keyspace.open("memory:", scheme=LengthPrefixed())
    view = ScopeStore(ks.scope())
    with pytest.raises(ReservedKey):
        view.put(LAYOUT_START + b"x", b"v")
    with pytest.raises(ReservedKey):
        view.write([(b"ok", b"v"), (b"\xffkeyspace", b"v")])
    assert list(ks.store.scan(b"", None)) == []


@pytest.fixture
def lmdb_url(tmp_path: Path) -> Iterator[str]:
    yield f"lmdb://{tmp_path / 'db'}"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "keyspace.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_the_cli_refuses_a_reserved_key(lmdb_url: str) -> None:
    ok = _cli("put", lmdb_url, "--scheme", "length-prefixed", "--key", "k", "--value", "v")
    assert ok.returncode == 0, ok.stderr
    key_hex = (LAYOUT_START + b"\x00\x01z").hex()
    for args in [
        ("put", lmdb_url, "--scheme", "length-prefixed", "--key", key_hex, "--value", "6c656166", "--hex"),
        ("get", lmdb_url, "--scheme", "length-prefixed", "--key", key_hex, "--hex"),
    ]:
        proc = _cli(*args)
        assert proc.returncode == 1, proc
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
        assert "reserves" in proc.stderr
    scan = _cli("scan", lmdb_url, "--scheme", "length-prefixed")
    assert scan.returncode == 0 and scan.stdout == "k\tv\n", scan


def _python_keyspace(scheme: Scheme) -> Keyspace:
    ks = keyspace.open("memory:", scheme=scheme)
    ks._space.layouts = LayoutCache(scheme, accelerate=False)
    ks._default_scopes.clear()
    return ks


@pytest.mark.parametrize("scheme", ANY_BYTES_ROOTS, ids=lambda s: s.name)
@settings(max_examples=60, deadline=None)
@given(key=near_keys, codec=st.sampled_from([None, "bytes", "str"]))
def test_the_c_and_python_key_checks_agree(scheme: Scheme, key: bytes, codec: str | None) -> None:
    """The C transforms refuse exactly what the pure-Python functions refuse, with
    the same error, for bytes keys and str keys (UTF-8) alike."""
    outcomes = []
    for ks in (keyspace.open("memory:", scheme=scheme), _python_keyspace(scheme)):
        scope = ks.scope(key=codec) if codec is not None else ks.scope()
        accelerated = type(scope._stored).__name__ == "Transform"  # type: ignore[attr-defined]
        outcomes.append(accelerated)
        arg: bytes | str = key
        if codec == "str":
            try:
                arg = key.decode()
            except UnicodeDecodeError:
                return
        try:
            outcomes.append(scope._stored(arg))  # type: ignore[attr-defined]
        except Exception as exc:  # the same error from both
            outcomes.append((type(exc), str(exc)))
    assert outcomes[1] == outcomes[3]
    assert outcomes[2] is False
