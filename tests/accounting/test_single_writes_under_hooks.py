"""A single put or delete of a keyspace with accounting on, on LMDB and SQLite,
is one engine transaction with the hooks run inside it (no hooked transaction
object), and the counters stay exact; a commit of many keys into one scope is
counted by sums of lengths, equal to the per-key count."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import _write_hooks
from keyspace._accounting import ScopeFinder, accounting_of, merged_deltas, scope_deltas
from keyspace._write_hooks import Change
from keyspace.schemes import TupleScheme


@pytest.fixture(params=["lmdb", "sqlite"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    d = tempfile.mkdtemp()
    try:
        yield f"lmdb://{d}/db" if request.param == "lmdb" else f"sqlite://{d}/db.sqlite"
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_single_writes_take_one_engine_transaction_and_count_exactly(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ks = keyspace.open(url, accounting=True)
    try:
        scope = ks.scope("t", "u")
        scope[b"first"] = b"v"  # the feature record is written with the first commit
        made: list[Any] = []
        real = _write_hooks.HookedTransaction.__init__

        def counted(self: Any, store: Any) -> None:
            made.append(store)
            real(self, store)

        monkeypatch.setattr(_write_hooks.HookedTransaction, "__init__", counted)
        scope[b"a"] = b"12345"
        scope[b"a"] = b"1"
        scope[b"b"] = b"xy"
        del scope[b"b"]
        ks.store.delete(ks.store.scheme.encode(("t", "u"), b"missing"))
        assert made == []
        hook = accounting_of(ks.store)
        assert hook is not None
        assert hook.differences(ks.store) == []
        stats = ks.scope("t", "u").stats()
        encode = ks.store.scheme.encode
        assert (stats.keys, stats.bytes) == (
            2,
            len(encode(("t", "u"), b"first")) + len(encode(("t", "u"), b"a")) + 2,
        )
    finally:
        ks.close()


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.binary(max_size=4), min_size=2, max_size=12, unique=True),
    data=st.data(),
)
def test_one_scope_commit_counts_as_the_per_key_count(keys: list[bytes], data: st.DataObject) -> None:
    scheme = TupleScheme()
    stored = [scheme.encode(("t",), k) for k in keys]
    new = {k: data.draw(st.binary(max_size=6)) for k in stored}
    kind = data.draw(st.sampled_from(["absent", "present", "mixed", "unread"]))
    old: dict[bytes, Any] = {}
    for k in stored:
        if kind == "present" or (kind == "mixed" and data.draw(st.booleans())):
            old[k] = data.draw(st.binary(max_size=6))
        elif kind != "unread":
            old[k] = None
    merged: dict[bytes, bytes | None] = dict(new)
    want = scope_deltas(ScopeFinder(scheme), [Change(k, old.get(k), v) for k, v in merged.items()])
    assert merged_deltas(ScopeFinder(scheme), merged, old) == want
