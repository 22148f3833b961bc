"""Quotas: a write that would take a scope or an ancestor past its quota raises
QuotaExceeded naming the scope, the limit and the would-be size, and writes
nothing (a point put, a batch, a caller's transaction); several processes
writing into one scope with a quota at once never take it past the quota, and
every refused write left nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keyspace
from keyspace._accounting import accounting_of
from keyspace.errors import AccountingUnavailable, InvalidArgument, QuotaExceeded


def _recount_equal(ks: keyspace.Keyspace) -> None:
    counts = accounting_of(ks.store)
    assert counts is not None
    with ks.store.snapshot() as view:
        assert counts.differences(view) == []


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_write_past_a_quota_is_refused_and_writes_nothing(engine: str, tmp_path: Path) -> None:
    url = {"memory": "memory:", "lmdb": f"lmdb://{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db.sqlite"}[
        engine
    ]
    ks = keyspace.open(url, accounting=True)
    tenant = ks.scope("tenant1")
    users = ks.scope("tenant1", "users")
    ks.set_quota(("tenant1",), keys=3)
    users[b"a"] = b"1"
    users[b"b"] = b"2"
    tenant[b"own"] = b"3"
    with pytest.raises(QuotaExceeded) as raised:
        users[b"c"] = b"4"
    message = str(raised.value)
    assert "/tenant1" in message and "3 keys" in message and "4 keys" in message
    assert (raised.value.path, raised.value.what, raised.value.limit, raised.value.size) == (
        ("tenant1",),
        "keys",
        3,
        4,
    )
    assert b"c" not in users and len(users) == 2
    users[b"a"] = b"overwritten"  # no new key: within the quota
    # a caller's transaction: nothing of it is written
    with pytest.raises(QuotaExceeded), ks.transaction() as tx:
        tx.scope("elsewhere")[b"x"] = b"y"
        tx.scope("tenant1", "users")[b"d"] = b"5"
    assert b"x" not in ks.scope("elsewhere") and b"d" not in users
    with pytest.raises(QuotaExceeded):
        users.update({b"e": b"6", b"f": b"7"})
    assert len(users) == 2
    del users[b"b"]
    users[b"e"] = b"6"  # room again
    ks.set_quota(("tenant1",), keys=None, bytes=ks.scope("tenant1").stats().subtree_bytes)
    with pytest.raises(QuotaExceeded) as raised:
        users[b"a"] = b"overwritten and longer"
    assert raised.value.what == "bytes"
    users[b"a"] = b"short"  # shrinking: allowed
    assert ks.quotas() == {("tenant1",): (None, ks.scope("tenant1").stats().subtree_bytes + 6)}
    _recount_equal(ks)
    ks.close()


def test_quotas_of_ancestors_hold_too() -> None:
    ks = keyspace.open("memory:", accounting=True)
    ks.set_quota((), keys=2)
    ks.scope("a", "b", "c")[b"1"] = b""
    ks.scope("z")[b"1"] = b""
    with pytest.raises(QuotaExceeded) as raised:
        ks.scope("a")[b"2"] = b""
    assert raised.value.path == () and "the scope /" in str(raised.value)
    assert ks.stats().subtree_keys == 2


def test_quota_arguments_and_accounting_off_are_refused() -> None:
    ks = keyspace.open("memory:", accounting=True)
    for bad in (-1, 1.5, "3", True, 1 << 63):
        with pytest.raises(InvalidArgument, match="quota of keys must be an int"):
            ks.set_quota(("a",), keys=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="tuple"):
        ks.set_quota("a")  # type: ignore[arg-type]
    assert ks.quotas() == {}
    off = keyspace.open("memory:")
    with pytest.raises(AccountingUnavailable, match="accounting=True"):
        off.set_quota(("a",), keys=1)
    with pytest.raises(AccountingUnavailable, match="accounting=True"):
        off.scope("a").stats()


_WORKER = r"""
import json, random, sys, time
import keyspace
from keyspace.errors import QuotaExceeded, TransactionConflict
url, who = sys.argv[1], sys.argv[2]
rng = random.Random(who)
ks = keyspace.open(url)
accepted, refused = [], []
deadline = time.monotonic() + 40
for i in range(40):
    keys = [f"{who}-{i}-{j}".encode() for j in range(rng.randint(1, 3))]
    value = b"v" * rng.randint(0, 40)
    for attempt in range(200):
        if time.monotonic() > deadline:
            break
        try:
            with ks.transaction() as tx:
                scope = tx.scope("shared", "inbox")
                for key in keys:
                    scope[key] = value
            accepted += [k.decode() for k in keys]
        except QuotaExceeded:
            refused += [k.decode() for k in keys]
        except TransactionConflict:
            time.sleep(0.001 * rng.random())
            continue
        break
ks.close()
print(json.dumps({"accepted": accepted, "refused": refused}))
"""


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "etcd"])
def test_four_processes_never_pass_a_quota(engine: str, tmp_path: Path) -> None:
    if engine == "etcd":
        from _etcd import etcd_cluster

        cluster = etcd_cluster()
        url = f"etcd://{','.join(cluster.endpoints)}/quota-{tmp_path.name}-{time.monotonic_ns()}"
    else:
        url = {"lmdb": f"lmdb://{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db.sqlite"}[engine]
    ks = keyspace.open(url, accounting=True)
    ks.scope("shared")[b"seed"] = b"x"  # records the scheme and accounting
    ks.set_quota(("shared",), keys=120, bytes=4000)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, url, f"w{n}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for n in range(4)
    ]
    try:
        outs = [p.communicate(timeout=90) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()[-2000:]
    accepted: set[bytes] = set()
    refused: set[bytes] = set()
    for out, _err in outs:
        got = json.loads(out)
        accepted |= {k.encode() for k in got["accepted"]}
        refused |= {k.encode() for k in got["refused"]}
    inbox = ks.scope("shared", "inbox")
    stored = set(inbox.keys())
    assert stored == accepted
    assert not stored & refused
    assert refused, "the quota was never reached: the test wrote too little"
    stats = ks.scope("shared").stats()
    assert stats.subtree_keys <= 120 and stats.subtree_bytes <= 4000
    _recount_equal(ks)
    if engine == "etcd":
        ks.store.delete_range(b"", None)
    ks.close()
