"""A keyspace opened on an empty store, before another process's first write, never
reads that other keyspace's data.

Opening checks the scheme record, and so does every first write and every delete
(inside its own atomic batch). A keyspace opened while the store was still empty
holds no record, and another process may then write its own record and keys. The
reads of the stale keyspace (point reads, scans, counts, structure) must then
raise :class:`SchemeMismatch`, as opening the store now would, and never return
the other keyspace's keys as their own.

The writer is a second process (LMDB allows one environment per path per
process, and this is how the race happens in practice).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _etcd import etcd_cluster

import keyspace
from keyspace.errors import LayoutError, SchemeMismatch
from keyspace.stores import open_store

STORES = {
    "lmdb": "lmdb://{}/store",
    "sqlite": "sqlite:///{}/store.sqlite",
}

# (stale reader's scheme, the scope it reads, the writer's scheme, the writer's scope),
# chosen so that the writer's stored key lies in the reader's range and the writer
# records its scheme (a keyspace that records none cannot be told from interop data)
CASES: dict[str, tuple[str, tuple[Any, ...], str, tuple[Any, ...]]] = {
    "sublevel-root-vs-tuple": ("sublevel", (), "tuple", ("x",)),
    "sublevel-root-vs-scopehash": ("sublevel", (), "scopehash", ("x",)),
    "length-prefixed-root-vs-tuple": ("length-prefixed", (), "tuple", ("x",)),
    "length-prefixed-root-vs-asciihex": ("length-prefixed", (), "asciihex", ("x",)),
}

WRITE = """
import sys, keyspace
url, scheme, path = sys.argv[1], sys.argv[2], tuple(sys.argv[3:])
with keyspace.open(url, scheme=scheme) as ks:
    ks.scope(*path)[b"k"] = b"other data"
print("written")
"""

_READS: dict[str, Callable[[Any], object]] = {
    "items": lambda s: list(s.items()),
    "keys": lambda s: list(s.keys(limit=5)),
    "len": len,
    "bool": bool,
    "iter": list,
    "subtree": lambda s: list(s.subtree()),
    "scopes": lambda s: s.scopes(),
}


def _write_in_another_process(url: str, scheme: str, path: tuple[Any, ...]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", WRITE, url, scheme, *map(str, path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout.strip() == "written", out.stderr


def _reader_ranges_hold(ks: keyspace.Keyspace, path: tuple[Any, ...]) -> list[bytes]:
    """The stored keys (outside every record) that the reader's scope range holds:
    the test is only meaningful when the other keyspace's key lies there."""
    lo, hi = ks.scheme.subtree_range(path)
    return [k for k, v in ks.store.scan(lo, hi) if v == b"other data"]


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize("case", list(CASES))
def test_a_stale_open_never_reads_what_another_process_wrote(case: str, engine: str, tmp_path: Path) -> None:
    mine, path, theirs, their_path = CASES[case]
    url = STORES[engine].format(tmp_path)
    with keyspace.open(url, scheme=mine) as stale:
        scope = stale.scope(*path)
        assert list(scope.items()) == []  # the store is empty: nothing is recorded yet
        _write_in_another_process(url, theirs, their_path)
        assert _reader_ranges_hold(stale, path), "the case does not put the other key in range"
        for name, read in _READS.items():
            for fresh in (False, True):
                target = stale.scope(*path) if fresh else scope
                with pytest.raises(SchemeMismatch):
                    got = read(target)
                    pytest.fail(f"{name}: the stale {mine} keyspace read {got!r}")
        with stale.snapshot() as snap, pytest.raises(SchemeMismatch):
            list(snap.scope(*path).items())
        with pytest.raises(SchemeMismatch), stale.transaction() as tx:
            list(tx.scope(*path).items())
        with pytest.raises(SchemeMismatch):  # as opening it now does
            keyspace.open(url, scheme=mine)
    with keyspace.open(url, scheme=theirs) as ks:  # the other keyspace's data is whole
        assert dict(ks.scope(*their_path).items()) == {b"k": b"other data"}


@pytest.mark.parametrize("engine", list(STORES))
def test_a_stale_open_of_the_same_scheme_reads_and_settles(engine: str, tmp_path: Path) -> None:
    """The record another process wrote is this keyspace's own: reads go on, and
    the check is made once (the keyspace then counts as recorded)."""
    url = STORES[engine].format(tmp_path)
    with keyspace.open(url, scheme="tuple") as ks:
        scope = ks.scope("x")
        assert scope.get(b"k") is None
        _write_in_another_process(url, "tuple", ("x",))
        assert scope.get(b"k") == b"other data"
        assert dict(ks.scope("x").items()) == {b"k": b"other data"}
        assert ks.catalog.recorded


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize("path", [(), (b"!t!k",), (b"x", b"y")])
def test_a_layered_keyspace_opened_on_an_empty_store_sees_keys_written_without_a_layout(
    path: tuple[bytes, ...], engine: str, tmp_path: Path
) -> None:
    """A LengthPrefixed keyspace that found the store empty, then another process
    writes keys that record no layout (a Sublevel keyspace, records nothing): which
    scopes hold keys is no longer known, so its reads and writes raise LayoutError
    as a fresh open's do, rather than read those keys or make a leaf over them."""
    url = STORES[engine].format(tmp_path)
    with keyspace.open(url, scheme="length-prefixed") as stale:
        assert list(stale.scope(*path).items()) == []  # empty: every path is free
        _write_in_another_process(url, "sublevel", ("t",))
        before = list(stale.store.scan(b"", None))
        for ks in (stale, keyspace.open(url, scheme="length-prefixed")):
            with pytest.raises(LayoutError):
                list(ks.scope(*path).items())
            with pytest.raises(LayoutError):
                ks.scope(*path)[b"z"] = b"lp data"
            with pytest.raises(LayoutError), ks.transaction() as tx:
                tx.scope(*path).update({b"z": b"lp data"})
            if ks is not stale:
                ks.close()
        assert list(stale.store.scan(b"", None)) == before


@pytest.mark.etcd
@pytest.mark.parametrize("case", ["sublevel-root-vs-tuple", "length-prefixed-root-vs-asciihex"])
def test_a_stale_open_on_etcd_never_reads_what_another_process_wrote(case: str) -> None:
    """On etcd the records are read from the committed store (a read inside a
    transaction would join its compare set): the same refusals."""
    mine, path, theirs, their_path = CASES[case]
    endpoints = os.environ.get("KEYSPACE_ETCD_ENDPOINTS") or ",".join(etcd_cluster().endpoints)
    url = f"etcd://{endpoints}/stale-{uuid.uuid4().hex}%2F"
    try:
        with keyspace.open(url, scheme=mine) as stale:
            scope = stale.scope(*path)
            assert list(scope.items()) == []
            _write_in_another_process(url, theirs, their_path)
            for name, read in _READS.items():
                with pytest.raises(SchemeMismatch):
                    got = read(scope)
                    pytest.fail(f"{name}: the stale {mine} keyspace read {got!r}")
            with pytest.raises(SchemeMismatch), stale.transaction() as tx:
                list(tx.scope(*path).items())
    finally:
        with open_store(url) as store:
            store.delete_range(b"", None)
