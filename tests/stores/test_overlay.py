"""The overlay transaction of the engines without native transactions (memory,
LevelDB, RocksDB): read-your-writes through every write path, snapshot reads,
atomic commit, abort, the end of the fast put, and the lazily sorted pending keys
against a dict model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import MethodType
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import StoreClosed
from keyspace.schemes import Sublevel
from keyspace.stores import LevelDBStore, MemoryStore, RocksDBStore, Store, _overlay
from keyspace.stores._base import WriteView, settled
from keyspace.stores._overlay import OverlayTransaction

ENGINES = ["memory", "leveldb", "rocksdb"]


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made: Store
    if request.param == "memory":
        made = MemoryStore()
    elif request.param == "leveldb":
        made = LevelDBStore(tmp_path / "db")
    else:
        made = RocksDBStore(tmp_path / "db")
    yield made
    made.close()


def _fast_put(tx: WriteView) -> Callable[[bytes, bytes], object]:
    put = tx.put
    # no key check on these engines: the log's (or the dict's) own C put, translated
    assert not isinstance(put, MethodType)
    return put


def test_reads_see_every_write_path(store: Store) -> None:
    store.put(b"b", b"old")
    store.put(b"z", b"kept")
    with store.transaction() as tx:
        assert isinstance(tx, OverlayTransaction)
        _fast_put(tx)(b"a", b"1")
        tx.put(b"b", b"2")
        assert tx.put_many([(b"c", b"x"), (b"d", b"4"), (b"c", b"3")]) == 3
        assert [tx.get(k) for k in (b"a", b"b", b"c", b"d", b"z")] == [b"1", b"2", b"3", b"4", b"kept"]
        assert list(tx.scan()) == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3"), (b"d", b"4"), (b"z", b"kept")]
        _fast_put(tx)(b"bb", b"5")  # a key put after the first scan sorted the pending keys
        assert list(tx.scan(b"b", b"c")) == [(b"b", b"2"), (b"bb", b"5")]
        assert list(tx.scan(reverse=True, limit=2)) == [(b"z", b"kept"), (b"d", b"4")]
        assert store.get(b"a") is None and store.get(b"b") == b"old"  # nothing before commit
    assert list(store.scan()) == [
        (b"a", b"1"),
        (b"b", b"2"),
        (b"bb", b"5"),
        (b"c", b"3"),
        (b"d", b"4"),
        (b"z", b"kept"),
    ]


def test_deletes_and_puts_in_order(store: Store) -> None:
    store.write([(b"a", b"0"), (b"b", b"0"), (b"c", b"0"), (b"d", b"0")])
    with store.transaction() as tx:
        tx.delete(b"a")
        _fast_put(tx)(b"a", b"again")  # put after its delete: the put stays
        _fast_put(tx)(b"b", b"1")
        tx.delete(b"b")  # delete after the put: gone
        assert list(tx.scan()) == [(b"a", b"again"), (b"c", b"0"), (b"d", b"0")]
        tx.delete_range(b"c", None)
        _fast_put(tx)(b"cc", b"2")  # put after the range delete that covers it
        assert tx.get(b"c") is None and tx.get(b"cc") == b"2" and tx.get(b"b") is None
        assert list(tx.scan()) == [(b"a", b"again"), (b"cc", b"2")]
    assert list(store.scan()) == [(b"a", b"again"), (b"cc", b"2")]


def test_reads_come_from_the_snapshot(store: Store) -> None:
    store.put(b"k", b"before")
    with store.transaction() as tx:
        assert tx.get(b"k") == b"before"
        store.put(b"k", b"outside")  # a write outside transactions is not held back
        store.put(b"new", b"outside")
        assert tx.get(b"k") == b"before" and tx.get(b"new") is None
        assert list(tx.scan()) == [(b"k", b"before")]
        _fast_put(tx)(b"mine", b"1")
    assert store.get(b"k") == b"outside" and store.get(b"mine") == b"1"


def test_a_scan_sees_the_transaction_as_it_began(store: Store) -> None:
    store.write([(b"a", b"0"), (b"c", b"0")])
    with store.transaction() as tx:
        _fast_put(tx)(b"b", b"1")
        items = tx.scan()
        assert next(items) == (b"a", b"0")
        _fast_put(tx)(b"c", b"new")
        _fast_put(tx)(b"d", b"new")
        tx.delete(b"b")
        assert list(items) == [(b"b", b"1"), (b"c", b"0")]
        assert list(tx.scan()) == [(b"a", b"0"), (b"c", b"new"), (b"d", b"new")]


def test_abort_drops_everything(store: Store) -> None:
    store.put(b"k", b"v")
    with pytest.raises(RuntimeError, match="boom"), store.transaction() as tx:
        _fast_put(tx)(b"a", b"1")
        tx.put_many([(b"b", b"2")])
        tx.delete(b"k")
        tx.delete_range(b"", None)
        raise RuntimeError("boom")
    assert list(store.scan()) == [(b"k", b"v")]


def test_a_put_after_the_end_is_refused(store: Store) -> None:
    for end in ("commit", "discard"):
        tx = store.transaction()
        assert isinstance(tx, OverlayTransaction)
        fast = _fast_put(tx)
        fast(b"in", end.encode())
        tx.commit() if end == "commit" else tx.discard()
        with pytest.raises(StoreClosed, match="ended") as raised:
            fast(b"late", b"1")
        assert isinstance(raised.value.__cause__, ReferenceError)  # the log's (or dict's) own refusal
    assert list(store.scan()) == [(b"in", b"commit")]


def test_a_scope_put_after_the_block_is_refused(tmp_path: Path) -> None:
    ks = keyspace.open(f"leveldb://{tmp_path}/db", scheme=Sublevel())
    with ks.transaction() as tx:
        scope = tx.scope("t")
        scope[b"a"] = b"1"  # binds the transaction's fast put
    with pytest.raises(StoreClosed, match="ended"):
        scope[b"b"] = b"2"
    assert dict(ks.scope("t").items()) == {b"a": b"1"}
    ks.close()


def test_write_settles_a_batch_in_order() -> None:
    assert settled([(b"a", b"1"), (b"a", None), (b"b", None), (b"b", b"2")]) == ([b"a"], {b"b": b"2"})
    assert settled([(b"a", b"1"), (b"a", b"2")]) == ([], {b"a": b"2"})
    store = MemoryStore()
    store.put(b"a", b"0")
    store.write([(b"a", b"1"), (b"a", None), (b"b", None), (b"b", b"2")])
    assert list(store.scan()) == [(b"b", b"2")]


_key = st.binary(max_size=2)
_step = st.one_of(
    st.tuples(st.sampled_from(["put", "fast_put", "delete"]), _key, st.binary(max_size=2)),
    st.tuples(st.just("put_many"), st.lists(st.tuples(_key, st.binary(max_size=2)), max_size=4)),
    st.tuples(st.just("delete_range"), _key, st.one_of(st.none(), _key)),
    st.tuples(st.just("scan"), _key, st.one_of(st.none(), _key), st.booleans()),
    st.tuples(st.just("get"), _key),
)


@settings(max_examples=200, deadline=None)
@given(
    before=st.dictionaries(_key, st.binary(max_size=2), max_size=6),
    steps=st.lists(_step, max_size=20),
    commit=st.booleans(),
    # with the C put log where it is built, and without it
    log=st.sampled_from([True, False] if _overlay.PairLog is not None else [False]),
)
def test_matches_a_dict_model(
    before: dict[bytes, bytes], steps: list[tuple[Any, ...]], commit: bool, log: bool
) -> None:
    """Any sequence of writes and reads, with the C put log (puts join the pending
    dict at the next read; a transaction that only puts commits the log) or
    without it (puts go to the dict at once): reads and the committed store are
    the model's."""
    store = MemoryStore()
    store.write(list(before.items()))
    model = dict(before)
    with patch.object(_overlay, "PairLog", _overlay.PairLog if log else None):
        tx = store.transaction()
    fast = _fast_put(tx)
    for step in steps:
        kind = step[0]
        if kind == "put":
            tx.put(step[1], step[2])
            model[step[1]] = step[2]
        elif kind == "fast_put":
            fast(step[1], step[2])
            model[step[1]] = step[2]
        elif kind == "delete":
            tx.delete(step[1])
            model.pop(step[1], None)
        elif kind == "put_many":
            pairs = step[1]
            assert tx.put_many(pairs) == len(pairs)
            model.update(pairs)
        elif kind == "delete_range":
            lo, hi = step[1], step[2]
            tx.delete_range(lo, hi)
            for k in [k for k in model if lo <= k and (hi is None or k < hi)]:
                del model[k]
        elif kind == "scan":
            lo, hi, reverse = step[1], step[2], step[3]
            want = sorted(
                ((k, v) for k, v in model.items() if lo <= k and (hi is None or k < hi)),
                reverse=reverse,
            )
            assert list(tx.scan(lo, hi, reverse=reverse)) == want
        else:
            assert tx.get(step[1]) == model.get(step[1])
    if commit:
        tx.commit()
        assert dict(store.scan()) == model
    else:
        tx.discard()
        assert dict(store.scan()) == before


