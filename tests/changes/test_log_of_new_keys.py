"""A transaction that only puts keys absent before it, through the put route
(LMDB, where a hook reads every value before: with accounting on), is logged
from the seam's lists of keys and values, with no dict of the keys made; a
transaction that puts a key twice, or over a value there before, or deletes,
or runs without the route (the change log alone), is logged from the merged
changes: either way the log holds one entry per changed key, its last value,
in the order first written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace._changes import ChangeLog
from keyspace._write_hooks import ChangeList


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[list[bool], list[bool]]:
    """Per commit the hooks saw: whether it came with the route's lists, and
    whether it said it may hold a delete."""
    fresh: list[bool] = []
    deletes: list[bool] = []
    real = ChangeList.fresh

    def spied(self: ChangeList) -> Any:
        got = real(self)
        fresh.append(got is not None)
        deletes.append(self.deletes)
        return got

    monkeypatch.setattr(ChangeList, "fresh", spied)
    return fresh, deletes


@pytest.mark.parametrize(
    "kind", ["new keys", "a key twice", "over a value", "with a delete", "with accounting"]
)
def test_the_log_holds_each_changed_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    options: dict[str, Any] = {"changes": True, "accounting": kind == "with accounting"}
    with keyspace.open(f"lmdb://{tmp_path}/db", **options) as ks:
        ks.scope("t")[b"there"] = b"before"
        log = ks.store.hook("changes")
        assert isinstance(log, ChangeLog)
        start = log.last()
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
        assert fresh == [kind == "with accounting"]
        # a commit of puts alone says so: the log reads no value to find a delete
        assert deletes == [kind == "with a delete"]


def test_puts_read_back_mid_transaction_are_all_logged(tmp_path: Path) -> None:
    """A scope's stats read inside the transaction (which puts the puts so far in
    the transaction's dicts) leaves every put of it in the log, not only those
    made after the read."""
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True, accounting=True) as ks:
        ks.scope("t")[b"there"] = b"before"
        log = ks.store.hook("changes")
        assert isinstance(log, ChangeLog)
        start = log.last()
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
