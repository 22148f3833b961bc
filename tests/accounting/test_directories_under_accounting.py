"""A directory's contents lie under an allocated prefix no scope of the scheme
decodes to, so no counter counts them: with accounting on, ``len`` of a
directory still counts its keys (a cursor count), and its ``stats()`` says it
has no counts instead of answering zero."""

from __future__ import annotations

import pytest

import keyspace
from keyspace._accounting import accounting_of
from keyspace.errors import AccountingUnavailable, QuotaExceeded


def test_a_directory_keeps_its_len_and_refuses_stats_under_accounting() -> None:
    ks = keyspace.open("memory:", accounting=True)
    users = ks.directory("acme", "users")
    users.update({b"a": b"1", b"b": b"2", b"c": b"3"})
    scope = ks.scope("acme", "users")  # the scope of the same path: counted
    scope[b"x"] = b"y"
    assert len(users) == 3
    with ks.transaction() as tx:
        inside = tx.directories.open(("acme", "users"))
        inside[b"d"] = b"4"
        assert len(inside) == 4
    assert len(users) == 4
    with pytest.raises(AccountingUnavailable, match="directory"):
        users.stats()
    assert len(scope) == 1 and scope.stats().keys == 1
    counts = accounting_of(ks.store)
    assert counts is not None
    with ks.store.snapshot() as view:
        assert counts.differences(view) == []


def test_a_quota_of_a_path_holds_its_scope_not_a_directory_of_that_path() -> None:
    ks = keyspace.open("memory:", accounting=True)
    users = ks.directory("acme", "users")
    scope = ks.scope("acme", "users")
    scope[b"x"] = b"y"
    ks.set_quota(("acme",), keys=1)
    users.update({b"a": b"1", b"b": b"2"})  # not counted, so no quota holds it
    with pytest.raises(QuotaExceeded, match="/acme"):
        scope[b"z"] = b"1"
    assert len(users) == 2 and len(scope) == 1
    assert ks.scope("acme").stats().subtree_keys == 1
