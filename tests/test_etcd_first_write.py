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
