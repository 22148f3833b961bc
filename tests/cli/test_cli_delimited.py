"""The keyspace command on hand-made delimited keys: inspect, detection, the
injection refused by ``put``, and ``migrate`` out of them (one subprocess per
command, as a user runs it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run

import keyspace
from keyspace.schemes import Delimited
from keyspace.stores import open_store

pytestmark = pytest.mark.timeout(120)

USERS = ["rod", "rod.vagg", "rod1977", "roderick"]


def _hand_made(url: str, keys: dict[bytes, bytes]) -> None:
    """A store written by another program: raw keys, no keyspace record."""
    store = open_store(url)
    try:
        for k, v in keys.items():
            store.put(k, v)
    finally:
        store.close()


def _sessions(sep: bytes = b":") -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for n, user in enumerate(USERS):
        out[user.encode() + sep + b"last_login"] = b"13674%08d" % n
        out[user.encode() + sep + b"default_theme"] = b"theme %d" % n
    return out


def _tree(url: str, *args: str) -> dict[str, Any]:
    return json.loads(run("inspect", url, "--json", *args).stdout)


def _counts(node: dict[str, Any]) -> dict[str, Any]:
    """Path and key count per scope, children in name order (the order is the
    scheme's: ':' keeps rod.vagg before rod, the tuple scheme does not)."""
    children = sorted((_counts(c) for c in node["children"]), key=lambda c: json.dumps(c["path"]))
    return {"path": node["path"], "keys": node["keys"], "children": children}


def _raw(url: str) -> list[bytes]:
    store = open_store(url)
    try:
        return [k for k, _ in store.scan(b"", None)]
    finally:
        store.close()


def test_inspect_shows_the_tree_given_separator_and_depth(tmp_path: Path) -> None:
    url = f"leveldb://{tmp_path / 'redis-like'}"
    _hand_made(
        url, {b"user:42:name": b"ada", b"user:42:email": b"a@x", b"user:7:name": b"bob", b"cfg:x:y": b"1"}
    )
    tree = _tree(url, "--scheme", "delimited", "--separator", ":", "--depth", "2")
    assert _counts(tree) == {
        "path": [],
        "keys": 0,
        "children": [
            {"path": ["cfg"], "keys": 0, "children": [{"path": ["cfg", "x"], "keys": 1, "children": []}]},
            {
                "path": ["user"],
                "keys": 0,
                "children": [
                    {"path": ["user", "42"], "keys": 2, "children": []},
                    {"path": ["user", "7"], "keys": 1, "children": []},
                ],
            },
        ],
    }
    text = run("inspect", url, "--separator", ":", "--depth", "2").stdout  # --separator implies delimited
    assert "Delimited(separator=':', depth=2)" in text and "42" in text


def test_detection_proposes_the_separator(tmp_path: Path) -> None:
    url = f"leveldb://{tmp_path / 'sessions'}"
    _hand_made(url, _sessions())
    proc = run("inspect", url, "--json")
    assert "delimited separator ':' depth 1: 100% of 8 sampled keys decode" in proc.stderr
    tree = json.loads(proc.stdout)
    assert [c["path"] for c in tree["children"]] == [["rod.vagg"], ["rod1977"], ["rod"], ["roderick"]]
    assert all(c["keys"] == 2 for c in tree["children"])
    assert _raw(url) == sorted(_sessions())  # detection wrote nothing


def test_detection_proposes_nothing_when_two_separators_fit(tmp_path: Path) -> None:
    url = f"leveldb://{tmp_path / 'mixed'}"
    _hand_made(url, {b"a:b|c": b"1", b"d|e:f": b"2"})
    proc = run("inspect", url, ok=False)
    assert "delimited" not in proc.stderr


def test_put_refuses_the_injection(tmp_path: Path) -> None:
    url = f"leveldb://{tmp_path / 'tenants'}"
    with keyspace.open(url, scheme=Delimited("|")) as ks:
        ks.scope("acme")[b"users|alice"] = b"acme-only"
    before = _raw(url)
    proc = run(
        "put", url, "acme|users", "--key", "alice", "--value", "stolen", "--scheme", "delimited",
        "--separator", "|", ok=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "error: scope name b'acme|users' contains the separator '|' at offset 4" in proc.stderr
    proc = run("get", url, "acme|users", "--key", "alice", "--separator", "|", ok=False)
    assert proc.returncode == 1 and "contains the separator" in proc.stderr
    assert _raw(url) == before
    assert run("get", url, "acme", "--key", "users|alice", "--separator", "|").stdout == "acme-only\n"


def test_put_and_scan_with_a_nul_separator(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nul.db'}"
    for user in USERS:
        run("put", url, user, "--key", "last_login", "--value", "1", "--separator", "\\x00")
    assert _raw(url) == [user.encode() + b"\x00last_login" for user in USERS]  # the note's \x00 order
    assert run("scan", url, "rod", "--separator", "\\x00").stdout == "last_login\t1\n"
    proc = run("put", url, "a", "b", "--key", "k", "--value", "v", "--separator", "\\x00", ok=False)
    assert proc.returncode == 1 and "has depth 2" in proc.stderr


def test_separator_is_refused_for_other_schemes(tmp_path: Path) -> None:
    proc = run("inspect", f"sqlite:///{tmp_path / 'x.db'}", "--scheme", "tuple", "--separator", ":", ok=False)
    assert proc.returncode == 1 and "takes no --separator" in proc.stderr
    proc = run("inspect", "memory:", "--separator", "ab", ok=False)
    assert proc.returncode == 1 and "not one byte" in proc.stderr  # a usage error: one line, exit 1
    proc = run("inspect", "memory:", "--separator", "é", ok=False)  # e9 here, c3 a9 in a path: refused
    assert proc.returncode == 1 and "give the byte e9 as \\xe9" in proc.stderr


def test_decode_command() -> None:
    stored = b"user:42:name".hex()
    out = run("decode", "--scheme", "delimited", "--separator", ":", "--depth", "2", stored, "--json").stdout
    assert json.loads(out) == {"path": ["user", "42"], "key": "name"}


def test_migrate_round_trip_to_the_tuple_scheme(tmp_path: Path) -> None:
    src = f"leveldb://{tmp_path / 'sessions'}"
    dst = str(tmp_path / "safe.lmdb")
    _hand_made(src, _sessions())
    args = ("--from-scheme", "delimited", "--separator", ":", "--depth", "1", "--to-scheme", "tuple")
    out = run("migrate", src, dst, *args).stdout
    assert "8 keys read: 8 copied" in out
    before = _tree(src, "--scheme", "delimited", "--separator", ":", "--depth", "1")
    after = _tree(dst)
    assert _counts(before) == _counts(after)
    assert [c["path"] for c in after["children"]] == [[u] for u in sorted(USERS)]  # now in name order
    with keyspace.open(dst, create=False) as ks:
        assert ks.scheme == keyspace.TupleScheme()
        assert ks.scope("rod.vagg")[b"last_login"] == b"1367400000001"
    assert "0 copied, 0 overwritten, 8 already present" in run("migrate", src, dst, *args).stdout


def test_migrate_refuses_ambiguous_keys_before_writing(tmp_path: Path) -> None:
    src = f"leveldb://{tmp_path / 'mixed'}"
    dst = tmp_path / "safe.lmdb"
    keys = {**_sessions(), b"user:42:name": b"ada", b"plain": b"no separator"}
    _hand_made(src, keys)
    args = ("--from-scheme", "delimited", "--separator", ":", "--depth", "1", "--to-scheme", "tuple")
    proc = run("migrate", src, str(dst), *args, ok=False)
    assert proc.returncode == 1
    assert "1 source key(s) do not split unambiguously" in proc.stderr  # fewer separators: no split
    assert "b'plain' (0 separator(s) ':', fewer than the depth 1)" in proc.stderr
    assert "user:42:name" not in proc.stderr  # split at its first separator, as Delimited reads it
    proc = run("migrate", src, str(dst), *args, "--strict-separators", ok=False)
    assert "2 source key(s) do not split unambiguously" in proc.stderr
    assert "b'user:42:name' (2 separators ':'" in proc.stderr
    assert not dst.exists()  # refused before the destination was opened
    assert _raw(src) == sorted(keys)


def test_demo_shows_the_notes_orders_and_the_refused_injection(tmp_path: Path) -> None:
    text = run("demo", str(tmp_path / "demo")).stdout
    assert "':'  rod.vagg  rod1977  rod  roderick     not name order" in text
    assert "'!'  rod  rod.vagg  rod1977  roderick     name order" in text
    assert "'~'  rod.vagg  rod1977  roderick  rod     not name order" in text
    assert "'\\x00'  rod  rod.vagg  rod1977  roderick     name order" in text
    assert "tenant 'acme|users' reads key alice  → refused: InvalidName: scope name b'acme|users'" in text
