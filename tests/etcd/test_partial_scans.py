"""A transaction's scan that stopped early (a limit, the first key looked for, a
loop broken) guards at its etcd commit only what it showed: from its start up
to the last key it yielded (a reverse scan: from that key to its end).

Before: every scan guarded the whole range it asked for, so a transaction that
took the head of a queue conflicted with every append at the queue's tail, and
one that looked for the first key of a large range with every write anywhere in
it. A write inside what the scan showed (a key before the first one it found, a
change or delete of a key it yielded) still conflicts; where the exact compares
would be over etcd's 128 the whole ranges are guarded, as before."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from itertools import islice

import pytest
from _etcd import own_url

import keyspace
from keyspace.stores import open_store
from keyspace.stores.etcd import TransactionConflict

pytestmark = pytest.mark.etcd


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("review-partial-scans")


def _commits(url: str, take: int, reverse: bool, write: bytes | None, delete: bytes | None = None) -> bool:
    """Keys b, d, f; a transaction takes the first ``take`` of a scan of
    ``[a, z)``, another client writes ``write`` (or deletes ``delete``), the
    transaction puts ``n``. Whether it committed (False: TransactionConflict)."""
    store, other = open_store(url), open_store(url)
    try:
        store.delete_range(b"", None)
        store.put_many([(b"b", b"1"), (b"d", b"1"), (b"f", b"1")])
        try:
            with store.transaction() as tx:
                seen = [k for k, _ in islice(tx.scan(b"a", b"z", reverse=reverse), take)]
                assert seen == [b"f", b"d", b"b"][:take] if reverse else [b"b", b"d", b"f"][:take]
                if write is not None:
                    other.put(write, b"2")
                if delete is not None:
                    other.delete(delete)
                tx.put(b"n", b"1")
        except TransactionConflict:
            assert store.get(b"n") is None
            return False
        assert store.get(b"n") == b"1"
        return True
    finally:
        store.close()
        other.close()


def test_writes_past_what_a_scan_showed_do_not_conflict(url: str) -> None:
    assert _commits(url, 1, False, b"c")  # past b, the one key it took
    assert _commits(url, 1, False, b"e")
    assert _commits(url, 2, False, b"e")  # past d
    assert _commits(url, 1, True, b"e")  # reverse: below f
    assert _commits(url, 1, False, None, delete=b"d")
    assert _commits(url, 3, False, b"g")  # took f, never asked for what follows


def test_writes_inside_what_a_scan_showed_conflict(url: str) -> None:
    assert not _commits(url, 1, False, b"a0")  # before the first key it found
    assert not _commits(url, 1, False, b"b")  # the key it took, changed
    assert not _commits(url, 1, False, None, delete=b"b")  # ... or deleted
    assert not _commits(url, 2, False, b"c")  # between the keys it took
    assert not _commits(url, 1, True, b"g")  # reverse: above f
    assert not _commits(url, 4, False, b"y")  # asked past f: it saw the range end


def test_store_scan_with_a_limit(url: str) -> None:
    store, other = open_store(url), open_store(url)
    try:
        store.put_many([(b"b", b"1"), (b"d", b"1")])
        with store.transaction() as tx:
            assert list(tx.scan(b"a", None, limit=1)) == [(b"b", b"1")]
            other.put(b"c", b"2")
            tx.put(b"n", b"1")
        assert store.get(b"n") == b"1"
    finally:
        store.close()
        other.close()


def test_the_head_of_a_queue_is_taken_while_another_client_appends(url: str) -> None:
    with keyspace.open(url) as ks, keyspace.open(url) as producer:
        queue = ks.scope("queue")
        for start in range(0, 1000, 100):
            queue.update({b"%06d" % i: b"job" for i in range(start, start + 100)})
        with ks.transaction() as tx:
            q = tx.scope("queue")
            head, _ = next(iter(q.items()))
            producer.scope("queue")[b"%06d" % 5000] = b"appended"
            del q[head]
            tx.scope("done")[head] = b"1"
        assert ks.scope("done")[b"000000"] == b"1"
        assert b"000000" not in ks.scope("queue")
        assert ks.scope("queue")[b"%06d" % 5000] == b"appended"


def test_the_async_view_guards_what_it_showed(url: str) -> None:
    sync, other = open_store(url), open_store(url)
    sync.put_many([(b"b", b"1"), (b"d", b"1")])

    async def run(write: bytes) -> bool:
        store = sync.asynchronous()  # type: ignore[attr-defined]
        try:
            tx = await store.begin()
            assert [kv async for kv in tx.scan(b"a", b"z", limit=1)] == [(b"b", b"1")]
            other.put(write, b"2")
            await tx.put(b"n", write)
            try:
                await tx.commit()
            except TransactionConflict:
                return False
            return True
        finally:
            await store.close(lambda: None)

    try:
        assert asyncio.run(run(b"c"))
        assert sync.get(b"n") == b"c"
        assert not asyncio.run(run(b"a0"))
        assert sync.get(b"n") == b"c"
    finally:
        sync.close()
        other.close()
