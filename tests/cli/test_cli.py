"""The keyspace command, run as a user runs it: one subprocess per command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace import tuples
from keyspace.cli._format import parse_component, render_component

pytestmark = pytest.mark.timeout(120)


def counts(node: dict[str, Any]) -> dict[str, Any]:
    """A tree from ``inspect --json`` without the byte sizes (they depend on the scheme)."""
    return {"path": node["path"], "keys": node["keys"], "children": [counts(c) for c in node["children"]]}


def test_demo_shows_the_collision_and_the_tree(tmp_path: Path) -> None:
    target = str(tmp_path / "demo")
    first = run("demo", target).stdout
    again = run("demo", target).stdout  # re-runnable: starts from a fresh store
    assert first == again
    # foo|bar and fo|obar: the same stored bytes
    assert "scope foo, key bar   → stored 666f6f626172" in first
    assert "scope fo,  key obar  → stored 666f6f626172" in first
    assert "YES" in first and "reads another tenant's data" in first
    assert "b'acme|users|alice'" in first
    for scheme in ("tuple", "length-prefixed", "asciihex", "sublevel", "scopehash"):
        assert scheme in first
    assert "0502666f6f00000162617200" in first  # tuple: ("foo",), b"bar"
    assert "└─ initech" in first and "tasks" in first
    with keyspace.open(str(tmp_path / "demo" / "keyspace.lmdb"), create=False) as ks:
        assert ks.scope("acme").scopes() == ["audit", "projects", "users"]
        assert len(ks.scope("acme", "users")) == 4


@pytest.mark.parametrize("scheme", ["lmdb", "sqlite"])
def test_put_get_scan_delete_round_trip(tmp_path: Path, scheme: str) -> None:
    url = str(tmp_path / "s.lmdb") if scheme == "lmdb" else f"sqlite:///{tmp_path / 's.db'}"
    run("put", url, "acme", "users", "--key", "alice", "--value", '{"role": "admin"}')
    run("put", url, "acme", "users", "--key", "626f62", "--value", "00ff", "--hex")
    run("put", url, "acme", "users", "sub", "--key", "x", "--value", "child")
    assert run("get", url, "acme", "users", "--key", "alice").stdout == '{"role": "admin"}\n'
    assert run("get", url, "acme", "users", "--key", "626f62", "--hex").stdout == "00ff\n"
    assert run("scan", url, "acme", "users").stdout == 'alice\t{"role": "admin"}\nbob\t\\x00\\xff\n'
    lines = run("scan", url, "acme", "users", "--json", "--reverse", "--limit", "1").stdout.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"path": ["acme", "users"], "key": {"hex": "626f62"}, "value": {"hex": "00ff"}}
    ]
    run("delete", url, "acme", "users", "--key", "alice")
    missing = run("get", url, "acme", "users", "--key", "alice", ok=False)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: no key 'alice'") and missing.stderr.count("\n") == 1
    assert run("scan", url, "acme", "users", "sub").stdout == "x\tchild\n"


def test_inspect_json_counts_what_was_written(tmp_path: Path) -> None:
    url = str(tmp_path / "i.lmdb")
    written = {("t1",): 2, ("t1", "users"): 5, ("t1", "audit", "2026"): 3, ("t2", "users"): 1, (): 1}
    with keyspace.open(url) as ks:
        for path, n in written.items():
            ks.scope(*path).update({b"k%d" % i: b"v" * i for i in range(n)})
        ks.scope("t1", 7, b"\x00\xff")[b"typed"] = b"path"
    proc = run("inspect", url, "--json")
    tree = json.loads(proc.stdout)  # nothing else on stdout
    assert "tuple (recorded in the store)" in proc.stderr

    def node(*path: Any) -> dict[str, Any]:
        found: dict[str, Any] = tree
        for depth in range(len(path)):
            found = next(c for c in found["children"] if c["path"] == list(path[: depth + 1]))
        return found

    for path, n in written.items():
        assert node(*path)["keys"] == n
    assert node("t1", "audit")["keys"] == 0
    assert node("t1", 7, {"hex": "00ff"})["keys"] == 1
    assert [c["path"] for c in tree["children"]] == [["t1"], ["t2"]]
    stored = node("t1", "users")["bytes"]
    with keyspace.open(url, create=False) as ks:
        lo, hi = ks.scheme.own_range(("t1", "users"))
        assert stored == sum(len(k) + len(v) for k, v in ks.store.scan(lo, hi))


def _sublevel_store(url: str) -> None:
    with keyspace.open(url, scheme=keyspace.Sublevel()) as ks:
        for tenant in ("acme", "globex"):
            ks.scope(tenant)[b"plan"] = b"team"
            ks.scope(tenant, "users").update({b"u%03d" % i: b"x" * i for i in range(30)})
            ks.scope(tenant, "audit", "2026")[b"0001"] = b"created"
        ks.scope()[b"version"] = b"3"


def test_sublevel_store_without_metadata_is_detected(tmp_path: Path) -> None:
    url = f"leveldb:///{tmp_path / 'node-db'}"
    _sublevel_store(url)
    proc = run("inspect", url)
    assert "sublevel: 100% of 65 sampled keys decode" in proc.stderr
    assert "globex" in proc.stdout and "users" in proc.stdout


def test_migrate_sublevel_leveldb_to_tuple_lmdb(tmp_path: Path) -> None:
    src = f"leveldb:///{tmp_path / 'node-db'}"
    dst = str(tmp_path / "out.lmdb")
    _sublevel_store(src)
    args = ("migrate", src, dst, "--from-scheme", "sublevel", "--to-scheme", "tuple", "--batch", "10")
    assert "65 copied" in run(*args).stdout
    before = json.loads(run("inspect", src, "--json").stdout)
    after = json.loads(run("inspect", dst, "--json").stdout)
    assert counts(before) == counts(after)
    with keyspace.open(dst, create=False) as ks:
        snapshot = list(ks.store.scan())
        assert ks.scope("acme", "users")[b"u005"] == b"xxxxx"
    assert "0 copied, 0 overwritten, 65 already present" in run(*args).stdout
    with keyspace.open(dst, create=False) as ks:
        assert list(ks.store.scan()) == snapshot


def test_migrate_refuses_a_key_the_destination_cannot_store_before_writing(tmp_path: Path) -> None:
    src = f"sqlite:///{tmp_path / 'src.db'}"
    dst = tmp_path / "dst.lmdb"
    with keyspace.open(src) as ks:  # SQLite stores keys of any size; LMDB up to 511 bytes
        ks.scope("a").update({b"k%04d" % i: b"v" for i in range(50)})
        ks.scope("a")[b"z" * 600] = b"v"
    proc = run("migrate", src, str(dst), "--batch", "10", ok=False)
    assert proc.returncode == 1
    assert "limit of 511 bytes" in proc.stderr and "nothing was written" in proc.stderr
    assert not dst.exists()  # the store the refused copy created is removed again


def test_decode() -> None:
    stored = keyspace.TupleScheme().encode(("acme", "users"), b"alice").hex()
    assert run("decode", "--scheme", "tuple", stored).stdout == "path: acme / users\nkey:  alice\n"
    lp = keyspace.LengthPrefixed().encode((b"bar", b"cool"), b"foo").hex()
    proc = run("decode", "--scheme", "length-prefixed", "--depth", "2", lp, "--json")
    assert json.loads(proc.stdout) == {"path": ["bar", "cool"], "key": "foo"}


def test_errors_are_one_line(tmp_path: Path) -> None:
    url = str(tmp_path / "e.lmdb")
    run("put", url, "a", "--key", "k", "--value", "v")
    for args in (
        ("scan", url, "a", "--scheme", "sublevel"),  # the store records another scheme
        ("get", str(tmp_path / "missing.lmdb"), "a", "--key", "k"),
        ("decode", "--scheme", "sublevel", "21616263"),
    ):
        proc = run(*args, ok=False)
        assert proc.returncode == 1, args
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stdout == ""


def test_help_and_schemes() -> None:
    text = run("schemes").stdout
    assert "tuple" in text and "TupleScheme" in text and "collision-free" in text
    assert "Resuming" in run("migrate", "--help").stdout


@pytest.mark.parametrize("component", ["users", "hex:x", b"\x00\xff", b"abc", 12, ""])
def test_component_spelling_round_trips(component: Any) -> None:
    spelled = render_component(component, typed=True)
    assert parse_component(spelled) == component and type(parse_component(spelled)) is type(component)


_ATOMS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.uuids()
    | st.binary(max_size=8)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
    | st.sampled_from([b", ", b"(", b"a)", b"x,y", "a, b", "(", ")", '"', '", "', '\\"', "str:(", '"x'])
)


@given(
    st.one_of(
        _ATOMS,
        st.text(max_size=12),
        st.sampled_from(
            ["none:", "bool:true", "(a)", "(", "float:1", "uuid:x", "str:", "int:3", "", '"a"', '"']
        ),
        st.recursive(st.tuples(_ATOMS), lambda inner: st.tuples(inner, _ATOMS), max_leaves=4),
    )
)
def test_every_printed_component_names_the_same_component_again(component: Any) -> None:
    """What ``inspect`` prints for a scope's path component, given back as PATH,
    names that component: the same tuple-layer value (compared packed, so NaN and
    -0.0 count too), never another scope's."""
    parsed = parse_component(render_component(component, typed=True))
    assert tuples.pack((parsed,)) == tuples.pack((component,))


