"""The write-hook seam: a feature recorded in the store sees every committed change
(point puts and deletes, batches, range deletes, clears, drops, transactions) inside
the one atomic write, adds its own reserved writes to it, and is kept by every later
opener; its keys never show in the data."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

import keyspace
from keyspace._metadata import FEATURE_RECORD, feature_record_key
from keyspace._write_hooks import (
    UNKNOWN,
    Change,
    HookedStore,
    WriteHook,
    register_feature,
)
from keyspace.schemes import Scheme, Sublevel, TupleScheme
from keyspace.stores._base import ReadView, Store, WriteView

_TALLY = b"\xffkeyspace-test-tally"


class Tally(WriteHook):
    """Counts, in one reserved key, the keys that exist (a put of an absent key
    adds one, a delete of a present one takes one): right only if it sees every
    change with its old value, inside the write."""

    name = "tally"
    old_values = "all"
    expand_ranges = True
    seen: ClassVar[list[list[Change]]] = []

    def __init__(self, store: Store, scheme: Scheme, params: dict[str, Any]) -> None:
        self.fail = bool(params.get("fail", False))

    def params(self) -> dict[str, Any]:
        return {}

    def commit(
        self,
        view: WriteView,
        changes: Sequence[Change],
        ranges: Sequence[tuple[bytes, bytes | None]],
        latest: ReadView,
    ) -> None:
        assert not ranges
        Tally.seen.append(list(changes))
        raw = latest.get(_TALLY)
        count = 0 if raw is None else int(raw)
        for change in changes:
            assert change.old is not UNKNOWN
            count += (change.new is not None) - (change.old is not None)
        view.put(_TALLY, str(count).encode())
        if self.fail:
            raise RuntimeError("hook refused")


register_feature("tally", Tally)

ENGINES = ["memory", "lmdb", "sqlite", "leveldb", "rocksdb"]


def _url(engine: str, tmp: Path) -> str:
    return "memory:" if engine == "memory" else f"{engine}:///{tmp / 'db'}"


@pytest.fixture(params=ENGINES)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield _url(request.param, tmp_path)


def _tally(ks: keyspace.Keyspace) -> int:
    raw = ks.store.get(_TALLY)
    return 0 if raw is None else int(raw)


def _keys(ks: keyspace.Keyspace) -> int:
    return sum(1 for _ in ks.scope().subtree())


def test_every_write_kind_passes_through_the_hooks(url: str) -> None:
    ks = keyspace.open(url, tally=True)
    assert isinstance(ks.store, HookedStore)
    a, b = ks.scope("t", "a"), ks.scope("t", "b")
    a[b"1"] = b"x"
    a[b"1"] = b"y"  # an overwrite: no new key
    a[b"2"] = b"x"
    b.update({b"1": b"1", b"2": b"2", b"3": b"3"})
    assert _tally(ks) == _keys(ks) == 5
    del a[b"1"]
    a.discard(b"absent")
    assert _tally(ks) == _keys(ks) == 4
    with ks.transaction() as tx:
        tx.scope("t", "a")[b"9"] = b"9"
        tx.scope("t", "c")[b"9"] = b"9"
        tx.scope("t", "a")[b"9"] = b"again"  # one change of one key
        del tx.scope("t", "b")[b"1"]
    assert sorted((c.new or b"") for c in Tally.seen[-1]) == [b"", b"9", b"again"]
    assert _tally(ks) == _keys(ks) == 5
    b.clear()
    assert _tally(ks) == _keys(ks) == 3
    ks.scope("t", "c").drop()
    assert _tally(ks) == _keys(ks) == 2
    ks.scope("t").drop()
    assert _tally(ks) == _keys(ks) == 0
    # the reserved keys never show as data
    assert list(ks.scope().subtree()) == [] and len(ks.scope()) == 0 and ks.scopes() == []
    ks.close()


def test_a_failed_transaction_leaves_no_hook_write(url: str) -> None:
    ks = keyspace.open(url, tally=True)
    ks.scope("a")[b"k"] = b"v"
    with pytest.raises(ZeroDivisionError), ks.transaction() as tx:
        tx.scope("a")[b"j"] = b"v"
        1 / 0  # noqa: B018
    assert _tally(ks) == 1
    ks.close()


def test_a_hook_that_raises_discards_the_commit(url: str) -> None:
    ks = keyspace.open(url, tally={"fail": True})
    with pytest.raises(RuntimeError):
        ks.scope("a")[b"k"] = b"v"
    assert ks.scope("a").get(b"k") is None
    assert ks.store.get(_TALLY) is None
    ks.close()


def test_the_feature_is_recorded_with_the_first_write_and_kept(tmp_path: Path) -> None:
    url = f"lmdb:///{tmp_path / 'db'}"
    ks = keyspace.open(url, tally=True)
    key = feature_record_key(TupleScheme())
    assert key.startswith(FEATURE_RECORD) and ks.store.get(key) is None  # opening writes nothing
    ks.scope("a")[b"k"] = b"v"
    assert json.loads(ks.store.get(key) or b"") == {"tally": {}}
    ks.close()
    again = keyspace.open(url)  # no option: the record turns it on
    assert isinstance(again.store, HookedStore)
    again.scope("a")[b"j"] = b"v"
    assert _tally(again) == 2
    again.close()
    plain = keyspace.open(f"lmdb:///{tmp_path / 'other'}")
    assert not isinstance(plain.store, HookedStore)
    plain.close()


def test_reserved_keys_stay_out_of_a_byte_scheme_root(tmp_path: Path) -> None:
    """A Sublevel root's keys may be any bytes: its scans, len and clear leave the
    feature's keys out, and a key there is refused."""
    ks = keyspace.open(f"sqlite:///{tmp_path / 'db'}", scheme=Sublevel(), tally=True)
    root = ks.scope()
    root[b"a"] = b"1"
    ks.scope("x")[b"b"] = b"2"
    assert list(root.keys()) == [b"a"] and len(root) == 1
    assert ks.store.get(_TALLY) == b"2"
    with pytest.raises(keyspace.errors.ReservedKey):
        root[_TALLY] = b"x"
    root.clear()
    assert ks.store.get(_TALLY) == b"1"
    ks.close()


