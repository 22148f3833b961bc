"""A transaction's first write on etcd, where the scheme records commit in their
own batch (the engine caps its batches): nothing the transaction itself read is
changed by those records, nor by another keyspace's first write under another
raw prefix of the same store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _etcd import own_url

import keyspace
from keyspace.schemes import TupleScheme

pytestmark = pytest.mark.etcd


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("first-write")


@pytest.mark.parametrize("scheme", ["tuple", "asciihex", "scopehash", "length-prefixed"])
def test_read_delete_then_put_in_one_transaction(url: str, scheme: str) -> None:
    """A read (its scope's guard: the name registry, the layout), a delete (its
    record check) and the put's records (committed first) in one transaction on
    a fresh keyspace: the transaction does not conflict with itself."""
    with keyspace.open(url, scheme=scheme) as ks:
        with ks.transaction() as tx:
            scope = tx.scope("s")
            assert scope.get(b"k") is None
            scope.discard(b"k")
            scope[b"k"] = b"v"
        assert ks.scope("s")[b"k"] == b"v"
    with keyspace.open(url, scheme=scheme) as again:
        assert again.scope("s")[b"k"] == b"v"


def test_another_keyspace_first_write_meanwhile(url: str) -> None:
    """Keyspace B under raw prefix b"b" deletes in a transaction; keyspace A under
    b"a" makes its first write (its footprint entry) before B commits: B's
    transaction commits, and each keyspace keeps its record."""
    with (
        keyspace.open(url, scheme=TupleScheme(raw_prefix=b"a")) as a,
        keyspace.open(url, scheme=TupleScheme(raw_prefix=b"b")) as b,
    ):
        with b.transaction() as tx:
            tx.scope("s").discard(b"k")
            a.scope("s")[b"k"] = b"a"
            tx.scope("s")[b"k"] = b"b"
        assert a.scope("s")[b"k"] == b"a"
        assert b.scope("s")[b"k"] == b"b"
    with keyspace.open(url, scheme=TupleScheme(raw_prefix=b"b")) as b:
        assert b.scope("s")[b"k"] == b"b"


def _skew_paths(scheme: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    if scheme == "length-prefixed":
        return ("seed", "x"), ("a", "x"), ("b", "x")
    return ("seed",), ("a",), ("b",)


@pytest.mark.parametrize("scheme", ["tuple", "scopehash", "length-prefixed", "sublevel"])
def test_two_transactions_that_read_each_others_new_scope_do_not_both_commit(url: str, scheme: str) -> None:
    """T1 reads b[x] (absent) and writes a[x]; T2 reads a[x] (absent) and writes
    b[x]; both read before either commits. On ScopeHash and LengthPrefixed a scope
    with no key yet (no name registered, no leaf recorded) read nothing from the
    transaction, so neither commit was guarded by the other's key and both
    committed: a write skew. The second commit now raises TransactionConflict."""
    from keyspace.errors import TransactionConflict

    seed, a, b = _skew_paths(scheme)
    with keyspace.open(url, scheme=scheme) as ks:
        ks.scope(*seed)[b"s"] = b"1"  # the scheme recorded, the scopes still new
    ks1, ks2 = keyspace.open(url, scheme=scheme), keyspace.open(url, scheme=scheme)
    try:
        t1, t2 = ks1.transaction(), ks2.transaction()
        tx1, tx2 = t1.__enter__(), t2.__enter__()
        assert tx1.scope(*b).get(b"x") is None and tx2.scope(*a).get(b"x") is None
        tx1.scope(*a)[b"x"] = b"T1"
        tx2.scope(*b)[b"x"] = b"T2"
        t1.__exit__(None, None, None)
        with pytest.raises(TransactionConflict):
            t2.__exit__(None, None, None)
        assert ks1.scope(*a).get(b"x") == b"T1" and ks1.scope(*b).get(b"x") is None
        with ks2.transaction() as again:  # run again: it reads T1's write, and commits
            assert again.scope(*a).get(b"x") == b"T1"
            again.scope(*b)[b"x"] = b"T2"
        assert ks1.scope(*b).get(b"x") == b"T2"
    finally:
        ks1.close()
        ks2.close()
