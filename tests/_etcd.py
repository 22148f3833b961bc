"""The etcd test cluster, for every test that needs it: the one helper that finds
it (started by ``scripts/etcd-test-cluster.sh``, or by the test run itself) and
skips or fails the test, with the reason, when it cannot be had."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from keyspace.stores import open_store
from keyspace.stores._etcd_local import ClusterUnavailable, LocalCluster, shared_cluster


def etcd_cluster(*, needs_directory: str | None = None) -> LocalCluster:
    """The shared test cluster. Skips the test when etcd cannot be installed here,
    fails it when etcd is there but the cluster did not start. ``needs_directory``
    names a test that must restart members: it fails without the cluster
    directory (``KEYSPACE_ETCD_DIR``)."""
    try:
        found = shared_cluster()
    except ClusterUnavailable as exc:
        if exc.skip:
            pytest.skip(f"etcd unavailable: {exc.reason}")
        pytest.fail(f"etcd test cluster failed: {exc.reason}")
    if needs_directory is not None and found.directory is None:
        pytest.fail(f"the {needs_directory} needs KEYSPACE_ETCD_DIR (set by scripts/etcd-test-cluster.sh)")
    return found


def restartable_cluster(test: str) -> Iterator[LocalCluster]:
    """The shared test cluster for ``test``, which kills and restarts members (see
    :func:`etcd_cluster`'s ``needs_directory``): healthy when it begins, and waited
    for until healthy again when it ends, for the tests that follow."""
    found = etcd_cluster(needs_directory=test)
    found.wait_healthy()
    yield found
    found.wait_healthy()


def own_url(name: str) -> Iterator[str]:
    """The URL of the shared test cluster under a key prefix of the test's own
    (``name`` and a random suffix), every key under it removed when the test ends,
    its scheme record too."""
    cluster = etcd_cluster()
    made = f"etcd://{','.join(cluster.endpoints)}/{name}-{uuid.uuid4().hex}"
    yield made
    store = open_store(made)
    try:
        store.delete_range(b"", None)
    finally:
        store.close()
