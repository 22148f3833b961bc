"""scoped-heed environments opened in place: the reference environment written by
scoped-heed 0.2.0-alpha.8 itself (tests/data/scoped-heed), read through every api;
writes byte-compared with py-lmdb against the layout rules; the registry's
collisions; old layouts refused."""

from __future__ import annotations

import asyncio
import json
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb
import pytest
from _heed_env import reference_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xxhash import xxh32_intdigest

import keyspace.aio
from keyspace import bincode, scoped_heed
from keyspace.codecs import BYTES, Codec
from keyspace.errors import DecodeError, HashCollision, InvalidName, SchemeMismatch, StoreError

DATA = Path(__file__).parent.parent / "data" / "scoped-heed"
REGISTRY = "__global_scope_metadata"


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


DUMP = _lines("dump.jsonl")
MANIFEST = _lines("write_manifest.jsonl")

# the reference's databases: scoped-heed builder -> keyspace.scoped_heed.open arguments
DATABASES: dict[str, dict[str, Any]] = {
    "cache": {"api": "raw_bytes"},
    "legacy": {"api": "raw_bytes", "unnamed_default": True},
    "bkeys": {"api": "bytes_keys", "value": bincode.STRING},
    "typed": {"api": "types", "key": bincode.STRING, "value": bincode.STRING},
    "typed_u64": {"api": "types", "key": bincode.U64, "value": bincode.STRING},
}
REGISTERED = {d["scope"]: d["hash"] for d in DUMP if d["kind"] == "scope"}


def _key(line: dict[str, Any], db: str) -> Any:
    if DATABASES[db]["api"] == "types":
        return line["key_u64"] if "key_u64" in line else line["key_str"]
    return bytes.fromhex(line["key_hex"])


def _value(line: dict[str, Any], db: str) -> Any:
    return bytes.fromhex(line["value_hex"]) if DATABASES[db]["api"] == "raw_bytes" else line["value_str"]


def _path(line: dict[str, Any]) -> tuple[str, ...]:
    return () if line["scope"] is None else (line["scope"],)


@pytest.fixture
def env(tmp_path: Path) -> Path:
    """A copy of the reference environment (opening it may create lock.mdb)."""
    return reference_env(tmp_path)


def _open(env: Path, db: str, **extra: Any) -> scoped_heed.ScopedHeedKeyspace:
    return scoped_heed.open(env, db, **DATABASES[db], **extra)


def _raw(env: Path) -> dict[str | None, dict[bytes, bytes]]:
    """Every database of the environment, read with py-lmdb directly."""
    e = lmdb.open(str(env), max_dbs=64, readonly=True, lock=False)
    try:
        out: dict[str | None, dict[bytes, bytes]] = {}
        with e.begin() as txn:
            out[None] = dict(txn.cursor())
        for name in out[None]:
            try:
                db = e.open_db(name, create=False)
            except lmdb.Error:
                continue
            with e.begin(db=db) as txn:
                out[name.decode()] = dict(txn.cursor())
        return out
    finally:
        e.close()


# -- reading what scoped-heed wrote ------------------------------------------------------


def _expected(db: str) -> dict[tuple[str, ...], dict[Any, Any]]:
    """What each scope of ``db`` holds: scoped-heed's own iter() lines, plus the
    manifest's puts of the typed scope whose hash ends in ff (which its iter()
    misses)."""
    out: dict[tuple[str, ...], dict[Any, Any]] = {}
    records = {name.encode().hex() for line in DUMP if line["kind"] == "env" for name in line["named_dbs"]}
    for line in DUMP:
        if line["kind"] == "scoped" and line["db"] == db:
            if line["scope"] is None and line.get("key_hex") in records:
                continue  # LMDB's record of a named database, which scoped-heed's iter() shows: no data
            out.setdefault(_path(line), {})[_key(line, db)] = _value(line, db)
    for line in MANIFEST:
        if line["db"] == db and line["result"] == "ok":
            scope = out.setdefault(_path(line), {})
            assert scope.get(_key(line, db), _value(line, db)) == _value(line, db)
            scope[_key(line, db)] = _value(line, db)
    return out


