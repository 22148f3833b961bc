"""Deletes that span more than etcd's 128 operations per transaction stay one
``Txn`` on a default-configured cluster: the operations beyond one level go into
nested transactions (etcd counts each level against what its parent leaves it),
and the compares guarding what the delete read are kept exact but merged, so a
ScopeHash root ``drop`` of a hundred names or an AsciiHex ``clear`` of hundreds of
keys is all-or-nothing, where it used to run range by range.

The pure parts (the nesting and the compares) are checked against a model of
etcd's own rules; the rest against the test cluster, with a request made to fail
to show that nothing of a failed delete is applied."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from _etcd import (
    InjectedFault,
    compare_holds,
    lose_first_commit_answer,
    own_url,
    record_async_writes,
    record_writes,
)
from hypothesis import given
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.errors import TransactionTooLarge
from keyspace.schemes import AsciiHex, ScopeHash
from keyspace.stores import open_store
from keyspace.stores.etcd._plan import (
    CommitPlan,
    commit_plan,
    flat_responses,
    guard_compares,
    nest_ops,
)
from keyspace.stores.etcd._proto import kv_pb2 as pb
from keyspace.stores.etcd._rpc import MAX_TXN_OPS

# -- the model of etcd's checks ----------------------------------------------------


def _etcd_accepts(request: pb.TxnRequest, budget: int = MAX_TXN_OPS) -> bool:
    """etcd's ``checkTxnRequest``: a level holds ``max(compares, success, failure)``
    of at most ``budget``; a nested transaction gets what its parent leaves."""
    used = max(len(request.compare), len(request.success), len(request.failure))
    if used > budget:
        return False
    return all(
        _etcd_accepts(op.request_txn, budget - used)
        for op in [*request.success, *request.failure]
        if op.WhichOneof("request") == "request_txn"
    )


def _leaves(ops: list[pb.RequestOp]) -> list[pb.RequestOp]:
    out: list[pb.RequestOp] = []
    for op in ops:
        if op.WhichOneof("request") == "request_txn":
            out += _leaves(list(op.request_txn.success))
        else:
            out.append(op)
    return out


def _deletes(n: int) -> list[pb.RequestOp]:
    return [pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=b"k%05d" % i)) for i in range(n)]


@given(st.integers(0, 5000), st.integers(0, MAX_TXN_OPS))
def test_nested_operations_pass_etcds_check_in_order(n: int, floor: int) -> None:
    ops = _deletes(n)
    nested = nest_ops(ops, floor)
    if nested is None:
        # refused only where the compares leave too little room below them
        assert floor > 64 or n > 4096
        return
    request = pb.TxnRequest(compare=[pb.Compare(key=b"c")] * floor, success=nested)
    assert _etcd_accepts(request)
    assert _leaves(nested) == ops  # the same operations, in the same order
    if n <= 4096 and floor <= 64:
        assert len(request.SerializeToString()) < 1 << 20


def test_the_model_refuses_what_etcd_refuses() -> None:
    assert not _etcd_accepts(pb.TxnRequest(success=_deletes(129)))
    assert _etcd_accepts(pb.TxnRequest(success=_deletes(128)))
    inner = pb.RequestOp(request_txn=pb.TxnRequest(success=_deletes(128)))
    assert not _etcd_accepts(pb.TxnRequest(success=[inner]))  # 1 + 128 along one path
    assert nest_ops(_deletes(130), 127) is None  # one operation left below 127 compares


_KEYS = st.text(alphabet="abc", min_size=1, max_size=2).map(str.encode)


@given(
    st.dictionaries(_KEYS, st.integers(1, 5), max_size=8),
    st.lists(st.tuples(_KEYS, _KEYS), max_size=5),
    st.lists(_KEYS, max_size=6),
    st.dictionaries(_KEYS, st.one_of(st.none(), st.integers(1, 10)), max_size=8),
)
def test_merged_compares_hold_exactly_when_the_originals_do(
    before: dict[bytes, int],
    ranges: list[tuple[bytes, bytes]],
    read: list[bytes],
    changes: dict[bytes, int | None],
) -> None:
    """The merged compares of a transaction that read ``read`` and scanned
    ``ranges`` at snapshot 5 pass on a later state exactly when one compare per
    key read and per range scanned would."""
    snapshot = 5
    scanned = [(lo, hi) for lo, hi in ranges if lo < hi]
    points = {k: before.get(k, 0) for k in read}
    for lo, hi in scanned:  # a scan reads its keys
        points.update({k: r for k, r in before.items() if lo <= k < hi})
    after = dict(before)
    for key, rev in changes.items():  # later writes (revision > snapshot) or deletes
        if rev is None:
            after.pop(key, None)
        else:
            after[key] = snapshot + rev
    original = [
        pb.Compare(result=pb.Compare.EQUAL, target=pb.Compare.MOD, key=k, mod_revision=r)
        for k, r in points.items()
    ] + [
        pb.Compare(
            result=pb.Compare.LESS, target=pb.Compare.MOD, key=lo, range_end=hi, mod_revision=snapshot + 1
        )
        for lo, hi in scanned
    ]
    merged = guard_compares(points, scanned, snapshot)
    assert len(merged) <= len(original)
    assert all(compare_holds(c, after) for c in merged) == all(compare_holds(c, after) for c in original)


def test_a_commit_check_reads_nested_answers_in_order() -> None:
    plan = commit_plan(b"", [(b"r%04d" % i, b"r%04d\x00" % i) for i in range(300)], [(b"p", b"v")])
    assert isinstance(plan, CommitPlan)
    check = plan.check_request()
    assert _etcd_accepts(check)
    assert [op.request_range.key for op in _leaves(list(check.success))] == [b"p"] + [
        b"r%04d" % i for i in range(300)
    ]
    with pytest.raises(TransactionTooLarge, match="129 puts"):
        commit_plan(b"", [], [(b"p%03d" % i, b"v") for i in range(129)]).request({}, [], 1)  # type: ignore[union-attr]


def test_flat_responses_walk_nested_answers() -> None:
    inner = pb.ResponseOp(
        response_txn=pb.TxnResponse(responses=[pb.ResponseOp(response_put=pb.PutResponse())])
    )
    outer = [pb.ResponseOp(response_range=pb.RangeResponse(count=1)), inner]
    assert [r.WhichOneof("response") for r in flat_responses(outer)] == ["response_range", "response_put"]


# -- on the cluster ----------------------------------------------------------------------


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("nested-deletes")


_NAMES = [f"n{i:03d}" for i in range(100)]


@pytest.mark.etcd
@pytest.mark.parametrize("fail", [False, True])
def test_a_scopehash_root_drop_of_a_hundred_names_is_one_txn(url: str, fail: bool) -> None:
    """Before: over about 60 names the drop ran range by range (101 requests), so a
    failure part-way left some names dropped and others not."""
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        for name in _NAMES:
            ks.scope(name)[b"k"] = b"v"
        ks.scope()[b"root"] = b"r"
        seen = record_writes(ks.store._conn, (lambda n: True) if fail else None)  # type: ignore[attr-defined]
        if fail:
            with pytest.raises(InjectedFault):
                ks.scope().drop()
            assert all(ks.scope(name).get(b"k") == b"v" for name in _NAMES)  # none of it
            assert ks.scope()[b"root"] == b"r"
        else:
            ks.scope().drop()
            assert [name for name in _NAMES if ks.scope(name).get(b"k") is not None] == []
            assert ks.scope().get(b"root") is None
        assert seen == ["TxnRequest"]


@pytest.mark.etcd
@pytest.mark.parametrize("fail", [False, True])
def test_an_asciihex_clear_of_300_keys_is_one_txn(url: str, fail: bool) -> None:
    """AsciiHex own keys are not one range (its children's lie among them), so a
    clear deletes key by key: before, over 128 keys, one request per key."""
    with keyspace.open(url, scheme=AsciiHex()) as ks:
        scope = ks.scope("t")
        own = {b"k%03d" % i: b"v" for i in range(300)}
        for start in range(0, 300, 100):
            scope.update(dict(list(own.items())[start : start + 100]))
        scope.scope("child")[b"c"] = b"x"
        ks.scope("t0")[b"n"] = b"y"
        seen = record_writes(ks.store._conn, (lambda n: True) if fail else None)  # type: ignore[attr-defined]
        if fail:
            with pytest.raises(InjectedFault):
                scope.clear()
            assert dict(scope.items()) == own
        else:
            scope.clear()
            assert dict(scope.items()) == {}
        assert seen == ["TxnRequest"]
        assert dict(scope.scope("child").items()) == {b"c": b"x"}
        assert dict(ks.scope("t0").items()) == {b"n": b"y"}


@pytest.mark.etcd
def test_a_store_transaction_deletes_a_thousand_ranges_at_one_revision(url: str) -> None:
    store = open_store(url)
    try:
        store.put_many((b"k%04d" % i, b"v") for i in range(1000))
        store.put(b"keep", b"1")
        seen = record_writes(store._conn)  # type: ignore[attr-defined]
        with store.transaction() as tx:
            assert tx.get(b"keep") == b"1"
            for i in range(1000):
                tx.delete_range(b"k%04d" % i, b"k%04d\x00" % i)
            tx.put(b"done", b"1")
        assert seen == ["TxnRequest"]
        assert list(store.scan(b"", None)) == [(b"done", b"1"), (b"keep", b"1")]
    finally:
        store.close()


@pytest.mark.etcd
def test_a_nested_commit_whose_answer_was_lost_is_found_applied(url: str) -> None:
    """The re-read after an unknown outcome is nested too, and read back in order."""
    store = open_store(url)
    try:
        store.put_many((b"k%04d" % i, b"v") for i in range(300))
        store.put(b"n", b"1")
        lost = lose_first_commit_answer(store, lambda: None)
        with store.transaction() as tx:
            value = int(tx.get(b"n") or b"0")
            for i in range(300):
                tx.delete(b"k%04d" % i)
            tx.put(b"n", b"%d" % (value + 1))
        assert lost
        assert list(store.scan(b"", None)) == [(b"n", b"2")]
    finally:
        store.close()


@pytest.mark.etcd
def test_an_async_scopehash_root_drop_of_a_hundred_names_is_one_txn(url: str) -> None:
    """The async keyspace plans the drop before it runs it; the plan now asks the
    store whether the commit's request fits (as built, nested), where it counted
    its operations against 128 and went range by range."""

    async def run() -> None:
        async with await keyspace.aio.open(url, scheme=ScopeHash()) as aks:
            for name in _NAMES:
                await aks.scope(name).put(b"k", b"v")
            seen = record_async_writes(aks.store._client)  # type: ignore[attr-defined]
            await aks.scope().drop()
            assert seen == ["Txn"]
            assert [name for name in _NAMES if await aks.scope(name).get(b"k") is not None] == []

    asyncio.run(run())


@pytest.mark.etcd
def test_a_root_drop_past_the_compare_limit_leaves_every_name_whole(url: str) -> None:
    """Over 127 names the registry read needs more compares than one Txn holds, and
    the drop runs name by name: a failure part-way leaves each name's scope either
    dropped entirely or kept entirely (never half of its keys), every kept scope
    still readable with its registry entry, and a second drop finishes the job."""
    names = [f"m{i:03d}" for i in range(130)]
    keys = {b"k1": b"v", b"k2": b"v", b"k3": b"v"}
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        for name in names:
            ks.scope(name).update(keys)
        conn = ks.store._conn  # type: ignore[attr-defined]
        real = conn.call
        seen = record_writes(conn, lambda n: n == 60)
        with pytest.raises(InjectedFault):
            ks.scope().drop()
        assert len(seen) == 60
        states = [dict(ks.scope(name).items()) for name in names]
        assert all(state in ({}, keys) for state in states)
        assert 0 < sum(state == keys for state in states) < len(names)
        conn.call = real
        ks.scope().drop()
        assert all(not dict(ks.scope(name).items()) for name in names)
