"""What a feed and a watch refuse, and what they leave in the store: a path the
scheme refuses records no feed; a recorded feed is matched by its packed path
(``(1,)`` is not ``(True,)``); an ack of a feed removed meanwhile raises
``FeedRemoved`` and the removal stands; a watch made before the keyspace's
first write records the change log, so a process opening the store later
writes it; and bad timeouts, ``subtree`` values and feed names get
``InvalidArgument`` naming the value."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_keyspace

import keyspace
from keyspace._feeds import list_feeds, remove_feed
from keyspace.errors import FeedRemoved, InvalidArgument, InvalidName

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


@pytest.mark.parametrize(
    ("scheme", "path"),
    [
        (keyspace.Sublevel(), ("!bad",)),
        (keyspace.TupleScheme(), (object(),)),
        (keyspace.AsciiHex(), (None,)),
    ],
)
def test_a_feed_of_a_path_the_scheme_refuses_records_nothing(
    tmp_path: Path, scheme: Any, path: tuple[Any, ...]
) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True, scheme=scheme) as ks:
        ks.scope("ok")[b"k"] = b"v"
        before = dict(ks.store.scan(b"", None))
        with pytest.raises((InvalidName, InvalidArgument)):
            ks.feed("bad", path)
        assert list_feeds(ks) == []
        assert dict(ks.store.scan(b"", None)) == before


@pytest.mark.parametrize("other", [(True,), (1.0,)])
def test_a_recorded_feed_is_matched_by_its_packed_path(tmp_path: Path, other: tuple[Any, ...]) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True) as ks:
        ks.feed("f", (1,)).close()
        with pytest.raises(InvalidArgument, match=r"follows scope \(1,\)"):
            ks.feed("f", other)
        again = ks.feed("f", (1,))
        again.close()


@pytest.mark.parametrize("in_transaction", [False, True])
@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_an_ack_of_a_removed_feed_raises_and_the_removal_stands(engine: str, in_transaction: bool) -> None:
    with engine_keyspace(engine) as ks:
        feed = ks.feed("c", ("s",))
        ks.scope("s")[b"a"] = b"1"
        assert len(feed.read(timeout=5.0)) == 1
        assert remove_feed(ks, "c")
        with pytest.raises(FeedRemoved, match="'c'"):
            if in_transaction:
                with ks.transaction() as tx:
                    tx.scope("s")[b"handled"] = b"yes"
                    feed.ack(tx=tx)
            else:
                feed.ack()
        assert list_feeds(ks) == []
        assert b"handled" not in ks.scope("s")  # the consumer's transaction wrote nothing
        feed.close()


_WRITER = """
import sys, keyspace
ks = keyspace.open(sys.argv[1])  # asks for nothing: runs what the store records
ks.scope("s")[b"k"] = b"from another process"
ks.close()
"""


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_a_watch_made_before_the_first_write_records_the_log_for_later_openers(
    tmp_path: Path, engine: str
) -> None:
    url = f"{engine}:///{tmp_path}/db"
    keyspace.open(url).close()  # an existing store, made without the log
    with keyspace.open(url, changes=True) as ks:
        watch = ks.scope("s").watch()
        subprocess.run([sys.executable, "-c", _WRITER, url], timeout=60, check=True)
        event = watch.get(10.0)
        assert event is not None and (event.key, event.value) == (b"k", b"from another process")
        watch.close()


@pytest.mark.parametrize("timeout", [-1, -0.5, float("nan"), float("inf"), "1", True, b"1", 1e300])
def test_a_bad_timeout_is_refused_by_name(tmp_path: Path, timeout: Any) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True) as ks:
        watch = ks.scope("a").watch()
        feed = ks.feed("f", ("a",))
        for call in (lambda: watch.get(timeout), lambda: feed.read(timeout=timeout)):
            with pytest.raises(InvalidArgument, match=r"timeout=.* must be None"):
                call()
        assert watch.get(0) is None and feed.read(timeout=0) == []  # still usable
        watch.close()
        feed.close()


@pytest.mark.parametrize("subtree", [1, 0, "yes", None])
def test_a_watch_takes_subtree_as_a_bool_only(tmp_path: Path, subtree: Any) -> None:
    with (
        keyspace.open(f"lmdb://{tmp_path}/db", changes=True) as ks,
        pytest.raises(InvalidArgument, match="subtree must be True or False"),
    ):
        ks.scope("a").watch(subtree=subtree)


@pytest.mark.parametrize("name", ["\ud800", "tab\there", "line\nbreak", "\x00"])
def test_a_feed_name_must_be_printable_unicode(tmp_path: Path, name: str) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True) as ks:
        ks.scope("a")[b"k"] = b"v"
        with pytest.raises(InvalidArgument, match="a feed name must be"):
            ks.feed(name, ("a",))
        assert list_feeds(ks) == []


@pytest.mark.parametrize(
    "scheme",
    [keyspace.LengthPrefixed(), keyspace.ScopeHash(), keyspace.TupleScheme(), keyspace.Sublevel()],
    ids=repr,
)
@pytest.mark.parametrize("first", ["watch", "feed"])
@pytest.mark.parametrize("engine", ["memory", "lmdb"])
def test_a_watch_or_feed_made_before_the_first_write_leaves_the_store_writable(
    engine: str, first: str, scheme: Any
) -> None:
    """The records they write first (the feature record, a feed's cursor) are no
    scope's keys: a scheme that learns its layout from an empty store still
    takes the store for its own (LengthPrefixed refused every read and write of
    the scope after them)."""
    path = ("a",) if isinstance(scheme, keyspace.ScopeHash) else ("a", "b")  # ScopeHash: one level
    with engine_keyspace(engine, scheme=scheme) as ks:
        source = ks.feed("f", path) if first == "feed" else ks.scope(*path).watch()
        ks.scope(*path)[b"k"] = b"v"
        assert dict(ks.scope(*path).items()) == {b"k": b"v"}
        got = source.read(timeout=5.0) if first == "feed" else [source.get(5.0)]
        assert [(e.key, e.value) for e in got if e is not None] == [(b"k", b"v")]
        source.close()
