"""Scope.watch: exactly the scope's own keys (or its subtree), every event once and in
revision order across a leader SIGKILL and restart, a compacted start revision as a
named error; embedded engines refuse with a named error instead of a silent stream.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_keyspace
from _etcd import etcd_cluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import ScopeWatch, WatchCompacted, WatchEvent, WatchUnsupported
from keyspace.errors import InvalidArgument
from keyspace.schemes import LengthPrefixed
from keyspace.stores.etcd import EtcdStore
from keyspace.stores.etcd._watch import EtcdWatch
from keyspace.testing.etcd_cluster import LocalCluster


@pytest.fixture(scope="module")
def cluster() -> LocalCluster:
    return etcd_cluster()


@pytest.fixture
def ks(cluster: LocalCluster) -> Iterator[keyspace.Keyspace]:
    wipe = EtcdStore(cluster.url)
    wipe.delete_range(b"", None)
    wipe.close()
    k = keyspace.open(cluster.url)
    try:
        yield k
    finally:
        k.store.delete_range(b"", None)
        k.close()


def _started(w: ScopeWatch) -> ScopeWatch:
    source = w.store_watch
    assert isinstance(source, EtcdWatch)
    assert source.wait_started(10), "the watch was not established within 10 s"
    return w


def _drain(w: ScopeWatch, count: int, timeout: float = 10.0) -> list[WatchEvent]:
    """``count`` events (fails after ``timeout`` s), then checks nothing else comes."""
    deadline = time.monotonic() + timeout
    out: list[WatchEvent] = []
    while len(out) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"only {len(out)} of {count} events within {timeout} s: {out[-3:]}"
        event = w.get(left)
        if event is not None:
            out.append(event)
    return out


# -- what a watch sees ------------------------------------------------------------


@pytest.mark.etcd
def test_own_watch_ignores_siblings_children_and_ff_tail_names(ks: keyspace.Keyspace) -> None:
    admin = ks.scope("t", "admin")
    with _started(admin.watch()) as w:
        ks.scope("t", "admin2")[b"k"] = b"sibling"
        ks.scope("t", "admi")[b"k"] = b"shorter"
        admin.scope("child")[b"k"] = b"child"
        ks.scope("t")[b"admin"] = b"parent's own key"
        admin[b"k"] = b"v1"
        admin[b"k"] = b"v2"
        del admin[b"k"]
        admin.update({b"a": b"1", b"b": b"2"})  # one atomic batch: one revision
        events = _drain(w, 5)
        assert w.get(0.3) is None
    assert [(e.kind, e.path, e.key, e.value) for e in events] == [
        ("put", ("t", "admin"), b"k", b"v1"),
        ("put", ("t", "admin"), b"k", b"v2"),
        ("delete", ("t", "admin"), b"k", None),
        ("put", ("t", "admin"), b"a", b"1"),
        ("put", ("t", "admin"), b"b", b"2"),
    ]
    revisions = [e.revision for e in events]
    assert revisions[:3] == sorted(set(revisions[:3])) and revisions[3] == revisions[4] > revisions[2]


@pytest.mark.etcd
def test_subtree_watch_has_paths_and_codecs(ks: keyspace.Keyspace) -> None:
    tenant = ks.scope("tenant", value="json")
    with _started(tenant.watch(subtree=True)) as w:
        ks.scope("tenant2")[b"x"] = b"1"  # beside the subtree: never seen
        tenant["k"] = {"a": 1}
        tenant.scope("users", 7)["alice"] = [1, 2]
        tenant.scope("users", 7).drop()
        events = _drain(w, 3)
        assert w.get(0.3) is None
    assert [(e.kind, e.path, e.key, e.value) for e in events] == [
        ("put", ("tenant",), "k", {"a": 1}),
        ("put", ("tenant", "users", 7), "alice", [1, 2]),
        ("delete", ("tenant", "users", 7), "alice", None),
    ]


@pytest.mark.etcd
def test_sublevel_own_ranges_skip_children(cluster: LocalCluster) -> None:
    """Sublevel keeps own keys in two ranges around its children's: the watch covers
    both and still reports only own keys."""
    wipe = EtcdStore(cluster.url + "/sublevel-watch")
    wipe.delete_range(b"", None)
    wipe.close()
    ks = keyspace.open(cluster.url + "/sublevel-watch", scheme="sublevel")
    try:
        s = ks.scope("a")
        with _started(s.watch()) as w:
            s.scope("b")[b"k"] = b"child"
            s[b" low"] = b"1"
            s[b"~high"] = b"2"
            events = _drain(w, 2)
            assert w.get(0.3) is None
        assert [e.key for e in events] == [b" low", b"~high"]
    finally:
        ks.store.delete_range(b"", None)
        ks.close()


_NAMES = st.sampled_from(["a", "a\xff", "ab", "a\x00"])
_WRITE = (
    st.lists(_NAMES, min_size=1, max_size=2).map(tuple),
    st.binary(min_size=0, max_size=3),
    st.one_of(st.none(), st.binary(max_size=3)),
)
"""A write of the property tests: scope path, key, value (``None``: a delete)."""


@pytest.mark.etcd
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(
        st.tuples(*_WRITE),
        min_size=1,
        max_size=12,
    )
)
def test_watch_sees_exactly_the_scopes_own_changes(
    ks: keyspace.Keyspace, ops: list[tuple[tuple[str, ...], bytes, bytes | None]]
) -> None:
    """Property: the own watch of ("a",) reports exactly the changes whose scope is
    ("a",), in order; the subtree watch exactly those under ("a",). (Deleting a
    missing key changes nothing, so it is no event.)"""
    ks.store.delete_range(b"", None)
    present: set[tuple[tuple[str, ...], bytes]] = set()
    with _started(ks.scope("a").watch()) as own, _started(ks.scope("a").watch(subtree=True)) as sub:
        expected_own, expected_sub = [], []
        for path, key, value in ops:
            scope = ks.scope(*path)
            if value is None:
                scope.discard(key)
                kind = "delete"
                if (path, key) not in present:
                    continue
                present.discard((path, key))
            else:
                present.add((path, key))
                scope[key] = value
                kind = "put"
            if path == ("a",):
                expected_own.append((kind, path, key, value))
            if path[0] == "a":
                expected_sub.append((kind, path, key, value))
        got_own = [(e.kind, e.path, e.key, e.value) for e in _drain(own, len(expected_own))]
        got_sub = [(e.kind, e.path, e.key, e.value) for e in _drain(sub, len(expected_sub))]
        assert own.get(0.1) is None and sub.get(0.1) is None
    assert got_own == expected_own
    assert got_sub == expected_sub


@pytest.mark.etcd
def test_start_revision_replays_and_compacted_revision_is_named(
    ks: keyspace.Keyspace, cluster: LocalCluster
) -> None:
    s = ks.scope("replay")
    with _started(s.watch()) as live:
        s[b"a"] = b"1"
        s[b"b"] = b"2"
        first, second = (e.revision for e in _drain(live, 2))
    with s.watch(start_revision=first) as w:
        assert [(e.key, e.revision) for e in _drain(w, 2)] == [(b"a", first), (b"b", second)]
    etcdctl = shutil.which("etcdctl")
    if etcdctl is None:
        pytest.fail("etcdctl (package etcd-client) is needed to compact the test cluster")
    with _started(s.watch()) as live:
        s[b"c"] = b"3"
        (now,) = (e.revision for e in _drain(live, 1))
    subprocess.run(
        [etcdctl, "--endpoints", ",".join(cluster.endpoints), "compact", str(now)],
        check=True,
        capture_output=True,
        timeout=20,
    )
    w = s.watch(start_revision=first)
    with pytest.raises(WatchCompacted, match=f"revision {first} has been compacted") as info:
        w.get(10)
    assert info.value.revision == first and info.value.compact_revision == now
    w.close()


@pytest.mark.etcd
def test_async_iteration(ks: keyspace.Keyspace) -> None:
    s = ks.scope("async")

    async def main() -> list[WatchEvent]:
        got: list[WatchEvent] = []
        with _started(s.watch()) as w:
            await asyncio.to_thread(s.update, {b"1": b"a", b"2": b"b"})
            async for event in w:
                got.append(event)
                if len(got) == 2:
                    break
        return got

    events = asyncio.run(asyncio.wait_for(main(), 20))
    assert [(e.key, e.value) for e in events] == [(b"1", b"a"), (b"2", b"b")]


@pytest.mark.etcd
def test_close_ends_iteration_from_another_thread(ks: keyspace.Keyspace) -> None:
    w = _started(ks.scope("closing").watch())
    threading.Timer(0.2, w.close).start()
    assert list(w) == []


# -- member failure -----------------------------------------------------------------


def _leader_index(cluster: LocalCluster) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        ids, leaders = [], set()
        for endpoint in cluster.endpoints:
            member = EtcdStore(f"etcd://{endpoint}", timeout=1, retry_budget=2)
            try:
                status = member.status()
            finally:
                member.close()
            ids.append(status["member_id"])
            leaders.add(status["leader"])
        if len(leaders) == 1 and (leader := leaders.pop()) in ids:
            return ids.index(leader)
        time.sleep(0.1)
    raise TimeoutError("no agreed etcd leader within 10 s")


WRITES = 1000


@pytest.mark.etcd
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_leader_sigkill_and_restart_during_1000_writes(ks: keyspace.Keyspace, cluster: LocalCluster) -> None:
    """Two watchers: one on every member, one pinned to the leader (its stream breaks
    and is resumed on the restarted member). Both see each of 1000 writes exactly once,
    in revision order."""
    if cluster.directory is None:
        pytest.fail("this test needs KEYSPACE_ETCD_DIR (set by scripts/etcd-test-cluster.sh)")
    cluster.wait_healthy()
    victim = _leader_index(cluster)
    pinned = keyspace.open(f"etcd://{cluster.endpoints[victim]}")
    scope = ks.scope("watched")
    killed = False
    try:
        all_members = _started(scope.watch())
        on_leader = _started(pinned.scope("watched").watch())
        for i in range(WRITES):
            if i == 300:
                cluster.kill(victim)
                killed = True
            if i == 600:
                cluster.restart(victim)
                killed = False
            scope[b"%04d" % i] = b"v%d" % i
        cluster.wait_healthy()
        for w in (all_members, on_leader):
            events = _drain(w, WRITES, timeout=40)
            assert w.get(0.3) is None, "an event was repeated"
            assert [e.key for e in events] == [b"%04d" % i for i in range(WRITES)]
            revisions = [e.revision for e in events]
            assert revisions == sorted(revisions) and len(set(revisions)) == WRITES
            w.close()
        source = on_leader.store_watch
        assert isinstance(source, EtcdWatch) and source.reconnects >= 1
    finally:
        if killed:
            cluster.restart(victim)
        cluster.wait_healthy()
        pinned.close()


# -- embedded engines -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "lmdb", "leveldb", "rocksdb"])
def test_embedded_engines_refuse_with_a_named_error(kind: str, tmp_path: Path) -> None:
    """Other processes may write these files, and their engines report nothing:
    without the change log, no watch rather than one that misses changes; the
    error says how to get one."""
    url = f"{kind}:///{tmp_path}/db"
    ks = keyspace.open(url)
    try:
        assert ks.store.capabilities.watch is None
        with pytest.raises(WatchUnsupported, match=r"cannot watch for changes.*changes=True"):
            ks.scope("a").watch()
    finally:
        ks.close()


# -- the memory store: every write goes through the one object, so it can watch -------


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.tuples(*_WRITE, st.booleans()),
        min_size=1,
        max_size=16,
    )
)
@pytest.mark.parametrize("engine", ENGINES)
def test_memory_watch_sees_exactly_the_scopes_own_changes(
    engine: str,
    ops: list[tuple[tuple[str, ...], bytes, bytes | None, bool]],
) -> None:
    """The property of the etcd test above, on MemoryStore (its own watch) and on
    every embedded engine with the change log on, with transactions too: a
    transaction's changes come as one revision, after it commits."""
    with engine_keyspace(engine) as ks:
        _watch_sees_exactly_the_scopes_own_changes(ks, ops)


