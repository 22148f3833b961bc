"""``keyspace dir ls|mv|rm`` and the directory tree in ``keyspace inspect``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run

import keyspace


@pytest.fixture(params=["lmdb", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    made = f"lmdb://{tmp_path / 'db'}" if request.param == "lmdb" else f"sqlite://{tmp_path / 'db.sqlite'}"
    with keyspace.open(made) as ks:
        users = ks.directory("acme", "users")
        users.update({b"a": b"1", b"b": b"22"})
        part = ks.directories.create_or_open(("acme", "p"), b"partition")
        part.create_or_open(("inner",))[b"x"] = b"y"
        ks.scope("t")[b"k"] = b"v"
    return made


def prefixes(url: str) -> dict[tuple[str, ...], bytes]:
    with keyspace.open(url) as ks:
        return {path: prefix for path, prefix, _ in ks.directories.walk()}


def test_ls_lists_names_prefixes_and_layers(url: str) -> None:
    known = prefixes(url)
    got = run("dir", "ls", url).stdout.splitlines()
    assert got == [f"acme\tprefix={known[('acme',)].hex(' ')}"]
    got = run("dir", "ls", url, "acme/p", "--json").stdout
    doc = json.loads(got)
    assert doc == {
        "path": ["acme", "p"],
        "children": [{"name": "inner", "prefix": known[("acme", "p", "inner")].hex(), "layer": ""}],
    }
    text = run("dir", "ls", url, "/acme").stdout
    assert "p\tprefix=" in text and "layer=partition" in text and "users\tprefix=" in text


def test_mv_moves_and_keeps_the_prefix(url: str) -> None:
    before = prefixes(url)
    assert run("dir", "mv", url, "acme/users", "people").stdout.strip() == "moved /acme/users to /people"
    after = prefixes(url)
    assert after[("people",)] == before[("acme", "users")] and ("acme", "users") not in after
    with keyspace.open(url) as ks:
        assert dict(ks.directories.open(("people",)).items()) == {b"a": b"1", b"b": b"22"}
    failed = run("dir", "mv", url, "acme", "acme/inside", ok=False)
    assert failed.returncode == 1 and "inside it" in failed.stderr
    assert prefixes(url) == after


def test_rm_removes_a_directory_and_its_keys(url: str) -> None:
    gone = prefixes(url)[("acme", "users")]
    assert run("dir", "rm", url, "acme/users").stdout.strip() == "removed /acme/users"
    with keyspace.open(url) as ks:
        assert [k for k, _ in ks.store.scan(gone, gone + b"\xff")] == []
        assert ks.directories.list(("acme",)) == ["p"]
        assert ks.scope("t")[b"k"] == b"v"
    failed = run("dir", "rm", url, "acme/users", ok=False)
    assert failed.returncode == 1 and "no directory at" in failed.stderr
    assert run("dir", "rm", url, "acme/users", "--if-exists").stdout.strip() == "no directory at /acme/users"
    failed = run("dir", "rm", url, "/", ok=False)
    assert "root directory" in failed.stderr


def test_inspect_shows_the_directory_tree_with_prefixes_keys_and_bytes(url: str) -> None:
    known = prefixes(url)
    doc = json.loads(run("inspect", url, "--json").stdout)
    rows = {tuple(d["path"]): d for d in doc["directories"]}
    assert set(rows) == {("acme",), ("acme", "users"), ("acme", "p"), ("acme", "p", "inner")}
    users = rows[("acme", "users")]
    assert users["prefix"] == known[("acme", "users")].hex() and users["keys"] == 2
    prefix_len = len(known[("acme", "users")])
    assert users["bytes"] == (prefix_len + 3) + 1 + (prefix_len + 3) + 2  # stored keys + values
    assert rows[("acme", "p")]["layer"] == "partition" and rows[("acme", "p", "inner")]["keys"] == 1
    assert doc["directory_nodes"]["keys"] > 0
    assert doc["children"][0]["path"] == ["t"]
    shown = run("inspect", url)
    assert "/acme/users" in shown.stdout and known[("acme", "users")].hex(" ") in shown.stdout
    assert "do not decode" not in shown.stderr  # directory keys are no undecodable keys


def test_names_with_a_slash_or_empty_are_listed_moved_and_removed_in_json_form(url: str) -> None:
    with keyspace.open(url) as ks:
        ks.directory("")[b"k"] = b"v"
        ks.directory("a/b")[b"k"] = b"v"
        ks.directory("[x")[b"k"] = b"v"  # looks like the JSON form: shown in it
    known = prefixes(url)
    listed = run("dir", "ls", url).stdout.splitlines()
    assert f'[""]\tprefix={known[("",)].hex(" ")}' in listed
    assert f'["a/b"]\tprefix={known[("a/b",)].hex(" ")}' in listed
    assert f'["[x"]\tprefix={known[("[x",)].hex(" ")}' in listed
    assert (
        run("dir", "mv", url, '["a/b"]', '["acme", "c/d"]').stdout.strip()
        == 'moved ["a/b"] to ["acme", "c/d"]'
    )
    assert prefixes(url)[("acme", "c/d")] == known[("a/b",)]
    assert run("dir", "rm", url, '[""]', '["[x"]').stdout.splitlines() == ['removed [""]', 'removed ["[x"]']
    after = prefixes(url)
    assert ("",) not in after and ("[x",) not in after and ("acme", "c/d") in after


@pytest.mark.parametrize(
    "given", ["[1]", '["a", 2]', "[not json", '[["a"]]', "[" * 5000 + "]" * 5000], ids=lambda g: g[:12]
)
def test_a_path_in_json_form_must_be_a_list_of_names(url: str, given: str) -> None:
    before = prefixes(url)
    refused = run("dir", "rm", url, given, ok=False)
    assert refused.returncode != 0 and "directory path" in refused.stderr
    assert prefixes(url) == before
