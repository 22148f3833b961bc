"""Durable feeds and the change log's bounds: resume after the last acknowledged
change, never a silent gap (FeedBehind), the log trimmed to the oldest cursor and
by its retention, the feed commands, and the named errors of bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _changes_engines import ENGINES, engine_keyspace
from _etcd import own_url
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace._changes import TRIM_EVERY, ChangeLog
from keyspace.errors import FeedBehind, InvalidArgument, WatchCompacted, WatchUnsupported

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


def _log(ks: keyspace.Keyspace) -> ChangeLog:
    hook = ks.store.hook("changes")  # type: ignore[attr-defined]
    assert isinstance(hook, ChangeLog)
    return hook


@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_a_feed_goes_on_after_its_last_acknowledged_change(engine: str) -> None:
    with engine_keyspace(engine) as ks:
        feed = ks.feed("f", ("a",))
        a = ks.scope("a")
        for i in range(5):
            a[b"%d" % i] = b"v"
        ks.scope("b")[b"x"] = b"other scope"
        with ks.transaction() as tx:
            for i in range(4):
                tx.scope("a")[b"t%d" % i] = b"w"
        first = feed.read(limit=2)
        assert [e.key for e in first] == [b"0", b"1"]
        feed.ack()
        rest = feed.read(limit=4)  # the limit falls inside a commit of 4: it comes whole
        assert [e.key for e in rest][:3] == [b"2", b"3", b"4"] and len(rest) == 7
        assert len({e.revision for e in rest[3:]}) == 1
        feed.close()
        again = ks.feed("f", ("a",))  # not acknowledged: read again
        assert [e.key for e in again.read()] == [e.key for e in rest]
        again.ack(rest[2].revision)
        again.close()
        third = ks.feed("f", ("a",))
        assert [e.key for e in third.read()] == [e.key for e in rest[3:]]
        assert third.read() == []
        third.close()


@settings(max_examples=25)
@given(
    acks=st.lists(st.integers(1, 4), min_size=1, max_size=6),
    writes=st.integers(1, 30),
)
def test_resuming_from_any_ack_loses_and_repeats_nothing(acks: list[int], writes: int) -> None:
    """Read in batches, acknowledge some, reopen: the changes after the cursor come
    again, in order, and every change is acknowledged exactly once overall."""
    with engine_keyspace("lmdb") as ks:
        feed = ks.feed("f", ("a",))
        for i in range(writes):
            ks.scope("a")[b"%03d" % i] = b"v"
        acknowledged: list[bytes] = []
        for size in acks:
            batch = feed.read(limit=size)
            if not batch:
                break
            feed.ack()
            acknowledged += [e.key for e in batch]
            feed.read(limit=1)  # read, not acknowledged: comes again after the reopen
            feed.close()
            feed = ks.feed("f", ("a",))
        acknowledged += [e.key for e in feed.read(limit=1000)]
        feed.close()
        assert acknowledged == [b"%03d" % i for i in range(writes)]


def test_a_feed_behind_the_retention_gets_a_named_error(tmp_path: Path) -> None:
    ks = keyspace.open(f"sqlite:///{tmp_path / 'db'}", changes={"retention": TRIM_EVERY})
    ks.feed("slow", ("a",)).close()  # its consumer stopped at revision 0
    for i in range(4 * TRIM_EVERY):
        ks.scope("a")[b"%d" % i] = b"v"
    assert _log(ks).trimmed() > 0
    with pytest.raises(FeedBehind, match=r"slow.*trimmed") as info:
        ks.feed("slow", ("a",))
    assert isinstance(info.value, WatchCompacted) and info.value.revision == 1
    with pytest.raises(FeedBehind):
        ks.feed("slow", ("a",))  # again: the same, never a gap
    with pytest.raises(WatchCompacted):
        ks.scope("a").watch(start_revision=1)
    ks.close()


def test_the_log_is_trimmed_to_the_oldest_cursor(tmp_path: Path) -> None:
    ks = keyspace.open(f"lmdb:///{tmp_path / 'db'}", changes=True)
    fast, slow = ks.feed("fast", ("a",)), ks.feed("slow", ("a",))
    for i in range(TRIM_EVERY):
        ks.scope("a")[b"%d" % i] = b"v"
    fast.read(limit=1000)
    fast.ack()
    slow.read(limit=5)
    slow.ack()
    for i in range(TRIM_EVERY):
        ks.scope("b")[b"%d" % i] = b"v"
    assert _log(ks).trimmed() == slow.cursor  # everything both acknowledged, no more
    assert [e.key for e in slow.read(limit=1000)] == [b"%d" % i for i in range(5, TRIM_EVERY)]
    ks.close()


def test_feeds_refuse_bad_input_and_keyspaces_without_changes(tmp_path: Path) -> None:
    with (
        keyspace.open(f"lmdb:///{tmp_path / 'plain'}") as plain,
        pytest.raises(WatchUnsupported, match="changes=True"),
    ):
        plain.feed("f", ("a",))
    with keyspace.open(f"lmdb:///{tmp_path / 'db'}", changes=True) as ks:
        ks.feed("f", ("a",)).close()
        with pytest.raises(InvalidArgument, match="follows scope"):
            ks.feed("f", ("b",))
        with pytest.raises(InvalidArgument, match="non-empty str"):
            ks.feed("", ("a",))
        with pytest.raises(InvalidArgument, match="tuple"):
            ks.feed("g", "a")  # type: ignore[arg-type]
        feed = ks.feed("f", ("a",))
        with pytest.raises(InvalidArgument, match="ack takes a revision"):
            feed.ack(5)
        with pytest.raises(InvalidArgument, match="limit"):
            feed.read(limit=0)
        feed.close()
        with pytest.raises(InvalidArgument, match="retention"):
            keyspace.open(f"lmdb:///{tmp_path / 'other'}", changes={"retention": 0})


def test_a_feed_made_first_records_the_scheme_and_the_feature(tmp_path: Path) -> None:
    """A feed made before any data: the store records the keyspace's scheme and
    changes=True with it, so any later opener (no option) opens it and logs."""
    url = f"lmdb:///{tmp_path / 'db'}"
    with keyspace.open(url, changes=True) as ks:
        ks.feed("f", ("a",)).close()
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"
        feed = ks.feed("f", ("a",))
        assert [(e.key, e.value) for e in feed.read()] == [(b"k", b"v")]
        feed.close()
        assert list(ks.scope().subtree()) == [(("a",), b"k", b"v")]  # no reserved key shows


def test_the_feed_commands_list_and_remove(tmp_path: Path) -> None:
    url = f"lmdb:///{tmp_path / 'db'}"
    with keyspace.open(url, changes=True) as ks:
        ks.feed("audit", ("a",), subtree=True).close()
        ks.scope("a")[b"k"] = b"v"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "keyspace.cli", "feed", *args], capture_output=True, text=True, timeout=60
        )

    got = run("ls", url, "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout) == {
        "name": "audit",
        "path": ["a"],
        "subtree": True,
        "cursor": 0,
        "behind": 1,
    }
    assert "audit\tpath=('a',)\tsubtree=True\tcursor=0\tbehind=1" in run("ls", url).stdout
    assert run("rm", url, "nope").returncode == 1
    assert run("rm", url, "audit").returncode == 0
    assert run("ls", url).stdout == ""


def test_a_feed_on_etcd_follows_the_clusters_revisions() -> None:
    """On etcd the cluster's revisions and watch are the log: a feed resumes after
    its acknowledged revision there too, and append numbers its keys by them."""
    for url in own_url("change-feeds"):
        with keyspace.open(url, changes=True) as ks:
            feed = ks.feed("f", ("t",))
            ks.scope("t")[b"a"] = b"1"
            ks.scope("u")[b"b"] = b"2"
            ks.scope("t")[b"c"] = b"3"
            first = feed.read(timeout=5)
            while len(first) < 2:  # the native watch may hand them out one by one
                more = feed.read(timeout=5)
                assert more, first
                first += more
            assert [e.key for e in first] == [b"a", b"c"]
            feed.ack()
            feed.close()
            ks.scope("t")[b"d"] = b"4"
            again = ks.feed("f", ("t",))
            assert [e.key for e in again.read(timeout=5)] == [b"d"]
            again.close()
            appended = [ks.scope("log").append(b"x"), ks.scope("log").append(b"y")]
            assert list(ks.scope("log").items()) == list(zip(appended, [b"x", b"y"], strict=True))
