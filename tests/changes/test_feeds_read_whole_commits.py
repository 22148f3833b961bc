"""A feed's read hands out whole commits, so that an ack never covers a change
it did not hand out: a commit another process makes while the feed waits (its
events reach the watch together, never a part), and a commit that also changes
a child scope of a feed that does not follow the subtree (the child's change is
passed over, the rest of the commit still comes). Below them, the watch's own
rules that this rests on: a store watch hands out the events of one commit
together, and a scope watch's ``get(0)`` looks past a child's change."""

from __future__ import annotations

import subprocess
import sys
import tempfile

import pytest
from _changes_engines import ENGINES, engine_keyspace

import keyspace
from keyspace._watch import ScopeWatch, WatchEvent
from keyspace.stores._events import StoreEvent, StoreWatch

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]
SCHEMES = {"tuple": keyspace.TupleScheme, "sublevel": keyspace.Sublevel, "asciihex": keyspace.AsciiHex}

_WRITER = """
import sys, keyspace
ks = keyspace.open(sys.argv[1], changes=True)
with ks.transaction() as tx:
    s = tx.scope("s")
    for i in range(int(sys.argv[2])):
        s[b"k%06d" % i] = b"v"
ks.close()
"""


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_commit_another_process_makes_while_a_feed_waits_comes_whole(engine: str) -> None:
    count = 20_000
    with tempfile.TemporaryDirectory(prefix="ks-feed-") as directory:
        url = f"{engine}:///{directory}/db"
        with keyspace.open(url, changes=True) as ks:
            ks.scope("s")[b"first"] = b"0"
            feed = ks.feed("c", ("s",))
            writer = subprocess.Popen([sys.executable, "-c", _WRITER, url, str(count)])
            try:
                batch = feed.read(limit=10, timeout=60.0)  # the commit is being queued meanwhile
            finally:
                assert writer.wait(timeout=120) == 0
            assert len(batch) == count and len({e.revision for e in batch}) == 1
            feed.ack()
            feed.close()
            again = ks.feed("c", ("s",))
            assert again.read(timeout=0.5) == []
            again.close()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_a_commit_that_also_changes_a_child_scope_comes_whole(engine: str, scheme: str) -> None:
    with engine_keyspace(engine, scheme=SCHEMES[scheme]()) as ks:
        ks.scope("a", "b")[b"c0"] = b"0"
        feed = ks.feed("f", ("a",))
        with ks.transaction() as tx:
            tx.scope("a")[b"k1"] = b"1"
            tx.scope("a", "b")[b"c"] = b"the child's"
            tx.scope("a")[b"k2"] = b"2"
        first = feed.read(limit=100, timeout=5.0)
        assert sorted(e.key for e in first) == [b"k1", b"k2"]
        feed.ack()
        feed.close()
        again = ks.feed("f", ("a",))
        assert again.read(timeout=0.2) == []
        again.close()


def test_a_store_watch_hands_out_the_events_of_one_commit_together() -> None:
    watch = StoreWatch()
    commit = [StoreEvent("put", b"k%d" % i, b"v", 7) for i in range(3)]
    watch._push(commit)
    watch._push([])  # a commit with nothing in the watched ranges: nothing queued
    watch._push([StoreEvent("delete", b"k0", None, 8)])
    assert [watch.get(0), watch.get(0), watch.get(0)] == commit
    assert watch.revision == 7
    assert watch.get(0) == StoreEvent("delete", b"k0", None, 8)
    assert watch.get(0) is None
    watch.close()


def test_a_scope_watch_looks_past_a_child_change_already_there() -> None:
    source = StoreWatch()
    own = {b"own1": ((), b"1"), b"own2": ((), b"2")}  # stored key -> (path, key); others: a child's
    watch = ScopeWatch(source, own.get, None)
    source._push([StoreEvent("put", k, b"v", 3) for k in (b"own1", b"child", b"own2")])
    assert [watch.get(0), watch.get(0)] == [WatchEvent("put", (), k, b"v", 3) for k in (b"1", b"2")]
    source._push([StoreEvent("put", b"child", b"v", 4)])
    assert watch.get(0) is None and watch.get(0.01) is None
    watch.close()
