"""A guarded etcd commit whose answer was lost (a member died mid-call) is never
sent again over another client's later write of what it writes.

Before: after an unknown outcome the commit re-read only its put keys, and only
to see whether they all held its values; anything else was "not applied" and the
commit was sent again. When the lost attempt had been applied and another client
then wrote one of its keys (reading the commit's value first), the retry passed
its compares (they guard what it read, not what it writes) and wrote over that
later write: an acknowledged write lost. A commit of deletes only was re-sent
without any re-read, and a re-read that itself failed sent the commit again
unchecked. Now the re-read also tells whether anything the commit writes or
deletes (a key, or any key of a deleted range) was written since the snapshot; if
so the outcome is :class:`CommitOutcomeUnknown`, nothing is sent again, and the
later write stays."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from _etcd import LosingKV, lose_first_commit_answer, own_url

from keyspace.errors import CommitOutcomeUnknown, EtcdUnavailable
from keyspace.stores import open_store
from keyspace.stores.etcd._plan import (
    APPLIED,
    CHANGED,
    NOT_APPLIED,
    Call,
    Sleep,
    commit_plan,
    commit_steps,
)
from keyspace.stores.etcd._proto import kv_pb2 as pb

# -- without a cluster: the steps after an unknown outcome --------------------------


def _steps_after_lost_answers(check_answers: list[Any]) -> list[str]:
    """Drive :func:`commit_steps` of a guarded commit whose first attempt met an
    unknown outcome; the re-reads get ``check_answers`` in turn (an exception is
    thrown in). Returns the calls it made, in order, until it ended."""
    plan = commit_plan(b"", [], [(b"b", b"1")])
    assert plan is not None
    request = pb.TxnRequest(
        compare=[pb.Compare(key=b"a", target=pb.Compare.MOD, mod_revision=3)], success=plan.success
    )
    steps = commit_steps(plan, request, 5, max_attempts=6, retry_budget=30, budget_end=1e18)
    made: list[str] = []
    answers = iter(check_answers)
    reply: Any = None
    error: BaseException | None = None
    try:
        while True:
            step = steps.send(reply) if error is None else steps.throw(error)
            reply = error = None
            if isinstance(step, Sleep):
                continue
            assert isinstance(step, Call)
            made.append(step.what)
            if step.what == "commit":
                if made.count("commit") == 1:
                    error = EtcdUnavailable("lost answer")
                else:
                    reply = pb.TxnResponse(succeeded=True)
            else:
                answer = next(answers)
                if isinstance(answer, BaseException):
                    error = answer
                else:
                    reply = answer
    except StopIteration:
        made.append("done")
    except CommitOutcomeUnknown:
        made.append("unknown")
    return made


def _check_answer(value: bytes | None, mod_revision: int) -> pb.TxnResponse:
    kvs = [] if value is None else [pb.KeyValue(key=b"b", value=value, mod_revision=mod_revision)]
    return pb.TxnResponse(succeeded=True, responses=[pb.ResponseOp(response_range=pb.RangeResponse(kvs=kvs))])


def test_a_failed_re_read_never_sends_the_commit_again_unchecked() -> None:
    """Before: ``commit, commit check, commit`` (the re-read failed, the commit was
    sent again blind)."""
    made = _steps_after_lost_answers([EtcdUnavailable("no answer"), _check_answer(b"0", 2)])
    assert made == ["commit", "commit check", "commit check", "commit", "done"]


def test_a_later_write_of_a_written_key_is_an_unknown_outcome() -> None:
    """The key it puts now holds another value, written after the snapshot
    (revision 5): the commit may have been applied before that write."""
    assert _steps_after_lost_answers([_check_answer(b"2", 9)]) == ["commit", "commit check", "unknown"]
    assert _steps_after_lost_answers([_check_answer(b"1", 9)]) == ["commit", "commit check", "done"]
    assert _steps_after_lost_answers([_check_answer(b"0", 2)]) == [
        "commit",
        "commit check",
        "commit",
        "done",
    ]


def _ranges_answer(plan_keys: list[bytes | None], ranges: list[int | None]) -> pb.TxnResponse:
    responses = []
    for i, value in enumerate(plan_keys):
        kvs = [] if value is None else [pb.KeyValue(key=b"x%d" % i, value=value, mod_revision=7)]
        responses.append(pb.ResponseOp(response_range=pb.RangeResponse(kvs=kvs)))
    for rev in ranges:
        kvs = [] if rev is None else [pb.KeyValue(key=b"r", mod_revision=rev)]
        responses.append(pb.ResponseOp(response_range=pb.RangeResponse(kvs=kvs)))
    return pb.TxnResponse(succeeded=True, responses=responses)


def test_the_outcome_of_a_re_read() -> None:
    plan = commit_plan(b"", [(b"r", b"s")], [(b"p", b"v"), (b"d", None)])
    assert plan is not None
    assert plan.outcome(_ranges_answer([b"v", None], [None]), 5) == APPLIED
    assert plan.outcome(_ranges_answer([None, None], [4]), 5) == NOT_APPLIED  # the range kept an old key
    assert plan.outcome(_ranges_answer([None, None], [6]), 5) == CHANGED  # a key written in it since
    assert plan.outcome(_ranges_answer([b"v", None], [4]), 5) == CHANGED  # p written since, not by it
    assert plan.outcome(_ranges_answer([b"w", None], [None]), 5) == CHANGED
    assert plan.outcome(_ranges_answer([None, None], [None]), 5) == NOT_APPLIED
    read = plan.check_request().success[-1].request_range
    assert (read.sort_target, read.sort_order, read.limit) == (
        pb.RangeRequest.MOD,
        pb.RangeRequest.DESCEND,
        1,
    )  # the key of the range written last


# -- on the cluster -------------------------------------------------------------------


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("review-unknown-outcome")


@pytest.mark.etcd
@pytest.mark.parametrize("shape", ["put", "delete", "range", "nested ranges"])
def test_a_retry_never_undoes_a_later_write(url: str, shape: str) -> None:
    """T1 reads ``a`` and writes ``b`` (a put, a delete, a range delete, or one of
    300 range deletes, nested); its commit is applied but the answer lost; T2 then
    reads ``b`` as T1 left it and writes ``b`` again. T2's write must stay.
    Before: T1 was sent again and succeeded, undoing T2's write."""
    store, other = open_store(url), open_store(url)
    try:
        store.put(b"a", b"0")
        store.put(b"b", b"0")

        def t2() -> None:
            with other.transaction() as tx:
                assert tx.get(b"b") == (b"1" if shape == "put" else None)  # T1 was applied
                tx.put(b"b", b"2")

        lost = lose_first_commit_answer(store, t2)
        with (
            pytest.raises(CommitOutcomeUnknown, match="written since by another client"),
            store.transaction() as tx,
        ):
            assert tx.get(b"a") == b"0"
            if shape == "put":
                tx.put(b"b", b"1")
            elif shape == "delete":
                tx.delete(b"b")
            elif shape == "range":
                tx.delete_range(b"b", b"c")
            else:
                for i in range(300):
                    tx.delete_range(b"b%03d" % i, b"b%03d\x00" % i)
                tx.delete_range(b"b", b"b\x00")
        assert lost
        assert other.get(b"b") == b"2"
    finally:
        store.close()
        other.close()


