"""Expiring keys on etcd (``ttl=True``): the deadline records, the read rule and
the sweeps of every engine, on the test cluster. Reads hide a key from its
deadline on (point reads, scans either way, ``len`` with accounting, a
snapshot, a transaction, the asyncio face); a sweep deletes it through a guarded
commit, which etcd's own watch reports as a delete."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from _etcd import own_url
from _expiry_clock import Clock

import keyspace
import keyspace.aio
from keyspace import _expiry
from keyspace.stores import keys_in


@pytest.fixture
def etcd_url() -> Iterator[str]:
    yield from own_url("ttl")


def test_reads_hide_expired_keys_and_a_sweep_deletes_them(
    etcd_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(_expiry, "clock", clock)
    with keyspace.open(etcd_url, ttl=True, accounting=True) as ks:
        s = ks.scope("a")
        s.put(b"k", b"v", ttl=5)
        s[b"j"] = b"w"
        with ks.transaction() as tx:
            tx.scope("a").put(b"m", b"x", ttl=1)
        assert dict(s.items()) == {b"j": b"w", b"k": b"v", b"m": b"x"} and len(s) == 3
        clock.now += 5
        assert dict(s.items()) == {b"j": b"w"} and len(s) == 1
        assert s.get(b"k") is None and b"m" not in s and list(s.keys(reverse=True)) == [b"j"]
        with ks.snapshot() as snap:
            assert dict(snap.scope("a").items()) == {b"j": b"w"}
        with ks.transaction() as tx:
            assert dict(tx.scope("a").items()) == {b"j": b"w"} and len(tx.scope("a")) == 1

        async def reads() -> tuple[object, ...]:
            aks = await keyspace.aio.open(etcd_url)
            try:
                a = aks.scope("a")
                return await a.get(b"k"), [kv async for kv in a.items()], await a.len()
            finally:
                await aks.close()

        assert asyncio.run(reads()) == (None, [(b"j", b"w")], 1)
        with s.watch() as watch:
            assert ks.expire(limit=1) == 1
            assert ks.expire() == 1
            events = [watch.get(5) for _ in range(2)]
        assert sorted((e.kind, e.key) for e in events if e is not None) == [
            ("delete", b"k"),
            ("delete", b"m"),
        ]
        assert ks.expire() == 0
        assert list(keys_in(ks.store.inner, _expiry.BASE, _expiry.BASE[:-1] + b"\x01")) == []
        counts = ks.store.hook("accounting")
        assert counts is not None
        with ks.store.inner.snapshot() as view:
            assert counts.differences(view) == []  # type: ignore[attr-defined]


def _lease_of(store: object, key: bytes) -> int:
    """The lease etcd has ``key`` (a key of ``store``, an EtcdStore) attached to (0: none)."""
    from keyspace.stores.etcd._proto import kv_pb2 as pb

    conn, prefix = store._conn, store._prefix  # type: ignore[attr-defined]
    reply = conn.call("range", conn.kv.Range, pb.RangeRequest(key=prefix + key))
    return int(reply.kvs[0].lease) if reply.kvs else -1


def test_a_key_put_with_a_ttl_goes_with_its_etcd_lease(etcd_url: str) -> None:
    with keyspace.open(etcd_url, ttl=True) as ks:
        s = ks.scope("a")
        inner = ks.store.inner
        with s.watch() as watch:
            s.put(b"k", b"v", ttl=3)
            s.put(b"n", b"w", ttl=3)  # the same deadline second: the same lease, most likely
            s.put(b"p", b"x", ttl=3)
            s[b"p"] = b"kept"  # put again without a ttl: no lease, kept
            stored = s._stored(b"k")
            lease = _lease_of(inner, stored)
            assert lease > 0
            records = list(keys_in(inner, _expiry.BASE, _expiry.BASE[:-1] + b"\x01"))
            assert len(records) == 4 and all(_lease_of(inner, r) > 0 for r in records)
            assert _lease_of(inner, s._stored(b"p")) == 0
            deadline = time.monotonic() + 30
            other = s._stored(b"n")  # its lease is k's, or the next second's where the puts straddle one
            both = (stored, other)
            while any(inner.get(k) is not None for k in both) and time.monotonic() < deadline:
                time.sleep(0.2)  # etcd revokes each lease at its end
            assert inner.get(stored) is None and inner.get(other) is None  # no sweep ran
            assert list(keys_in(inner, _expiry.BASE, _expiry.BASE[:-1] + b"\x01")) == []
            kinds = [(e.kind, e.key) for e in (watch.get(5) for _ in range(6)) if e is not None]
        assert ("delete", b"k") in kinds and ("delete", b"n") in kinds  # etcd's own delete events
        assert dict(s.items()) == {b"p": b"kept"}


def test_no_lease_where_accounting_counts_the_keys(etcd_url: str) -> None:
    with keyspace.open(etcd_url, ttl=True, accounting=True) as ks:
        s = ks.scope("a")
        s.put(b"k", b"v", ttl=1)
        assert _lease_of(ks.store.inner, s._stored(b"k")) == 0  # a sweep deletes it, counted
