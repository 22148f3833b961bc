"""Expiring keys on every read path other than a scope's own (``ttl=True``).

Each test makes a key expire and reads it through one more way: a keyspace
whose reads check the records in their own read transaction (opened on an
empty store, written by another opener: the engine's watched reads, which
would answer without the rule), a directory, a collection, the asyncio face,
a snapshot's children listing, the command (real processes, real clock);
then the sweeps (bounded, their delete events) and bad input."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from _expiry_clock import Clock
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace import _expiry
from keyspace.collections import Map
from keyspace.errors import InvalidArgument, KeyTooLarge
from keyspace.stores import ReadView, keys_in


def _records(ks: Any) -> list[bytes]:
    """The deadline records of the store, both kinds."""
    return list(keys_in(ks.store.inner, _expiry.BASE, _expiry.BASE[:-1] + b"\x01"))


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_reads_checked_in_their_own_transaction_hide_expired_keys(
    tmp_path: Path, clock: Clock, engine: str
) -> None:
    url = f"{engine}:///{tmp_path}/db"
    reader = keyspace.open(url, ttl=True)  # an empty store: its reads watch for records
    scope = reader.scope("a")
    assert dict(scope.items()) == {}
    writer = keyspace.open(url, ttl=True)
    writer.scope("a").put(b"k", b"v", ttl=1)
    writer.scope("a")[b"j"] = b"w"
    assert scope.get(b"k") == b"v"
    clock.now += 1
    assert dict(scope.items()) == {b"j": b"w"}
    assert scope.get(b"k") is None and b"k" not in scope and len(scope) == 1
    assert list(scope.keys(reverse=True)) == [b"j"]
    writer.close()
    reader.close()


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_directories_and_collections_hide_expired_keys(tmp_path: Path, clock: Clock, engine: str) -> None:
    url = "memory:" if engine == "memory" else f"{engine}:///{tmp_path}/db"
    ks = keyspace.open(url, ttl=True)
    d = ks.directory("dd")
    d.put(b"x", b"1", ttl=1)
    d[b"y"] = b"2"
    balances = Map(ks.scope("app"), "m", key="bytes", value="bytes")
    balances.save(b"q", b"1")
    stored = next(k for k in keys_in(ks.store.inner) if b"app" in k)
    with ks.store.transaction() as tx:  # any stored key can take a deadline
        tx.put(stored, b"2")
        tx.note(_expiry.NAME, stored, _expiry.now_micros() + 1_000_000)
    assert dict(d.items()) == {b"x": b"1", b"y": b"2"} and balances.load(b"q") == b"2"
    clock.now += 1
    assert dict(d.items()) == {b"y": b"2"} and d.get(b"x") is None and len(d) == 1
    assert ks.directories.open("dd").get(b"x") is None
    assert balances.may_load(b"q") is None and list(balances.items()) == []
    ks.close()


@pytest.mark.parametrize("accounting", [False, True])
def test_the_asyncio_face_hides_expired_keys(tmp_path: Path, clock: Clock, accounting: bool) -> None:
    url = f"lmdb:///{tmp_path}/db"
    ks = keyspace.open(
        url, ttl=True, accounting=accounting
    )  # len(): a count, or the counter less the expired
    ks.scope("a").put(b"k", b"v", ttl=1)
    ks.scope("a")[b"j"] = b"w"
    clock.now += 2

    async def reads() -> tuple[Any, ...]:
        aks = await keyspace.aio.open(url)
        try:
            s = aks.scope("a")
            return await s.get(b"k"), [kv async for kv in s.items()], await s.len(), await s.contains(b"k")
        finally:
            await aks.close()

    assert asyncio.run(reads()) == (None, [(b"j", b"w")], 1, False)
    ks.close()


def test_children_listed_in_a_snapshot_and_a_transaction_skip_expired_scopes(clock: Clock) -> None:
    ks = keyspace.open("memory:", ttl=True)
    for name in ("b", "c", "d"):
        ks.scope("t", name).put(b"k", b"v", ttl=1)
    ks.scope("t", "c")[b"z"] = b"kept"
    clock.now += 1
    assert ks.scope("t").scopes() == ["c"]
    with ks.snapshot() as snap:
        assert snap.scope("t").scopes() == ["c"]
    with ks.transaction() as tx:
        assert tx.scope("t").scopes() == ["c"]
        tx.scope("t", "d")[b"k"] = b"again"  # written in the transaction: its old deadline is gone
        assert tx.scope("t").scopes() == ["c", "d"]
        assert tx.scope("t", "d").get(b"k") == b"again"
    assert ks.scope("t").scopes() == ["c", "d"]
    ks.close()


def test_later_writes_drop_the_deadline_records(clock: Clock) -> None:
    ks = keyspace.open("memory:", ttl=True)
    s = ks.scope("a")
    s.put(b"k", b"v", ttl=5)
    s.put(b"k", b"v", ttl=9)  # replaced: one record of each kind
    assert len(_records(ks)) == 2
    s[b"k"] = b"forever"
    assert _records(ks) == []
    clock.now += 10
    assert s[b"k"] == b"forever"
    for drop in (
        lambda: s.__delitem__(b"k"),
        s.clear,
        ks.scope("a").drop,
        lambda: s.clear_range(start=b"k", stop=b"l"),
    ):
        s.put(b"k", b"v", ttl=5)
        assert len(_records(ks)) == 2
        drop()
        assert _records(ks) == []
    with ks.transaction() as tx:  # a ttl put, then a plain put, in one transaction: no deadline
        tx.scope("a").put(b"k", b"v", ttl=1)
        tx.scope("a")[b"k"] = b"w"
    assert _records(ks) == []
    ks.close()


@pytest.mark.parametrize("url", ["memory:", "lmdb"])
def test_a_steady_stream_of_expiring_keys_leaves_no_growing_heap(
    clock: Clock, tmp_path: Path, url: str
) -> None:
    """Commits of 100 keys with a ttl of one second, a second apart: each
    writer's sweep takes as many keys as its commit gave deadlines (and 16
    more), so the keys expired and not swept stay under two commits' worth.
    A sweep of 16 left 84 more each commit."""
    ks = keyspace.open(url if url == "memory:" else f"lmdb:///{tmp_path / 'db'}", ttl=True)
    s = ks.scope("a")
    for n in range(30):
        with ks.transaction() as tx:
            for i in range(100):
                tx.scope("a").put(b"%02d-%03d" % (n, i), b"v", ttl=1)
        clock.now += 1
        held = ks.store.inner.count(*s.layout.ranges[0])
        assert held <= 200 + _expiry.WRITER_SWEEP, (n, held)
        assert len(s) == 0
    ks.close()


def test_a_writer_sweeps_at_most_sixteen_keys_after_its_commit(clock: Clock) -> None:
    ks = keyspace.open("memory:", ttl=True)
    s = ks.scope("a")
    with ks.transaction() as tx:
        for i in range(40):
            tx.scope("a").put(b"%02d" % i, b"v", ttl=1)
    clock.now += 1
    assert len(s) == 0
    s[b"x"] = b"1"  # its commit finds the oldest deadline passed
    assert ks.store.inner.count(*s.layout.ranges[0]) == 1 + 40 - _expiry.WRITER_SWEEP
    assert ks.expire(limit=5) == 5
    assert ks.expire() == 40 - _expiry.WRITER_SWEEP - 5
    assert ks.expire() == 0 and _records(ks) == []
    assert dict(s.items()) == {b"x": b"1"}
    ks.close()


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_sweep_emits_delete_events(tmp_path: Path, clock: Clock, engine: str) -> None:
    url = "memory:" if engine == "memory" else f"{engine}:///{tmp_path}/db"
    ks = keyspace.open(url, ttl=True, changes=True)
    s = ks.scope("a")
    feed = ks.feed("f", ("a",))
    with s.watch() as watch:
        s.put(b"k", b"v", ttl=1)
        s.put(b"m", b"w", ttl=2)
        clock.now += 2
        assert ks.expire() == 2
        seen = [(e.kind, e.key) for e in (watch.get(5) for _ in range(4))]
    assert seen == [("put", b"k"), ("put", b"m"), ("delete", b"k"), ("delete", b"m")]
    assert [(e.kind, e.key) for e in feed.read(timeout=5)] == seen
    ks.close()


def test_cli_reads_hide_expired_keys(tmp_path: Path) -> None:
    url = f"lmdb:///{tmp_path}/db"
    ks = keyspace.open(url, ttl=True)
    ks.scope("acme", "users").put(b"gone", b"1", ttl=0.2)
    ks.scope("acme", "users")[b"kept"] = b"2"
    ks.scope("acme", "old").put(b"g", b"1", ttl=0.2)
    time.sleep(0.3)
    inner = ks.store.inner
    left = [k for k in (ks.scope("acme", "users")._stored(b"gone"), ks.scope("acme", "old")._stored(b"g"))]
    unswept = sum(inner.get(k) is not None for k in left)  # a writer's sweep may have run on a slow machine
    ks.close()
    assert run("get", url, "acme", "users", "--key", "gone", ok=False).returncode == 1
    assert run("get", url, "acme", "users", "--key", "kept").stdout.strip() == "2"
    printed = run("scan", url, "acme", "users").stdout
    assert "kept" in printed and "gone" not in printed
    tree = run("inspect", url).stdout
    assert "users" in tree and "old" not in tree  # a scope whose keys all expired is not listed
    copy = f"lmdb:///{tmp_path}/copy"
    run("migrate", url, copy)
    assert dict(keyspace.open(copy).scope("acme", "users").items()) == {b"kept": b"2"}
    assert run("expire", url).stdout.strip() == str(unswept)
    assert run("expire", url, "--limit", "5").stdout.strip() == "0"


BAD_TTLS = [0, -1, -0.5, float("nan"), float("inf"), 1e10, 10**400, True, "5", b"5", [], None]


@settings(max_examples=30, deadline=None)
@given(ttl=st.sampled_from(BAD_TTLS[:-1]) | st.floats(max_value=0) | st.floats(min_value=1e9 + 1))
def test_a_bad_ttl_is_refused_and_nothing_written(ttl: Any) -> None:
    ks = keyspace.open("memory:", ttl=True)
    ks.scope("a")[b"x"] = b"1"
    before = list(ks.store.inner.scan())
    with pytest.raises(InvalidArgument, match="ttl must be"):
        ks.scope("a").put(b"k", b"v", ttl=ttl)
    with pytest.raises(InvalidArgument, match="ttl must be"), ks.transaction() as tx:
        tx.scope("a")[b"y"] = b"2"
        tx.scope("a").put(b"k", b"v", ttl=ttl)
    with pytest.raises(InvalidArgument, match="ttl must be"):
        ks.scope("a").expiring(ttl)
    assert list(ks.store.inner.scan()) == before
    ks.close()


def test_ttl_without_the_feature_and_bad_limits_are_refused() -> None:
    ks = keyspace.open("memory:")
    ks.scope("a")[b"x"] = b"1"
    before = list(ks.store.scan())
    with pytest.raises(InvalidArgument, match="open it with ttl=True"):
        ks.scope("a").put(b"k", b"v", ttl=5)
    assert list(ks.store.scan()) == before
    assert ks.expire() == 0
    for limit in (-1, True, 1.5, "3", None):
        with pytest.raises(InvalidArgument, match="limit"):
            ks.expire(limit=limit)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="ttl takes no parameters"):
        keyspace.open("memory:", ttl={"default": 5})


def test_a_key_too_long_for_its_deadline_record_is_refused(tmp_path: Path) -> None:
    ks = keyspace.open(f"lmdb:///{tmp_path}/db", ttl=True)
    s = ks.scope("a")
    long = b"k" * 490  # storable, but not with the deadline index's prefix before it
    s[long] = b"1"
    with pytest.raises(KeyTooLarge, match="can take no ttl"):
        s.put(long, b"2", ttl=5)
    assert s[long] == b"1" and _records(ks) == []
    assert list(s.keys()) == [long]
    ks.close()


def test_a_default_ttl_of_a_scope(clock: Clock) -> None:
    ks = keyspace.open("memory:", ttl=True)
    short = ks.scope("a").expiring(1)
    short[b"k"] = b"v"
    short.update({b"m": b"w"})
    short.put(b"n", b"x", ttl=3)
    assert dict(short.items()) == {b"k": b"v", b"m": b"w", b"n": b"x"}
    clock.now += 1
    assert dict(ks.scope("a").items()) == {b"n": b"x"} and len(short) == 1
    assert list(short.items(start=b"m", reverse=True)) == [(b"n", b"x")] and short.get(b"k") is None
    clock.now += 2
    assert dict(short) == {}
    ks.close()


def test_a_child_of_a_scope_with_a_default_ttl_takes_it_too(clock: Clock) -> None:
    ks = keyspace.open("memory:", ttl=True)
    short = ks.scope("a").expiring(1)
    child = short.scope("b", key="str")
    child["k"] = b"v"
    child.put("n", b"x", ttl=3)
    assert dict(ks.scope("a", "b", key="str").items()) == {"k": b"v", "n": b"x"}
    clock.now += 1
    assert dict(ks.scope("a", "b", key="str").items()) == {"n": b"x"}
    ks.close()


def test_a_scope_with_a_default_ttl_makes_its_children_on_the_asyncio_face(clock: Clock) -> None:
    async def run() -> dict[Any, Any]:
        aks = await keyspace.aio.open("memory:", ttl=True)
        try:
            child = aks.scope("a").expiring(1).scope("b")
            await child.put(b"k", b"v")
            clock.now += 1
            return {k: v async for k, v in aks.scope("a", "b").items()}
        finally:
            await aks.close()

    assert asyncio.run(run()) == {}


def test_a_default_ttl_update_reads_its_argument_as_dict_update_does(clock: Clock) -> None:
    """A sqlite3.Row has keys() but iterates its values: update takes
    (key, row[key]) pairs, as Scope.update and dict.update do."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    row = conn.execute("SELECT 'v' AS k, 'w' AS m").fetchone()
    ks = keyspace.open("memory:", ttl=True)
    short = ks.scope("a", key="str", value="str").expiring(1)
    short.update(row, n="x")
    assert dict(short.items()) == {"k": "v", "m": "w", "n": "x"}
    clock.now += 1
    assert dict(short.items()) == {}
    ks.close()
    conn.close()


