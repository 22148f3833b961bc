"""Accounting beside expiring keys (``ttl=True``): the counts hold every stored
key, a key past its deadline included until a sweep deletes it, while a quota
limits the keys reads see, so a scope whose keys all expired takes new ones
(before, it stayed refused until someone called ``ks.expire()``: a refused
write commits nothing, so no writer's sweep ran); a write that takes the keys
reads see past the quota is refused as before, naming that size; and
``keyspace accounting check`` recounts the stored keys, so expired keys not
swept yet are no difference."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run
from _expiry_clock import Clock

import keyspace
from keyspace.errors import QuotaExceeded


@pytest.fixture(params=["memory", "lmdb", "sqlite"])
def at_quota(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[keyspace.Scope]:
    """The scope ``q`` of a ttl and accounting keyspace on each engine, with a
    quota of 2 keys, holding two keys whose deadline has passed (not swept yet)."""
    engine = request.param
    url = "memory:" if engine == "memory" else f"{engine}:///{tmp_path}/db"
    with keyspace.open(url, ttl=True, accounting=True) as ks:
        ks.set_quota(("q",), keys=2)
        q = ks.scope("q")
        q.put(b"a", b"1", ttl=5)
        q.put(b"b", b"1", ttl=5)
        clock.now += 10
        yield q


def test_expired_keys_not_swept_leave_room_under_a_key_quota(at_quota: keyspace.Scope) -> None:
    q = at_quota
    assert len(q) == 0 and list(q.keys()) == []
    q[b"c"] = b"1"
    assert list(q.keys()) == [b"c"]
    q[b"d"] = b"1"
    with pytest.raises(QuotaExceeded, match="would make it 3 keys"):
        q[b"e"] = b"1"
    assert list(q.keys()) == [b"c", b"d"]


def test_an_expired_key_written_again_counts_against_the_quota(at_quota: keyspace.Scope) -> None:
    q = at_quota
    ks = q.keyspace
    before = dict(ks.store.inner.scan(b"", None))  # type: ignore[attr-defined]
    with pytest.raises(QuotaExceeded, match="would make it 3 keys"), ks.transaction() as tx:
        t = tx.scope("q")
        t[b"a"] = b"again"  # an expired key written without a ttl: seen by reads again
        t[b"c"] = b"1"
        t[b"d"] = b"1"
    assert dict(ks.store.inner.scan(b"", None)) == before  # type: ignore[attr-defined]
    with ks.transaction() as tx:
        tx.scope("q")[b"a"] = b"again"
        tx.scope("q")[b"c"] = b"1"
    assert dict(q.items()) == {b"a": b"again", b"c": b"1"}


def test_a_bytes_quota_of_an_ancestor_leaves_out_the_expired_keys_below_it(clock: Clock) -> None:
    with keyspace.open("memory:", ttl=True, accounting=True) as ks:
        ks.scope("t", "u").put(b"k", b"x" * 100, ttl=5)
        ks.set_quota(("t",), bytes=150)
        with pytest.raises(QuotaExceeded, match="bytes"):
            ks.scope("t", "v")[b"k"] = b"y" * 100
        clock.now += 10
        ks.scope("t", "v")[b"k"] = b"y" * 100
        assert ks.scope("t", "v")[b"k"] == b"y" * 100


def test_accounting_check_counts_the_expired_keys_not_swept_yet(tmp_path: Path, clock: Clock) -> None:
    url = f"lmdb://{tmp_path}/db"
    with keyspace.open(url, accounting=True, ttl=True) as ks:
        ks.scope("a").put(b"z", b"1", ttl=5)
        ks.scope("a")[b"y"] = b"2"
    clock.now += 10  # this process's clock: the command's is the real one, far later still
    with keyspace.open(url) as ks:
        assert len(ks.scope("a")) == 1 and ks.scope("a").stats().keys == 2
    assert "counts match the recount: 2 keys" in run("accounting", "check", url).stdout
