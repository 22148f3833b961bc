"""The etcd test cluster, for every test that needs it: the one helper that finds
it (started by ``scripts/etcd-test-cluster.sh``, or by the test run itself) and
skips or fails the test, with the reason, when it cannot be had; and what the etcd
tests share to look at a client's requests: a model of etcd's compares, recorders
of the write requests a client sends, and a commit whose answer is lost."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import pytest

from keyspace.errors import EtcdUnavailable
from keyspace.stores import open_store
from keyspace.stores.etcd import EtcdStore
from keyspace.stores.etcd._proto import kv_pb2 as pb
from keyspace.testing.etcd_cluster import (
    ClusterUnavailable,
    LocalCluster,
    ServerTLS,
    shared_cluster,
    start_cluster,
)

ROOT_PASSWORD = "root-pw"
"""The root password of :func:`auth_cluster`."""


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


@contextlib.contextmanager
def own_cluster(members: int, **options: Any) -> Iterator[LocalCluster]:
    """A cluster of the caller's own, apart from the shared one (``members``
    members; ``options`` as :func:`start_cluster` takes them), stopped when the
    block ends; skips the test where etcd cannot be had."""
    try:
        found = start_cluster(members, **options)
    except ClusterUnavailable as exc:
        if exc.skip:
            pytest.skip(f"etcd unavailable: {exc.reason}")
        raise
    try:
        yield found
    finally:
        found.stop()


def auth_cluster(
    port_env: tuple[str, str] | None = None,
    *,
    tls: ServerTLS | None = None,
    client: tuple[Path, Path] | None = None,
    password: str = ROOT_PASSWORD,
) -> Iterator[LocalCluster]:
    """A one-member cluster of the caller's own with authentication on (``root``'s
    password ``password``), stopped when the generator ends; skips the test where
    etcd cannot be had. ``port_env``: see ``start_cluster``. With ``tls`` clients
    connect with TLS, checking the member's certificate against ``tls.ca`` and
    presenting ``client`` (certificate and key files), which a member with
    ``tls.client_cert_auth`` asks for."""
    files = {} if tls is None else {"cacert": tls.ca}
    if client is not None:
        files.update(cert=client[0], key=client[1])
    with own_cluster(
        1,
        tls=tls,
        health_context=None if tls is None else tls.context(*(client or ())),
        extra_args=("--bcrypt-cost", "4"),
        port_env=port_env,
    ) as found:
        query = "&".join(f"{name}={quote(str(path))}" for name, path in files.items())
        admin = EtcdStore(f"etcd://{','.join(found.endpoints)}{'?' + query if query else ''}")
        try:
            admin.access().enable(password)
        finally:
            admin.close()
        yield found


class LostAnswer(grpc.RpcError):
    """What gRPC raises when a call's answer does not come back (the member died
    after the leader applied it): retryable by the client."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "simulated: the answer was lost after the request was applied"


class LosingKV:
    """A KV stub whose first ``Txn`` that writes is applied, then ``meanwhile``
    runs and its answer is lost (:class:`LostAnswer`, below the client's own
    retries); every other call is the stub's own. ``lost`` counts the answers lost."""

    def __init__(self, kv: Any, meanwhile: Callable[[], None]) -> None:
        self._kv = kv
        self._meanwhile = meanwhile
        self.lost = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kv, name)

    def Txn(self, request: Any, **kw: Any) -> Any:
        response = self._kv.Txn(request, **kw)
        writes = any(op.WhichOneof("request") != "request_range" for op in request.success)
        if writes and not self.lost:
            self.lost += 1
            self._meanwhile()
            raise LostAnswer()
        return response


def compare_holds(compare: pb.Compare, state: dict[bytes, int]) -> bool:
    """etcd's ``applyCompare`` of a MOD compare against ``state`` (key -> mod
    revision): over a range every present key must pass, an empty range compares
    revision 0."""
    if compare.range_end:
        end = None if compare.range_end == b"\x00" else compare.range_end
        revs = [r for k, r in state.items() if compare.key <= k and (end is None or k < end)] or [0]
    else:
        revs = [state.get(compare.key, 0)]
    if compare.result == pb.Compare.EQUAL:
        return all(r == compare.mod_revision for r in revs)
    return all(r < compare.mod_revision for r in revs)


class InjectedFault(Exception):
    """A request made to fail before it was sent (:func:`record_writes`)."""


_WRITES = (pb.TxnRequest, pb.DeleteRangeRequest, pb.PutRequest)


def record_writes(conn: Any, fail: Callable[[int], bool] | None = None) -> list[str]:
    """Record the write requests the sync connection ``conn`` sends from now on (a
    ``Txn`` that only reads is none), by request type; ``fail(n)`` true makes the
    n-th raise :class:`InjectedFault` before it is sent."""
    seen: list[str] = []
    call = conn.call

    def counted(what: str, method: Callable[..., Any], request: Any, **kw: Any) -> Any:
        reads_only = isinstance(request, pb.TxnRequest) and not request.success
        if isinstance(request, _WRITES) and not reads_only:
            seen.append(type(request).__name__)
            if fail is not None and fail(len(seen)):
                raise InjectedFault(f"write request {len(seen)} failed before it was sent")
        return call(what, method, request, **kw)

    conn.call = counted
    return seen


def record_async_writes(client: Any) -> list[str]:
    """Record the write methods (``Txn`` that writes, ``DeleteRange``, ``Put``)
    the asyncio client ``client`` calls from now on."""
    seen: list[str] = []
    call = client.call

    async def counted(what: str, method: str, request: Any, **kw: Any) -> Any:
        if method in ("Txn", "DeleteRange", "Put") and not (method == "Txn" and not request.success):
            seen.append(method)
        return await call(what, method, request, **kw)

    client.call = counted
    return seen


def lose_first_commit_answer(store: Any, meanwhile: Callable[[], None]) -> list[str]:
    """Make the first commit of the sync etcd ``store`` reach the cluster, then run
    ``meanwhile`` (another client's transaction, or nothing) and lose the answer
    (:class:`EtcdUnavailable`); the list returned holds ``"commit"`` once it has."""
    conn = store._conn
    real = conn.call
    lost: list[str] = []

    def flaky(what: str, method: Any, request: Any, **kw: Any) -> Any:
        response = real(what, method, request, **kw)
        if what == "commit" and not lost:
            lost.append(what)
            meanwhile()
            raise EtcdUnavailable("commit: simulated lost answer")
        return response

    conn.call = flaky
    return lost