@pytest.mark.parametrize("record", [b"not json", b"[1, 2]", b'{"tally": 1}'])
def test_a_feature_record_spoilt_before_it_is_written_is_named_and_nothing_written(record: bytes) -> None:
    """The feature record read inside the write that adds this keyspace's features
    to it is read as at open: one that is not a JSON object of objects raises
    UnreadableRecord naming its key, and the write is discarded."""
    store = keyspace.stores.MemoryStore()
    with keyspace.attach(store, close_store=False) as plain:
        plain.scope("a")[b"j"] = b"v"  # the keyspace's records: its next opener reads them at open
    with keyspace.attach(store, tally=True) as ks:
        key = feature_record_key(ks.scheme)
        assert isinstance(ks.store, HookedStore)
        ks.store.inner.put(key, record)  # written by another program after this one opened the store
        with pytest.raises(keyspace.errors.UnreadableRecord, match="feature record"):
            ks.scope("a")[b"k"] = b"v"
        assert ks.scope("a").get(b"k") is None and ks.store.get(key) == record


@pytest.mark.parametrize("feature", ["changes", "accounting", "tally"])
def test_writes_through_a_transaction_after_its_block_are_refused(url: str, feature: str) -> None:
    """A scope of a hooked transaction, held after the block: its put, update,
    deletes and (with a change log) append raise StoreClosed and write nothing,
    as a transaction without a feature does; the puts no longer wait unseen in
    the ended transaction's pending dict."""
    ks = keyspace.open(url, **{feature: True})
    with ks.transaction() as tx:
        held = tx.scope("a")
        held[b"k1"] = b"in the block"
        other = tx.scope("b")  # bound in the block, first written after it
    writes = [
        lambda: held.__setitem__(b"k2", b"late"),
        lambda: other.__setitem__(b"k3", b"late"),
        lambda: held.update({b"k4": b"late", b"k5": b"late"}),
        lambda: held.__delitem__(b"k1"),
        lambda: held.discard(b"k1"),
        lambda: held.clear(),
    ]
    if feature == "changes":
        writes.append(lambda: held.append(b"late"))
    for write in writes:
        with pytest.raises(keyspace.StoreClosed, match="ended"):
            write()
    assert dict(ks.scope("a").items()) == {b"k1": b"in the block"}
    assert dict(ks.scope("b").items()) == {}
    ks.close()
