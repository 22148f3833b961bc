"""Scopes of a scoped-heed keyspace run their data path on the LMDB database that
holds their keys (``ReadView.narrow``): the narrowed route stores and returns the
same bytes as the general route through the PrefixUnion, and every path of a
narrowed scope still refuses a name whose hash another name holds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import lmdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_scoped_heed import _colliding_name
from xxhash import xxh32_intdigest

from keyspace import bincode, scoped_heed
from keyspace.errors import HashCollision, KeyspaceError
from keyspace.schemes.scoped_heed import ScopedHeed
from keyspace.stores._union import _Routed

PATHS: list[tuple[str, ...]] = [(), ("a",), ("tenant-b",)]
APIS: dict[str, dict[str, Any]] = {
    "raw_bytes": {},
    "bytes_keys": {"value": bincode.STRING},
    "types": {"key": bincode.U64, "value": bincode.STRING},
}


def _dump(path: Path) -> dict[bytes, list[tuple[bytes, bytes]]]:
    """Every record of every database of the environment, read by py-lmdb."""
    env = lmdb.open(str(path), max_dbs=16, readonly=True, lock=False)
    try:
        with env.begin() as txn:
            names = [k for k, _ in txn.cursor()]
        out = {b"": []}
        with env.begin() as txn:
            out[b""] = list(txn.cursor())
        for name in names:
            try:
                db = env.open_db(name, create=False)
            except lmdb.Error:
                continue
            with env.begin(db=db) as txn:
                out[name] = list(txn.cursor())
        return out
    finally:
        env.close()


@contextmanager
def _general() -> Iterator[None]:
    """The general route: no view of the union narrows."""
    with mock.patch.object(_Routed, "narrow", lambda self, prefix: None):
        yield


def _key(api: str, draw: Any) -> Any:
    return draw if api != "types" else int.from_bytes(draw[:8].ljust(8, b"\0"), "little")


def _value(api: str, raw: bytes) -> Any:
    return raw if api == "raw_bytes" else raw.hex()


_op = st.tuples(
    st.sampled_from(["put", "del", "update", "clear", "tx_put", "tx_update", "clear_range"]),
    st.sampled_from(range(len(PATHS))),
    st.binary(min_size=1, max_size=12),
    st.binary(max_size=8),
)


def _run(ks: scoped_heed.ScopedHeedKeyspace, api: str, ops: list[Any], narrowed: bool) -> list[Any]:
    """Apply ``ops``, then read everything back; asserts the scopes took the route asked for."""
    seen: list[Any] = []
    for name, at, rawkey, rawvalue in ops:
        path, key, value = PATHS[at], _key(api, rawkey), _value(api, rawvalue)
        scope = ks.scope(*path)
        assert (scope._cut > 0) is narrowed  # type: ignore[attr-defined]
        if name == "put":
            scope[key] = value
        elif name == "del":
            seen.append(scope.pop(key, None))
        elif name == "update":
            scope.update([(key, value), (_key(api, rawkey + b"x"), value)])
        elif name == "clear":
            if rawvalue[:1] == b"\0":
                scope.clear()
        elif name == "clear_range":
            scope.clear_range(start=key)
        else:
            with ks.transaction() as tx:
                inner = tx.scope(*path)
                assert (inner._cut > 0) is narrowed  # type: ignore[attr-defined]
                seen.append(inner.get(key))
                if name == "tx_put":
                    inner[key] = value
                    tx.scope()[_key(api, rawkey)] = value  # the default scope in the same transaction
                else:
                    inner.update({key: value})
    for path in PATHS:
        scope = ks.scope(*path)
        seen.append((len(scope), bool(scope), list(scope.items()), list(scope.items(reverse=True, limit=3))))
        with ks.snapshot() as snap:
            inner = snap.scope(*path)
            seen.append([(k, inner.get(k), k in inner) for k in list(inner.keys())[:5]])
    seen.append(list(ks.scope().subtree()))
    return seen


@pytest.mark.parametrize("api", list(APIS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op, max_size=14))
def test_narrowed_and_general_routes_store_and_return_the_same_bytes(
    tmp_path_factory: pytest.TempPathFactory, api: str, ops: list[Any]
) -> None:
    a, b = tmp_path_factory.mktemp("narrowed"), tmp_path_factory.mktemp("general")
    with scoped_heed.open(a, "db", api=api, **APIS[api]) as ks:
        narrowed = _run(ks, api, ops, True)
    with _general(), scoped_heed.open(b, "db", api=api, **APIS[api]) as ks:
        general = _run(ks, api, ops, False)
    assert narrowed == general
    assert _dump(a) == _dump(b)


def test_narrowed_keys_are_the_general_keys_without_the_tag(tmp_path: Path) -> None:
    """The rebased layout builds exactly the database key: the union key less its tag."""
    with scoped_heed.open(tmp_path, "db") as ks:
        for path in PATHS:
            scope = ks.scope(*path)
            whole = scope.layout
            part = scope._layout  # type: ignore[attr-defined]
            scheme = ScopedHeed("raw_bytes")
            for key in (b"k", b"\x00\xff", b"x" * 40):
                assert part.stored(key) == whole.stored(key)[1:] == scheme.encode(path, key)[1:]
                assert part.key_of(part.stored(key)) == key


def _collider(tmp_path: Path) -> tuple[str, str]:
    with scoped_heed.open(tmp_path, "db") as ks:
        ks.scope("first")[b"k"] = b"v"
    return "first", _colliding_name(xxh32_intdigest(b"first"), {"first"})


PATHS_OF_A_SCOPE: dict[str, Callable[[Any], Any]] = {
    "get": lambda s: s.get(b"k"),
    "getitem": lambda s: s[b"k"],
    "contains": lambda s: b"k" in s,
    "items": lambda s: list(s.items()),
    "short items": lambda s: list(s.items(limit=3)),
    "items from a start": lambda s: list(s.items(start=b"a", limit=3)),
    "keys": lambda s: list(s.keys()),
    "values": lambda s: list(s.values(reverse=True)),
    "len": len,
    "bool": bool,
    "setitem": lambda s: s.__setitem__(b"k", b"w"),
    "update": lambda s: s.update({b"k": b"w", b"j": b"w"}),
    "setdefault": lambda s: s.setdefault(b"z", b"w"),
    "pop": lambda s: s.pop(b"k", None),
    "discard": lambda s: s.discard(b"k"),
    "delitem": lambda s: s.__delitem__(b"k"),
    "clear": lambda s: s.clear(),
    "clear_range": lambda s: s.clear_range(start=b"a"),
    "drop": lambda s: s.drop(),
}


@pytest.mark.parametrize("where", ["store", "transaction"])
@pytest.mark.parametrize("op", list(PATHS_OF_A_SCOPE))
def test_every_path_of_a_narrowed_scope_refuses_a_collision(tmp_path: Path, op: str, where: str) -> None:
    victim, collider = _collider(tmp_path)
    before = _dump(tmp_path)
    with scoped_heed.open(tmp_path, "db") as ks:
        if where == "store":
            scope = ks.scope(collider)
            assert scope._cut == 1  # type: ignore[attr-defined]
            with pytest.raises(HashCollision, match=victim):
                PATHS_OF_A_SCOPE[op](scope)
        else:
            with pytest.raises(HashCollision, match=victim), ks.transaction() as tx:
                scope = tx.scope(collider)
                assert scope._cut == 1  # type: ignore[attr-defined]
                PATHS_OF_A_SCOPE[op](scope)
    assert _dump(tmp_path) == before


@pytest.mark.parametrize("op", ["get", "getitem", "contains", "items", "short items", "keys", "len", "bool"])
def test_a_narrowed_scope_of_a_snapshot_refuses_a_collision(tmp_path: Path, op: str) -> None:
    victim, collider = _collider(tmp_path)
    with scoped_heed.open(tmp_path, "db") as ks, ks.snapshot() as snap:
        scope = snap.scope(collider)
        assert scope._cut == 1  # type: ignore[attr-defined]
        with pytest.raises(HashCollision, match=victim):
            PATHS_OF_A_SCOPE[op](scope)


def test_a_registered_name_settles_in_a_snapshot_too(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path, "db") as ks:
        ks.scope("owner")[b"k"] = b"v"
        with ks.snapshot() as snap:
            scope = snap.scope("owner")
            assert scope[b"k"] == b"v"
            assert scope._guard is None  # type: ignore[attr-defined]
        with ks.snapshot() as snap:
            free = snap.scope("nobody")
            assert free.get(b"k") is None
            assert free._guard is not None  # type: ignore[attr-defined]


def test_a_snapshot_scope_stays_read_only_when_narrowed(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path, "db") as ks:
        ks.scope("a")[b"k"] = b"v"
        with ks.snapshot() as snap:
            scope = snap.scope("a")
            with pytest.raises(KeyspaceError, match="read-only"):
                scope[b"k"] = b"w"
            with pytest.raises(KeyspaceError, match="read-only"):
                scope.clear()
        assert ks.scope("a")[b"k"] == b"v"


def _errors(where: Path) -> list[tuple[str, Any]]:
    """What bad keys do on every path of the default and a named scope (messages
    with the directory left out)."""

    def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
        try:
            return "ok", call()
        except KeyspaceError as exc:
            return type(exc).__name__, str(exc).replace(str(where), "D")

    out = []
    with scoped_heed.open(where, "db") as ks:
        for path in PATHS[:2]:
            scope = ks.scope(*path)

            def in_tx(key: bytes, path: tuple[str, ...] = path) -> None:
                with ks.transaction() as tx:
                    tx.scope(*path)[key] = b"v"

            def in_snapshot(key: bytes, path: tuple[str, ...] = path) -> Any:
                with ks.snapshot() as snap:
                    return snap.scope(*path).get(key)

            # as first writes (the catalog checks the keys), then with the put bound
            for key in (b"", b"x" * 600):
                out.append(outcome(lambda key=key, scope=scope: scope.__setitem__(key, b"v")))
                out.append(outcome(lambda key=key, scope=scope: scope.update({key: b"v"})))
                out.append(outcome(lambda key=key: in_tx(key)))
                out.append(outcome(lambda key=key: in_snapshot(key)))
            scope[b"ok"] = b"v"
            for key in (b"", b"x" * 600):
                out.append(outcome(lambda key=key, scope=scope: scope.__setitem__(key, b"v")))
                out.append(outcome(lambda key=key, scope=scope: scope.get(key)))
    return out


def test_bad_keys_fail_alike_on_both_routes(tmp_path: Path) -> None:
    narrowed = _errors(tmp_path / "narrowed")
    with _general():
        general = _errors(tmp_path / "general")
    assert narrowed == general
    assert {"InvalidName", "KeyTooLarge"} <= {kind for kind, _ in narrowed}
