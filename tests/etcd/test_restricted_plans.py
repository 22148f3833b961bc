"""The etcd commit plans of a user restricted by ``keyspace grant`` to one scope:
every compare, nested operation and re-read a commit sends stays inside what the
user may touch, so the server never refuses the user's own transactions on its
own scope, and nothing reaches the scope next door.

Covered: a scan stopped early and one run to its end (the guarded part of a
range), a scope cleared then looked at (the gaps the scan reads, compares joined
across the deleted ranges), a commit whose answer was lost (the re-read: every
written key, the key written last of each deleted range), and a delete of more
than 128 ranges, nested only where the server checks the permissions of nested
transactions (refused whole otherwise). The cluster is one member of this
module's own, with authentication on, stopped by PID at the end (free ports)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

import pytest
from _etcd import ROOT_PASSWORD, LosingKV, auth_cluster

import keyspace
from keyspace import access
from keyspace.errors import CommitOutcomeUnknown, TransactionTooLarge
from keyspace.stores.etcd._versions import nested_txn_checked
from keyspace.testing.etcd_cluster import LocalCluster

pytestmark = [
    pytest.mark.etcd,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore::keyspace.access.ServerAccessWarning"),
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    yield from auth_cluster()


def _url(cluster: LocalCluster, user: str, password: str) -> str:
    return f"etcd://{user}:{password}@{','.join(cluster.endpoints)}/restricted"


@pytest.fixture
def root(cluster: LocalCluster) -> Iterator[keyspace.Keyspace]:
    ks = keyspace.open(_url(cluster, "root", ROOT_PASSWORD))
    ks.scope("alice").drop()
    ks.scope("alicf").drop()
    ks.scope("alice").update({b"k%03d" % i: b"v" for i in range(100)})
    ks.scope("alice").update({b"k%03d" % i: b"v" for i in range(100, 200)})
    ks.scope("alicf")[b"next door"] = b"untouched"
    access.grant(ks, ("alice",), user="alice", password="alice-pw")
    yield ks
    ks.close()


@pytest.fixture
def alice(cluster: LocalCluster, root: keyspace.Keyspace) -> Iterator[keyspace.Keyspace]:
    ks = keyspace.open(_url(cluster, "alice", "alice-pw"))
    yield ks
    ks.close()


def _next_door(root: keyspace.Keyspace) -> dict[bytes, bytes]:
    return dict(root.scope("alicf").items())


def test_partial_and_whole_scans_commit(alice: keyspace.Keyspace, root: keyspace.Keyspace) -> None:
    with alice.transaction() as tx:
        scope = tx.scope("alice")
        first = [k for k, _ in islice(scope.items(), 3)]
        last = [k for k, _ in islice(scope.items(reverse=True), 2)]
        assert len(list(scope.keys(start=b"k190"))) == 10  # run to its end
        scope[b"seen"] = b"%d %d" % (len(first), len(last))
    assert alice.scope("alice")[b"seen"] == b"3 2"
    assert _next_door(root) == {b"next door": b"untouched"}


def test_a_scope_cleared_then_looked_at_commits(alice: keyspace.Keyspace, root: keyspace.Keyspace) -> None:
    with alice.transaction() as tx:
        scope = tx.scope("alice")
        for i in range(0, 200, 2):  # 100 single-key deletes (one level, no nesting)
            del scope[b"k%03d" % i]
        scope.clear()
        assert len(scope) == 0
        scope[b"new"] = b"1"
    assert dict(alice.scope("alice").items()) == {b"new": b"1"}
    assert _next_door(root) == {b"next door": b"untouched"}


@pytest.mark.parametrize("meanwhile", [False, True])
def test_a_lost_answer_is_re_read_inside_the_grant(
    alice: keyspace.Keyspace, root: keyspace.Keyspace, meanwhile: bool
) -> None:
    """The re-read reads alice's written keys and deleted ranges only: found
    applied, or, where root wrote into the range meanwhile, CommitOutcomeUnknown
    (never AccessDenied, never a retry over root's write)."""

    def root_writes() -> None:
        if meanwhile:
            root.scope("alice")[b"k150"] = b"root's"

    conn = alice.store._conn  # type: ignore[attr-defined]
    conn.kv = kv = LosingKV(conn.kv, root_writes)
    if meanwhile:
        with pytest.raises(CommitOutcomeUnknown), alice.transaction() as tx:
            scope = tx.scope("alice")
            assert scope[b"k000"] == b"v"
            scope.clear()
            scope[b"new"] = b"1"
        assert root.scope("alice")[b"k150"] == b"root's"
    else:
        with alice.transaction() as tx:
            scope = tx.scope("alice")
            assert scope[b"k000"] == b"v"
            scope.clear()
            scope[b"new"] = b"1"
        assert dict(root.scope("alice").items()) == {b"new": b"1"}
    assert kv.lost == 1
    assert _next_door(root) == {b"next door": b"untouched"}


def test_a_delete_of_130_ranges_nests_only_where_the_server_checks_it(
    alice: keyspace.Keyspace, root: keyspace.Keyspace
) -> None:
    version = str(root.store.status()["version"])  # type: ignore[attr-defined]
    before = dict(root.scope("alice").items())

    def run() -> None:
        with alice.transaction() as tx:
            scope = tx.scope("alice")
            for i in range(130):
                scope.discard(b"k%03d" % i)  # blind: no compare
            scope[b"new"] = b"1"

    if nested_txn_checked(version):
        run()
        assert len(dict(root.scope("alice").items())) == 71
    else:
        with pytest.raises(TransactionTooLarge, match="GHSA-rfx7-8w68-q57q"):
            run()
        assert dict(root.scope("alice").items()) == before
    assert _next_door(root) == {b"next door": b"untouched"}