def test_a_transaction_that_only_puts_stores_the_last_value_of_each_key(store: Store) -> None:
    """Puts, fast puts and batches of one key, never read in the transaction: the
    commit stores the last value (the log is committed as written, in order)."""
    store.put(b"k", b"old")
    with store.transaction() as tx:
        fast = _fast_put(tx)
        fast(b"k", b"1")
        tx.put(b"k", b"2")
        assert tx.put_many([(b"j", b"x"), (b"k", b"3"), (b"j", b"y")]) == 3
        fast(b"i", b"4")
        fast(b"k", b"5")
    assert list(store.scan()) == [(b"i", b"4"), (b"j", b"y"), (b"k", b"5")]


def test_puts_logged_after_a_read_are_seen_and_kept(store: Store) -> None:
    """A read joins the log to the pending puts; puts after it are logged again
    and seen by the next read, and the commit stores both."""
    with store.transaction() as tx:
        fast = _fast_put(tx)
        fast(b"a", b"1")
        assert tx.get(b"a") == b"1"
        fast(b"a", b"2")
        fast(b"b", b"3")
        assert list(tx.scan()) == [(b"a", b"2"), (b"b", b"3")]
        fast(b"c", b"4")
    assert list(store.scan()) == [(b"a", b"2"), (b"b", b"3"), (b"c", b"4")]


def test_a_read_among_the_first_writes_leaves_the_later_puts_as_logged(store: Store) -> None:
    """A bulk load whose transaction read once among its first writes (a scope's
    first write checks the store's records) commits its puts as they were
    logged, after the puts the read had joined: no dict of every put is made,
    and a key put again in the log is written twice, the later winning."""
    handed: list[list[bytes]] = []
    apply = type(store)._apply

    def spy(self: Any, ranges: Any, deletes: Any, keys: Any, values: Any) -> None:
        handed.append(keys)
        apply(self, ranges, deletes, keys, values)

    with patch.object(type(store), "_apply", spy), store.transaction() as tx:
        _fast_put(tx)(b"a", b"1")
        assert tx.get(b"a") == b"1"
        tx.put_many([(b"c", b"3"), (b"a", b"2"), (b"b", b"2")])
    assert handed == [[b"a", b"a", b"b", b"c"]]
    assert list(store.scan()) == [(b"a", b"2"), (b"b", b"2"), (b"c", b"3")]
