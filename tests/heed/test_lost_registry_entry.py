"""A scoped-heed environment whose registry lost the entry of a name that still has
keys: scoped-heed's ``GlobalScopeRegistry::unregister_scope`` deletes an entry
whatever the databases hold, and ``prune_globally_unused_scopes`` deletes the
entry of every name that is empty in the databases it is given, though another
database may hold keys of it. The keys under that hash then have no owner that
anything can tell: a name of the same hash must not read, change or delete them
(through the library or the command), nor register itself over them; the name
that wrote them cannot be told from its twin either. A name whose hash holds no
key is still registered and written as before.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lmdb
import pytest
from _cli import run
from _heed_env import reference_env
from _xxh32 import colliding_name
from xxhash import xxh32_intdigest

from keyspace import bincode, scoped_heed
from keyspace.errors import HashCollision

pytestmark = pytest.mark.timeout(60)

REGISTRY = b"__global_scope_metadata"
DATABASES = (b"cache", b"cache_scoped", REGISTRY)
OWNER = "tenant1"  # six keys in cache_scoped in the reference environment
TWIN = colliding_name(OWNER)
HASH = struct.pack("<I", xxh32_intdigest(OWNER.encode()))


def _raw(path: Path) -> dict[bytes, dict[bytes, bytes]]:
    env = lmdb.open(str(path), max_dbs=64, readonly=True, lock=False)
    try:
        out = {}
        for name in DATABASES:
            with env.begin(db=env.open_db(name, create=False)) as txn:
                out[name] = dict(txn.cursor())
        return out
    finally:
        env.close()


@pytest.fixture
def env(tmp_path: Path) -> Path:
    """A copy of the reference environment after ``unregister_scope(hash(tenant1))``."""
    target = reference_env(tmp_path)
    e = lmdb.open(str(target), max_dbs=64)
    try:
        with e.begin(write=True, db=e.open_db(REGISTRY, create=False)) as txn:
            assert txn.delete(HASH)
    finally:
        e.close()
    raw = _raw(target)
    assert sum(k.startswith(HASH) for k in raw[b"cache_scoped"]) == 6
    return target


def _put(s: Any) -> None:
    s[b"mine"] = b"twin's"


def _tx_put(s: Any) -> None:
    with s.keyspace.transaction() as tx:
        tx.scope(*s.path)[b"mine"] = b"twin's"


TOUCHES: dict[str, Callable[[Any], Any]] = {
    "items": lambda s: list(s.items()),
    "get": lambda s: s.get(b"key1"),
    "contains": lambda s: b"key1" in s,
    "len": len,
    "put": _put,
    "update": lambda s: s.update({b"mine": b"twin's"}),
    "transaction put": _tx_put,
    "pop": lambda s: s.pop(b"key1", None),
    "discard": lambda s: s.discard(b"key1"),
    "clear": lambda s: s.clear(),
    "drop": lambda s: s.drop(),
}


@pytest.mark.parametrize("touch", list(TOUCHES))
@pytest.mark.parametrize("name", [TWIN, OWNER])
def test_keys_under_an_unregistered_hash_are_nobodys(env: Path, name: str, touch: str) -> None:
    before = _raw(env)
    with scoped_heed.open(env, "cache") as ks:
        with pytest.raises(HashCollision, match="no entry for that hash") as info:
            TOUCHES[touch](ks.scope(name))
        assert repr(name) in str(info.value)
    assert _raw(env) == before


@pytest.mark.parametrize(
    "args",
    [
        ("get", "--key", "key1"),
        ("scan",),
        ("put", "--key", "mine", "--value", "twin's"),
        ("delete", "--key", "key1"),
    ],
)
def test_the_command_refuses_a_name_of_an_unregistered_hash(env: Path, args: tuple[str, ...]) -> None:
    before = _raw(env)
    command, *rest = args
    proc = run(command, str(env), TWIN, "--scoped-heed", "cache", *rest, ok=False)
    assert proc.returncode == 1 and "no entry for that hash" in proc.stderr and TWIN in proc.stderr
    assert _raw(env) == before


def test_a_name_whose_hash_holds_no_key_is_registered_as_before(env: Path) -> None:
    with scoped_heed.open(env, "cache") as ks:
        assert ks.scope("fresh").get(b"k") is None
        ks.scope("fresh")[b"k"] = b"v"
        assert dict(ks.scope("fresh").items()) == {b"k": b"v"}
        assert ks.scope("tenant2")[b"key1"] == b"tenant2-value1"
    fresh = struct.pack("<I", xxh32_intdigest(b"fresh"))
    raw = _raw(env)
    assert raw[REGISTRY][fresh] == bincode.STRING.encode("fresh")
    assert raw[b"cache_scoped"][fresh + struct.pack("<Q", 1) + b"k"] == b"v"
