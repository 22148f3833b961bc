"""A user granted one scope (:func:`keyspace.access.grant`) of a keyspace that
records features beside its scheme.

- It opens the keyspace whatever is recorded: every open reads the record of
  directories in use and the record of the features turned on
  (``changes=True``, ``accounting=True``), so the grant gives read access to
  both; without it the granted user's open was refused by the server
  (:class:`AccessDenied`) as soon as either record could exist.
- Under accounting it reads its scope but cannot write it, nor any counter
  record: every write updates the counter records of the scope's ancestors up
  to the root, which other tenants share, so the grant leaves them to root. The
  server refuses the write, nothing is written, and the counts and quotas stay
  as root set them.
- It appends (``Scope.append``) in its scopes: an append rewrites its scope's own
  sequencing key, which the grant gives with the scope (those of the subtree),
  and its appends sort with root's in commit order. It cannot append in another
  tenant's scope, nor with a read-only grant, nor write another tenant's
  sequencing key (which would make that tenant's appends conflict).

The cluster is one member of this module's own, with authentication on, stopped by
PID at the end."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest
from _etcd import ROOT_PASSWORD, auth_cluster

import keyspace
from keyspace import access
from keyspace._accounting import accounting_of
from keyspace._append import sequencing_key
from keyspace.testing.etcd_cluster import LocalCluster

pytestmark = [pytest.mark.etcd, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    yield from auth_cluster()


def _url(cluster: LocalCluster, user: str, password: str, prefix: str) -> str:
    return f"etcd://{user}:{password}@{','.join(cluster.endpoints)}/{prefix}"


@pytest.mark.parametrize("features", [{}, {"changes": True}, {"accounting": True}])
@pytest.mark.parametrize("directories", [False, True])
def test_a_granted_user_opens_and_reads_its_scope(
    cluster: LocalCluster, features: dict[str, bool], directories: bool
) -> None:
    prefix = f"features-{uuid.uuid4().hex}"
    user = f"u{uuid.uuid4().hex[:8]}"
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix), **features) as root:
        root.scope("tenant", "users")[b"alice"] = b"1"
        if directories:
            root.directory("tools")[b"k"] = b"v"
        access.grant(root, ("tenant",), user=user, password="pw")
    with keyspace.open(_url(cluster, user, "pw", prefix)) as mine:
        assert dict(mine.scope("tenant", "users").items()) == {b"alice": b"1"}
        with pytest.raises(keyspace.AccessDenied):
            mine.scope("other", "users").get(b"alice")


def test_a_granted_user_writes_neither_its_scope_nor_the_counters(cluster: LocalCluster) -> None:
    prefix = f"accounting-{uuid.uuid4().hex}"
    user = f"u{uuid.uuid4().hex[:8]}"
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix), accounting=True) as root:
        root.scope("tenant", "users")[b"alice"] = b"1"
        root.set_quota(("tenant",), keys=1)
        with _warned(root):
            access.grant(root, ("tenant",), user=user, password="pw")
    with keyspace.open(_url(cluster, user, "pw", prefix)) as mine:
        counts = accounting_of(mine.store)
        assert counts is not None  # the feature record is readable: the user's keyspace counts
        assert dict(mine.scope("tenant", "users").items()) == {b"alice": b"1"}
        with pytest.raises(keyspace.AccessDenied):
            mine.scope("tenant", "users")[b"bob"] = b"2"
        with pytest.raises(keyspace.AccessDenied):
            mine.store.inner.put(counts.counter_key(("tenant",)), bytes(48))  # no quota lifted by hand
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix)) as root:
        assert dict(root.scope("tenant", "users").items()) == {b"alice": b"1"}
        assert root.quotas() == {("tenant",): (1, None)}
        counts = accounting_of(root.store)
        assert counts is not None
        with root.store.snapshot() as view:
            assert counts.differences(view) == []


def test_a_granted_user_appends_in_its_scopes_and_nowhere_else(cluster: LocalCluster) -> None:
    """Each scope has its own sequencing key, under one range per subtree, which
    the grant gives with the scope: the user's appends and root's sort in commit
    order; another tenant's scope, its sequencing key and a read-only grant
    refuse an append with nothing written."""
    prefix = f"append-{uuid.uuid4().hex}"
    user, reader = f"u{uuid.uuid4().hex[:8]}", f"r{uuid.uuid4().hex[:8]}"
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix)) as root:
        made = [root.scope("tenant", "log").append(b"root's")]
        other = root.scope("other", "log").append(b"other's")
        with _warned(root):
            access.grant(root, ("tenant",), user=user, password="pw")
            access.grant(root, ("tenant",), user=reader, password="pw", read_only=True)
        other_key = sequencing_key(root.scope("other", "log"))
    with (
        keyspace.open(_url(cluster, user, "pw", prefix)) as mine,
        keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix)) as root,
    ):
        made.append(mine.scope("tenant", "log").append(b"tenant's"))
        made.append(root.scope("tenant", "log").append(b"root's again"))
        with mine.transaction() as tx:
            inside = tx.scope("tenant", "log").append(b"in a transaction")
            tx.scope("tenant", "log", "deeper").append(b"below")
        assert inside.user_version == 0
        with pytest.raises(keyspace.AccessDenied):
            mine.scope("other", "log").append(b"tenant's")
        with pytest.raises(keyspace.AccessDenied):
            mine.store.put(other_key, bytes(12))
    with keyspace.open(_url(cluster, reader, "pw", prefix)) as theirs:
        assert len(theirs.scope("tenant", "log")) == 4
        with pytest.raises(keyspace.AccessDenied):
            theirs.scope("tenant", "log").append(b"reader's")
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix)) as root:
        log = root.scope("tenant", "log")
        keys = list(log.keys())
        assert keys[:3] == made and keys == sorted(keys) and len(keys) == 4
        assert list(log.values()) == [b"root's", b"tenant's", b"root's again", b"in a transaction"]
        assert list(root.scope("tenant", "log", "deeper").values()) == [b"below"]
        assert dict(root.scope("other", "log").items()) == {other: b"other's"}


def _warned(ks: keyspace.Keyspace) -> AbstractContextManager[Any]:
    """The warning grant gives on a server that does not hold grants against every client."""
    old = bool(access.access_gaps(str(ks.store.status().get("version", ""))))
    return pytest.warns(access.ServerAccessWarning) if old else nullcontext()
