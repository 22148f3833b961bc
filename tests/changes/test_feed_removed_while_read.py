"""A feed removed while a consumer holds it (``keyspace feed rm``, or
``remove_feed``): the consumer's next ``read`` raises ``FeedRemoved``, whether
changes came since or none did, where it used to hand out changes that no ack
could record, or an empty batch at every poll of a quiet scope (the consumer
never learnt); the removal stands and nothing is written."""

from __future__ import annotations

import pytest
from _changes_engines import ENGINES, engine_keyspace
from _etcd import own_url

import keyspace
from keyspace._feeds import list_feeds, remove_feed
from keyspace.errors import FeedRemoved

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


@pytest.mark.parametrize("changed_since", [False, True], ids=["quiet", "changed since"])
@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_a_read_of_a_removed_feed_raises(engine: str, changed_since: bool) -> None:
    with engine_keyspace(engine) as ks:
        feed = ks.feed("mailer", ("s",))
        ks.scope("s")[b"a"] = b"1"
        assert [e.key for e in feed.read(timeout=5.0)] == [b"a"]
        feed.ack()
        assert remove_feed(ks, "mailer")
        if changed_since:
            ks.scope("s")[b"b"] = b"2"
        with pytest.raises(FeedRemoved, match=r"'mailer'.*can no longer be acknowledged"):
            feed.read(timeout=1.0 if changed_since else 0.0)
        assert list_feeds(ks) == []
        feed.close()
        again = ks.feed("mailer", ("s",))  # made anew from now
        ks.scope("s")[b"c"] = b"3"
        assert [e.key for e in again.read(timeout=5.0)] == [b"c"]
        again.close()


def test_on_etcd_a_read_of_a_removed_feed_raises() -> None:
    for url in own_url("feed-removed"):
        ks = keyspace.open(url)
        feed = ks.feed("mailer", ("s",))
        ks.scope("s")[b"a"] = b"1"
        assert [e.key for e in feed.read(timeout=5.0)] == [b"a"]
        assert remove_feed(ks, "mailer")
        with pytest.raises(FeedRemoved, match="'mailer'"):
            feed.read()
        feed.close()
        ks.close()
