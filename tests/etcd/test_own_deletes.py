"""What a transaction deleted itself is neither read from the snapshot nor guarded
at its etcd commit.

Before: a scan inside a range the transaction had already deleted still read the
snapshot's keys there (then hid them), and every such key became a compare of the
commit. A transaction that cleared a scope of more than 128 keys and then looked
at it (``len``, ``items``, ``scopes()``: anything that scans) could never commit
on etcd (``TransactionTooLarge``: over 128 compares), and another client's write
inside the deleted range failed the commit with ``TransactionConflict`` although
nothing the transaction saw depended on it (its own delete removes that key too).
Now the snapshot is read only in the gaps between the transaction's own range
deletes, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from itertools import pairwise

import pytest
from _etcd import compare_holds, own_url
from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace.stores import open_store
from keyspace.stores._overlay import RangeSet
from keyspace.stores.etcd import TransactionConflict
from keyspace.stores.etcd._plan import guard_compares

# -- RangeSet.gaps against a model ------------------------------------------------------

_POINT = st.binary(max_size=2).filter(lambda b: b[:1] in (b"", b"a", b"b", b"c", b"\xff"))


@given(
    st.lists(st.tuples(_POINT, st.one_of(st.none(), _POINT)), max_size=6),
    _POINT,
    st.one_of(st.none(), _POINT),
    st.lists(_POINT, min_size=1, max_size=20),
)
def test_gaps_are_exactly_the_uncovered_part(
    added: list[tuple[bytes, bytes | None]], start: bytes, stop: bytes | None, probes: list[bytes]
) -> None:
    ranges = RangeSet()
    for low, high in added:
        ranges.add(low, high)
    gaps = ranges.gaps(start, stop)
    for (_, high), (low, _) in pairwise(gaps):
        assert high is not None and high < low  # ascending, disjoint, not touching
    assert all(high is None or low < high for low, high in gaps)
    for key in [*probes, start, *(g[0] for g in gaps), *(g[1] for g in gaps if g[1] is not None)]:
        inside = start <= key and (stop is None or key < stop)
        in_gap = any(low <= key and (high is None or key < high) for low, high in gaps)
        assert in_gap == (inside and key not in ranges)


_K = st.text(alphabet="abc", min_size=1, max_size=2).map(str.encode)


@given(
    st.lists(st.tuples(_K, _K), min_size=1, max_size=4),
    st.dictionaries(_K, st.integers(1, 5), max_size=6),
    st.dictionaries(_K, st.one_of(st.none(), st.integers(1, 10)), max_size=6),
    st.integers(0, 130),
)
def test_compares_joined_across_deleted_ranges_never_miss_a_conflict(
    deleted: list[tuple[bytes, bytes]],
    before: dict[bytes, int],
    changes: dict[bytes, int | None],
    filler: int,
) -> None:
    """A scan of everything in a transaction that deleted ``deleted`` reads the
    gaps; with ``filler`` other keys read as present the compares are over 128 and
    the gaps' compares are joined across the deleted ranges: they then refuse every
    state the gaps' own compares refuse (a write inside a deleted range may be
    refused too, never missed)."""
    snapshot = 5
    ranges = RangeSet()
    for low, high in deleted:
        ranges.add(*sorted((low, high)))
    gaps = [(low, b"\x00" if high is None else high) for low, high in ranges.gaps(b"a", None)]
    points = {
        k: r for k, r in before.items() if any(lo <= k and (hi == b"\x00" or k < hi) for lo, hi in gaps)
    }
    points.update({b"z%03d" % i: 1 for i in range(filler)})
    cleared = [(lo, b"\x00" if hi is None else hi) for lo, hi in ranges.ranges()]
    exact = guard_compares(points, gaps, snapshot)
    joined = guard_compares(points, gaps, snapshot, cleared)
    if len(exact) <= 128:
        assert joined == exact
    assert len(joined) <= len(exact)
    after = {**before, **{b"z%03d" % i: 1 for i in range(filler)}}
    for key, rev in changes.items():
        if rev is None:
            after.pop(key, None)
        else:
            after[key] = snapshot + rev
    if all(compare_holds(c, after) for c in joined):
        assert all(compare_holds(c, after) for c in exact)


# -- on the cluster ----------------------------------------------------------------------


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("review-own-deletes")


@pytest.mark.etcd
def test_a_clear_of_200_keys_then_a_look_commits(url: str) -> None:
    store = open_store(url)
    try:
        store.put_many((b"m%03d" % i, b"v") for i in range(200))
        store.put(b"z", b"kept")
        with store.transaction() as tx:
            tx.delete_range(b"m", b"n")
            assert list(tx.scan(b"", None)) == [(b"z", b"kept")]
            assert list(tx.scan(b"m", b"n", reverse=True)) == []
            tx.put(b"m050", b"new")
            assert list(tx.scan(b"m", b"n")) == [(b"m050", b"new")]
        assert list(store.scan(b"", None)) == [(b"m050", b"new"), (b"z", b"kept")]
    finally:
        store.close()


@pytest.mark.etcd
def test_a_write_inside_the_deleted_range_is_no_conflict(url: str) -> None:
    store, other = open_store(url), open_store(url)
    try:
        store.put_many([(b"a", b"1"), (b"b", b"1"), (b"d", b"1")])
        with store.transaction() as tx:
            tx.delete_range(b"a", b"c")
            assert list(tx.scan(b"", None)) == [(b"d", b"1")]
            other.put(b"bb", b"2")  # deleted by this transaction's own range delete
            tx.put(b"n", b"1")
        assert list(store.scan(b"", None)) == [(b"d", b"1"), (b"n", b"1")]
    finally:
        store.close()
        other.close()


@pytest.mark.etcd
@pytest.mark.parametrize("scheme", ["tuple", "sublevel", "scopehash"])
def test_a_scope_cleared_and_refilled_in_one_transaction(url: str, scheme: str) -> None:
    with keyspace.open(url, scheme=scheme) as ks:
        ks.scope("s").update({b"k%03d" % i: b"v" for i in range(100)})
        ks.scope("s").update({b"k%03d" % i: b"v" for i in range(100, 200)})
        with ks.transaction() as tx:
            scope = tx.scope("s")
            scope.clear()
            assert len(scope) == 0
            assert list(scope.items()) == []
            scope[b"new"] = b"1"
        assert dict(ks.scope("s").items()) == {b"new": b"1"}


@pytest.mark.etcd
def test_the_async_transaction_reads_only_the_gaps(url: str) -> None:
    sync = open_store(url)
    other = open_store(url)
    sync.put_many((b"m%03d" % i, b"v") for i in range(200))
    sync.put(b"z", b"kept")

    async def run() -> None:
        store = sync.asynchronous()  # type: ignore[attr-defined]
        try:
            tx = await store.begin()
            await tx.delete_range(b"m", b"n")
            assert [kv async for kv in tx.scan(b"", None)] == [(b"z", b"kept")]
            assert [kv async for kv in tx.scan(b"", None, reverse=True)] == [(b"z", b"kept")]
            other.put(b"m500", b"2")  # inside the range it deleted
            await tx.put(b"m050", b"new")
            await tx.commit()
        finally:
            await store.close(lambda: None)

    try:
        asyncio.run(run())
        assert list(sync.scan(b"", None)) == [(b"m050", b"new"), (b"z", b"kept")]
    finally:
        sync.close()
        other.close()


@pytest.mark.etcd
def test_a_look_past_130_deleted_ranges_joins_its_compares(url: str) -> None:
    """130 single-key range deletes among 200 keys, then a scan of everything: 131
    gaps and 70 keys read is over 128 compares; joined across the deleted ranges
    it commits (before: 200 keys read, 201 compares, TransactionTooLarge)."""
    store, other = open_store(url), open_store(url)
    try:
        store.put_many((b"m%03d" % i, b"v") for i in range(200))
        keys = [b"m%03d" % i for i in range(200)]
        with store.transaction() as tx:
            for key in keys[:130]:
                tx.delete_range(key, key + b"\x00")
            assert [k for k, _ in tx.scan(b"", None)] == keys[130:]
            tx.put(b"n", b"1")
        assert [k for k, _ in store.scan(b"", None)] == [*keys[130:], b"n"]
        # joined across 199 deleted ranges, the compares still see a write of a key it read
        with pytest.raises(TransactionConflict), store.transaction() as tx:
            for key in keys[130:]:
                tx.delete_range(key, key + b"\x00")
            assert [k for k, _ in tx.scan(b"", None)] == [b"n"]
            for i in range(129):
                tx.delete_range(b"p%03d" % i, b"p%03d\x00" % i)
            assert tx.get(b"o") is None
            other.put(b"n", b"2")
            tx.put(b"q", b"1")
        assert store.get(b"q") is None
    finally:
        store.close()
        other.close()
