"""Interop with Node's abstract-level sublevels on LevelDB (classic-level).

Node writes sublevels (nested, utf8 and binary keys and values) into a fresh
LevelDB directory; keyspace reads them through ``Sublevel`` scopes, checks the
stored bytes against ``Sublevel().encode``, writes through its own scopes, and a
second Node script reads back what keyspace wrote.

The Node package is installed from the npm registry on first use into
``tests/.node/`` (ignored by git) and reused afterwards. The test is skipped only
when ``node`` or ``npm`` is missing; a failed install fails the test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.schemes import Sublevel

pytestmark = pytest.mark.node

HERE = Path(__file__).resolve().parent.parent
NODE_DIR = HERE / ".node"
SCRIPTS = HERE / "interop"
PACKAGE = "classic-level"
MAJOR = 3
INSTALL_TIMEOUT = 300
SCRIPT_TIMEOUT = 60

SCHEME = Sublevel()

Path_ = tuple[str, ...]
Model = dict[tuple[tuple[bytes, ...], bytes], bytes]

# (path, key encoding, key, value encoding, value, options). utf8 keys and values
# are str; buffer/view ones are bytes.
ENTRIES: list[tuple[Path_, str, Any, str, Any, dict[str, bool]]] = [
    ((), "utf8", "root-key", "utf8", "root value", {}),
    (("tenant1",), "utf8", "config", "utf8", '{"plan":"pro"}', {}),
    (("tenant1", "users"), "utf8", "alice", "utf8", "Alice Ä", {}),
    (("tenant1", "users"), "utf8", "bob", "utf8", "Bob", {}),
    (("tenant1", "users"), "utf8", "carol", "utf8", "Carol ☃", {}),
    (("tenant1", "users"), "utf8", "", "utf8", "the empty key", {}),
    (("tenant1", "users"), "utf8", '"quoted', "utf8", "starts with the ceiling byte", {}),
    (("tenant1", "users"), "utf8", "zoë", "utf8", "non-ASCII key", {}),
    (("tenant1", "audit"), "buffer", b"\x00\x00\x01", "buffer", b"\xff\x00", {"batch": True}),
    (("tenant1", "audit"), "buffer", b"\x00", "view", b"\x00", {"batch": True}),
    (("tenant1", "audit"), "view", b"\xff\xff", "buffer", b"", {"batch": True}),
    (("tenant1", "audit"), "buffer", b"\x7f\x80\xc3\xbf", "buffer", bytes(range(256)), {"batch": True}),
    (("tenant1x",), "utf8", "k", "utf8", "a name extending tenant1", {}),
    (("tenant2",), "view", b"\x00\xff", "buffer", b"\xff\xfe", {}),
    (("tenant2",), "utf8", "日本", "utf8", "ñ", {}),
    (("tenant2", "users"), "utf8", "alice", "utf8", "other tenant's alice", {}),
    (("",), "utf8", "k", "utf8", "empty name", {}),
    (("", ""), "buffer", b"\x00", "utf8", "two empty names", {}),
    (("a", "b", "c"), "utf8", "deep", "utf8", "array form", {"array": True}),
    (("a", "b"), "utf8", "mid", "buffer", b"\x00mid\xff", {}),
    (("~",), "utf8", "last", "utf8", "highest name byte", {}),
]

# Sublevels dumped by both Node scripts (nested ones included in a parent's dump).
DUMPED: list[Path_] = [
    (),
    ("tenant1",),
    ("tenant1", "users"),
    ("tenant1", "audit"),
    ("tenant1x",),
    ("tenant2",),
    ("tenant2", "users"),
    ("",),
    ("a", "b"),
    ("~",),
]


def as_bytes(encoding: str, value: Any) -> bytes:
    return value.encode() if encoding == "utf8" else bytes(value)


def as_json(encoding: str, value: Any) -> str:
    return value if encoding == "utf8" else bytes(value).hex()


def expected_model() -> Model:
    return {
        (tuple(c.encode() for c in path), as_bytes(ke, k)): as_bytes(ve, v)
        for path, ke, k, ve, v, _ in ENTRIES
    }


def stored(model: Model) -> list[tuple[bytes, bytes]]:
    return sorted((SCHEME.encode(path, key), value) for (path, key), value in model.items())


def own(model: Model, path: tuple[bytes, ...]) -> dict[bytes, bytes]:
    return {k: v for (p, k), v in model.items() if p == path}


def under(model: Model, path: tuple[bytes, ...]) -> list[tuple[bytes, bytes]]:
    """What abstract-level's iterator of sublevel ``path`` yields: every stored key
    below its prefix (nested sublevels included), unprefixed."""
    prefix = SCHEME.prefix(path)
    return [(k[len(prefix) :], v) for k, v in stored(model) if k.startswith(prefix) and path]


def hex_pairs(pairs: Iterable[list[str]]) -> list[tuple[bytes, bytes]]:
    return [(bytes.fromhex(k), bytes.fromhex(v)) for k, v in pairs]


# -- running Node -----------------------------------------------------------------


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The node_modules directory holding classic-level (installed on first use)."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"Node interop not run: {' and '.join(missing)} not found on PATH")
    modules = NODE_DIR / "node_modules"
    manifest = modules / PACKAGE / "package.json"
    if manifest.exists():
        version = json.loads(manifest.read_text())["version"]
        if int(version.split(".")[0]) == MAJOR:
            return modules
    NODE_DIR.mkdir(exist_ok=True)
    (NODE_DIR / "package.json").write_text('{"private": true, "description": "test dependencies"}\n')
    command = ["npm", "install", "--no-audit", "--no-fund", "--silent", f"{PACKAGE}@{MAJOR}"]
    try:
        done = subprocess.run(
            command, cwd=NODE_DIR, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"`{' '.join(command)}` did not finish within {INSTALL_TIMEOUT} s: {exc.output!r}")
    if done.returncode != 0 or not manifest.exists():
        pytest.fail(
            f"`{' '.join(command)}` in {NODE_DIR} failed (exit {done.returncode}):\n"
            f"{done.stdout}\n{done.stderr}"
        )
    return modules


def run_node(modules: Path, script: str, db_dir: Path, spec: dict[str, Any], tmp: Path) -> Any:
    spec_file = tmp / f"{script}.json"
    spec_file.write_text(json.dumps(spec))
    command = ["node", str(SCRIPTS / script), str(modules), str(db_dir), str(spec_file)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT, check=False)
    assert done.returncode == 0, f"{script} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


def write_spec() -> dict[str, Any]:
    return {
        "entries": [
            {
                "path": list(path),
                "keyEncoding": ke,
                "key": as_json(ke, k),
                "valueEncoding": ve,
                "value": as_json(ve, v),
                "array": opts.get("array", False),
                "batch": opts.get("batch", False),
            }
            for path, ke, k, ve, v, opts in ENTRIES
        ],
        "dump": [list(p) for p in DUMPED],
    }


def raw_store(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b"", None))


# -- the test ---------------------------------------------------------------------


def test_node_sublevels_round_trip(node_modules: Path, tmp_path: Path) -> None:
    db_dir = tmp_path / "level"
    model = expected_model()
    written = run_node(node_modules, "level_write.mjs", db_dir, write_spec(), tmp_path)

    # 3. the exact bytes Node stored are Sublevel().encode(path, key)
    for entry, (path, ke, k, _, _, _) in zip(written["written"], ENTRIES, strict=True):
        assert bytes.fromhex(entry["stored"]) == SCHEME.encode(path, as_bytes(ke, k)), entry
    assert hex_pairs(written["root"]) == stored(model)
    node_before = {tuple(s["path"]): hex_pairs(s["entries"]) for s in written["sublevels"]}
    for s in written["sublevels"]:
        path = tuple(c.encode() for c in s["path"])
        assert bytes.fromhex(s["prefix"]) == SCHEME.prefix(path)
        assert node_before[tuple(s["path"])] == (under(model, path) if path else stored(model))

    # 1. keyspace reads exactly those scopes, keys and values
    with keyspace.open(f"leveldb://{db_dir}", scheme=SCHEME) as ks:
        assert raw_store(ks) == stored(model)
        root = ks.scope()
        assert root.scopes() == [b"", b"a", b"tenant1", b"tenant1x", b"tenant2", b"~"]
        assert ks.scope("tenant1").scopes() == [b"audit", b"users"]
        assert ks.scope("a").scopes() == [b"b"] and ks.scope("a", "b").scopes() == [b"c"]
        assert ks.scope("").scopes() == [b""]
        assert ks.scope("tenant1", "users").scopes() == []
        for path in {p for p, _ in model} | {(), (b"a",)}:
            scope = ks.scope(*path)
            mine = own(model, path)
            assert dict(scope) == mine, path
            assert len(scope) == len(mine), path
            assert list(scope) == sorted(mine), path
            assert list(scope.items(reverse=True, limit=2)) == sorted(mine.items(), reverse=True)[:2], path
        assert dict(root) == {b"root-key": b"root value"}
        users = ks.scope("tenant1", "users")
        assert users[b""] == b"the empty key" and users[b'"quoted'] == b"starts with the ceiling byte"
        assert list(users.keys(start=b"b", stop=b"zz")) == [b"bob", b"carol", "zoë".encode()]
        assert list(users.keys(start=b"alice", include_start=False, reverse=True, limit=3)) == [
            "zoë".encode(),
            b"carol",
            b"bob",
        ]
        audit = ks.scope("tenant1", "audit")
        assert list(audit.items()) == [
            (b"\x00", b"\x00"),
            (b"\x00\x00\x01", b"\xff\x00"),
            (b"\x7f\x80\xc3\xbf", bytes(range(256))),
            (b"\xff\xff", b""),
        ]
        assert ks.scope("tenant1", key="str", value="str")["config"] == '{"plan":"pro"}'
        assert ks.scope("tenant2", key="str", value="str")["日本"] == "ñ"
        subtree = list(ks.scope("tenant1").subtree())
        assert [(SCHEME.encode(p, k), v) for p, k, v in subtree] == [
            (k, v) for k, v in stored(model) if k.startswith(SCHEME.prefix((b"tenant1",)))
        ]
        assert {(p, k) for p, k, _ in subtree} == {(p, k) for p, k in model if p[:1] == (b"tenant1",)}
        everything = list(root.subtree())
        assert sorted((p, k, v) for p, k, v in everything) == sorted((p, k, v) for (p, k), v in model.items())
        assert raw_store(ks) == stored(model)  # reading wrote nothing (no metadata either)

        # 2. keyspace writes through Sublevel scopes
        users[b"dave"] = b"Dave \x00\xff"
        ks.scope("tenant1", "users", key="str", value="str")["erin"] = "Érin"
        del users[b"bob"]
        users.scope("archived")[b"bob"] = b"Bob, archived"
        ks.scope("tenant3")[b"\x00\xff"] = b"\xff\x00"
        ks.scope("tenant3", "", "deep")[b"k"] = b"under an empty name"
        ks.scope("tenant2").clear()  # own keys only: tenant2/users stays
        with ks.transaction() as tx:
            tx.scope("tenant1", "audit")[b"\x01"] = b"in a transaction"
            tx.scope("tenant1", "audit").discard(b"\x00")
        with pytest.raises(RuntimeError), ks.transaction() as tx:
            tx.scope("tenant1", "audit")[b"\x02"] = b"aborted"
            tx.scope("tenant1x").clear()
            raise RuntimeError("abort")
        ks.scope("a", "b").update({b"mid": b"replaced", b"new": b"added"})
    for path, key in [
        ((b"tenant1", b"users"), b"bob"),
        ((b"tenant2",), b"\x00\xff"),
        ((b"tenant2",), "日本".encode()),
    ]:
        del model[path, key]
    del model[(b"tenant1", b"audit"), b"\x00"]
    model.update(
        {
            ((b"tenant1", b"users"), b"dave"): b"Dave \x00\xff",
            ((b"tenant1", b"users"), b"erin"): "Érin".encode(),
            ((b"tenant1", b"users", b"archived"), b"bob"): b"Bob, archived",
            ((b"tenant3",), b"\x00\xff"): b"\xff\x00",
            ((b"tenant3", b"", b"deep"), b"k"): b"under an empty name",
            ((b"tenant1", b"audit"), b"\x01"): b"in a transaction",
            ((b"a", b"b"), b"mid"): b"replaced",
            ((b"a", b"b"), b"new"): b"added",
        }
    )

    read_spec = {
        "dump": [list(p) for p in [*DUMPED, ("tenant3",), ("tenant1", "users", "archived")]],
        "gets": [
            {"path": ["tenant1", "users"], "key": "erin"},
            {"path": ["tenant1", "users"], "key": "bob"},
            {"path": ["tenant1", "users", "archived"], "key": "bob"},
            {"path": ["tenant2", "users"], "key": "alice"},
            {"path": ["tenant2"], "key": "日本"},
        ],
        "ranges": [
            {"path": ["tenant1", "users"], "options": {"gte": "a", "lt": "e", "reverse": True, "limit": 3}},
            {"path": ["tenant1", "users"], "options": {"gt": "carol"}},
            {"path": ["tenant3"], "options": {}},
        ],
    }
    seen = run_node(node_modules, "level_read.mjs", db_dir, read_spec, tmp_path)
    assert hex_pairs(seen["root"]) == stored(model)
    for s in seen["sublevels"]:
        path = tuple(c.encode() for c in s["path"])
        assert hex_pairs(s["entries"]) == (under(model, path) if path else stored(model)), s["path"]
    after = {tuple(s["path"]): hex_pairs(s["entries"]) for s in seen["sublevels"]}
    for untouched in [("tenant1x",), ("tenant2", "users"), ("",), ("~",)]:
        assert after[untouched] == node_before[untouched], untouched
    # the cleared sublevel keeps only its nested sublevel's keys
    assert after[("tenant2",)] == [(b"!users!" + k, v) for k, v in node_before[("tenant2", "users")]]
    assert node_before[("tenant2", "users")] == [(b"alice", b"other tenant's alice")]
    assert [g["value"] for g in seen["gets"]] == [
        "Érin",
        None,
        "Bob, archived",
        "other tenant's alice",
        None,
    ]
    # abstract-level's ranges include nested sublevels ("!archived!bob" sorts first)
    assert [r["keys"] for r in seen["ranges"]] == [
        ["dave", "carol", "alice"],
        ["dave", "erin", "zoë"],
        ["\x00\ufffd", "!!!deep!k"],
    ]