def test_typed_path_components_select_their_own_scope(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    lookalikes = {None: "none:", True: "bool:true", 1.5: "float:1.5", ("a", 1): "(a, int:1)"}
    with keyspace.open(url) as ks:
        for component, text in lookalikes.items():
            ks.scope(component)[b"k"] = b"typed"
            ks.scope(text)[b"k"] = b"text"  # the text that looks like the typed spelling
    printed = run("inspect", url).stdout
    for text in lookalikes.values():
        assert f" {text} " in printed and f" str:{text} " in printed
        assert run("get", url, text, "--key", "k").stdout == "typed\n"
        assert run("get", url, f"str:{text}", "--key", "k").stdout == "text\n"
    run("delete", url, "none:", "--drop")
    with keyspace.open(url) as ks:
        assert dict(ks.scope(None).items()) == {} and ks.scope("none:")[b"k"] == b"text"


@pytest.mark.parametrize("folder", ["c[red]d", "x[", "x[/]y"])
def test_inspect_and_demo_print_a_path_as_it_is(tmp_path: Path, folder: str) -> None:
    """A store path holding ``[`` was read as markup: shown without its ``[red]``,
    or the command failed with a markup error."""
    where = tmp_path / folder
    where.mkdir(parents=True)
    url = str(where / "s.lmdb")
    run("put", url, "s", "--key", "k", "--value", "v")
    shown = run("inspect", url).stdout
    assert str(where / "s.lmdb") in shown
    demo = run("demo", str(where / "demo")).stdout
    assert f"to {where / 'demo'}" in demo and f"keyspace inspect {where / 'demo'}" in demo


def test_every_typed_key_scan_prints_is_read_back_by_get(tmp_path: Path) -> None:
    """Text output escaped a key (``a\\b`` printed ``str:a\\\\b``, a tab as ``\\t``)
    and ``get --key`` read the escape as it stood: another key, or none. Typed keys
    are now printed so that they read back as themselves."""
    url = str(tmp_path / "t.lmdb")
    keys: list[Any] = ["a\\b", "tab\there", "new\nline", 'q"uote', ("x", 'q"uote'), ("a, b", 1)]
    keys += [("back\\slash", b"t\tb"), b"by\\tes", b"t\tb", b"\xff\x00", "a\\\\b", 1.5, (None, True)]
    with keyspace.open(url) as ks:
        scope = ks.scope("t")
        for n, key in enumerate(keys):
            scope[key] = b"value %d" % n
    lines = run("scan", url, "t").stdout.splitlines()
    assert len(lines) == len(keys)
    for line in lines:
        printed, value = line.split("\t")
        assert run("get", url, "t", "--key", printed).stdout == value + "\n", printed
