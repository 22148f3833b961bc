"""A transaction of puts alone through the put route (LMDB: with the change log
alone the route puts at once and reads no value before, with accounting it
reads them) is logged from the seam's lists of keys and values, with no dict
of the keys made, a key put twice stored twice; a transaction that deletes is
logged from the merged changes. Either way the log reads as one entry per
changed key, its last value, in the order first written; a key put and deleted
in one transaction is logged as a delete only where it was there before."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace._changes import ChangeLog
from keyspace._write_hooks import ChangeList


@contextmanager
def _logged(tmp_path: Path, **options: Any) -> Iterator[tuple[keyspace.Keyspace, ChangeLog, int]]:
    """A keyspace on LMDB with the change log on (and ``options``) whose scope
    ``t`` holds ``b"there"``: it, its log and the log's last sequence number."""
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True, **options) as ks:
        ks.scope("t")[b"there"] = b"before"
        log = ks.store.hook("changes")
        assert isinstance(log, ChangeLog)
        yield ks, log, log.last()


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[list[bool], list[bool]]:
    """Per commit the hooks saw: whether it came with the route's lists, and
    whether it said it may hold a delete."""
    fresh: list[bool] = []
    deletes: list[bool] = []
    real = ChangeList.columns

    def spied(self: ChangeList) -> Any:
        got = real(self)
        fresh.append(got is not None)
        deletes.append(self.deletes)
        return got

    monkeypatch.setattr(ChangeList, "columns", spied)
    return fresh, deletes


@pytest.mark.parametrize(
    "kind", ["new keys", "a key twice", "over a value", "with a delete", "with accounting"]
)
def test_the_log_holds_each_changed_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    with _logged(tmp_path, accounting=kind == "with accounting") as (ks, log, start):
        fresh, deletes = _spy(monkeypatch)
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for i in range(10):
                scope[b"k%d" % i] = b"v%d" % i
            if kind == "a key twice":
                scope[b"k3"] = b"again"
            elif kind == "over a value":
                scope[b"there"] = b"after"
            elif kind == "with a delete":
                del scope[b"there"]
        encode = ks.store.scheme.encode
        expected = [
            (encode(("t",), b"k%d" % i), b"again" if kind == "a key twice" and i == 3 else b"v%d" % i)
            for i in range(10)
        ]
        if kind == "over a value":
            expected.append((encode(("t",), b"there"), b"after"))
        elif kind == "with a delete":
            expected.append((encode(("t",), b"there"), None))
        _, entries = log.read_since(start)
        assert [(key, value) for _, key, value in entries] == expected
        assert {seq for seq, _, _ in entries} == {start + 1}
        assert fresh == [kind != "with a delete"]
        # a commit of puts alone says so: the log reads no value to find a delete
        assert deletes == [kind == "with a delete"]


def test_puts_read_back_mid_transaction_are_all_logged(tmp_path: Path) -> None:
    """A scope's stats read inside the transaction (which puts the puts so far in
    the transaction's dicts) leaves every put of it in the log, not only those
    made after the read."""
    with _logged(tmp_path, accounting=True) as (ks, log, start):
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for i in range(5):
                scope[b"k%d" % i] = b"v"
            assert scope.stats().keys == 6
            for i in range(5, 10):
                scope[b"k%d" % i] = b"v"
        _, entries = log.read_since(start)
        encode = ks.store.scheme.encode
        assert [key for _, key, _ in entries] == [encode(("t",), b"k%d" % i) for i in range(10)]
        assert ks.scope("t").stats().keys == 11


@pytest.mark.parametrize("accounting", [False, True], ids=["changes alone", "with accounting"])
@pytest.mark.parametrize("how", ["del", "clear"])
def test_a_key_put_and_deleted_in_one_transaction_is_a_delete_only_where_it_was_there(
    tmp_path: Path, accounting: bool, how: str
) -> None:
    """The put route writes over a key without reading it (the change log alone):
    a delete of it later in the transaction still finds whether it was there
    before the transaction, so a key new to it is not logged at all."""
    with _logged(tmp_path, accounting=accounting) as (ks, log, start):
        with ks.transaction() as tx:
            scope = tx.scope("t")
            scope[b"there"] = b"over"
            scope[b"new"] = b"fresh"
            if how == "del":
                del scope[b"there"]
                del scope[b"new"]
            else:
                scope.clear()
        _, entries = log.read_since(start)
        assert [(key, value) for _, key, value in entries] == [
            (ks.store.scheme.encode(("t",), b"there"), None)
        ]
        assert list(ks.scope("t").items()) == []


def test_a_key_put_twice_is_stored_twice_and_read_once(tmp_path: Path) -> None:
    """The route's lists hold a key put twice twice: the part stores both puts,
    and every reader of the log sees the key once, with its last value."""
    with _logged(tmp_path) as (ks, log, start):
        with ks.transaction() as tx:
            scope = tx.scope("t")
            scope[b"a"] = b"1"
            scope[b"b"] = b"2"
            scope[b"a"] = b"3"
        [(_, raw)] = list(ks.store.inner.scan(log.part_key(start + 1), log.part_key(start + 2)))
        assert raw.count(ks.store.scheme.encode(("t",), b"a")) == 2
        _, entries = log.read_since(start)
        encode = ks.store.scheme.encode
        assert [(key, value) for _, key, value in entries] == [
            (encode(("t",), b"a"), b"3"),
            (encode(("t",), b"b"), b"2"),
        ]