@pytest.mark.parametrize("db", list(DATABASES))
def test_reads_every_entry_of_the_reference(env: Path, db: str) -> None:
    expected = _expected(db)
    with _open(env, db, readonly=True) as ks:
        for path, items in expected.items():
            scope = ks.scope(*path)
            assert dict(scope.items()) == items, path
            assert len(scope) == len(items)
            for k, v in items.items():
                assert scope[k] == v
        # exactly the scopes that hold data here, by name from the registry
        assert sorted(ks.scope().scopes()) == sorted(p[0] for p in expected if p)
        assert sorted(ks.scope_names()) == sorted(REGISTERED)
        # subtree(): every entry of every scope, with names
        walked = {(p, k): v for p, k, v in ks.scope().subtree()}
        assert walked == {(p, k): v for p, items in expected.items() for k, v in items.items()}


def test_the_ff_scope_is_seen_where_scoped_heed_misses_it(env: Path) -> None:
    assert REGISTERED["carry-259"] & 0xFF == 0xFF
    assert not any(d["kind"] == "scoped" and d["db"] == "typed" and d["scope"] == "carry-259" for d in DUMP)
    with _open(env, "typed", readonly=True) as ks:
        assert dict(ks.scope("carry-259").items()) == {"key1": "carry-typed1"}
        assert "carry-259" in ks.scope().scopes()


def test_every_manifest_put_reads_back(env: Path) -> None:
    for line in MANIFEST:
        db = line["db"]
        with _open(env, db, readonly=True) as ks:
            scope = ks.scope(*_path(line))
            if line["result"] == "ok":
                assert scope[_key(line, db)] == _value(line, db)
            else:  # the empty key of a default scope: LMDB refuses it
                assert _key(line, db) == b"" and not _path(line)
                with pytest.raises(InvalidName):
                    scope.get(b"")


def test_reads_without_the_codecs_give_the_stored_bytes(env: Path) -> None:
    with scoped_heed.open(env, "typed", api="types", key=BYTES, value=BYTES, readonly=True) as ks:
        assert ks.scope("tenant1")[bincode.STRING.encode("b")] == bincode.STRING.encode("short")


@pytest.mark.parametrize("api", ["raw_bytes", "bytes_keys"])
def test_string_keys_of_a_typed_database_read_through_the_bytes_apis(env: Path, api: str) -> None:
    """A bincode String key is u64le(len) utf8: the bytes layout of its UTF-8 bytes."""
    expected = _expected("typed")
    with scoped_heed.open(env, "typed", api=api, value=bincode.STRING, readonly=True) as ks:
        for path, items in expected.items():
            if path:
                assert dict(ks.scope(*path).items()) == {k.encode(): v for k, v in items.items()}


def test_the_copy_is_the_reference(env: Path) -> None:
    """The stored bytes of every database are the dump's raw lines."""
    raw = _raw(env)
    for line in DUMP:
        if line["kind"] == "raw_db":
            assert len(raw[line["db"]]) == line["entries"]
        elif line["kind"] == "raw" and line["db"] is not None:
            assert raw[line["db"]][bytes.fromhex(line["key_hex"])] == bytes.fromhex(line["value_hex"])
    assert {d["hash"]: d["recomputed_xxh32"] for d in DUMP if d["kind"] == "scope"} == {
        h: xxh32_intdigest(n.encode()) for n, h in REGISTERED.items()
    }


# -- writing: layout rules, byte-compared with py-lmdb ----------------------------------------


def _layout(api: str, path: tuple[str, ...], key: bytes) -> bytes:
    """The stored key of (path, encoded key) in scoped-heed's rules."""
    if not path:
        return key
    head = struct.pack("<I", xxh32_intdigest(path[0].encode()))
    return head + (struct.pack("<Q", len(key)) + key if api != "types" else key)


NAMES = st.sampled_from(["tenant1", "tenant2", "carry-259", "ünïcode", "x" * 300, "fresh", "ff?"])
KEYS = st.binary(min_size=1, max_size=40)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    api=st.sampled_from(["raw_bytes", "bytes_keys", "types"]),
    writes=st.lists(st.tuples(st.none() | NAMES, KEYS, st.binary(max_size=20)), min_size=1, max_size=12),
)
def test_writes_follow_the_layout_rules(
    tmp_path_factory: pytest.TempPathFactory, api: str, writes: Any
) -> None:
    env = tmp_path_factory.mktemp("w")
    key_codec: Codec = bincode.BYTES if api == "types" else BYTES
    value_codec: Codec = BYTES if api == "raw_bytes" else bincode.BYTES
    expected: dict[str | None, dict[bytes, bytes]] = {"db": {}, "db_scoped": {}, REGISTRY: {}}
    with scoped_heed.open(env, "db", api=api, key=key_codec, value=value_codec) as ks:
        for name, key, value in writes:
            path = () if name is None else (name,)
            ks.scope(*path)[key] = value
            stored = _layout(api, path, key if api != "types" else bincode.BYTES.encode(key))
            raw_value = value if api == "raw_bytes" else bincode.BYTES.encode(value)
            expected["db_scoped" if path else "db"][stored] = raw_value
            if path:
                h = struct.pack("<I", xxh32_intdigest(name.encode()))
                expected[REGISTRY][h] = struct.pack("<Q", len(name.encode())) + name.encode()
    raw = _raw(env)
    for db in ("db", "db_scoped", REGISTRY):
        assert raw[db] == expected[db]
    assert set(raw[None]) == {b"db", b"db_scoped", REGISTRY.encode()}  # nothing of keyspace's own


