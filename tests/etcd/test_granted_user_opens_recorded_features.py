"""A user granted one scope opens a keyspace whatever it records beside its scheme:
every open reads the record of directories in use and the record of the features
turned on (``changes=True``, ``accounting=True``), so :func:`keyspace.access.grant`
gives read access to both; without it the granted user's open was refused by the
server (:class:`AccessDenied`) as soon as either record could exist.

The cluster is one member of this module's own, with authentication on, stopped by
PID at the end."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from _etcd import ROOT_PASSWORD, auth_cluster

import keyspace
from keyspace import access
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
