"""prefix_range with PrefixBound against a model, on the CosmWasm layout (raw
root and a ScopeHash scope, whose stored order is not key order) and the tuple
layout; bounded clears; Deque.set and ranged iteration; Path; bad input to the
new methods refused by name, with nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.collections import (
    COSMWASM,
    TUPLE,
    Deque,
    DequeMap,
    IndexedMap,
    IndexedSnapshotMap,
    Map,
    MultiIndex,
    PrefixBound,
    SnapshotMap,
)
from keyspace.errors import InvalidArgument, InvalidKey, InvalidName
from keyspace.schemes import ScopeHash

PLACES = ("cosmwasm", "tuple", "scopehash")


def _scope(place: str) -> tuple[Any, keyspace.Scope, Any]:
    if place == "cosmwasm":
        ks = keyspace.open("memory:", scheme="length-prefixed")
        return ks, ks.scope(), COSMWASM
    if place == "tuple":
        ks = keyspace.open("memory:")
        return ks, ks.scope("app"), TUPLE
    ks = keyspace.open("memory:", scheme=ScopeHash())
    return ks, ks.scope("app"), COSMWASM


KEYS = st.lists(st.tuples(st.integers(0, 6), st.text("abc", max_size=3)), max_size=25, unique=True)
BOUND = st.none() | st.tuples(st.integers(0, 6), st.booleans())


def _inside(n: int, lo: Any, hi: Any) -> bool:
    if lo is not None and not (n >= lo[0] if lo[1] else n > lo[0]):
        return False
    return hi is None or (n <= hi[0] if hi[1] else n < hi[0])


@pytest.mark.parametrize("place", PLACES)
@settings(max_examples=60, deadline=None)
@given(keys=KEYS, lo=BOUND, hi=BOUND, reverse=st.booleans(), limit=st.none() | st.integers(0, 5))
def test_prefix_range_is_the_keys_between_the_prefix_bounds(
    place: str, keys: list[tuple[int, str]], lo: Any, hi: Any, reverse: bool, limit: Any
) -> None:
    _, scope, layout = _scope(place)
    m = Map(scope, "m", key=("u8", "str"), layout=layout)
    for k in keys:
        m.save(k, k[1])
    want = sorted((k for k in keys if _inside(k[0], lo, hi)), key=lambda k: (k[0], k[1].encode()))
    if reverse:
        want.reverse()
    if limit is not None:
        want = want[:limit]
    low = None if lo is None else PrefixBound(lo[0], lo[1])
    high = None if hi is None else PrefixBound(hi[0], hi[1])
    got = list(m.prefix_range(low, high, reverse=reverse, limit=limit))
    assert got == [(k, k[1]) for k in want]
    raw = list(m.prefix_range_raw(low, high, reverse=reverse, limit=limit))
    assert [v for _, v in raw] == [f'"{k[1]}"'.encode() for k in want]


@pytest.mark.parametrize("place", PLACES)
def test_index_prefix_range_yields_the_records(place: str) -> None:
    """A multi index's prefix_range and range_raw give the records (the bug of
    cw-storage-plus PR #125 gave the index entry: the record key's length)."""
    _, scope, layout = _scope(place)
    m = IndexedMap(
        scope,
        "recs",
        key="str",
        indexes={"n": MultiIndex(lambda r: r["n"], "recs__n", key="u32")},
        layout=layout,
    )
    for key, n in (("k1", 1), ("k22", 2), ("k3", 2), ("k4", 3)):
        m.save(key, {"n": n, "v": 111111})
    view = m.index("n")
    got = list(view.prefix_range(PrefixBound.inclusive(2), PrefixBound.exclusive(3)))
    assert got == [("k22", {"n": 2, "v": 111111}), ("k3", {"n": 2, "v": 111111})]
    assert [v for _, v in view.prefix_range_raw(None, PrefixBound.inclusive(1))] == [b'{"n":1,"v":111111}']
    assert [v for _, v in view.range_raw()] == [m.codec.encode(r) for _, r in view.items()]


