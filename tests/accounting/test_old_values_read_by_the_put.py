"""With accounting on LMDB the value a put replaces is read by the put itself
(``fast_replace``, ``replace_many``: one engine call), not by a point read before
it; with the change log a single put is one write transaction (no checked batch
and no read transaction before it). The counts and the log stay exact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace._accounting import accounting_of
from keyspace._changes import ChangeLog
from keyspace.stores.lmdb import LMDBStore
from keyspace.stores.lmdb import _txn as _lmdb_txn


def _spy_gets(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    asked: list[bytes] = []
    real = _lmdb_txn.LMDBTransaction.get

    def get(self: Any, key: bytes) -> bytes | None:
        asked.append(key)
        return real(self, key)

    monkeypatch.setattr(_lmdb_txn.LMDBTransaction, "get", get)
    return asked


def test_a_single_put_reads_the_old_value_by_the_put(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", accounting=True) as ks:
        scope = ks.scope("t", "u")
        scope[b"first"] = b"v"
        asked = _spy_gets(monkeypatch)
        scope[b"a"] = b"12345"
        scope[b"a"] = b"1"
        stored = ks.store.scheme.encode(("t", "u"), b"a")
        assert stored not in asked  # read by the put (fast_replace), not before it
        hook = accounting_of(ks.store)
        assert hook is not None and hook.differences(ks.store) == []
        assert scope.stats().keys == 2


def test_a_transaction_reads_the_old_values_by_its_puts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", accounting=True) as ks:
        ks.scope("t")[b"k1"] = b"old"
        asked = _spy_gets(monkeypatch)
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for i in range(50):
                scope[b"k%d" % i] = b"x" * i  # each through the put route: the engine's replace
            scope.update((b"m%d" % i, b"y" * i) for i in range(30))
        encode = ks.store.scheme.encode
        data = {encode(("t",), b"k%d" % i) for i in range(50)}
        data |= {encode(("t",), b"m%d" % i) for i in range(30)}
        assert not data & set(asked)
        hook = accounting_of(ks.store)
        assert hook is not None and hook.differences(ks.store) == []
        assert ks.scope("t").stats().keys == 80


def test_a_single_put_with_the_change_log_is_one_write_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[Any] = []
    real = LMDBStore.write_if

    def write_if(self: Any, *args: Any) -> bool:
        batches.append(args)
        return real(self, *args)

    monkeypatch.setattr(LMDBStore, "write_if", write_if)
    with keyspace.open(f"lmdb://{tmp_path}/db", changes=True) as ks:
        scope = ks.scope("t")
        scope[b"first"] = b"v"
        batches.clear()
        before = ks.store.hook("changes")
        assert isinstance(before, ChangeLog)
        start = before.last()
        scope[b"a"] = b"1"
        del scope[b"a"]
        scope[b"b"] = b"2"
        assert batches == []
        assert before.last() == start + 3
        _, entries = before.read_since(start)
        encode = ks.store.scheme.encode
        assert [(seq - start, key, value) for seq, key, value in entries] == [
            (1, encode(("t",), b"a"), b"1"),
            (2, encode(("t",), b"a"), None),
            (3, encode(("t",), b"b"), b"2"),
        ]


def test_trimming_the_change_log_reads_no_part_without_an_age_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trim every TRIM_EVERY commits reads no part where none can be trimmed
    (every part before the retention's first is gone already: the trimmed mark
    says so) and otherwise their keys only, without ``max_age``: it read the
    values of up to TRIM_BATCH parts each time (a large commit's part runs to
    megabytes), though no value decides anything then."""
    from keyspace import _changes

    with keyspace.open(f"lmdb://{tmp_path}/db", changes={"retention": 1000}) as ks:
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for i in range(2000):
                scope[b"k%d" % i] = b"x" * 500  # one part of about a megabyte
        log = ks.store.hook("changes")
        assert isinstance(log, ChangeLog)
        part = log.part_key(log.last())
        read: list[bytes] = []
        for cls in (_lmdb_txn.LMDBTransaction, LMDBStore):  # the transaction's reads, the store's
            real_scan, real_pages = cls.scan, cls.read_pages

            def read_pages(
                self: Any,
                ranges: Any,
                reverse: bool = False,
                limit: Any = None,
                keys_only: bool = False,
                cut: int = 0,
                _p: Any = real_pages,
            ) -> Any:
                if not keys_only and any(lo <= part < (hi or b"\xff" * 64) for lo, hi in ranges):
                    read.append(ranges[0][0])  # values read (keys only: the keys alone)
                return _p(self, ranges, reverse, limit, keys_only, cut)

            def scan(
                self: Any, start: bytes, stop: bytes | None, *args: Any, _s: Any = real_scan, **kw: Any
            ) -> Any:
                if start <= part < (stop or b"\xff" * 64):
                    read.append(start)
                return _s(self, start, stop, *args, **kw)

            monkeypatch.setattr(cls, "scan", scan)
            monkeypatch.setattr(cls, "read_pages", read_pages)
        real_get = LMDBStore.get

        def store_get(self: Any, key: bytes) -> bytes | None:
            if key == part:
                read.append(key)
            return real_get(self, key)  # type: ignore[no-any-return]

        monkeypatch.setattr(LMDBStore, "get", store_get)
        real_enter = _lmdb_txn.LMDBTransaction.__enter__

        def enter(self: Any) -> Any:  # the transaction's get is the engine's call, set as it begins
            view = real_enter(self)
            inner = view.get

            def get(key: bytes) -> bytes | None:
                if key == part:
                    read.append(key)
                return inner(key)  # type: ignore[no-any-return]

            view.get = get
            return view

        monkeypatch.setattr(_lmdb_txn.LMDBTransaction, "__enter__", enter)
        for i in range(2 * _changes.TRIM_EVERY):
            ks.scope("t")[b"s%d" % i] = b"v"
        assert read == []
        assert log.read_since(log.last() - 1)[1][0][1:] == (ks.store.scheme.encode(("t",), b"s63"), b"v")