@pytest.mark.etcd
def test_a_lost_answer_with_no_later_write_is_found_applied(url: str) -> None:
    store = open_store(url)
    try:
        store.put(b"a", b"0")
        lost = lose_first_commit_answer(store, lambda: None)
        with store.transaction() as tx:
            assert tx.get(b"a") == b"0"
            tx.put(b"b", b"1")
            tx.delete_range(b"c", b"d")
        assert lost
        assert list(store.scan(b"", None)) == [(b"a", b"0"), (b"b", b"1")]
    finally:
        store.close()


@pytest.mark.etcd
def test_the_async_client_keeps_the_later_write_too(url: str) -> None:
    sync = open_store(url)
    other = open_store(url)
    sync.put(b"a", b"0")

    async def run() -> None:
        store = sync.asynchronous()  # type: ignore[attr-defined]
        client = store._client
        real = client.call
        lost: list[str] = []

        async def flaky(what: str, method: str, request: Any, **kw: Any) -> Any:
            response = await real(what, method, request, **kw)
            if what == "commit" and not lost:
                lost.append(what)
                with other.transaction() as tx:
                    assert tx.get(b"b") == b"1"
                    tx.put(b"b", b"2")
                raise EtcdUnavailable("commit: simulated lost answer")
            return response

        client.call = flaky
        try:
            tx = await store.begin()
            assert await tx.get(b"a") == b"0"
            with pytest.raises(CommitOutcomeUnknown, match="written since by another client"):
                await store.commit(tx, [], [(b"b", b"1")])
            assert lost
        finally:
            await store.close(lambda: None)

    try:
        asyncio.run(run())
        assert other.get(b"b") == b"2"
    finally:
        sync.close()
        other.close()


@pytest.mark.etcd
@pytest.mark.parametrize("shape", ["put", "delete"])
def test_a_blind_commit_is_not_repeated_over_a_later_write(url: str, shape: str) -> None:
    """A transaction that read nothing (no compares) and writes ``b``: applied, the
    answer lost; T2 reads ``b`` as T1 left it and writes it again. Before: the
    client's own retry sent T1 again (a blind commit was "safe to repeat") and
    undid T2's write."""
    store, other = open_store(url), open_store(url)
    try:
        store.put(b"b", b"0")

        def t2() -> None:
            with other.transaction() as tx:
                assert tx.get(b"b") == (b"1" if shape == "put" else None)
                tx.put(b"b", b"2")

        conn = store._conn  # type: ignore[attr-defined]
        conn.kv = kv = LosingKV(conn.kv, t2)
        with (
            pytest.raises(CommitOutcomeUnknown, match="written since by another client"),
            store.transaction() as tx,
        ):
            if shape == "put":
                tx.put(b"b", b"1")
            else:
                tx.delete(b"b")
        assert kv.lost == 1
        assert other.get(b"b") == b"2"
    finally:
        store.close()
        other.close()


@pytest.mark.etcd
def test_a_blind_commit_whose_answer_was_lost_is_found_applied(url: str) -> None:
    store = open_store(url)
    try:
        conn = store._conn  # type: ignore[attr-defined]
        conn.kv = kv = LosingKV(conn.kv, lambda: None)
        with store.transaction() as tx:
            tx.put(b"b", b"1")
            tx.delete_range(b"c", b"d")
        assert kv.lost == 1
        assert list(store.scan(b"", None)) == [(b"b", b"1")]
    finally:
        store.close()