def _watch_sees_exactly_the_scopes_own_changes(
    ks: keyspace.Keyspace, ops: list[tuple[tuple[str, ...], bytes, bytes | None, bool]]
) -> None:
    present: set[tuple[tuple[str, ...], bytes]] = set()
    expected_own: list[tuple[str, Any, Any, Any]] = []
    expected_sub: list[tuple[str, Any, Any, Any]] = []
    with ks.scope("a").watch() as own, ks.scope("a").watch(subtree=True) as sub:
        for path, key, value, in_tx in ops:
            if in_tx:
                with ks.transaction() as tx:
                    scope = tx.scope(*path)
                    scope.discard(key) if value is None else scope.__setitem__(key, value)
            else:
                scope = ks.scope(*path)
                scope.discard(key) if value is None else scope.__setitem__(key, value)
            if value is None:
                if (path, key) not in present:
                    continue
                present.discard((path, key))
            else:
                present.add((path, key))
            change = ("delete" if value is None else "put", path, key, value)
            if path == ("a",):
                expected_own.append(change)
            if path[0] == "a":
                expected_sub.append(change)
        own_events = _drain(own, len(expected_own), 1)
        sub_events = _drain(sub, len(expected_sub), 1)
        got_own = [(e.kind, e.path, e.key, e.value) for e in own_events]
        got_sub = [(e.kind, e.path, e.key, e.value) for e in sub_events]
        for events in (own_events, sub_events):
            assert [e.revision for e in events] == sorted(e.revision for e in events)
        assert own.get(0) is None and sub.get(0) is None
    assert got_own == expected_own
    assert got_sub == expected_sub


