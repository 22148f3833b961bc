"""A feed is one consumer's: where a second consumer of the same feed
acknowledged since this one read the feed's cursor, or this one's
``ack(tx=...)`` did not commit, its next ack raises ``FeedMoved`` and writes
nothing, where it used to move the cursor back or forth under the other (a
consumer that restarted then skipped changes it never handled, or handled
them twice). Opened again, the feed goes on after its recorded cursor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_keyspace
from _etcd import own_url

import keyspace
from keyspace import _feeds
from keyspace._feeds import list_feeds
from keyspace.errors import FeedMoved

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


def _cursor(ks: object, name: str) -> int:
    return next(info.cursor for info in list_feeds(ks) if info.name == name)


@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_an_ack_after_another_consumers_ack_raises_and_writes_nothing(engine: str) -> None:
    with engine_keyspace(engine) as ks:
        first = ks.feed("mailer", ("s",))
        second = ks.feed("mailer", ("s",))  # another worker of the same feed
        scope = ks.scope("s")
        scope[b"a"] = b"1"
        scope[b"b"] = b"2"
        assert [e.key for e in first.read(timeout=5.0)] == [b"a", b"b"]
        assert [e.key for e in second.read(timeout=5.0)] == [b"a", b"b"]
        first.ack(first.position - 1)  # handled a
        recorded = _cursor(ks, "mailer")
        with pytest.raises(FeedMoved, match=rf"'mailer'.* at revision {recorded} in the store"):
            second.ack()  # it would move the cursor past b, which first has not handled
        assert _cursor(ks, "mailer") == recorded
        first.ack()  # first's own cursor is the store's: it goes on
        again = ks.feed("mailer", ("s",))  # the second worker, opened again
        scope[b"c"] = b"3"
        assert [e.key for e in again.read(timeout=5.0)] == [b"c"]
        again.ack()
        for feed in (first, second, again):
            feed.close()


@pytest.mark.parametrize("engine", ["lmdb", "memory"])
def test_an_ack_in_a_transaction_that_did_not_commit_is_told_at_the_next_ack(engine: str) -> None:
    with engine_keyspace(engine) as ks:
        feed = ks.feed("mailer", ("s",))
        ks.scope("s")[b"a"] = b"1"
        assert len(feed.read(timeout=5.0)) == 1
        before = _cursor(ks, "mailer")
        with pytest.raises(RuntimeError), ks.transaction() as tx:
            tx.scope("s")[b"handled"] = b"a"
            feed.ack(tx=tx)
            raise RuntimeError("the consumer failed before its commit")
        assert _cursor(ks, "mailer") == before
        ks.scope("s")[b"b"] = b"2"
        assert len(feed.read(timeout=5.0)) == 1
        with pytest.raises(FeedMoved):
            feed.ack()  # it would record b handled, and a with it, which never was
        assert _cursor(ks, "mailer") == before
        again = ks.feed("mailer", ("s",))
        assert [e.key for e in again.read(timeout=5.0)] == [b"a", b"b"]
        feed.close()
        again.close()


def test_on_etcd_an_ack_after_another_consumers_ack_raises() -> None:
    for url in own_url("feed-moved"):
        with keyspace.open(url) as ks:
            first, second = ks.feed("mailer", ("s",)), ks.feed("mailer", ("s",))
            ks.scope("s")[b"a"] = b"1"
            assert len(first.read(timeout=5.0)) == len(second.read(timeout=5.0)) == 1
            first.ack()
            with pytest.raises(FeedMoved):
                second.ack()
            first.close()
            second.close()


def test_a_feed_made_by_two_consumers_at_once_is_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both looked for the feed and found none; the second to write its record
    raises FeedMoved and leaves the first's (it used to put its own over it,
    moving the cursor the first may have acknowledged already)."""
    url = f"lmdb:///{tmp_path}/db"
    with keyspace.open(url, changes=True) as ks, keyspace.open(url, changes=True) as other:
        ks.scope("s")[b"a"] = b"1"
        last = _feeds._last
        made: list[Any] = []
        calls: list[None] = []

        def meanwhile(*args: Any) -> int:
            calls.append(None)
            if len(calls) == 1:  # the other consumer makes the feed between this one's look and write
                made.append(other.feed("mailer", ("s",)))
                other.scope("s")[b"b"] = b"2"
                made[0].read(timeout=5.0)
                made[0].ack()
            got: int = last(*args)
            return got

        monkeypatch.setattr(_feeds, "_last", meanwhile)
        with pytest.raises(FeedMoved, match="made by another consumer"):
            ks.feed("mailer", ("s",))
        assert _cursor(other, "mailer") == made[0].cursor  # the first's acknowledgement stands
        made[0].close()
