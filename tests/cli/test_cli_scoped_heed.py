"""The keyspace command on scoped-heed environments and LMDB named databases, run
as a user runs it (one subprocess per command), on a copy of the reference
environment that scoped-heed wrote."""

from __future__ import annotations

import json
from pathlib import Path

import lmdb
import pytest
from _cli import run
from _heed_env import reference_env
from xxhash import xxh32_intdigest

from keyspace import bincode

pytestmark = pytest.mark.timeout(120)

TYPED = ("--scoped-heed", "typed", "--api", "types", "--key-type", "String", "--value-type", "String")


@pytest.fixture
def env(tmp_path: Path) -> str:
    return str(reference_env(tmp_path))


def struct_hash(name: str) -> bytes:
    return xxh32_intdigest(name.encode()).to_bytes(4, "little")


def _databases(path: str, *names: bytes) -> dict[bytes, dict[bytes, bytes]]:
    e = lmdb.open(path, max_dbs=64, readonly=True, lock=False)
    try:
        out = {}
        for name in names:
            with e.begin(db=e.open_db(name, create=False)) as txn:
                out[name] = dict(txn.cursor())
        return out
    finally:
        e.close()


def test_inspect_lists_named_and_scoped_heed_databases(env: str) -> None:
    text = run("inspect", env).stdout
    assert "cache_scoped" in text and "__global_scope_metadata" in text
    assert "--scoped-heed cache" in text and "--scoped-heed legacy --unnamed-default" in text
    tree = json.loads(run("inspect", env, *TYPED, "--json").stdout)
    names = [c["path"][0] for c in tree["children"]]
    assert sorted(names) == sorted(["tenant1", "tenant2", "carry-259", "long-scope-" + "0123456789" * 30])
    assert tree["keys"] == 3 and sum(c["keys"] for c in tree["children"]) == 7


def test_get_scan_put_delete(env: str) -> None:
    assert run("get", env, "tenant1", *TYPED, "--key", "b").stdout == "short\n"
    lines = run("scan", env, "carry-259", *TYPED).stdout.splitlines()
    assert lines == ["key1\tcarry-typed1"]  # the scope scoped-heed's typed iter() misses
    u64 = ("--scoped-heed", "typed_u64", "--api", "types", "--key-type", "u64", "--value-type", "String")
    assert run("scan", env, *u64, "--json").stdout.splitlines()[0] == json.dumps(
        {"path": [], "key": "256", "value": "two-five-six"}
    )
    url = f"scoped-heed://{env}?name=bkeys&api=bytes_keys&value=String"
    assert run("get", url, "ünïcode", "--key", "key1").stdout == "ünïcode-bk1\n"
    run("put", env, "fresh", *TYPED, "--key", "k", "--value", "v")
    run("delete", env, "tenant1", *TYPED, "--key", "aa")
    raw = _databases(env, b"typed_scoped", b"__global_scope_metadata")
    fresh = struct_hash("fresh")
    assert raw[b"typed_scoped"][fresh + bincode.STRING.encode("k")] == bincode.STRING.encode("v")
    assert raw[b"__global_scope_metadata"][fresh] == bincode.STRING.encode("fresh")
    assert struct_hash("tenant1") + bincode.STRING.encode("aa") not in raw[b"typed_scoped"]
    missing = run("get", env, "tenant1", *TYPED, "--key", "aa", ok=False)
    assert missing.returncode == 1 and "no key" in missing.stderr
    bad = run("put", env, *TYPED[:4], "--key-type", "u8", "--key", "300", "--value", "x", ok=False)
    assert bad.returncode == 1 and "300" in bad.stderr


def test_migrate_out_and_back_is_byte_exact(env: str, tmp_path: Path) -> None:
    back = tmp_path / "back"
    middles = {  # another store and scheme in between: tuple on LMDB, asciihex (bytes names) on SQLite
        "typed": (str(tmp_path / "copy.lmdb"), ()),
        "cache": (f"sqlite:///{tmp_path / 'copy.db'}", ("--to-scheme", "asciihex")),
    }
    for db, api in (("typed", "types"), ("cache", "raw_bytes")):
        middle, scheme = middles[db]
        run("migrate", f"scoped-heed://{env}?name={db}&api={api}", middle, *scheme)
        run("migrate", middle, f"scoped-heed://{back}?name={db}&api={api}")
        names = (db.encode(), f"{db}_scoped".encode())
        assert _databases(env, *names) == _databases(str(back), *names)
    registry = _databases(str(back), b"__global_scope_metadata")[b"__global_scope_metadata"]
    original = _databases(env, b"__global_scope_metadata")[b"__global_scope_metadata"]
    assert registry == original  # both databases together use every registered name


def test_named_database_url_and_errors(tmp_path: Path, env: str) -> None:
    path = tmp_path / "plain"
    run("put", f"lmdb://{path}?db=alpha", "acme", "--key", "k", "--value", "v")
    assert run("get", f"lmdb://{path}?db=alpha", "acme", "--key", "k").stdout == "v\n"
    assert "alpha" in run("inspect", str(path)).stdout
    err = run("scan", env, "--scoped-heed", "cache", "--scheme", "tuple", ok=False)
    assert err.returncode == 1 and "own layout" in err.stderr
    err = run("scan", env, "--key-type", "u8", ok=False)
    assert err.returncode == 1 and "need --scoped-heed NAME" in err.stderr  # a usage error
    err = run("scan", env, "--api", "types", ok=False)  # was ignored without a word
    assert err.returncode == 1 and "--api" in err.stderr and "need --scoped-heed NAME" in err.stderr


@pytest.mark.parametrize(
    ("rust", "text", "stored"),
    [
        ("String", "ключ".encode(), bincode.STRING.encode("ключ")),
        ("Vec<u8>", b"\x00\xff", bincode.BYTES.encode(b"\x00\xff")),
        ("bool", b"true", b"\x01"),
        ("u64", b"256", bytes.fromhex("0001000000000000")),
        ("i16", b"-2", bytes.fromhex("feff")),
    ],
)
def test_text_bridge(rust: str, text: bytes, stored: bytes) -> None:
    from keyspace.cli._heed import _TextBridge

    bridge = _TextBridge(rust)
    assert bridge.encode(text) == stored
    assert bridge.decode(stored) == text


def test_text_bridge_refuses_bad_text() -> None:
    from keyspace.cli._heed import _TextBridge
    from keyspace.errors import InvalidKey

    with pytest.raises(InvalidKey, match="not a bool"):
        _TextBridge("bool").encode(b"yes please")
    with pytest.raises(InvalidKey, match="not an integer"):
        _TextBridge("u8").encode(b"x")
    with pytest.raises(InvalidKey, match="outside the range of u8"):
        _TextBridge("u8").encode(b"256")
