"""On etcd a scope operation that owns its transaction runs it again when it loses a race.

``pop``, ``popitem`` and ``setdefault`` outside a transaction read then write in
one transaction of their own; etcd commits it only if nothing it read changed.
Another client changes the key between the read and the commit (forced: its
operation is made inside the first transaction, before it commits): the commit fails with
``TransactionConflict``, nothing written, and the operation runs its
transaction again, so its caller gets the answer of the serial order. The LMDB
counterpart: tests/faults/test_owned_transaction_conflicts.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from _etcd import own_url

import keyspace


@pytest.fixture
def etcd_url() -> Iterator[str]:
    yield from own_url("owned-conflicts")


@pytest.mark.parametrize("operation", ["pop", "popitem", "setdefault"])
def test_on_etcd_a_pop_that_loses_the_race_runs_again(etcd_url: str, operation: str) -> None:
    """On etcd another client changes the key between A's read and A's commit
    (the commit is guarded by what A read): A's transaction ends in a conflict,
    nothing written, and runs again, giving the answer of the serial order."""
    with keyspace.open(etcd_url) as a, keyspace.open(etcd_url) as b:
        a.scope("c").update({b"j": b"1", b"k": b"2"} if operation == "popitem" else {b"k": b"v"})
        if operation == "setdefault":
            a.scope("c").discard(b"k")
        store = a.store
        real = type(store).transaction
        begun: list[int] = []

        @contextmanager
        def interfered(self: Any) -> Iterator[Any]:
            with real(self) as tx:
                yield tx
                if self is store:
                    begun.append(1)
                    if len(begun) == 1:  # B commits between A's reads and A's commit
                        other = b.scope("c")
                        if operation == "setdefault":
                            other.setdefault(b"k", b"B")
                        else:
                            getattr(other, operation)(*([b"k"] if operation == "pop" else []))

        with mock.patch.object(type(store), "transaction", interfered):
            scope = a.scope("c")
            if operation == "pop":
                got: Any = scope.pop(b"k", None)
            elif operation == "popitem":
                got = scope.popitem()
            else:
                got = scope.setdefault(b"k", b"A")
        assert len(begun) == 2, begun  # the first attempt conflicted, the second committed
        expected = {"pop": None, "popitem": (b"j", b"1"), "setdefault": b"B"}[operation]
        assert got == expected
        left = dict(a.scope("c").items())
        assert left == ({b"k": b"B"} if operation == "setdefault" else {})
