"""Reopening a LengthPrefixed store with a declared ``leaf_depth`` never lets a
scope reach another's keys through a layout that another process recorded.

A keyspace without ``leaf_depth`` records each leaf it makes. Opened again (here:
after another process wrote) with a ``leaf_depth`` that contradicts those
records, a scope the declaration makes a leaf would read and write inside a
recorded leaf's keys (below it) or over the keys of the leaves below it. Such a
scope is refused with :class:`LayoutError` on reads and writes, and the store is
unchanged; where the declaration agrees with the records, both keyspaces read
the same keys.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import LayoutError
from keyspace.stores import open_store

STORES = {
    "lmdb": "lmdb://{}/store",
    "sqlite": "sqlite:///{}/store.sqlite",
}
RECORD = """
import sys, keyspace
with keyspace.open(sys.argv[1], scheme="length-prefixed") as ks:
    ks.scope(*[c.encode() for c in sys.argv[2:]])[b"k"] = b"recorded leaf"
"""
# recorded leaf, declared depth, the scope that the declaration makes a leaf
CASES: dict[str, tuple[tuple[str, ...], int, tuple[bytes, ...]]] = {
    "below-a-recorded-leaf": (("a",), 2, (b"a", b"b")),
    "below-the-recorded-root": ((), 1, (b"a",)),
    "above-a-recorded-leaf": (("a", "b"), 1, (b"a",)),
    "root-above-a-recorded-leaf": (("a",), 0, ()),
}


def _record(url: str, leaf: tuple[str, ...]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", RECORD, url, *leaf], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url) as store:
        return list(store.scan(b"", None))


_OPS: dict[str, Any] = {
    "items": lambda s: list(s.items()),
    "get": lambda s: s.get(b"\x00\x01bk"),
    "len": len,
    "set": lambda s: s.__setitem__(b"x", b"declared"),
    "update": lambda s: s.update({b"x": b"declared"}),
    "clear": lambda s: s.clear(),
}


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize("case", list(CASES))
def test_a_declared_depth_that_contradicts_the_recorded_layout_is_refused(
    case: str, engine: str, tmp_path: Path
) -> None:
    leaf, depth, path = CASES[case]
    url = STORES[engine].format(tmp_path)
    _record(url, leaf)
    before = _raw(url)
    with keyspace.open(url, scheme="length-prefixed", leaf_depth=depth) as ks:
        for name, op in _OPS.items():
            with pytest.raises(LayoutError):
                got = op(ks.scope(*path))
                pytest.fail(f"{name} on {path!r} with leaf_depth={depth}: {got!r}")
        with pytest.raises(LayoutError), ks.transaction() as tx:
            tx.scope(*path)[b"x"] = b"declared"
        with ks.snapshot() as snap:  # a snapshot's layout read is its own
            for name in ("items", "get", "len"):
                with pytest.raises(LayoutError):
                    got = _OPS[name](snap.scope(*path))
                    pytest.fail(f"{name} on {path!r} in a snapshot with leaf_depth={depth}: {got!r}")
    assert _raw(url) == before
    with keyspace.open(url, scheme="length-prefixed") as ks:
        assert dict(ks.scope(*(c.encode() for c in leaf)).items()) == {b"k": b"recorded leaf"}


@pytest.mark.parametrize("engine", list(STORES))
def test_a_declared_depth_that_agrees_with_the_recorded_layout_reads_and_writes(
    engine: str, tmp_path: Path
) -> None:
    url = STORES[engine].format(tmp_path)
    _record(url, ("a", "b"))
    with keyspace.open(url, scheme="length-prefixed", leaf_depth=2) as ks:
        assert dict(ks.scope(b"a", b"b").items()) == {b"k": b"recorded leaf"}
        ks.scope(b"a", b"c")[b"k"] = b"declared leaf"
        assert dict(ks.scope(b"a", b"c").items()) == {b"k": b"declared leaf"}


MAKE_LEAF = """
import sys, keyspace
from keyspace.errors import LayoutError
with keyspace.open(sys.argv[1], scheme="length-prefixed") as ks:
    scope = ks.scope(*[c.encode() for c in sys.argv[2:]])
    try:
        scope[b"k"] = b"recorded leaf"
        print("written", sorted(scope.keys()))
    except LayoutError:
        print("LayoutError")
"""


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize(("declared", "then"), [((b"a", b"b"), ("a",)), ((b"a",), ("a", "b"))])
def test_leaves_of_a_declared_depth_are_recorded_where_the_store_records_its_layout(
    declared: tuple[bytes, ...], then: tuple[str, ...], engine: str, tmp_path: Path
) -> None:
    """Another process recorded a leaf; a keyspace with a declared depth writes a
    leaf elsewhere; a process that goes by the records cannot then make a leaf
    that would hold the declared leaf's keys, or lie inside them."""
    url = STORES[engine].format(tmp_path)
    _record(url, ("x",))
    with keyspace.open(url, scheme="length-prefixed", leaf_depth=len(declared)) as ks:
        ks.scope(*declared)[b"d"] = b"declared leaf"
    before = _raw(url)
    out = subprocess.run(
        [sys.executable, "-c", MAKE_LEAF, url, *then], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "LayoutError", out.stdout + out.stderr
    assert _raw(url) == before
    with keyspace.open(url, scheme="length-prefixed", leaf_depth=len(declared)) as ks:
        assert dict(ks.scope(*declared).items()) == {b"d": b"declared leaf"}
