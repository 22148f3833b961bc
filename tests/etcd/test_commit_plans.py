"""The etcd commit plan against the reference store, on the test cluster: a
transaction of puts, deletes and range deletes in any order (a put inside a range
deleted before or after it, a delete of a key put earlier, ranges open to the end,
ranges that touch or overlap), with or without more than 128 operations (nested
transactions), under the store's key prefix, leaves etcd holding exactly what the
memory store holds after the same transaction; and the guarded commit refuses
exactly when another client wrote what the transaction read."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

import pytest
from _etcd import own_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.errors import TransactionTooLarge
from keyspace.stores import open_store
from keyspace.stores._base import Store
from keyspace.stores.etcd import TransactionConflict

pytestmark = pytest.mark.etcd

_KEY = st.sampled_from([b"a", b"a\x00", b"b", b"ba", b"c", b"\xff", b"\xff\xff", b"d"])
_STOP = st.one_of(st.none(), _KEY)
_READ = st.one_of(
    st.tuples(st.just("get"), _KEY),
    st.tuples(st.just("scan"), _KEY, _STOP),
    # the first n keys of a scan, forward or reverse: the scan is left unfinished
    st.tuples(st.just("first"), _KEY, _STOP, st.integers(1, 3), st.booleans()),
)
_ACTION = st.one_of(
    st.tuples(st.just("put"), _KEY, st.sampled_from([b"1", b"2"])),
    st.tuples(st.just("delete"), _KEY),
    st.tuples(st.just("delete_range"), _KEY, _STOP),
    _READ,
    st.tuples(st.just("many"), st.sampled_from([60, 130])),
)


@pytest.fixture(scope="module")
def stores() -> Iterator[Store]:
    for url in own_url("review-plans"):
        store = open_store(url)
        try:
            yield store
        finally:
            store.close()


def _run(tx: Any, actions: list[tuple[Any, ...]]) -> list[Any]:
    seen: list[Any] = []
    for action in actions:
        name = action[0]
        if name == "put":
            tx.put(action[1], action[2])
        elif name == "delete":
            tx.delete(action[1])
        elif name == "delete_range":
            tx.delete_range(action[1], action[2])
        elif name == "get":
            seen.append(tx.get(action[1]))
        elif name == "scan":
            seen.append(list(tx.scan(action[1], action[2])))
        elif name == "first":
            seen.append(list(islice(tx.scan(action[1], action[2], reverse=action[4]), action[3])))
        else:  # many single-key ranges (nested past 128 operations), then a put among them
            for i in range(action[1]):
                tx.delete_range(b"m%03d" % i, b"m%03d\x00" % i)
            tx.put(b"m%03d" % (action[1] // 2), b"kept")
    return seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(_KEY, st.sampled_from([b"x", b"y"]), max_size=6),
    st.lists(_ACTION, min_size=1, max_size=8),
)
def test_a_commit_leaves_what_the_memory_store_leaves(
    stores: Store, before: dict[bytes, bytes], actions: list[tuple[Any, ...]]
) -> None:
    etcd = stores
    memory = open_store("memory:")
    try:
        etcd.delete_range(b"", None)
        initial = {**before, **{b"m%03d" % i: b"v" for i in range(130)}}
        for store in (etcd, memory):
            store.put_many(initial.items())
        with memory.transaction() as tx:
            expected_reads = _run(tx, actions)
        # keys read from the snapshot: those seen, those its own puts and deletes hid
        present = sum(len(r) if isinstance(r, list) else r is not None for r in expected_reads)
        hidden = sum(a[0] in ("put", "delete") for a in actions)
        scans = sum(a[0] == "scan" for a in actions)
        try:
            with etcd.transaction() as tx:
                assert _run(tx, actions) == expected_reads
        except TransactionTooLarge as exc:
            # one compare per key read as present (and per range): over 128 is refused whole
            assert present + hidden + scans > 128
            assert "compares" in str(exc)
            assert dict(etcd.scan(b"", None)) == initial
            return
        assert list(etcd.scan(b"", None)) == list(memory.scan(b"", None))
    finally:
        memory.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(_KEY, st.sampled_from([b"x", b"y"]), max_size=6),
    st.lists(_READ, min_size=1, max_size=4),
    st.lists(st.tuples(_KEY, st.one_of(st.none(), st.just(b"z"))), min_size=1, max_size=3),
    st.booleans(),
)
def test_a_guarded_commit_refuses_exactly_a_write_of_what_it_read(
    stores: Store,
    before: dict[bytes, bytes],
    reads: list[tuple[Any, ...]],
    meanwhile: list[tuple[bytes, bytes | None]],
    nested: bool,
) -> None:
    """Another client writes (or deletes) ``meanwhile`` after the transaction read:
    the commit conflicts exactly when a key it read (got, or in the part of a range
    a scan showed) appeared, disappeared or was written since the snapshot, with or
    without nested deletes beside the compares."""
    etcd = stores
    etcd.delete_range(b"", None)
    etcd.put_many(before.items())
    etcd.put(b"n", b"0")
    with etcd.snapshot() as snap:
        at_snapshot = _run(snap, reads)
    # the state after the other client's writes: a key read conflicts when it
    # appeared, disappeared, or was written since (a delete of an absent key
    # writes nothing; a key put then deleted again is absent as it was)
    after = dict(before)
    written: set[bytes] = set()
    for key, value in meanwhile:
        if value is None:
            after.pop(key, None)
        else:
            after[key] = value
            written.add(key)
    read_keys = {a[1] for a in reads if a[0] == "get"}
    ranges = [(a[1], a[2]) for a in reads if a[0] == "scan"]
    for action, shown in zip(reads, at_snapshot, strict=True):
        if action[0] == "first":  # what it showed: up to its last key, unless it ran out
            _, low, high, count, reverse = action
            if len(shown) < count:
                ranges.append((low, high))
            elif reverse:
                ranges.append((shown[-1][0], high))
            else:
                ranges.append((low, shown[-1][0] + b"\x00"))

    def was_read(key: bytes) -> bool:
        return key in read_keys or any(lo <= key and (hi is None or key < hi) for lo, hi in ranges)

    expect_conflict = any(
        was_read(key) and ((key in before) != (key in after) or (key in after and key in written))
        for key in {*before, *after}
    )
    other = open_store(etcd.url)
    try:
        tx = etcd.transaction()
        assert _run(tx, reads) == at_snapshot
        for key, value in meanwhile:
            if value is None:
                other.delete(key)
            else:
                other.put(key, value)
        tx.put(b"n", b"1")
        if nested:
            for i in range(130):
                tx.delete_range(b"q%03d" % i, b"q%03d\x00" % i)
        if expect_conflict:
            with pytest.raises(TransactionConflict):
                tx.commit()
            assert etcd.get(b"n") == b"0"
        else:
            tx.commit()
            assert etcd.get(b"n") == b"1"
    finally:
        other.close()
