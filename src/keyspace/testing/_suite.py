"""``StoreSuite``: the contract tests, driven by ``store.capabilities``."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from itertools import chain
from typing import Any, Protocol

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from .._bytes import prefix_end
from ..errors import InvalidName, KeyspaceError, KeyTooLarge, StoreClosed, StoreError, WatchUnsupported
from ..stores._base import Op, ReadView, Seeker, Store, keys_in
from ..stores._events import StoreEvent
from ._model import StoreModelMachine

__all__ = ["MakeStore", "StoreSuite"]


class MakeStore(Protocol):
    """``make()`` gives a new empty store; ``make(url)`` reopens the store at ``url``."""

    def __call__(self, url: str | None = None) -> Store: ...


# Keys around the edges: the empty key, 00 and ff bytes, prefixes of each other.
EDGE_KEYS = [
    b"",
    b"\x00",
    b"\x00\x00",
    b"\x00\xff",
    b"\x01",
    b"a",
    b"a\x00",
    b"a\xff",
    b"a\xff\xff",
    b"ab",
    b"b",
    b"\xfe\xff",
    b"\xff",
    b"\xff\x00",
    b"\xff\xff",
    b"\xff\xff\xff",
]

RANGES: list[tuple[bytes, bytes | None]] = [
    (b"", None),
    (b"a", b"b"),
    (b"a", prefix_end(b"a")),
    (b"a\xff", prefix_end(b"a\xff")),
    (b"\x00", b"\x00\xff"),
    (b"\x00\x00", b"\x01"),
    (b"b", b"a"),  # empty: stop before start
    (b"ab", b"ab"),  # empty: stop == start
    (b"\xff", None),
    (b"\xff\xff", prefix_end(b"\xff\xff")),  # an all-ff prefix runs to the end
    (b"\xfe", b"\xff\xff"),
    (b"zz", None),
]


def _write_in_batches(store: Store, pairs: list[tuple[bytes, bytes]]) -> None:
    """Write ``pairs`` in as few atomic batches as the engine allows
    (``capabilities.max_batch_ops``: etcd takes 128 operations a transaction)."""
    size = store.capabilities.max_batch_ops or len(pairs) or 1
    for at in range(0, len(pairs), size):
        store.write(pairs[at : at + size])


ENDED = [b"e%04d" % i for i in range(600)]
"""Keys the scans of an ended view run over: more than the first page any adapter
reads ahead (256: SQLite and etcd pages), so that a scan that reads on after its
block would run past what it had read."""

Items = list[tuple[bytes, bytes]]
EndedScan = tuple[str, Callable[[ReadView], Iterator[Any] | None], Callable[[Items], list[Any]]]


class _Abandon(Exception):
    """Raised to end a transaction's block by an error (it is discarded)."""


def _paged(pages: Iterable[Iterable[Any]]) -> Iterator[Any]:
    """The items of ``read_pages``' pages."""
    return chain.from_iterable(pages)


def _keys_of(items: Items) -> list[bytes]:
    return [k for k, _ in items]


def _ended_scans(lo: bytes, hi: bytes) -> list[EndedScan]:
    """Every iterator a view gives over ``[lo, hi)``: its name, how to begin it on
    a view (``None``: the view has no such fast path) and what it yields of the
    view's items in that range."""

    def same(items: Items) -> Items:
        return items

    def backwards(items: Items) -> Items:
        return items[::-1]

    def _no_values(items: Items) -> Items:
        return [(k, b"") for k, _ in items]

    return [
        ("scan", lambda v: v.scan(lo, hi), same),
        ("reverse scan", lambda v: v.scan(lo, hi, reverse=True), backwards),
        ("keys_in", lambda v: keys_in(v, lo, hi), _keys_of),
        ("reverse keys_in", lambda v: keys_in(v, lo, hi, reverse=True), lambda i: _keys_of(i[::-1])),
        ("read_pages", lambda v: _paged(v.read_pages([(lo, hi)])), same),
        ("reverse read_pages", lambda v: _paged(v.read_pages([(lo, hi)], True)), backwards),
        (
            "read_pages of two ranges",
            lambda v: _paged(v.read_pages([(lo, lo + b"0200"), (lo + b"0200", hi)])),
            same,
        ),
        (
            "reverse read_pages of two ranges",
            lambda v: _paged(v.read_pages([(lo + b"0200", hi), (lo, lo + b"0200")], True)),
            backwards,
        ),
        ("read_pages of keys", lambda v: _paged(v.read_pages([(lo, hi)], keys_only=True)), _no_values),
        (
            "read_pages without the prefix",
            lambda v: _paged(v.read_pages([(lo, hi)], cut=len(lo))),
            lambda items: [(k[len(lo) :], v) for k, v in items],
        ),
    ]


