"""An etcd cluster that loses its quorum: two of three members are SIGKILLed.

Every operation must fail as ``EtcdUnavailable`` (``CommitOutcomeUnknown`` for a
commit whose outcome cannot be known), never as a plain ``StoreError``, and within
the configured retry budget; once the members are back, nothing acknowledged is
lost and the same keyspace works again."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from _etcd import restartable_cluster

import keyspace
from keyspace.errors import CommitOutcomeUnknown, EtcdUnavailable, KeyspaceError
from keyspace.stores import open_store
from keyspace.testing.etcd_cluster import LocalCluster

pytestmark = [pytest.mark.etcd, pytest.mark.slow, pytest.mark.timeout(180)]

BUDGET = 2.0
SLACK = 0.75  # one last call may start just before the budget ends; its deadline is cut to it


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    yield from restartable_cluster("quorum test")


@pytest.fixture
def prefix(cluster: LocalCluster) -> Iterator[str]:
    """A key prefix of the test's own: everything written under it is removed at
    the end, so no later test finds keys without a scheme record."""
    made = f"quorum-{uuid.uuid4().hex}"
    yield made
    cluster.wait_healthy()
    store = open_store(f"etcd://{','.join(cluster.endpoints)}/{made}?timeout=2&retry_budget=10")
    try:
        store.delete_range(b"", None)
    finally:
        store.close()


def test_quorum_loss(cluster: LocalCluster, capsys: pytest.CaptureFixture[str], prefix: str) -> None:
    url = f"etcd://{','.join(cluster.endpoints)}/{prefix}?timeout=1&retry_budget={BUDGET}"
    ks = keyspace.open(url)
    scope = ks.scope("q")
    acked: dict[bytes, bytes] = {}
    for i in range(50):
        scope[b"a%03d" % i] = b"%d" % i
        acked[b"a%03d" % i] = b"%d" % i
    guarded = ks.transaction()
    tx = guarded.__enter__()
    tx.scope("q")[b"guarded"] = b"%d" % (int(tx.scope("q")[b"a001"]) + 1)
    blind = ks.transaction()
    btx = blind.__enter__()
    btx.scope("q")[b"blind"] = b"x"

    killed = [1, 2]
    for index in killed:
        cluster.kill(index)
    outcomes: list[tuple[str, str, float]] = []

    def attempt(name: str, op: Callable[[], object], expected: type[KeyspaceError]) -> None:
        started = time.monotonic()
        with pytest.raises(KeyspaceError) as caught:
            op()
        elapsed = time.monotonic() - started
        outcomes.append((name, type(caught.value).__name__, elapsed))
        assert type(caught.value) is expected, (name, type(caught.value), str(caught.value))
        assert elapsed <= BUDGET + SLACK, (name, elapsed)

    try:
        attempt("put", lambda: scope.__setitem__(b"lost", b"1"), EtcdUnavailable)
        attempt("get", lambda: scope[b"a001"], EtcdUnavailable)
        attempt("scan", lambda: list(scope.items()), EtcdUnavailable)
        attempt("update", lambda: scope.update({b"u1": b"1", b"u2": b"2"}), EtcdUnavailable)
        attempt("delete", lambda: scope.__delitem__(b"a002"), EtcdUnavailable)
        # a clear or drop is a catalog transaction: it was run again on any failure,
        # each time with a budget of its own (about five budgets in all)
        attempt("clear", scope.clear, EtcdUnavailable)
        attempt("drop", ks.scope("q").drop, EtcdUnavailable)
        attempt("guarded commit", lambda: guarded.__exit__(None, None, None), CommitOutcomeUnknown)
        attempt("blind commit", lambda: blind.__exit__(None, None, None), CommitOutcomeUnknown)

        def new_transaction() -> None:
            with ks.transaction() as late:
                late.scope("q")[b"late"] = b"1"

        attempt("new transaction", new_transaction, EtcdUnavailable)
    finally:
        for index in killed:
            cluster.restart(index)
        recovery = cluster.wait_healthy()

    # Back: every acknowledged write is there, on every member, and the keyspace works.
    deadline = time.monotonic() + 30
    while True:
        try:
            found = dict(scope.items())
            break
        except EtcdUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    lost = [k for k, v in acked.items() if found.get(k) != v]
    assert lost == []
    scope[b"after"] = b"ok"
    assert scope[b"after"] == b"ok"
    ks.close()
    for index in range(len(cluster.endpoints)):
        member = keyspace.open(f"etcd://{cluster.endpoints[index]}/{prefix}?timeout=2&retry_budget=10")
        try:
            held = dict(member.scope("q").items())
        finally:
            member.close()
        assert all(held.get(k) == v for k, v in acked.items()), f"member m{index + 1} lost writes"
    tried = len(acked) + len(outcomes)
    worst = max(elapsed for _, _, elapsed in outcomes)
    with capsys.disabled():
        print(
            f"\netcd quorum loss: {tried} operations tried, {len(acked)} acknowledged, 0 lost; "
            f"{len(outcomes)} failed as "
            + ", ".join(f"{name}: {cls} in {elapsed:.2f}s" for name, cls, elapsed in outcomes)
            + f"; longest {worst:.2f}s against a {BUDGET}s budget; members back in {recovery:.2f}s"
        )


def test_etcd_options_as_keywords_and_url_parameters(cluster: LocalCluster, prefix: str) -> None:
    url = f"etcd://{','.join(cluster.endpoints)}/{prefix}"
    with keyspace.open(url, timeout=1.5, retry_budget=4) as ks:
        options = ks.store.options  # type: ignore[attr-defined]
        assert (options.timeout, options.retry_budget) == (1.5, 4)
    with keyspace.open(url + "?timeout=0.5&retry_budget=3&max_attempts=7") as ks:
        options = ks.store.options  # type: ignore[attr-defined]
        assert (options.timeout, options.retry_budget, options.max_attempts) == (0.5, 3, 7)
    with pytest.raises(KeyspaceError, match="known"):
        keyspace.open(url, retry_budgit=4)
    with pytest.raises(KeyspaceError, match="known"):
        keyspace.open(url + "?retry_budgit=4")
