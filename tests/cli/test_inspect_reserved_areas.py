"""``keyspace inspect`` counts the reserved keys by what keeps them: the scheme
record and name registry, the change log and its feeds, the deadlines of
expiring keys; a store whose change log grows shows it (all of them were one
line, "scheme record, name registry"), in the table and in ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

from _cli import run

import keyspace
from keyspace._changes import CHANGES_PREFIX
from keyspace._expiry import BASE as DEADLINES
from keyspace.cli._tree import human_bytes
from keyspace.stores import open_store


def _under(url: str, prefix: bytes) -> tuple[int, int]:
    """The keys of the store at ``url`` under ``prefix`` and their bytes, read raw."""
    store = open_store(url, readonly=True)
    try:
        pairs = list(store.scan(prefix, prefix[:-1] + bytes([prefix[-1] + 1])))
    finally:
        store.close()
    return len(pairs), sum(len(k) + len(v) for k, v in pairs)


def test_the_change_log_and_the_deadlines_are_counted_apart(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url, changes=True, ttl=True) as ks:
        ks.feed("audit", ("a",)).close()
        for i in range(40):
            ks.scope("a")[b"%d" % i] = b"v" * i
        for i in range(5):
            ks.scope("b").put(b"%d" % i, b"x", ttl=3600)
    log, deadlines = _under(url, CHANGES_PREFIX), _under(url, DEADLINES)
    assert log[0] > 40 and deadlines[0] == 10  # a record and an index entry a key
    printed = run("inspect", url).stdout
    assert f"reserved (change log, feeds): {log[0]:,} keys, {human_bytes(log[1])}" in printed
    expiring = f"reserved (deadlines of expiring keys): {deadlines[0]:,} keys, {human_bytes(deadlines[1])}"
    assert expiring in printed
    assert "reserved (scheme record, name registry): " in printed
    doc = json.loads(run("inspect", url, "--json").stdout)
    assert doc["reserved"]["change log, feeds"] == {"keys": log[0], "bytes": log[1]}
    assert doc["reserved"]["deadlines of expiring keys"] == {"keys": deadlines[0], "bytes": deadlines[1]}


def test_a_store_without_features_shows_its_records_alone(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"
    lines = [line for line in run("inspect", url).stdout.splitlines() if line.startswith("reserved")]
    assert len(lines) == 1 and lines[0].startswith("reserved (scheme record, name registry): 1 keys")
    doc = json.loads(run("inspect", url, "--json").stdout)
    assert list(doc["reserved"]) == ["scheme record, name registry"]