KEYS3 = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.text("ab", max_size=2)), max_size=25, unique=True
)
BOUND_OF_ANY_LENGTH = st.none() | st.tuples(
    st.lists(st.integers(0, 3), min_size=1, max_size=2).map(tuple), st.booleans()
)


@pytest.mark.parametrize("place", PLACES)
@settings(max_examples=60, deadline=None)
@given(keys=KEYS3, lo=BOUND_OF_ANY_LENGTH, hi=BOUND_OF_ANY_LENGTH, reverse=st.booleans())
@example(
    keys=[(1, 0, "a"), (1, 1, "b"), (1, 2, ""), (2, 0, "")], lo=((1, 1), True), hi=((1,), True), reverse=True
)
@example(
    keys=[(1, 0, "a"), (1, 1, "b"), (1, 2, ""), (2, 0, "")],
    lo=((1, 1), False),
    hi=((1,), True),
    reverse=False,
)
def test_prefix_bounds_of_different_lengths(
    place: str, keys: list[tuple[int, int, str]], lo: Any, hi: Any, reverse: bool
) -> None:
    """A low end longer than the high end and under it (``inclusive((3, 1))`` to
    ``inclusive(3)``) takes the keys under the high end from the low end on, on
    every layout (the tuple layout answered nothing: it compared the two ends as
    keys)."""
    _, scope, layout = _scope(place)
    m = Map(scope, "m3", key=("u8", "u8", "str"), layout=layout)
    for k in keys:
        m.save(k, k[2])

    def inside(k: tuple[int, int, str]) -> bool:
        if lo is not None and not (k[: len(lo[0])] >= lo[0] if lo[1] else k[: len(lo[0])] > lo[0]):
            return False
        return hi is None or (k[: len(hi[0])] <= hi[0] if hi[1] else k[: len(hi[0])] < hi[0])

    want = sorted((k for k in keys if inside(k)), key=lambda k: (k[0], k[1], k[2].encode()), reverse=reverse)
    low = None if lo is None else PrefixBound(lo[0], lo[1])
    high = None if hi is None else PrefixBound(hi[0], hi[1])
    assert [k for k, _ in m.prefix_range(low, high, reverse=reverse)] == want


RECORDS = st.dictionaries(
    st.text("xyz", min_size=1, max_size=3), st.tuples(st.sampled_from(["red", "blue"]), st.integers(0, 6))
)


@pytest.mark.parametrize("place", PLACES)
@settings(max_examples=40, deadline=None)
@given(records=RECORDS, lo=BOUND, hi=BOUND, reverse=st.booleans(), limit=st.none() | st.integers(0, 5))
def test_index_prefix_range_under_a_prefix_stays_in_it(
    place: str, records: dict[str, tuple[str, int]], lo: Any, hi: Any, reverse: bool, limit: Any
) -> None:
    """``index(name).prefix(p).prefix_range(min, max)``: the bounds are prefixes
    of the index elements after ``p``, and only entries under ``p`` are read
    (the fixed prefix was ignored: entries of every team came back)."""
    _, scope, layout = _scope(place)
    m = IndexedMap(
        scope,
        "recs",
        key="str",
        indexes={"tn": MultiIndex(lambda r: (r["team"], r["n"]), "recs__tn", key=("str", "u8"))},
        layout=layout,
    )
    for key, (team, n) in records.items():
        m.save(key, {"team": team, "n": n})
    want = sorted(
        ((n, k) for k, (team, n) in records.items() if team == "red" and _inside(n, lo, hi)),
        key=lambda nk: (nk[0], nk[1].encode()),
    )
    if reverse:
        want.reverse()
    if limit is not None:
        want = want[:limit]
    low = None if lo is None else PrefixBound(lo[0], lo[1])
    high = None if hi is None else PrefixBound(hi[0], hi[1])
    view = m.index("tn").prefix("red")
    got = list(view.prefix_range(low, high, reverse=reverse, limit=limit))
    assert got == [(k, {"team": "red", "n": n}) for n, k in want]
    raw = list(view.prefix_range_raw(low, high, reverse=reverse, limit=limit))
    assert [v for _, v in raw] == [m.codec.encode({"team": "red", "n": n}) for n, _ in want]