def test_typed_u64_keys_are_eight_bytes_le(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path, "n", api="types", key=bincode.U64, value=bincode.STRING) as ks:
        ks.scope("tenant1")[256] = "v"
        ks.scope()[1] = "w"
    raw = _raw(tmp_path)
    assert raw["n_scoped"] == {bytes.fromhex("c379d84e0001000000000000"): bincode.STRING.encode("v")}
    assert raw["n"] == {bytes.fromhex("0100000000000000"): bincode.STRING.encode("w")}


def test_writes_into_the_reference_keep_its_layout(env: Path) -> None:
    before = _raw(env)
    with _open(env, "bkeys") as ks:
        ks.scope("tenant2")[b"new"] = "value"
        ks.scope()[b"d"] = "default"
        ks.scope("brand-new")[b"k"] = "x"
    after = _raw(env)
    h2 = struct.pack("<I", REGISTERED["tenant2"])
    hn = struct.pack("<I", xxh32_intdigest(b"brand-new"))
    assert after["bkeys_scoped"] == {
        **before["bkeys_scoped"],
        h2 + struct.pack("<Q", 3) + b"new": bincode.STRING.encode("value"),
        hn + struct.pack("<Q", 1) + b"k": bincode.STRING.encode("x"),
    }
    assert after["bkeys"] == {**before["bkeys"], b"d": bincode.STRING.encode("default")}
    assert after[REGISTRY] == {**before[REGISTRY], hn: bincode.STRING.encode("brand-new")}
    for db in ("cache", "cache_scoped", "typed", "typed_scoped", "typed_u64", "typed_u64_scoped"):
        assert after[db] == before[db]


def test_clear_and_drop_of_the_ff_scope_are_exact(env: Path) -> None:
    before = _raw(env)
    with _open(env, "cache") as ks:
        ks.scope("carry-259").clear()
        assert ks.scope("tenant1")[b"key1"] == b"tenant1-value1"
    after = _raw(env)
    ff = struct.pack("<I", REGISTERED["carry-259"])
    assert after["cache_scoped"] == {k: v for k, v in before["cache_scoped"].items() if not k.startswith(ff)}
    with _open(env, "cache") as ks:
        ks.scope().drop()  # the default scope and every named one; the registry stays
        assert ks.scope().scopes() == [] and len(ks.scope()) == 0
    after = _raw(env)
    assert after["cache"] == {} and after["cache_scoped"] == {}
    assert after[REGISTRY] == before[REGISTRY] and after["typed"] == before["typed"]


def test_transactions_span_the_default_and_named_scopes(env: Path) -> None:
    with _open(env, "cache") as ks:
        with ks.transaction() as tx:
            tx.scope()[b"t-default"] = b"1"
            tx.scope("tenant1")[b"t-named"] = b"2"
            tx.scope("in-tx")[b"k"] = b"3"
            assert tx.scope("tenant1")[b"t-named"] == b"2"
        assert ks.scope()[b"t-default"] == b"1" and ks.scope("in-tx")[b"k"] == b"3"
        with pytest.raises(RuntimeError), ks.transaction() as tx:
            tx.scope()[b"gone"] = b"1"
            tx.scope("gone-too")[b"k"] = b"2"
            raise RuntimeError
        assert b"gone" not in ks.scope() and "gone-too" not in ks.scope_names()
        with ks.snapshot() as snap:
            ks.scope("tenant1")[b"later"] = b"x"
            assert b"later" not in snap.scope("tenant1")


# -- the registry: collisions with names scoped-heed registered -------------------------------

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M = 0xFFFFFFFF


def _inv(x: int) -> int:
    return pow(x, -1, 1 << 32)


