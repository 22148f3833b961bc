"""The counts are kept for the scheme that counted them: the feature record names
it, and a keyspace opened on the store with another scheme (possible where the
scheme keeps no record of its own, as Sublevel) is refused (SchemeMismatch)
instead of counting its keys into the same records under other scopes."""

from __future__ import annotations

import pytest

import keyspace
from keyspace._accounting import accounting_of, enable
from keyspace.errors import SchemeMismatch
from keyspace.schemes import AsciiHex, Delimited, Sublevel
from keyspace.stores import MemoryStore


@pytest.mark.parametrize("other", [AsciiHex(), Sublevel(separator="#"), Delimited(depth=1)])
def test_another_scheme_is_refused_on_a_store_counted_under_sublevel(other: object) -> None:
    store = MemoryStore()
    ks = keyspace.attach(store, scheme=Sublevel(), accounting=True, close_store=False)
    ks.scope("t")[b"a"] = b"1"
    before = list(store.scan(b"", None))
    with pytest.raises(SchemeMismatch, match="accounting"):
        keyspace.attach(store, scheme=other, close_store=False)  # type: ignore[arg-type]
    with pytest.raises(SchemeMismatch, match="accounting"):  # parameters asked do not lift it
        keyspace.attach(store, scheme=other, close_store=False, accounting={})  # type: ignore[arg-type]
    assert list(store.scan(b"", None)) == before
    again = keyspace.attach(store, scheme=Sublevel(), close_store=False)  # the same scheme: counts
    again.scope("t")[b"b"] = b"2"
    assert len(again.scope("t")) == 2
    counts = accounting_of(again.store)
    assert counts is not None
    with store.snapshot() as view:
        assert counts.differences(view) == []


def test_a_store_counted_by_enable_names_its_scheme_too() -> None:
    store = MemoryStore()
    plain = keyspace.attach(store, scheme=Sublevel(), close_store=False)
    plain.scope("t")[b"a"] = b"1"
    assert enable(store, Sublevel())
    with pytest.raises(SchemeMismatch, match="accounting"):
        keyspace.attach(store, scheme=AsciiHex(), close_store=False)
    assert len(keyspace.attach(store, scheme=Sublevel(), close_store=False).scope("t")) == 1