@pytest.mark.parametrize("place", PLACES)
def test_bounded_clears_remove_the_first_keys_in_key_order(place: str) -> None:
    _, scope, layout = _scope(place)
    m = Map(scope, "m", key=("str", "u16"), layout=layout)
    for p in ("a", "bb"):
        for i in range(30):
            m.save((p, i), i)
    m.prefix("a").clear(7)
    assert list(m.prefix("a").keys()) == list(range(7, 30))
    m.clear(limit=25)
    assert list(m.keys()) == [("bb", i) for i in range(2, 30)]
    m.clear(limit=0)
    assert len(m) == 28
    m.prefix("bb").clear()
    assert list(m.keys()) == []


def test_a_bounded_clear_in_a_transaction_is_undone_with_it() -> None:
    ks, scope, layout = _scope("cosmwasm")
    m = Map(scope, "m", key="u32", layout=layout)
    for i in range(10):
        m.save(i, i)
    with pytest.raises(RuntimeError), ks.transaction() as tx:
        m.using(tx).clear(limit=5)
        assert list(m.using(tx).keys()) == list(range(5, 10))
        raise RuntimeError("abort")
    assert list(m.keys()) == list(range(10))


@pytest.mark.parametrize("place", ("cosmwasm", "tuple"))
def test_bad_input_to_the_new_methods_is_refused_and_writes_nothing(place: str) -> None:
    ks, scope, layout = _scope(place)
    m = Map(scope, "m", key=("u8", "str"), layout=layout)
    m.save((1, "a"), 1)
    before = list(ks.store.scan())
    with pytest.raises(InvalidArgument, match="PrefixBound"):
        list(m.prefix_range(1))
    with pytest.raises(InvalidKey, match="at most 1"):
        list(m.prefix_range(PrefixBound.inclusive((1, "a"))))
    with pytest.raises(InvalidKey):
        list(m.prefix_range(PrefixBound.inclusive(-1)))
    with pytest.raises(InvalidArgument, match="inclusive"):
        PrefixBound(1, inclusive="yes")  # type: ignore[arg-type]
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(InvalidArgument, match="limit"):
            m.clear(limit=bad)
        with pytest.raises(InvalidArgument, match="limit"):
            m.prefix(1).clear(bad)
    with pytest.raises(InvalidArgument, match="limit"):
        list(m.prefix_range(limit="1"))
    d = Deque(scope, "d", layout=layout)
    with pytest.raises(InvalidArgument, match="index 0"):
        d.set(0, "x")
    with pytest.raises(InvalidArgument, match="int"):
        list(d.iter("1"))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="reverse"):
        list(d.iter(reverse=1))  # type: ignore[arg-type]
    with pytest.raises(InvalidName, match="selected"):
        SnapshotMap(scope, "s", "s__c", "s__l", key="str", strategy="sometimes", layout=layout)
    with pytest.raises(InvalidKey):
        m.path(("x", 1))
    assert list(ks.store.scan()) == before


@pytest.mark.parametrize("place", ("cosmwasm", "tuple"))
def test_deque_set_negative_index_and_slices(place: str) -> None:
    _, scope, layout = _scope(place)
    d = Deque(scope, "d", layout=layout)
    for i in range(6):
        d.push_back(i)
    d.set(-1, 50)
    assert list(d) == [0, 1, 2, 3, 4, 50]
    assert list(d.iter(1, -1)) == [1, 2, 3, 4]
    assert list(d.iter(-2, reverse=True)) == [50, 4]
    assert list(reversed(d)) == [50, 4, 3, 2, 1, 0]
    with pytest.raises(InvalidArgument, match="holds 6"):
        d.set(6, 0)
    with pytest.raises(InvalidArgument):
        d.set(-7, 0)