def _unshift(h: int, s: int) -> int:
    """Inverse of ``h ^= h >> s`` on 32 bits."""
    out = h
    for _ in range(32 // s + 1):
        out = h ^ (out >> s)
    return out & _M


def _colliding_name(target: int, taken: set[str]) -> str:
    """An 8-byte alphanumeric name whose XXH32 (seed 0) is ``target``: XXH32 of 8 bytes is
    two invertible lane steps and an invertible avalanche, so the second lane is
    solved for each first lane tried (a bounded search for alphanumeric bytes)."""
    h = target
    h = _unshift(h, 16)
    h = h * _inv(_P3) & _M
    h = _unshift(h, 13)
    h = h * _inv(_P2) & _M
    h = _unshift(h, 15)
    before_last = h * _inv(_P4) & _M
    before_last = ((before_last >> 17) | (before_last << 15)) & _M  # rotr 17
    for n in range(1 << 16):
        first = b"%04x" % n
        h1 = (_P5 + 8 + int.from_bytes(first, "little") * _P3) & _M
        h1 = ((h1 << 17) | (h1 >> 15)) & _M
        h1 = h1 * _P4 & _M
        lane = (before_last - h1) * _inv(_P3) & _M
        second = lane.to_bytes(4, "little")
        if second.isalnum() and second.isascii():
            name = (first + second).decode()
            if xxh32_intdigest(name.encode()) == target and name not in taken:
                return name
    raise AssertionError(f"no printable 8-byte preimage of {target:#x} in the bounded search")


@pytest.mark.parametrize("victim", ["carry-259", "tenant2"])
def test_collision_with_a_name_only_the_reference_registered(env: Path, victim: str) -> None:
    collider = _colliding_name(REGISTERED[victim], set(REGISTERED))
    assert collider != victim and xxh32_intdigest(collider.encode()) == REGISTERED[victim]
    before = _raw(env)
    with _open(env, "bkeys") as ks:
        with pytest.raises(HashCollision, match=victim) as info:
            ks.scope(collider).get(b"key1")  # reading it would show the victim's keys
        assert collider in str(info.value)
        root = ks.scope()
        with pytest.raises(HashCollision, match=victim):
            root.scope(collider)[b"k"] = "v"  # made through the root: refused at the write
        with pytest.raises(HashCollision):
            list(root.scope(collider).items())
        with pytest.raises(HashCollision), ks.transaction() as tx:
            tx.scope(collider)[b"k"] = "v"
    assert _raw(env) == before


@pytest.mark.parametrize("victim", ["carry-259", "tenant2"])
def test_the_async_keyspace_of_a_scoped_heed_database_keeps_its_registry(env: Path, victim: str) -> None:
    """``AsyncKeyspace`` over a scoped-heed keyspace: it ran on the generic catalog,
    so a name of a registered name's hash read, wrote and cleared that name's
    keys, and the database's own codecs were lost."""
    collider = _colliding_name(REGISTERED[victim], set(REGISTERED))
    before = _raw(env)

    async def main() -> None:
        with _open(env, "bkeys") as ks:
            aks = keyspace.aio.AsyncKeyspace(ks)
            other = aks.scope(collider)
            for touch in (lambda: other.get(b"key1"), lambda: other.put(b"k", "v"), other.clear, other.drop):
                with pytest.raises(HashCollision, match=victim):
                    await touch()
            names = ks.scope().scopes()
            assert names and await aks.scope().scopes() == names
            for name in names:  # the database's own codecs
                assert [v async for v in aks.scope(name).values()] == list(ks.scope(name).values())
            async with aks.transaction() as tx:
                with pytest.raises(HashCollision):
                    await tx.scope(collider).put(b"k", "v")

    asyncio.run(main())
    assert _raw(env) == before


def test_collision_between_two_keyspace_written_names(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path, "db") as ks:
        ks.scope("first")[b"k"] = b"v"
        other = _colliding_name(xxh32_intdigest(b"first"), {"first"})
        with pytest.raises(HashCollision, match="first"):
            ks.scope().scope(other)[b"k"] = b"w"
    # also after reopening: the registry is in the environment
    with scoped_heed.open(tmp_path, "db") as ks, pytest.raises(HashCollision):
        len(ks.scope(other))


# -- layouts of other versions, bad arguments ---------------------------------------------------


def _make(env: Path, dbs: dict[str, dict[bytes, bytes]]) -> None:
    e = lmdb.open(str(env), max_dbs=16)
    for name, items in dbs.items():
        db = e.open_db(name.encode())
        with e.begin(write=True, db=db) as txn:
            for k, v in items.items():
                txn.put(k, v)
    e.close()


def test_version_0_1_is_refused(tmp_path: Path) -> None:
    sip = struct.pack("<IQ", 0x1234ABCD, 1) + b"k"  # a SipHash-derived scope hash
    _make(tmp_path, {"db_default": {b"k": b"v"}, "db_scoped": {sip: b"v"}})
    with pytest.raises(SchemeMismatch, match=r"0\.1\.x.*SipHash"):
        scoped_heed.open(tmp_path, "db")
    with pytest.raises(SchemeMismatch, match=r"0\.1\.x"):
        scoped_heed.open(tmp_path, "db", readonly=True)
    assert set(_raw(tmp_path)[None]) == {b"db_default", b"db_scoped"}  # nothing created


def test_alpha_default_database_is_read(tmp_path: Path) -> None:
    h = struct.pack("<I", xxh32_intdigest(b"tenant1"))
    _make(
        tmp_path,
        {
            "db_default": {b"k": b"default"},
            "db_scoped": {h + struct.pack("<Q", 1) + b"k": b"named"},
            REGISTRY: {h: bincode.STRING.encode("tenant1")},
        },
    )
    with scoped_heed.open(tmp_path, "db", readonly=True) as ks:
        assert ks.scope()[b"k"] == b"default" and ks.scope("tenant1")[b"k"] == b"named"
        assert ks.scope().scopes() == ["tenant1"]


def test_readonly(env: Path, tmp_path: Path) -> None:
    before = _raw(env)
    with _open(env, "cache", readonly=True) as ks:
        with pytest.raises(StoreError, match="read-only"):
            ks.scope("tenant1")[b"x"] = b"y"
        with pytest.raises(StoreError, match="read-only"):
            ks.scope().clear()
        with pytest.raises(StoreError, match="read-only"), ks.transaction() as tx:
            assert tx.scope("tenant1")[b"key1"] == b"tenant1-value1"
            tx.scope("tenant1")[b"key1"] = b"changed"
    assert _raw(env) == before
    with pytest.raises(StoreError, match="no scoped-heed database 'absent'"):
        scoped_heed.open(env, "absent", readonly=True)


def test_bad_arguments(env: Path) -> None:
    import keyspace

    assert keyspace.scoped_heed.open is scoped_heed.open
    with pytest.raises(ValueError, match="unknown scoped-heed api"):
        scoped_heed.open(env, "cache", api="json")
    with pytest.raises(ValueError, match="non-empty"):
        scoped_heed.open(env, "")
    with pytest.raises(ValueError, match="unnamed_default"):
        scoped_heed.open(env, "typed", api="types", unnamed_default=True)
    with _open(env, "cache", readonly=True) as ks:
        with pytest.raises(InvalidName):
            ks.scope("")
        with pytest.raises(InvalidName):
            ks.scope("a", "b")
        with pytest.raises(InvalidName, match="not UTF-8"):
            ks.scope(b"\xff")
        assert ks.scope(b"tenant1")[b"key1"] == b"tenant1-value1"  # bytes names are their UTF-8


def test_the_unnamed_default_holds_no_database_record(env: Path) -> None:
    before = _raw(env)
    with _open(env, "legacy") as ks:
        default = ks.scope()
        assert b"cache_scoped" not in default and default.get(b"cache_scoped") is None
        with pytest.raises(StoreError, match="record of a named database"):
            default[b"cache_scoped"] = b"overwrite a database record"
        with pytest.raises(KeyError):
            del default[b"bkeys"]
    assert _raw(env) == before
    with _open(env, "legacy") as ks:
        ks.scope()[b"legacy-new"] = b"ok"
        assert ks.scope()[b"legacy-new"] == b"ok"
    assert _raw(env)[None][b"legacy-new"] == b"ok"


@pytest.fixture
def many(env: Path) -> Iterator[list[scoped_heed.ScopedHeedKeyspace]]:
    opened = [_open(env, db) for db in DATABASES]
    yield opened
    for ks in opened:
        ks.close()


def test_all_databases_of_the_environment_open_at_once(many: list[scoped_heed.ScopedHeedKeyspace]) -> None:
    cache, _, bkeys, typed, _ = many
    with cache.transaction() as tx, bkeys.transaction() as ty:  # one LMDB transaction
        tx.scope("tenant1")[b"joint"] = b"1"
        ty.scope("tenant1")[b"joint"] = "2"
    assert cache.scope("tenant1")[b"joint"] == b"1" and bkeys.scope("tenant1")[b"joint"] == "2"
    assert typed.scope("tenant2")["key1"] == "tenant2-typed1"


def test_a_corrupt_registry_entry_is_never_trusted(tmp_path: Path) -> None:
    h = struct.pack("<I", xxh32_intdigest(b"tenant1"))
    _make(
        tmp_path,
        {
            "db": {},
            "db_scoped": {h + struct.pack("<Q", 1) + b"k": b"v"},
            REGISTRY: {h: bincode.STRING.encode("not-tenant1")},  # a name with another hash
        },
    )
    with scoped_heed.open(tmp_path, "db", readonly=True) as ks:
        with pytest.raises(DecodeError, match="corrupt"):
            ks.scope().scopes()
        with pytest.raises(DecodeError, match="corrupt"):
            ks.scope("tenant1").get(b"k")
        with pytest.raises(DecodeError, match="corrupt"):
            list(ks.scope().subtree())


def test_registered_and_free_names_ask_the_registry_at_every_read(tmp_path: Path) -> None:
    """Every read of a named scope asks the registry again, registered name or not
    (scoped-heed removes entries: unregister_scope, prune_globally_unused_scopes),
    so a colliding name another keyspace registers later makes it raise."""
    with scoped_heed.open(tmp_path, "db") as ks:
        ks.scope("owner")[b"k"] = b"v"
        owner = ks.scope("owner")
        assert owner[b"k"] == b"v"
        assert owner._guard is not None  # type: ignore[attr-defined]
        free = ks.scope("first")
        assert free.get(b"k") is None
        assert free._guard is not None  # type: ignore[attr-defined]
        other = _colliding_name(xxh32_intdigest(b"first"), {"first"})
        with scoped_heed.open(tmp_path, "db") as theirs:
            theirs.scope(other)[b"k"] = b"w"
        with pytest.raises(HashCollision, match=re.escape(other)):
            free.get(b"k")
        assert owner.get(b"k") == b"v"


def test_scopes_of_a_typed_database_take_its_codecs_everywhere(tmp_path: Path) -> None:
    """A scope made without codecs has the database's, outside a transaction (made
    again from the keyspace's cache too), inside one and in a snapshot; codecs
    named override them there as well."""
    with scoped_heed.open(tmp_path, "n", api="types", key=bincode.U64, value=bincode.STRING) as ks:
        ks.scope("t")[7] = "seven"
        assert ks.scope("t")[7] == "seven" and ks.scope("t") is ks.scope("t")
        with ks.transaction() as tx:
            tx.scope("t")[8] = "eight"
            assert dict(tx.scope("t").items()) == {7: "seven", 8: "eight"}
            assert (
                tx.scope("t", key="bytes", value="bytes")[(8).to_bytes(8, "little")]
                == b"\x05\x00\x00\x00\x00\x00\x00\x00eight"
            )
        with ks.snapshot() as snap:
            assert snap.scope("t")[8] == "eight"
        raw = ks.scope("t", key="bytes", value="bytes")
        assert ks.scope("t") is not raw and dict(raw.items())[(7).to_bytes(8, "little")].endswith(b"seven")


@pytest.mark.parametrize("api", ["raw_bytes", "types"])
def test_a_key_over_lmdbs_limit_names_the_stored_key_and_lmdbs_limit(tmp_path: Path, api: str) -> None:
    """The refusal named the key with keyspace's internal database tag in front
    (513 bytes) and the tag's limit (512), not the stored key and LMDB's 511."""
    from keyspace.errors import KeyTooLarge

    extra: dict[str, Any] = {"key": BYTES, "value": BYTES} if api == "types" else {}
    with scoped_heed.open(tmp_path, "db", api=api, **extra) as ks:
        named = ks.scope("tenant1")
        named[b"first"] = b"v"  # the database is in use
        for scope in (ks.scope(), named):
            for _attempt in range(2):  # the first write, then a later one
                with pytest.raises(KeyTooLarge) as refused:
                    scope[b"a" * 520] = b"v"
                pattern = r"key of (\d+) bytes is over LMDB's limit of 511 bytes: (b'[^']*')"
                found = re.match(pattern, str(refused.value))
                assert found is not None, str(refused.value)
                assert 520 <= int(found.group(1)) <= 540
                assert not found.group(2).startswith(("b'\\x00", "b'\\x01"))  # no tag of keyspace's
        assert dict(named) == {b"first": b"v"} and len(ks.scope()) == 0