def _read_on(items: Iterator[Any], got: list[Any], expected: list[Any], what: str) -> None:
    """Read ``items`` (begun in a block that has ended since) on into ``got``: it
    must raise :class:`StoreClosed` saying the view has ended, and what it gave is
    the start of ``expected`` (the view's state, read ahead), nothing of later
    writes."""
    with pytest.raises(StoreClosed, match="ended"):
        got.extend(items)  # what came before the error stays in ``got``
    assert got == expected[: len(got)], f"{what}: it read on after its block ended"


def _ended_reads(view: ReadView, seeker: Seeker) -> list[Callable[[], object]]:
    """The reads of ``view`` (whose block has ended) that must raise
    :class:`StoreClosed`; ``seeker`` was made in the block."""
    return [
        lambda: seeker.seek(b"b"),
        lambda: view.get(b"a"),
        lambda: list(view.scan()),
        lambda: list(keys_in(view)),
        lambda: view.count(),
        lambda: view.count(b"", None, (0, 1)),
        lambda: view.seeker(b"z").seek(b"a"),
    ]


class StoreSuite:
    """Subclass in a ``test_*.py`` module and provide a ``make_store`` fixture."""

    model_examples = 25
    model_steps = 25

    @pytest.fixture
    def make_store(self) -> MakeStore:
        raise NotImplementedError("provide a make_store fixture in the subclass")

    @pytest.fixture
    def opened(self, make_store: MakeStore) -> Iterator[Callable[..., Store]]:
        """``make_store`` that also closes every store it opened at teardown."""
        stores: list[Store] = []

        def open_(url: str | None = None) -> Store:
            store = make_store(url) if url is not None else make_store()
            stores.append(store)
            return store

        yield open_
        for store in reversed(stores):
            store.close()

    @pytest.fixture
    def store(self, opened: Callable[..., Store]) -> Store:
        return opened()

    @staticmethod
    def keys(store: Store) -> list[bytes]:
        """The edge keys this store can hold."""
        return [k for k in EDGE_KEYS if k or store.capabilities.empty_keys]

    @classmethod
    def fill(cls, store: Store) -> dict[bytes, bytes]:
        data = {k: b"v" + k for k in cls.keys(store)}
        store.write(list(data.items()))
        return data

    # -- factory -------------------------------------------------------------

    def test_factory_gives_empty_isolated_stores(self, opened: Callable[..., Store]) -> None:
        one, two = opened(), opened()
        assert list(one.scan()) == [] and list(two.scan()) == []
        one.put(b"k", b"1")
        assert two.get(b"k") is None
        assert list(two.scan()) == []
        assert isinstance(one.url, str)
        if one.capabilities.persistent:  # two persistent stores live at two places
            assert one.url != two.url

    # -- point operations ----------------------------------------------------

    def test_put_get_overwrite_delete(self, store: Store) -> None:
        assert store.get(b"k") is None
        store.put(b"k", b"1")
        assert store.get(b"k") == b"1"
        store.put(b"k", b"2")
        assert store.get(b"k") == b"2"
        store.delete(b"k")
        assert store.get(b"k") is None
        store.delete(b"k")  # deleting a missing key is fine
        store.put(b"e", b"")
        assert store.get(b"e") == b""

    def test_binary_keys_round_trip_in_byte_order(self, store: Store) -> None:
        data = self.fill(store)
        for key, value in data.items():
            assert store.get(key) == value
        assert [k for k, _ in store.scan()] == sorted(data)

    def test_empty_key(self, store: Store) -> None:
        if store.capabilities.empty_keys:
            store.put(b"", b"empty")
            assert store.get(b"") == b"empty"
            assert list(store.scan(limit=1)) == [(b"", b"empty")]
            store.delete(b"")
            assert store.get(b"") is None
        else:
            with pytest.raises(InvalidName):
                store.put(b"", b"empty")
            with pytest.raises(InvalidName):
                store.write([(b"a", b"1"), (b"", b"empty")])
            assert list(store.scan()) == []

    def test_large_values(self, store: Store) -> None:
        big = bytes(range(256)) * 4096  # 1 MiB
        store.put(b"big", big)
        assert store.get(b"big") == big
        store.write([(b"big2", big[::-1])])
        assert dict(store.scan()) == {b"big": big, b"big2": big[::-1]}

    # -- ranges --------------------------------------------------------------

    @pytest.mark.parametrize(("start", "stop"), RANGES)
    def test_scan_ranges(self, store: Store, start: bytes, stop: bytes | None) -> None:
        data = self.fill(store)
        forward = [(k, data[k]) for k in sorted(data) if k >= start and (stop is None or k < stop)]
        for limit in (None, 0, 1, 3, 100):
            expected = forward if limit is None else forward[:limit]
            assert list(store.scan(start, stop, limit=limit)) == expected
            # the reverse twin, derived from the forward expectation
            twin = forward[::-1] if limit is None else forward[::-1][:limit]
            assert list(store.scan(start, stop, reverse=True, limit=limit)) == twin

    def test_prefix_ranges_near_ff(self, store: Store) -> None:
        data = self.fill(store)
        for prefix in (b"a", b"a\xff", b"\xff", b"\xff\xff", b"\x00"):
            got = [k for k, _ in store.scan(prefix, prefix_end(prefix))]
            assert got == sorted(k for k in data if k.startswith(prefix))

    # -- keys-only scans, counts and seekers ------------------------------------

    @staticmethod
    def check_structure_reads(
        view: ReadView, data: dict[bytes, bytes], start: bytes, stop: bytes | None
    ) -> None:
        """The keys-only reads (:func:`keys_in`), ``count`` and a seeker of ``view`` agree with ``data`` (what
        ``view`` holds) on ``[start, stop)``."""
        inside = [k for k in sorted(data) if k >= start and (stop is None or k < stop)]
        for limit in (None, 0, 1, 3, 100):
            want = inside if limit is None else inside[:limit]
            assert list(keys_in(view, start, stop, limit=limit)) == want
            back = inside[::-1] if limit is None else inside[::-1][:limit]
            assert list(keys_in(view, start, stop, reverse=True, limit=limit)) == back
        assert view.count(start, stop) == len(inside)
        for byte, at in ((0, 0), (0, 1), (ord("b"), 1), (0xFF, 2)):  # the keys holding no byte from at on
            lacking = [k for k in inside if bytes((byte,)) not in k[at:]]
            assert view.count(start, stop, (byte, at)) == len(lacking), (byte, at)
        with view.seeker(stop) as seeker:
            # seeks in any order: forward, backward, to keys present and absent
            for target in [start, *EDGE_KEYS[::-1], *EDGE_KEYS, b"a\x00\x00", b"\xff\xff\xff\xff"]:
                found = next((k for k in sorted(data) if k >= target and (stop is None or k < stop)), None)
                assert seeker.seek(target) == found, (target, stop)
        with pytest.raises(StoreClosed):
            seeker.seek(start)

    @pytest.mark.parametrize(("start", "stop"), RANGES)
    def test_structure_reads(self, store: Store, start: bytes, stop: bytes | None) -> None:
        data = self.fill(store)
        self.check_structure_reads(store, data, start, stop)
        if store.capabilities.snapshots:
            with store.snapshot() as snap:
                store.put(b"a\x00\x01", b"late")  # after the snapshot: not seen by it
                self.check_structure_reads(snap, data, start, stop)
            store.delete(b"a\x00\x01")
        with store.transaction() as tx:  # the transaction's own writes are seen
            tx.delete(b"a")
            tx.put(b"a\x00\x01", b"mine")
            tx.delete_range(b"\xff\xff", None)
            mine = {k: v for k, v in data.items() if k != b"a" and not k.startswith(b"\xff\xff")}
            mine[b"a\x00\x01"] = b"mine"
            self.check_structure_reads(tx, mine, start, stop)

    def test_count_of_many_keys(self, store: Store) -> None:
        """Counts and key scans that cross the engines' pages and chunks."""
        keys = [b"n%05d" % i for i in range(1500)]
        _write_in_batches(store, [(k, b"") for k in keys])
        store.put(b"o", b"after")
        assert store.count(b"n", b"o") == 1500
        assert store.count(b"n00100", b"n01097") == 997
        assert store.count(b"n01499", None) == 2
        assert list(keys_in(store, b"n")) == [*keys, b"o"]
        with store.seeker(b"n01000") as seeker:
            assert seeker.seek(b"n00999\x00") is None
            assert seeker.seek(b"n0") == b"n00000"

    # -- delete_range --------------------------------------------------------

    @pytest.mark.parametrize(("start", "stop"), RANGES)
    def test_delete_range(self, store: Store, start: bytes, stop: bytes | None) -> None:
        data = self.fill(store)
        store.delete_range(start, stop)
        kept = sorted(k for k in data if not (k >= start and (stop is None or k < stop)))
        assert [k for k, _ in store.scan()] == kept

    # -- atomic batches ------------------------------------------------------

    def test_write_applies_in_order(self, store: Store) -> None:
        store.put(b"gone", b"x")
        store.write([(b"a", b"1"), (b"b", b"2"), (b"a", b"3"), (b"gone", None), (b"b", None)])
        assert list(store.scan()) == [(b"a", b"3")]
        store.write([])
        assert list(store.scan()) == [(b"a", b"3")]

    def test_a_delete_over_the_key_limit_is_refused_on_every_path(self, store: Store) -> None:
        """The delete of a key over ``max_key_size`` raises :class:`KeyTooLarge` on
        every path that writes — ``delete``, ``write`` and a transaction's
        ``delete`` — and changes nothing (the transaction stays usable). A store
        without a limit takes a long key's delete as any other delete."""
        store.put(b"keep", b"old")
        limit = store.capabilities.max_key_size
        if limit is None:
            long_key = b"k" * 100_000
            store.put(long_key, b"v")
            store.delete(long_key)
            assert list(store.scan()) == [(b"keep", b"old")]
            return
        big = b"k" * (limit + 1)
        with pytest.raises(KeyTooLarge):
            store.delete(big)
        with pytest.raises(KeyTooLarge):
            store.write([(b"keep", b"new"), (big, None)])
        with store.transaction() as tx:
            tx.put(b"in-tx", b"v")
            with pytest.raises(KeyTooLarge):
                tx.delete(big)
        assert list(store.scan()) == [(b"in-tx", b"v"), (b"keep", b"old")]

    def test_write_is_all_or_nothing(self, store: Store) -> None:
        store.put(b"keep", b"old")
        limit = store.capabilities.max_key_size
        if limit is not None:
            bad: list[Op] = [(b"keep", b"new"), (b"x" * (limit + 1), b"v"), (b"z", b"v")]
            with pytest.raises(KeyTooLarge):
                store.write(bad)
            assert list(store.scan()) == [(b"keep", b"old")]

        def failing() -> Iterator[Op]:
            yield b"keep", b"new"
            yield b"y", b"v"
            raise RuntimeError("the batch's source fails half-way")

        # Without a size limit to break, a failing source of ops shows the same rule.
        with pytest.raises(RuntimeError):
            store.write(failing())
        assert list(store.scan()) == [(b"keep", b"old")]

    # -- transactions --------------------------------------------------------

    def test_transaction_reads_its_writes_and_commits(self, store: Store) -> None:
        self.fill(store)
        before = dict(store.scan())
        with store.transaction() as tx:
            tx.put(b"new", b"1")
            tx.delete(b"a")
            tx.delete_range(b"\xff", None)
            tx.put(b"\xff\x01", b"back")
            assert tx.get(b"new") == b"1" and tx.get(b"a") is None
            assert tx.get(b"\xff\x01") == b"back" and tx.get(b"\xff\xff") is None
            expected = dict(before)
            del expected[b"a"]
            for k in [k for k in expected if k >= b"\xff"]:
                del expected[k]
            expected[b"new"] = b"1"
            expected[b"\xff\x01"] = b"back"
            assert list(tx.scan()) == sorted(expected.items())
            assert list(tx.scan(reverse=True, limit=2)) == sorted(expected.items())[::-1][:2]
            # not visible outside before commit
            assert store.get(b"new") is None and store.get(b"a") == before[b"a"]
            if store.capabilities.snapshots:
                with store.snapshot() as snap:
                    assert snap.get(b"new") is None
        assert dict(store.scan()) == expected

    def test_transaction_discards_on_exception(self, store: Store) -> None:
        store.put(b"a", b"1")
        with pytest.raises(RuntimeError), store.transaction() as tx:
            tx.put(b"b", b"2")
            tx.delete(b"a")
            tx.delete_range(b"", None)
            raise RuntimeError("abandon")
        assert list(store.scan()) == [(b"a", b"1")]

    def test_transaction_view_ends_with_block(self, store: Store) -> None:
        with store.transaction() as tx:
            tx.put(b"a", b"1")
        with pytest.raises(StoreClosed):
            tx.get(b"a")
        with pytest.raises(StoreClosed):
            tx.put(b"b", b"2")

    def test_transaction_and_other_writers(self, store: Store) -> None:
        store.put(b"outside", b"old")
        if store.capabilities.serialized_transactions:
            with store.transaction() as tx:
                tx.put(b"mine", b"1")
                with pytest.raises(StoreError):
                    store.put(b"outside", b"new")  # same thread: refused, never deadlocks
                assert store.get(b"outside") == b"old"  # reads do not wait
            assert store.get(b"mine") == b"1" and store.get(b"outside") == b"old"
        else:
            with store.transaction() as tx:  # blind writes: last writer wins, key by key
                tx.put(b"mine", b"1")
                tx.put(b"both", b"tx")
                store.put(b"both", b"store")
            assert store.get(b"both") == b"tx" and store.get(b"mine") == b"1"
            if store.capabilities.guarded_reads:  # a read key changed meanwhile: nothing written
                with pytest.raises(StoreError), store.transaction() as tx:
                    tx.put(b"mine", b"2")
                    store.put(b"outside", b"new")
                    assert tx.get(b"outside") == b"old"  # reads the snapshot it began with
                assert store.get(b"mine") == b"1"
            else:
                with store.transaction() as tx:
                    tx.put(b"mine", b"2")
                    store.put(b"outside", b"new")
                    assert tx.get(b"outside") == b"old"  # reads the snapshot it began with
                assert store.get(b"mine") == b"2"
            assert store.get(b"outside") == b"new"  # untouched by the transaction

    # -- snapshots -----------------------------------------------------------

    def test_snapshot_isolation(self, store: Store) -> None:
        if not store.capabilities.snapshots:
            with pytest.raises(StoreError):
                store.snapshot()
            return
        data = self.fill(store)
        with store.snapshot() as snap:
            store.put(b"late", b"1")
            store.delete(b"a")
            store.delete_range(b"\xff", None)
            assert snap.get(b"late") is None and snap.get(b"a") == data[b"a"]
            assert list(snap.scan()) == sorted(data.items())
            assert (
                list(snap.scan(b"a", b"b", reverse=True))
                == sorted((k, v) for k, v in data.items() if b"a" <= k < b"b")[::-1]
            )
        with pytest.raises(StoreClosed):
            snap.get(b"a")

    # -- a view's iterators end with its block ----------------------------------

    @staticmethod
    def ended_views(store: Store) -> list[tuple[str, Callable[[], AbstractContextManager[ReadView]]]]:
        """The views whose blocks end: a transaction, and a snapshot where offered."""
        views: list[tuple[str, Callable[[], AbstractContextManager[ReadView]]]] = [
            ("transaction", store.transaction)
        ]
        if store.capabilities.snapshots:
            views.append(("snapshot", store.snapshot))
        return views

    def test_scans_end_with_their_block(self, store: Store) -> None:
        """Every scan a snapshot or transaction gave out in its block (``scan``,
        keys-only reads, forward and reverse, and the fast paths it offers) raises
        :class:`StoreClosed` saying it has ended at its next read of the engine
        once the block is over; what it still hands out is what it had read in
        the block, never the writes made since."""
        _write_in_batches(store, [(k, b"old") for k in ENDED])
        state = [(k, b"old") for k in ENDED]
        late = [b"e%04d+" % i for i in range(0, len(ENDED), 50)]  # put after the block
        gone = [b"e%04d" % i for i in range(25, len(ENDED), 50)]  # deleted after the block
        for kind, begin in self.ended_views(store):
            for name, start, expect in _ended_scans(b"e", b"f"):
                with begin() as view:
                    items = start(view)
                    got = [] if items is None else [next(items)]
                if items is None:
                    continue  # a fast path this view does not offer
                for key in late:
                    store.put(key, b"new")
                for key in gone:
                    store.delete(key)
                try:
                    _read_on(items, got, expect(state), f"{kind} {name}")
                finally:
                    for key in late:
                        store.delete(key)
                    for key in gone:
                        store.put(key, b"old")

    def test_ranges_read_in_turn(self, store: Store) -> None:
        """Several ranges read in turn by a snapshot or transaction, as a scope reads
        its own ranges (``read_pages``): the items of each range in the order
        given (empty ranges and ranges with no keys included), forward and
        reverse, at most ``limit`` in all, as non-empty lists; one range alone,
        and its keys alone, as a short scan reads them."""
        keys = [(b"r%04d" % i, b"%d" % i) for i in range(100)]
        _write_in_batches(store, keys)
        ranges: list[tuple[bytes, bytes | None]] = [
            (b"r0010", b"r0020"),
            (b"r0020", b"r0020"),
            (b"r0030+", b"r0031"),
            (b"r0050", b"r0055"),
            (b"r0090", b"r0100"),
        ]
        expect = [(k, v) for lo, hi in ranges for k, v in keys if lo <= k and (hi is None or k < hi)]
        backwards = [
            (k, v) for lo, hi in ranges[::-1] for k, v in reversed(keys) if lo <= k and (hi is None or k < hi)
        ]
        for kind, begin in self.ended_views(store):
            with begin() as view:
                read = view.read_pages
                assert list(_paged(read(ranges))) == expect, kind
                assert list(_paged(read(ranges[::-1], True))) == backwards, kind
                for limit in (0, 1, 10, 11, 25, 1000, 2000):
                    assert list(_paged(read(ranges, False, limit))) == expect[:limit], (kind, limit)
                    assert list(_paged(read(ranges[::-1], True, limit))) == backwards[:limit], (kind, limit)
                    for lo, hi in ranges:  # one range, as a short scan reads it
                        one = [(k, v) for k, v in expect if lo <= k < hi]  # type: ignore[operator]
                        assert list(_paged(read([(lo, hi)], False, limit))) == one[:limit], (kind, lo, limit)
                        assert list(_paged(read([(lo, hi)], False, limit, True))) == [
                            (k, b"") for k, _ in one[:limit]
                        ], (kind, lo, limit)
                    pages = list(read(ranges, False, limit))
                    assert all(type(page) is list and page for page in pages), (kind, limit)
                assert list(_paged(read([], False, None))) == []
        store.delete_range(b"r", b"s")

    def test_ranges_read_without_their_prefix(self, store: Store) -> None:
        """``read_pages(..., cut=n)`` of ranges under one ``n``-byte prefix (a
        scope's own ranges, stops inside the prefix and at its end) gives the
        items ``read_pages`` gives with their keys' first ``n`` bytes left out:
        on the store, a snapshot and a transaction, forward and reverse, at
        most ``limit`` in all, keys only, as non-empty lists; the keys just
        outside the prefix (before it, after it, the prefix itself shorter)
        are never read."""
        under = [(b"q/%03d" % i, b"%d" % i) for i in range(60)]
        around = [(b"q", b"x"), (b"q.", b"x"), (b"q0", b"x"), (b"q/", b"root"), (b"p/999", b"x")]
        _write_in_batches(store, under + around)
        ranges: list[tuple[bytes, bytes | None]] = [(b"q/", b"q/020"), (b"q/030", b"q0")]
        whole = sorted([*under, (b"q/", b"root")])
        expect = [(k[2:], v) for k, v in whole if b"q/" <= k < b"q/020" or k >= b"q/030"]
        backwards = [(k[2:], v) for k, v in reversed(whole) if k >= b"q/030"] + [
            (k[2:], v) for k, v in reversed(whole) if k < b"q/020"
        ]
        views: list[tuple[str, Callable[[], AbstractContextManager[ReadView]]]] = [
            ("store", lambda: contextlib.nullcontext(store))
        ]
        for kind, begin in views + self.ended_views(store):
            with begin() as view:
                read = view.read_pages
                assert list(_paged(read(ranges, cut=2))) == expect, kind
                assert list(_paged(read(ranges[::-1], True, cut=2))) == backwards, kind
                assert list(_paged(read(ranges, keys_only=True, cut=2))) == [(k, b"") for k, _ in expect], (
                    kind
                )
                for limit in (0, 1, 5, 21, 1000, 2000):
                    assert list(_paged(read(ranges, False, limit, cut=2))) == expect[:limit], (kind, limit)
                    assert list(_paged(read(ranges[::-1], True, limit, cut=2))) == backwards[:limit], (
                        kind,
                        limit,
                    )
                    one = [(k, v) for k, v in expect if k >= b"030"]
                    assert list(_paged(read(ranges[1:], False, limit, cut=2))) == one[:limit], (kind, limit)
                    pages = list(read(ranges, False, limit, cut=2))
                    assert all(type(page) is list and page for page in pages), (kind, limit)
                assert list(_paged(read([], False, None, cut=2))) == []
        # the prefix itself a key, and the store's first (the key without it is b"")
        first = [(b"\x00/", b"first"), (b"\x00/a", b"a")]
        _write_in_batches(store, first)
        first_cut = [(b"", b"first"), (b"a", b"a")]
        for kind, begin in views + self.ended_views(store):
            with begin() as view:
                for reverse in (False, True):
                    # the prefix's end; a stop under it, with the prefix alone before it
                    for stop, want in ((b"\x000", first_cut), (b"\x00/a", first_cut[:1])):
                        got = list(_paged(view.read_pages([(b"\x00/", stop)], reverse, cut=2)))
                        assert got == want[:: -1 if reverse else 1], (kind, reverse, stop)
        store.delete_range(b"\x00/", b"\x000")
        store.delete_range(b"p", b"r")

    def test_transaction_scans_of_its_own_writes_end_with_it(self, store: Store) -> None:
        """A transaction's scans over its own pending writes (a range only it
        wrote; a range it deleted from and wrote to) end with it too, whether it
        committed or was discarded."""
        mine = [(b"o%04d" % i, b"mine") for i in range(len(ENDED))]
        most = store.capabilities.max_batch_ops
        commit = most is None or most >= len(mine)  # else discarded: it could not commit
        for name, start, expect in _ended_scans(b"o", b"p"):
            items: Iterator[Any] | None = None
            got: list[Any] = []
            with contextlib.suppress(_Abandon), store.transaction() as tx:
                tx.put_many(mine)
                items = start(tx)
                if items is not None:
                    got.append(next(items))
                if not commit:
                    raise _Abandon
            if items is not None:
                _read_on(items, got, expect(mine), f"transaction {name} of its own writes")
            store.delete_range(b"o", b"p")
        _write_in_batches(store, [(k, b"old") for k in ENDED])
        in_block = {k: b"old" for k in ENDED}
        for name, start, expect in _ended_scans(b"e", b"f"):
            items = None
            got = []
            with contextlib.suppress(_Abandon), store.transaction() as tx:
                tx.delete(b"e0003")
                tx.delete_range(b"e0200", b"e0210")
                tx.put(b"e0005+", b"mine")
                tx.put(b"e0300", b"mine")
                tx.put(b"e0500+", b"mine")
                items = start(tx)
                if items is not None:
                    got.append(next(items))
                raise _Abandon
            if items is None:
                continue
            seen = dict(in_block)
            del seen[b"e0003"]
            for k in [k for k in seen if b"e0200" <= k < b"e0210"]:
                del seen[k]
            seen.update({b"e0005+": b"mine", b"e0300": b"mine", b"e0500+": b"mine"})
            _read_on(items, got, expect(sorted(seen.items())), f"discarded transaction {name}")

    def test_reads_of_an_ended_view_raise(self, store: Store) -> None:
        """After its block, every read of a snapshot's or transaction's view
        raises :class:`StoreClosed`: point reads, new scans, counts, new seekers,
        and the next seek of a seeker made in the block."""
        store.write([(b"a", b"1"), (b"b", b"2")])
        for _kind, begin in self.ended_views(store):
            with begin() as view:
                seeker = view.seeker(b"z")
                assert seeker.seek(b"a") == b"a"
            for call in _ended_reads(view, seeker):
                with pytest.raises(StoreClosed):
                    call()

    # -- lifecycle -----------------------------------------------------------

    def test_reopen_keeps_data(self, opened: Callable[..., Store]) -> None:
        store = opened()
        data = self.fill(store)
        store.delete_range(b"a", b"b")
        with store.transaction() as tx:
            tx.put(b"tx", b"1")
        expected = {k: v for k, v in data.items() if not b"a" <= k < b"b"} | {b"tx": b"1"}
        url = store.url
        store.close()
        if store.capabilities.persistent:
            again = opened(url)
            assert dict(again.scan()) == expected
        else:
            assert not store.capabilities.multi_process  # nothing to share
            assert list(opened().scan()) == []

    def test_use_after_close(self, opened: Callable[..., Store]) -> None:
        with opened() as store:
            store.put(b"a", b"1")
        store.close()  # idempotent
        calls: list[Callable[[], Any]] = [
            lambda: store.get(b"a"),
            lambda: list(store.scan()),
            lambda: store.put(b"a", b"2"),
            lambda: store.delete(b"a"),
            lambda: store.delete_range(b"", None),
            lambda: store.write([(b"a", b"2")]),
            lambda: store.transaction().__enter__(),
            lambda: store.snapshot().__enter__(),
            lambda: list(keys_in(store)),
            lambda: store.count(),
            lambda: store.count(b"", None, (0, 1)),
            lambda: store.seeker().seek(b"a"),
        ]
        for call in calls:
            with pytest.raises(StoreClosed):
                call()

    def test_a_seeker_taken_before_close_refuses_after_it(self, opened: Callable[..., Store]) -> None:
        """The memory store's seeker kept reading its map after close."""
        store = opened()
        store.write([(b"a", b"1"), (b"b", b"2")])
        seeker = store.seeker()
        assert seeker.seek(b"a") == b"a"
        store.close()
        with pytest.raises(StoreClosed):
            seeker.seek(b"b")

    def test_close_ends_running_scans(self, opened: Callable[..., Store]) -> None:
        store = opened()
        store.write([(b"a", b"1"), (b"b", b"2")])
        items = store.scan()
        assert next(items) == (b"a", b"1")
        store.close()
        # A scan may have read ahead; it must never raise anything but StoreClosed.
        with contextlib.suppress(StoreClosed):
            list(items)

    def test_key_size_limit(self, store: Store) -> None:
        limit = store.capabilities.max_key_size
        if limit is None:
            key = b"k" * 100_000
            store.put(key, b"v")
            assert store.get(key) == b"v"
            return
        store.put(b"k" * limit, b"v")
        assert store.get(b"k" * limit) == b"v"
        size = limit + 1
        with pytest.raises(KeyTooLarge) as info:
            store.put(b"k" * size, b"v")
        assert str(size) in str(info.value) and str(limit) in str(info.value)
        with store.transaction() as tx, pytest.raises(KeyTooLarge):
            tx.put(b"k" * size, b"v")
        assert store.get(b"k" * size) is None  # reading such a key finds nothing

    def test_watch_matches_its_capability(self, store: Store) -> None:
        """``capabilities.watch`` None: ``watch`` raises WatchUnsupported at once.
        Otherwise every change in the watched range is reported once, in order, an
        atomic batch as one revision, nothing outside the range, a delete of a
        missing key not at all."""
        if store.capabilities.watch is None:
            with pytest.raises(WatchUnsupported):
                store.watch([(b"a", b"b")])
            return
        with store.watch([(b"a", b"b"), (b"x", None)]) as watch:
            assert watch.wait_started(10)
            store.put(b"a1", b"1")
            store.put(b"c", b"outside")
            store.delete(b"a0")  # missing: no change
            store.delete(b"a1")
            store.write([(b"a2", b"2"), (b"x\xff", b"3"), (b"b", b"outside")])
            events: list[StoreEvent] = []
            for _ in range(4):
                event = watch.get(10)
                assert event is not None, f"only {len(events)} events: {events}"
                events.append(event)
            assert watch.get(0.2) is None
        assert [(e.kind, e.key, e.value) for e in events] == [
            ("put", b"a1", b"1"),
            ("delete", b"a1", None),
            ("put", b"a2", b"2"),
            ("put", b"x\xff", b"3"),
        ]
        revisions = [e.revision for e in events]
        assert revisions[0] < revisions[1] < revisions[2] == revisions[3]

    def test_errors_are_keyspace_errors(self, store: Store) -> None:
        assert issubclass(StoreClosed, KeyspaceError) and issubclass(StoreError, KeyspaceError)

    def test_sharing_between_processes(self, opened: Callable[..., Store]) -> None:
        store = opened()
        store.put(b"shared", b"yes")
        if not store.capabilities.persistent:
            assert not store.capabilities.multi_process
            return
        if store.capabilities.multi_process:
            code = (
                "import sys\nfrom keyspace.stores import open_store\n"
                "s = open_store(sys.argv[1]); print(s.get(b'shared')); s.close()"
            )
            out = subprocess.run(
                [sys.executable, "-c", code, store.url],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            assert out.stdout.strip() == "b'yes'"
        elif store.capabilities.shared_in_process:
            again = opened(store.url)  # shares the open engine: sees the same data
            assert again.get(b"shared") == b"yes"
            again.put(b"shared", b"again")
            assert store.get(b"shared") == b"again"
        else:
            with pytest.raises(StoreError):
                opened(store.url)

    # -- model-based ---------------------------------------------------------

    def test_matches_the_model(self, make_store: MakeStore) -> None:
        machine = type("Machine", (StoreModelMachine,), {"factory": staticmethod(make_store)})
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=self.model_examples,
                stateful_step_count=self.model_steps,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
            ),
        )
