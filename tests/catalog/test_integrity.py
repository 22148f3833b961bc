"""Integrity of the facts that keep keyspaces and scopes apart, on every path.

- Scheme records that cannot be read are refused, named and left as they are.
- A store with keys but no record is never guessed into a scheme for writing
  (the library refuses; the CLI detects for reading only and says how sure it is).
- ``migrate`` refuses to merge two source keys into one destination key.
- ScopeHash collisions are refused on reads too; a corrupt registry is never trusted.
- Raw-prefixed tuple keyspaces never overlap another keyspace, whichever writes first.
- A refused first write records nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name

import keyspace
from keyspace import AsciiHex, LengthPrefixed, Naive, ScopeHash, TupleScheme
from keyspace.catalog import LAYOUT_START
from keyspace.errors import (
    DecodeError,
    HashCollision,
    LayoutError,
    ReservedKey,
    SchemeMismatch,
    UnreadableRecord,
)
from keyspace.schemes.scope_hash import hash_name, registry_key
from keyspace.stores import MemoryStore, open_store
from keyspace.stores._base import Store

# Two names with the same xxh32 (seed 0), found by a birthday search, and a name
# with the default scope's hash (computed: tests/_xxh32.py).
COLLIDING = ("scope72590", "scope159129")
assert hash_name(COLLIDING[0]) == hash_name(COLLIDING[1])

ENGINES = ["memory", "lmdb", "sqlite"]


class Engine:
    """One store for a test: its ``url`` (memory has none), and one shared store
    object for memory and LMDB (one environment per path per process), over
    which each ``keyspace()`` is a new keyspace object; SQLite opens by URL."""

    def __init__(self, name: str, tmp: Path) -> None:
        self.name = name
        self.url = {"memory": "", "lmdb": f"lmdb://{tmp / 'db'}", "sqlite": f"sqlite:///{tmp / 'db.sqlite'}"}[
            name
        ]
        self._memory: Store | None = None
        if name == "memory":
            self._memory = MemoryStore()
        elif name == "lmdb":
            self._memory = open_store(self.url)

    def keyspace(self, scheme: Any = None, leaf_depth: int | None = None) -> keyspace.Keyspace:
        if self._memory is not None:
            return keyspace.attach(self._memory, scheme=scheme, close_store=False, leaf_depth=leaf_depth)
        return keyspace.open(self.url, scheme=scheme, leaf_depth=leaf_depth)

    def raw(self) -> Store:
        return self._memory if self._memory is not None else open_store(self.url)

    def items(self) -> list[tuple[bytes, bytes]]:
        store = self.raw()
        try:
            return list(store.scan(b"", None))
        finally:
            if store is not self._memory:
                store.close()

    def put_raw(self, key: bytes, value: bytes) -> None:
        store = self.raw()
        try:
            store.put(key, value)
        finally:
            if store is not self._memory:
                store.close()

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    eng = Engine(request.param, tmp_path)
    try:
        yield eng
    finally:
        eng.close()


def raw_items(url: str) -> list[tuple[bytes, bytes]]:
    store = open_store(url)
    try:
        return list(store.scan(b"", None))
    finally:
        store.close()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "keyspace.cli", *args], capture_output=True, text=True, timeout=60
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> bool:
    return proc.returncode == 1 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


# -- rule 3: a record that cannot be read is never ignored or overwritten ---------------

GOOD = TupleScheme().metadata_key
assert GOOD is not None
CORRUPT = {
    "garbage": b"\x00\x9f garbage \xff",
    "truncated": b'{"keyspace":1,"params":{"raw_prefix":""},"sch',
    "empty": b"",
    "unknown version": b'{"keyspace":2,"params":{},"scheme":"tuple"}',
    "version true": b'{"keyspace":true,"params":{"raw_prefix":""},"scheme":"tuple"}',
    "version 1.0": b'{"keyspace":1.0,"params":{"raw_prefix":""},"scheme":"tuple"}',
    "wrong parameter types": b'{"keyspace":1,"params":{"raw_prefix":5},"scheme":"tuple"}',
    "unknown parameter": b'{"keyspace":1,"params":{"depth":"x"},"scheme":"tuple"}',
    "unknown scheme": b'{"keyspace":1,"params":{},"scheme":"nope"}',
    "not an object": b"[1, 2, 3]",
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("corruption", list(CORRUPT))
def test_unreadable_record_is_refused_and_kept(engine: Engine, corruption: str) -> None:
    with engine.keyspace() as ks:
        ks.scope("a")[b"k"] = b"v"
    engine.put_raw(GOOD, CORRUPT[corruption])
    before = engine.items()
    for scheme in (None, TupleScheme(), AsciiHex(), ScopeHash()):
        with pytest.raises(UnreadableRecord) as info:
            engine.keyspace(scheme)
        assert "unreadable" in str(info.value) and repr(GOOD)[:8] in str(info.value)
    assert engine.items() == before
    if engine.url:
        for args in (
            ("get", engine.url, "a", "--key", "k"),
            ("put", engine.url, "a", "--key", "k", "--value", "w"),
        ):
            proc = cli(*args)
            assert one_error_line(proc), proc.stderr
            assert "unreadable" in proc.stderr
        assert engine.items() == before


def test_record_key_is_refused_to_a_schemeless_root(engine: Engine) -> None:
    """A LengthPrefixed root takes any bytes key but those where keyspaces keep
    their records: a value written at another scheme's record key could later
    claim to be that record (and make the store unopenable), so the key is refused
    before anything is written, on reads too."""
    with engine.keyspace(LengthPrefixed()) as ks:
        ks.scope()[b"k"] = b"v"
        before = engine.items()
        with pytest.raises(ReservedKey, match="reserves"):
            ks.scope()[GOOD] = b'{"keyspace": 1, "scheme": "tuple"}'
        with pytest.raises(ReservedKey):
            ks.scope().get(GOOD)
        assert engine.items() == before
    with engine.keyspace(LengthPrefixed()) as ks:
        assert dict(ks.scope()) == {b"k": b"v"}


# -- rule 5: no guessing where writing is concerned ----------------------------------------


def test_open_without_scheme_refuses_keys_without_record(engine: Engine) -> None:
    with engine.keyspace(LengthPrefixed()) as ks:
        ks.scope(b"balances")[b"alice"] = b"10"
    before = engine.items()
    with pytest.raises(SchemeMismatch, match="scheme="):
        engine.keyspace()
    assert engine.items() == before
    with engine.keyspace(LengthPrefixed()) as ks:  # naming it works
        assert ks.scope(b"balances")[b"alice"] == b"10"
    assert engine.items() == before


def test_open_without_scheme_on_empty_store_is_tuple(engine: Engine) -> None:
    with engine.keyspace() as ks:
        assert ks.scheme == TupleScheme()
        assert list(ks.store.scan(b"", None)) == []


def _cosmwasm_store(url: str) -> None:
    with keyspace.open(url, scheme=LengthPrefixed()) as ks:
        for owner in (b"alice", b"bob", b"carol"):
            ks.scope(b"balance", owner)[b"uatom"] = b"100"


@pytest.mark.parametrize("kind", ["lmdb", "sqlite"])
def test_cli_writes_need_scheme_on_unrecorded_store(tmp_path: Path, kind: str) -> None:
    url = {"lmdb": f"lmdb://{tmp_path / 'db'}", "sqlite": f"sqlite:///{tmp_path / 'db.sqlite'}"}[kind]
    _cosmwasm_store(url)
    before = raw_items(url)
    for args in (
        ("put", url, "x", "--key", "k", "--value", "v"),
        ("delete", url, "hex:62616c616e6365", "--drop"),
        ("migrate", str(tmp_path / "src.lmdb"), url),
    ):
        if args[0] == "migrate":
            with keyspace.open(args[1]) as src:
                src.scope("s")[b"k"] = b"v"
        proc = cli(*args)
        assert one_error_line(proc), (args, proc.stderr)
        assert "--scheme" in proc.stderr
        assert raw_items(url) == before


def test_cli_does_not_detect_cosmwasm_data_as_sublevel(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'cw'}"
    _cosmwasm_store(url)
    proc = cli("scan", url)
    assert one_error_line(proc), proc.stderr
    assert "cannot tell the scheme" in proc.stderr
    proc = cli("inspect", url, "--depth", "2")
    assert proc.returncode == 0, proc.stderr
    assert "length-prefixed: 100%" in proc.stderr and "confidence 100%" in proc.stderr


def test_cli_refuses_when_two_schemes_decode_the_keys(tmp_path: Path) -> None:
    """scoped-heed data (no registry, no record) whose hashes start ``00 0n``: every
    key is also a length-prefixed key of depth 1, so with --depth 1 two schemes
    decode all of them and the CLI refuses to choose."""
    names = [
        n for n in (f"tenant{i}" for i in range(200_000)) if registry_key(n)[:2] in (b"\x00\x00", b"\x00\x01")
    ]
    assert len(names) >= 2
    url = f"sqlite:///{tmp_path / 'heed.sqlite'}"
    store = open_store(url)
    try:
        for name in names[:4]:
            for key in (b"k1", b"k2"):
                store.put(ScopeHash().encode((name,), key), b"v")
    finally:
        store.close()
    proc = cli("inspect", url, "--depth", "1")
    assert one_error_line(proc), proc.stderr
    assert "cannot tell the scheme" in proc.stderr
    assert "length-prefixed: 100%" in proc.stderr and "scopehash: 100%" in proc.stderr
    proc = cli("inspect", url, "--scheme", "scopehash")
    assert proc.returncode == 0, proc.stderr


# -- rule 8: migrate never merges -------------------------------------------------------------


def test_migrate_refuses_to_merge_keys(tmp_path: Path) -> None:
    src = str(tmp_path / "src.lmdb")
    dst = f"sqlite:///{tmp_path / 'dst.sqlite'}"
    with keyspace.open(src) as ks:
        ks.scope("a")[b"k"] = b"from str"
        ks.scope(b"a")[b"k"] = b"from bytes"
    proc = cli("migrate", src, dst, "--to-scheme", "asciihex")
    assert proc.returncode == 1 and proc.stderr.splitlines()[-1].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "overwritten" not in proc.stdout
    assert "('a',)" in proc.stderr and "(b'a',)" in proc.stderr and "does not merge" in proc.stderr
    assert not (tmp_path / "dst.sqlite").exists()  # the store the refused copy created is removed again


def test_migrate_without_merge_copies(tmp_path: Path) -> None:
    src = str(tmp_path / "src.lmdb")
    dst = f"sqlite:///{tmp_path / 'dst.sqlite'}"
    with keyspace.open(src) as ks:
        ks.scope("a")[b"k"] = b"1"
        ks.scope("b")[b"k"] = b"2"
    proc = cli("migrate", src, dst, "--to-scheme", "asciihex")
    assert proc.returncode == 0, proc.stderr
    assert "2 copied, 0 overwritten" in proc.stdout
    with keyspace.open(dst) as ks:
        assert ks.scope(b"a")[b"k"] == b"1" and ks.scope(b"b")[b"k"] == b"2"


def _json(proc: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(proc.stdout)


# -- rule 1: ScopeHash collisions are refused on every access ------------------------------

ACCESSES: dict[str, Callable[[keyspace.Scope], Any]] = {
    "[]": lambda s: s[b"k"],
    "get": lambda s: s.get(b"k"),
    "in": lambda s: b"k" in s,
    "iter": lambda s: list(s),
    "len": len,
    "bool": bool,
    "items": lambda s: list(s.items()),
    "keys": lambda s: list(s.keys()),
    "values": lambda s: list(s.values()),
    "clear": lambda s: s.clear(),
    "clear_range": lambda s: s.clear_range(b"a", b"z"),
    "drop": lambda s: s.drop(),
    "del": lambda s: s.__delitem__(b"k"),
    "discard": lambda s: s.discard(b"k"),
    "subtree": lambda s: list(s.subtree()),
    "scopes": lambda s: s.scopes(),
    "set": lambda s: s.__setitem__(b"k", b"x"),
    "update": lambda s: s.update({b"k": b"x", b"j": b"y"}),
}


@pytest.mark.parametrize("access", list(ACCESSES))
def test_hash_collision_refused_on_every_access(engine: Engine, access: str) -> None:
    first, second = COLLIDING
    with engine.keyspace(ScopeHash()) as ks:
        ks.scope(first).update({b"k": b"first's", b"m": b"more"})
    before = engine.items()
    op = ACCESSES[access]
    with engine.keyspace() as ks:
        with pytest.raises(HashCollision, match=second):
            op(ks.scope(second))
        with pytest.raises(HashCollision), ks.transaction() as tx:
            op(tx.scope(second))
        if access not in ("clear", "clear_range", "drop", "del", "discard", "set", "update"):
            with ks.snapshot() as snap, pytest.raises(HashCollision):
                op(snap.scope(second))
        assert dict(ks.scope(first)) == {b"k": b"first's", b"m": b"more"}
    assert engine.items() == before


def test_hash_collision_in_every_cli_command(tmp_path: Path) -> None:
    first, second = COLLIDING
    url = f"lmdb://{tmp_path / 'h'}"
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        ks.scope(first)[b"k"] = b"v"
    before = raw_items(url)
    for args in (
        ("get", url, second, "--key", "k"),
        ("scan", url, second),
        ("delete", url, second, "--key", "k"),
        ("delete", url, second, "--drop"),
        ("put", url, second, "--key", "k", "--value", "x"),
    ):
        proc = cli(*args)
        assert one_error_line(proc), (args, proc.stderr)
        assert "same xxh32 hash" in proc.stderr
    assert raw_items(url) == before


def test_corrupt_registry_entry_is_never_trusted(engine: Engine) -> None:
    with engine.keyspace(ScopeHash()) as ks:
        ks.scope("tenant1")[b"k"] = b"1"
        ks.scope("tenant2")[b"k"] = b"2"
    engine.put_raw(registry_key("tenant2"), b"intruder")  # a name that does not hash to the key
    before = engine.items()
    with engine.keyspace() as ks:
        with pytest.raises(DecodeError, match="registry"):
            ks.scope().scopes()
        with pytest.raises(DecodeError, match="registry"):
            ks.scope().drop()
        with pytest.raises(DecodeError, match="registry"):
            list(ks.scope().subtree())
        with pytest.raises(DecodeError, match="registry"):
            ks.scope("tenant2").get(b"k")
        assert ks.scope("tenant1")[b"k"] == b"1"
    assert engine.items() == before
    if engine.url:
        proc = cli("migrate", engine.url, f"sqlite:///{engine.url.rsplit('/', 1)[0]}/out.sqlite")
        assert proc.returncode == 1 and "registry" in proc.stderr, proc.stderr
        proc = cli("inspect", engine.url)
        assert proc.returncode == 0 and "not a name with that hash" in proc.stdout + proc.stderr


def test_scope_hash_root_subtree_and_drop_cover_the_same_keys(engine: Engine) -> None:
    with engine.keyspace(ScopeHash()) as ks:
        ks.scope()[b"own"] = b"0"
        for name in ("tenant_0", "tenant_1", "tenant214"):
            ks.scope(name)[b"k"] = name.encode()
        walked = {ScopeHash().encode(path, key) for path, key, _ in ks.scope().subtree()}
        assert len(walked) == 4
    before = {k for k, _ in engine.items()}
    with engine.keyspace() as ks:
        ks.scope().drop()
    after = {k for k, _ in engine.items()}
    assert before - after == walked


# -- rule 4: raw-prefixed keyspaces never overlap, whichever writes first ----------------


@pytest.mark.parametrize("order", ["root first", "prefixed first"])
@pytest.mark.parametrize(
    ("outer", "inner"),
    [
        (TupleScheme(), TupleScheme(raw_prefix=b"\x05x")),
        (TupleScheme(raw_prefix=b"app"), TupleScheme(raw_prefix=b"app\x05x")),
        (AsciiHex(), TupleScheme(raw_prefix=b"app")),
        (ScopeHash(), TupleScheme(raw_prefix=b"app")),
        (LengthPrefixed(), TupleScheme(raw_prefix=b"app")),
        (LengthPrefixed(), TupleScheme()),
    ],
    ids=["root-tuple", "nested-prefix", "asciihex-root", "scopehash-root", "lp-root", "lp-tuple"],
)
def test_overlapping_footprints_refused_in_either_order(
    engine: Engine, order: str, outer: Any, inner: Any
) -> None:
    first, second = (outer, inner) if order == "root first" else (inner, outer)
    a = engine.keyspace(first)
    b = engine.keyspace(second)  # opened before the first wrote: a stale open
    try:
        a.scope("x")[b"k"] = b"first"
        a_keys = list(a.store.scan(b"", None))
        with pytest.raises(SchemeMismatch):
            b.scope("x")[b"k"] = b"second"
        # (a LengthPrefixed keyspace may first find that it cannot tell whose keys these are)
        refusal = (SchemeMismatch, LayoutError) if isinstance(second, LengthPrefixed) else SchemeMismatch
        for destructive in (lambda s: s.drop(), lambda s: s.clear()):
            with pytest.raises(refusal):
                destructive(b.scope())
        assert list(a.store.scan(b"", None)) == a_keys
    finally:
        a.close()
        b.close()
    with pytest.raises(SchemeMismatch):  # and a fresh open is refused too
        engine.keyspace(second)


def test_disjoint_raw_prefixes_share_a_store(engine: Engine) -> None:
    spaces = [TupleScheme(), TupleScheme(raw_prefix=b"app/"), TupleScheme(raw_prefix=b"app\x06")]
    for i, scheme in enumerate(spaces):
        with engine.keyspace(scheme) as ks:
            ks.scope("s")[b"k"] = bytes([i])
    for i, scheme in enumerate(spaces):
        with engine.keyspace(scheme) as ks:
            assert dict(ks.scope("s")) == {b"k": bytes([i])}
            ks.scope().drop()
            ks.scope("s")[b"k"] = bytes([i])
    for i, scheme in enumerate(spaces):
        with engine.keyspace(scheme) as ks:
            assert dict(ks.scope("s")) == {b"k": bytes([i])}


# -- rule 9: a refused first write records nothing ------------------------------------------


def test_refused_first_write_records_nothing(engine: Engine) -> None:
    """A first write the catalog refuses (a name with the default scope's hash, a
    name a colliding name holds, a key the engine cannot store) records nothing:
    no scheme record, no registry entry."""
    with engine.keyspace(ScopeHash()) as ks, pytest.raises(HashCollision):
        ks.scope(DEFAULT_TWIN)[b"k"] = b"v"
    assert engine.items() == []
    with engine.keyspace(ScopeHash()) as ks:
        ks.scope(COLLIDING[0])[b"k"] = b"v"
    before = engine.items()
    with engine.keyspace(ScopeHash()) as ks, pytest.raises(HashCollision):
        ks.scope(COLLIDING[1]).update({b"a": b"1", b"b": b"2"})
    assert engine.items() == before


DEFAULT_TWIN = colliding_name("")


# -- rule 7: LengthPrefixed and Naive never let a parent see its children's keys ------------


def test_length_prefixed_layout_survives_a_reopen(engine: Engine) -> None:
    lp = LengthPrefixed()
    with engine.keyspace(lp) as ks:
        ks.scope(b"a", b"b")[b"\x00\x01c"] = b"child's"  # its bytes also read as key 00 02 b 00 01 c of (a,)
        ks.scope(b"x")[b"k"] = b"leaf x"
    before = engine.items()
    with engine.keyspace(lp) as ks:  # a new keyspace object: the layout comes from the store
        parent = ks.scope(b"a")
        assert dict(parent) == {} and len(parent) == 0 and not parent
        assert parent.get(b"\x00\x01b\x00\x01c") is None and b"\x00\x01b\x00\x01c" not in parent
        parent.clear()
        with pytest.raises(LayoutError):
            parent[b"k"] = b"would mix"
        with pytest.raises(LayoutError):
            ks.scope(b"x", b"y")[b"k"] = b"below a leaf"
        with pytest.raises(LayoutError):
            ks.scope(b"x", b"y").get(b"k")
        with pytest.raises(LayoutError):
            ks.scope()[b"k"] = b"the root holds scopes"
        assert dict(ks.scope(b"a", b"b")) == {b"\x00\x01c": b"child's"}
        assert sorted(ks.scope().scopes()) == [b"a", b"x"]
        assert sorted((p, k) for p, k, _ in ks.scope().subtree()) == [
            ((b"a", b"b"), b"\x00\x01c"),
            ((b"x",), b"k"),
        ]
    assert engine.items() == before


def test_length_prefixed_root_leaf_survives_a_reopen(engine: Engine) -> None:
    with engine.keyspace(LengthPrefixed()) as ks:
        ks.scope()[b"\x00\x01ab"] = b"root key"
    with engine.keyspace(LengthPrefixed()) as ks:
        assert dict(ks.scope()) == {b"\x00\x01ab": b"root key"}  # the layout record is not a root key
        with pytest.raises(LayoutError):
            ks.scope(b"a").get(b"b")  # (a,) would read the root's key 00 01 a b
        with pytest.raises(LayoutError):
            ks.scope(b"a")[b"b"] = b"v"
        ks.scope().clear()
        assert [k for k, _ in ks.store.scan(b"", None)] == [LAYOUT_START]


def test_unknown_layout_raises_instead_of_mixing(engine: Engine) -> None:
    """Data another program wrote (here: through a keyspace that declared its
    layout, so it recorded nothing): without a declared layout every operation
    that could mix a parent's and a child's keys raises LayoutError."""
    with engine.keyspace(LengthPrefixed(), leaf_depth=2) as ks:
        ks.scope(b"balance", b"alice")[b"uatom"] = b"10"
    before = engine.items()
    assert [k for k, _ in before] == [LengthPrefixed().encode((b"balance", b"alice"), b"uatom")]
    with engine.keyspace(LengthPrefixed()) as ks:
        for op in (
            lambda s: s.get(b"x"),
            lambda s: list(s.items()),
            len,
            lambda s: s.clear(),
            lambda s: s.drop(),
            lambda s: s.__setitem__(b"x", b"y"),
            lambda s: list(s.subtree()),
            lambda s: s.scopes(),
        ):
            for path in ((), (b"balance",), (b"balance", b"alice")):
                with pytest.raises(LayoutError, match="leaf_depth"):
                    op(ks.scope(*path))
    assert engine.items() == before
    with engine.keyspace(LengthPrefixed(), leaf_depth=2) as ks:
        assert dict(ks.scope(b"balance", b"alice")) == {b"uatom": b"10"}
        assert dict(ks.scope(b"balance")) == {} and ks.scope(b"balance").scopes() == [b"alice"]
        with pytest.raises(LayoutError):
            ks.scope(b"balance", b"alice", b"x").get(b"k")


def test_naive_layout_is_declared_after_a_reopen(engine: Engine) -> None:
    naive = Naive(allow_collisions=True)
    with engine.keyspace(naive) as ks:
        ks.scope(b"ab")[b"c"] = b"v"
    with engine.keyspace(naive) as ks, pytest.raises(LayoutError):
        ks.scope(b"a").get(b"bc")
    with engine.keyspace(naive, leaf_depth=1) as ks:
        assert ks.scope(b"ab")[b"c"] == b"v"


# -- rule 6: reading never creates or changes anything (the CLI's read commands) -----------


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_cli_reads_leave_a_folder_that_is_not_a_store_unchanged(tmp_path: Path) -> None:
    import sqlite3

    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"\xff\xd8\xff not really a jpeg")
    app = tmp_path / "app.db"
    conn = sqlite3.connect(app)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes (text) VALUES ('hello')")
    conn.commit()
    conn.close()
    before = _snapshot(tmp_path)
    for url in (str(photos), f"lmdb://{photos}", f"sqlite:///{app}", str(tmp_path / "missing")):
        for args in (("inspect", url), ("get", url, "a", "--key", "k"), ("scan", url, "a")):
            proc = cli(*args)
            assert one_error_line(proc), (args, proc.stderr)
    assert _snapshot(tmp_path) == before
    assert not (tmp_path / "missing").exists()