@pytest.mark.parametrize("place", ("cosmwasm", "tuple"))
def test_deque_map_deques_are_apart_and_work_in_a_transaction(place: str) -> None:
    ks, scope, layout = _scope(place)
    dm = DequeMap(scope, "q", key=("str", "u8"), layout=layout)
    dm.deque(("a", 1)).push_back(1)
    dm.deque(("a", 2)).push_back(2)
    dm.deque(("ab", 1)).push_back(3)
    with ks.transaction() as tx:
        dm.using(tx).deque(("a", 1)).push_front(0)
        assert list(dm.using(tx).deque(("a", 1))) == [0, 1]
    assert [list(dm.deque(k)) for k in (("a", 1), ("a", 2), ("ab", 1))] == [[0, 1], [2], [3]]
    dm.remove(("a", 1))
    assert [list(dm.deque(k)) for k in (("a", 1), ("a", 2), ("ab", 1))] == [[], [2], [3]]
    dm.clear()
    assert [len(dm.deque(k)) for k in (("a", 1), ("a", 2), ("ab", 1))] == [0, 0, 0]


def test_path_writes_through_its_collection() -> None:
    """A path of a snapshot map takes the height and keeps the history."""
    _, scope, layout = _scope("cosmwasm")
    s = SnapshotMap(scope, "s", "s__c", "s__l", key="str", layout=layout)
    p = s.path("k")
    p.save(1, 5)
    p.update(lambda v: v + 1, 6)
    assert p.load() == 2 and p.has() and s.may_load_at_height("k", 6) == 1
    p.remove(7)
    assert p.may_load("gone") == "gone" and s.may_load_at_height("k", 7) == 2
    assert p.storage_key == b"\x00\x01sk"


@pytest.mark.parametrize("place", ("cosmwasm", "tuple"))
@pytest.mark.parametrize("limit", (None, 1))
def test_a_prefix_clear_of_an_indexed_or_snapshot_map_takes_what_it_keeps_per_key(
    place: str, limit: Any
) -> None:
    """A prefix of an IndexedMap clears the index entries of its records, and a
    prefix of a snapshot map the history of its keys: nothing is left that
    points at a record no longer there."""
    _, scope, layout = _scope(place)
    idx = {"t": MultiIndex(lambda r: r["t"], "m__t", key="str")}
    m = IndexedMap(scope, "m", key=("str", "u8"), indexes=idx, layout=layout)
    s = SnapshotMap(scope, "s", "s__c", "s__l", key=("str", "u8"), layout=layout)
    i = IndexedSnapshotMap(
        scope,
        "i",
        "i__c",
        "i__l",
        key=("str", "u8"),
        indexes={"t": MultiIndex(lambda r: r["t"], "i__t", key="str")},
        layout=layout,
    )
    for n in (1, 2):
        m.save(("a", n), {"t": "x"})
        m.save(("b", n), {"t": "x"})
        s.save(("a", n), n, 5)
        s.save(("b", n), n, 5)
        i.save(("a", n), {"t": "x"}, 5)
        i.save(("b", n), {"t": "x"}, 5)
    m.prefix("a").clear(limit)
    s.prefix("a").clear(limit)
    i.prefix("a").clear(limit)
    gone = [("a", 1)] if limit == 1 else [("a", 1), ("a", 2)]
    kept = [k for k in (("a", 1), ("a", 2), ("b", 1), ("b", 2)) if k not in gone]
    assert [k for k, _ in m.index("t").items()] == kept
    assert [k for k, _ in i.index("t").items()] == kept
    for k in gone:
        assert list(s.changes(k)) == [] and s.may_load_at_height(k, 5) is None
        assert list(i.changes(k)) == [] and i.may_load_at_height(k, 5) is None
    assert [k for k, _ in s.items()] == kept and [k for k, _ in i.items()] == kept