def test_memory_watch_keeps_no_history() -> None:
    ks = keyspace.open("memory:")
    ks.scope("a")[b"k"] = b"1"
    with pytest.raises(WatchCompacted, match="keeps no history"):
        ks.scope("a").watch(start_revision=1)
    w = ks.scope("a").watch()
    ks.scope("a")[b"k"] = b"2"
    event = w.get(0)
    assert event is not None and event.value == b"2"
    w.close()
    ks.scope("a")[b"k"] = b"3"
    assert ks.store._feed.watches == []  # type: ignore[attr-defined]  # a closed watch is dropped
    ks.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_async_watch_wakes_without_threads_and_ends_on_close(engine: str) -> None:
    """async for on a watch (memory's own, or the change log's on every engine):
    events written by another task arrive, no executor thread waits meanwhile,
    and closing ends the loop."""
    with engine_keyspace(engine) as ks:
        _async_watch_wakes(ks)


def _async_watch_wakes(ks: keyspace.Keyspace) -> None:

    async def main() -> list[bytes]:
        w = ks.scope("a").watch()
        got: list[bytes] = []

        async def writer() -> None:
            for i in range(3):
                await asyncio.sleep(0.01)
                ks.scope("a")[b"%d" % i] = b"v"
            await asyncio.sleep(0.01)
            w.close()

        task = asyncio.create_task(writer())
        before = set(threading.enumerate())
        async for event in w:
            got.append(event.key)
            # no thread began to wait for the watch (one of an earlier test may end meanwhile)
            assert set(threading.enumerate()) <= before
        await task
        return got

    assert asyncio.run(asyncio.wait_for(main(), 10)) == [b"0", b"1", b"2"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("from_transaction", [False, True])
def test_a_length_prefixed_subtree_watch_sees_leaves_made_after_it(
    from_transaction: bool, engine: str
) -> None:
    """LengthPrefixed keys do not record their depth: a subtree watch tells a key's
    leaf from the recorded leaves, and reads them again for a leaf made since
    (it raised LayoutError on the first key of a new leaf)."""
    with engine_keyspace(engine, scheme=LengthPrefixed()) as ks:
        _length_prefixed_subtree_watch(ks, from_transaction)


def _length_prefixed_subtree_watch(ks: keyspace.Keyspace, from_transaction: bool) -> None:
    ks.scope("b", "c")[b"k0"] = b"v0"  # ("b",) is a branch, ("b", "c") a leaf
    if from_transaction:
        with ks.transaction() as tx:
            watch = tx.scope("b").watch(subtree=True)
    else:
        watch = ks.scope("b").watch(subtree=True)
    with watch:
        ks.scope("b", "c")[b"k1"] = b"v1"
        ks.scope("b", "d")[b"k2"] = b"v2"  # a leaf below the watched scope, made now
        with ks.transaction() as tx:
            tx.scope("b", "e", "f")[b"k3"] = b"v3"
        events = _drain(watch, 3, 1)
    assert [(e.path, e.key, e.value) for e in events] == [
        ((b"b", b"c"), b"k1", b"v1"),
        ((b"b", b"d"), b"k2", b"v2"),
        ((b"b", b"e", b"f"), b"k3", b"v3"),
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_length_prefixed_parent_watch_never_sees_its_childrens_keys(engine: str) -> None:
    """A parent's own watch in a scheme whose keys look alike at every depth: the
    keys under its prefix are its children's, whether the child existed when the
    watch was made or came after (they were reported as the parent's own)."""
    with engine_keyspace(engine, scheme=LengthPrefixed()) as ks:
        _length_prefixed_parent_watch(ks)


def _length_prefixed_parent_watch(ks: keyspace.Keyspace) -> None:
    ks.scope("a", "b")[b"k"] = b"v"  # ("a",) is a branch
    with ks.scope("a").watch() as branch, ks.scope("x").watch() as later, ks.scope("y").watch() as leaf:
        ks.scope("a", "b")[b"k2"] = b"v2"
        ks.scope("a", "c")[b"k3"] = b"v3"
        ks.scope("x", "z")[b"k4"] = b"v4"  # ("x",) had no layout when watched: now a branch
        ks.scope("y")[b"own"] = b"v5"  # ("y",) becomes a leaf
        events = _drain(leaf, 1, 5)
        assert branch.get(0.2) is None and later.get(0) is None and leaf.get(0) is None
    assert [(e.path, e.key, e.value) for e in events] == [(("y",), b"own", b"v5")]


_BAD_REVISIONS = [0, -5, "3", 1.5, True]


def _refuses_bad_start_revisions(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("a")
    for bad in _BAD_REVISIONS:
        with pytest.raises(
            InvalidArgument, match=re.escape(f"start_revision={bad!r} must be an int of 1 or more")
        ):
            scope.watch(start_revision=bad)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bad_start_revision_is_refused_on_the_memory_store(engine: str) -> None:
    with engine_keyspace(engine) as ks:
        _refuses_bad_start_revisions(ks)


@pytest.mark.etcd
def test_a_bad_start_revision_is_refused_on_etcd(ks: keyspace.Keyspace) -> None:
    """A float made a watch whose reader thread died: no event and no error, ever."""
    _refuses_bad_start_revisions(ks)
