"""A transaction whose changes are all puts through the put route (LMDB) hands
the hooks a summary of them -- lowest and highest key, net keys and bytes -- and
accounting counts a commit into one scope from it alone, without a dict of the
keys; any other change (a delete, a bulk put, a range delete) drops the summary
and the keys are counted one by one. The counts equal a recount either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace import _accounting
from keyspace._accounting import Accounting, accounting_of


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[int]]:
    summaries: list[Any] = []
    per_key: list[int] = []
    commit, merged_deltas = Accounting.commit, _accounting.merged_deltas

    def spied_commit(self: Any, view: Any, changes: Any, ranges: Any, latest: Any) -> None:
        summaries.append(changes.summary)
        commit(self, view, changes, ranges, latest)

    def spied_merged(find: Any, merged: Any, old: Any) -> Any:
        per_key.append(len(merged))
        return merged_deltas(find, merged, old)

    monkeypatch.setattr(Accounting, "commit", spied_commit)
    monkeypatch.setattr(_accounting, "merged_deltas", spied_merged)
    return summaries, per_key


def test_puts_into_one_scope_are_counted_from_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", accounting=True) as ks:
        ks.scope("t", "u")[b"k00"] = b"old value"
        summaries, per_key = _spy(monkeypatch)
        with ks.transaction() as tx:
            scope = tx.scope("t", "u")
            for i in range(100):
                scope[b"k%02d" % i] = b"x" * i
            scope[b"k05"] = b"again"
        encode = ks.store.scheme.encode
        # k01..k99 new (k05's second value as long as its first), k00 from b"old value" to b""
        size = sum(len(encode(("t", "u"), b"k%02d" % i)) + i for i in range(1, 100)) - len(b"old value")
        assert summaries == [(encode(("t", "u"), b"k00"), encode(("t", "u"), b"k99"), 99, size)]
        assert per_key == []  # no dict of the keys was read
        hook = accounting_of(ks.store)
        assert hook is not None and hook.differences(ks.store) == []
        stats = ks.scope("t", "u").stats()
        assert stats.keys == 100 and ks.scope("t").stats().subtree_keys == 100


@pytest.mark.parametrize("other", ["delete", "update", "clear", "two scopes"])
def test_any_other_change_counts_key_by_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other: str
) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", accounting=True) as ks:
        ks.scope("t")[b"a"] = b"1"
        ks.scope("v")[b"b"] = b"2"
        summaries, _ = _spy(monkeypatch)
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for i in range(20):
                scope[b"k%d" % i] = b"x" * i
            if other == "delete":
                del scope[b"k3"]
            elif other == "update":
                scope.update((b"m%d" % i, b"y") for i in range(5))
            elif other == "clear":
                tx.scope("v").clear()
            else:
                tx.scope("v")[b"c"] = b"3"
        hook = accounting_of(ks.store)
        assert hook is not None and hook.differences(ks.store) == []
        if other in ("delete", "clear"):
            assert summaries == [None]
        elif other == "two scopes":  # a summary, but its keys span two scopes: counted key by key
            assert summaries[0] is not None
        expected = {"delete": 20, "update": 26, "clear": 21, "two scopes": 21}[other]
        assert ks.scope("t").stats().keys == expected
