"""Losing an etcd member mid-write: the leader is SIGKILLed in the middle of a bounded
write loop, first through EtcdStore, then through a Scope. The loop must finish, every
acknowledged write must be on every surviving member (and on the restarted one), and
the longest stall the caller saw is measured and reported. The killed member is
restarted and the cluster is healthy again before the test ends.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from _etcd import restartable_cluster

import keyspace
from keyspace.stores.etcd import EtcdStore
from keyspace.testing.etcd_cluster import LocalCluster

pytestmark = [pytest.mark.etcd, pytest.mark.slow, pytest.mark.timeout(180)]

WRITES = 600
KILL_AT = 200


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    yield from restartable_cluster("fault test")


def _member_store(cluster: LocalCluster, index: int, prefix: str = "") -> EtcdStore:
    """A store of one member only (under the URL key prefix ``prefix``)."""
    return EtcdStore(f"etcd://{cluster.endpoints[index]}/{prefix}", timeout=2, retry_budget=10)


def _leader_index(cluster: LocalCluster) -> int:
    """Index (endpoint order) of the current leader; waits (≤ 10 s) for one."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        ids: list[int] = []
        leaders: set[int] = set()
        for i in range(len(cluster.endpoints)):
            member = _member_store(cluster, i)
            try:
                status = member.status()
            finally:
                member.close()
            ids.append(int(status["member_id"]))
            leaders.add(int(status["leader"]))
        if len(leaders) == 1 and (leader := leaders.pop()) in ids:
            return ids.index(leader)
        time.sleep(0.1)
    raise TimeoutError("no agreed etcd leader within 10 s")


def _write_loop(
    write: Callable[[int], None], kill: Callable[[], None], count: int, kill_at: int
) -> tuple[list[int], float, float]:
    """Run ``write(i)`` for i < count, calling ``kill()`` before write ``kill_at``.
    Returns the acknowledged indexes, the longest single write (the stall) and the
    total time. Every write is bounded by the store's retry budget."""
    acked: list[int] = []
    longest = 0.0
    started = time.monotonic()
    for i in range(count):
        if i == kill_at:
            kill()
        t0 = time.monotonic()
        write(i)
        longest = max(longest, time.monotonic() - t0)
        acked.append(i)
    return acked, longest, time.monotonic() - started


def _keys_on_member(
    cluster: LocalCluster, index: int, start: bytes, stop: bytes, prefix: str = ""
) -> set[bytes]:
    member = _member_store(cluster, index, prefix)
    try:
        return {k for k, _ in member.scan(start, stop)}
    finally:
        member.close()


def _report(capsys: pytest.CaptureFixture[str], record: Callable[[str, object], None], text: str) -> None:
    record("etcd_fault", text)
    with capsys.disabled():
        print(f"\n[etcd fault] {text}")


def _kill_write_restart(
    cluster: LocalCluster, write: Callable[[int], None], count: int, kill_at: int
) -> tuple[list[int], float, float, int]:
    victim = _leader_index(cluster)
    killed: list[int] = []

    def kill() -> None:
        killed.append(cluster.kill(victim))

    try:
        acked, longest, total = _write_loop(write, kill, count, kill_at)
    except BaseException:
        if killed:
            cluster.restart(victim)
            cluster.wait_healthy()
        raise
    assert killed, "the member was not killed"
    return acked, longest, total, victim


def test_leader_killed_during_store_writes(
    cluster: LocalCluster, capsys: pytest.CaptureFixture[str], record_property: Callable[[str, object], None]
) -> None:
    store = EtcdStore(cluster.url, timeout=1.0, retry_budget=15)
    prefix = b"fault/store/"
    store.delete_range(prefix, prefix + b"\xff")
    try:
        acked, longest, total, victim = _kill_write_restart(
            cluster, lambda i: store.put(prefix + b"%04d" % i, b"v%d" % i), WRITES, KILL_AT
        )
        expected = {prefix + b"%04d" % i for i in acked}
        assert len(acked) == WRITES
        survivors = [i for i in range(len(cluster.endpoints)) if i != victim]
        for member in survivors:
            assert _keys_on_member(cluster, member, prefix, prefix + b"\xff") == expected
        cluster.restart(victim)
        healthy_after = cluster.wait_healthy()
        assert _keys_on_member(cluster, victim, prefix, prefix + b"\xff") == expected
        assert all(store.get(prefix + b"%04d" % i) == b"v%d" % i for i in (0, KILL_AT, WRITES - 1))
        _report(
            capsys,
            record_property,
            f"store: leader m{victim + 1} SIGKILLed before write {KILL_AT}/{WRITES}; "
            f"{len(acked)} acknowledged, 0 lost on {len(survivors)} survivors and the restarted member; "
            f"longest stall {longest * 1000:.0f} ms; loop {total:.2f} s; "
            f"restarted member healthy in {healthy_after:.2f} s",
        )
        assert longest < 10.0
    finally:
        store.delete_range(prefix, prefix + b"\xff")
        store.close()


def test_leader_killed_during_scope_writes(
    cluster: LocalCluster, capsys: pytest.CaptureFixture[str], record_property: Callable[[str, object], None]
) -> None:
    prefix = f"fault-scope-{uuid.uuid4().hex}"  # its own keyspace, wiped at the end
    ks = keyspace.open(f"{cluster.url}/{prefix}")
    scope = ks.scope("fault", "scope")
    count, kill_at = 300, 100
    try:
        scope.clear()

        def write(i: int) -> None:
            scope[b"%04d" % i] = b"v%d" % i

        acked, longest, total, victim = _kill_write_restart(cluster, write, count, kill_at)
        assert len(acked) == count
        start, stop = ks.scheme.own_range(("fault", "scope"))
        expected = {ks.scheme.encode(("fault", "scope"), b"%04d" % i) for i in acked}
        stop_key = stop if stop is not None else b"\xff" * 8
        for member in range(len(cluster.endpoints)):
            if member != victim:
                assert _keys_on_member(cluster, member, start, stop_key, prefix) == expected
        cluster.restart(victim)
        cluster.wait_healthy()
        assert _keys_on_member(cluster, victim, start, stop_key, prefix) == expected
        assert len(scope) == count and scope[b"%04d" % (count - 1)] == b"v%d" % (count - 1)
        _report(
            capsys,
            record_property,
            f"scope: leader m{victim + 1} SIGKILLed before write {kill_at}/{count}; "
            f"{len(acked)} acknowledged, 0 lost; longest stall {longest * 1000:.0f} ms; loop {total:.2f} s",
        )
        assert longest < 10.0
    finally:
        ks.store.delete_range(b"", None)
        ks.close()
