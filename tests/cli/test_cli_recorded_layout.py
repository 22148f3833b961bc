"""``inspect`` and ``migrate`` of a LengthPrefixed store that records its layout.

A LengthPrefixed keyspace that owns its store records each leaf (a scope that
holds keys), so leaves may lie at different depths. The commands decoded every
key at the one ``--depth`` given and never read the records: at a depth the
records contradict, a branch was shown holding its children's keys and a
migrate copied them into it (the API refuses that depth with ``LayoutError``);
with no depth the store could not be read at all. They now read the recorded
leaves, and refuse a depth the records contradict before writing anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.cli import main
from keyspace.schemes import LengthPrefixed
from keyspace.stores import open_store

pytestmark = pytest.mark.timeout(120)

LEAVES: dict[tuple[bytes, ...], dict[bytes, bytes]] = {
    (b"a",): {b"k1": b"v1"},
    (b"b", b"c"): {b"k2": b"v2", b"k4": b"v4"},
    (b"b", b"d"): {b"k3": b"v3"},
    (b"b", b"e", b"f"): {b"": b"empty key"},
}


def _store(tmp_path: Path, leaves: dict[tuple[bytes, ...], dict[bytes, bytes]] = LEAVES) -> str:
    url = str(tmp_path / "lp.lmdb")
    with keyspace.open(url, scheme=LengthPrefixed()) as ks:
        for path, items in leaves.items():
            ks.scope(*path).update(items)
    return url


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url, readonly=True) as store:
        return list(store.scan(b"", None))


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _own_counts(node: dict[str, Any], found: dict[tuple[str, ...], int]) -> dict[tuple[str, ...], int]:
    if node["keys"]:
        found[tuple(node["path"])] = node["keys"]
    for child in node["children"]:
        _own_counts(child, found)
    return found


def test_inspect_reads_the_recorded_leaves_at_their_depths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = _store(tmp_path)
    code, out, err = _cli(capsys, "inspect", url, "--scheme", "length-prefixed", "--json")
    assert code == 0, err
    tree = json.loads(out)
    expected = {tuple(c.decode() for c in path): len(items) for path, items in LEAVES.items()}
    assert _own_counts(tree, {}) == expected


@pytest.mark.parametrize("depth", ["1", "2", "3"])
def test_a_depth_the_records_contradict_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: str
) -> None:
    url = _store(tmp_path)
    before = _raw(url)
    code, out, err = _cli(capsys, "inspect", url, "--scheme", "length-prefixed", "--depth", depth)
    assert code == 1 and "does not match the layout recorded in the store" in err and out == ""
    dst = tmp_path / "dst.lmdb"
    lp = ("--from-scheme", "length-prefixed")
    code, _, err = _cli(capsys, "migrate", url, str(dst), *lp, "--depth", depth)
    assert code == 1 and "does not match the layout recorded in the store" in err
    assert not dst.exists() and _raw(url) == before


def test_migrate_copies_each_leaf_to_its_own_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = _store(tmp_path)
    dst = str(tmp_path / "dst.lmdb")
    lp = ("--from-scheme", "length-prefixed")
    code, _, err = _cli(capsys, "migrate", url, dst, *lp, "--to-scheme", "tuple")
    assert code == 0, err
    with keyspace.open(dst) as ks:
        for path, items in LEAVES.items():
            assert dict(ks.scope(*(c.decode() for c in path))) == items
        assert len(ks.scope("b")) == 0


def test_a_depth_every_recorded_leaf_has_is_read_as_before(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    leaves = {(b"x",): {b"k": b"v"}, (b"y",): {b"k": b"w", b"l": b"z"}}
    url = _store(tmp_path, leaves)
    for depth in ([], ["--depth", "1"]):
        code, out, err = _cli(capsys, "inspect", url, "--scheme", "length-prefixed", "--json", *depth)
        assert code == 0, err
        assert _own_counts(json.loads(out), {}) == {("x",): 1, ("y",): 2}


def test_a_key_under_no_recorded_leaf_is_counted_as_undecodable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = _store(tmp_path)
    with open_store(url) as store:
        store.put(b"\x00\x01zstray", b"not of any leaf")  # written outside keyspace
    code, out, err = _cli(capsys, "inspect", url, "--scheme", "length-prefixed", "--json")
    assert code == 0, err
    assert sum(_own_counts(json.loads(out), {}).values()) == 5
    assert "1 keys" in err and "under no scope the store records" in err