def test_the_asyncio_face_puts_with_a_ttl(tmp_path: Path, clock: Clock) -> None:
    async def run() -> tuple[Any, ...]:
        aks = await keyspace.aio.open(f"lmdb:///{tmp_path}/db", ttl=True)
        try:
            s = aks.scope("a")
            await s.put(b"k", b"v", ttl=1)
            await s.put(b"j", b"w")
            before = [kv async for kv in s.items()]
            clock.now += 1
            after = [kv async for kv in s.items()], await s.get(b"k")
            with pytest.raises(InvalidArgument, match="inside an async transaction"):
                async with aks.transaction() as tx:
                    await tx.scope("a").put(b"m", b"x", ttl=1)
            with pytest.raises(InvalidArgument, match="ttl must be"):
                await s.put(b"m", b"x", ttl=0)
            short = s.expiring(2)
            await short.put(b"n", b"1")
            await short.update({b"o": b"2"})
            assert [k async for k in s] == [b"j", b"n", b"o"]
            clock.now += 2
            return before, after, await s.len()
        finally:
            await aks.close()

    assert asyncio.run(run()) == ([(b"j", b"w"), (b"k", b"v")], ([(b"j", b"w")], None), 1)


def test_a_keyspace_without_the_feature_keeps_the_engines_read_paths(tmp_path: Path) -> None:
    plain = keyspace.open(f"lmdb:///{tmp_path}/plain")
    assert _expiry.expiry_of(plain.store) is None and type(plain.store).read_pages is not ReadView.read_pages
    logged = keyspace.open(f"lmdb:///{tmp_path}/logged", changes=True)  # hooked, no read rule
    assert logged.store._read_view is logged.store.inner and logged.store.get == logged.store.inner.get
    assert logged.store.watched_reads is not None  # the engine's own read faces stay offered
    expiring = keyspace.open(f"lmdb:///{tmp_path}/expiring", ttl=True)
    assert expiring.store._read_view is not expiring.store.inner  # reads, read_pages too, apply the rule
    assert expiring.store.watched_reads is None
    for ks in (plain, logged, expiring):
        ks.close()
