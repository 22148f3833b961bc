"""Scope.append on etcd: the commit's number is the revision its transaction
read at plus one, guarded by the scope's sequencing key that every commit
appending to the scope reads and rewrites in its one Txn (appends to other
scopes do not race). Keys come back strictly increasing in
commit order from four processes at once, none twice, none lost; the entries of
one transaction share a number, in call order; the asyncio face appends too; a
watch of the scope sees the appended keys in order, each number at most its
commit's revision; bad input gets named errors and writes nothing."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from _changes_engines import four_appenders
from _etcd import own_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.codecs import STR
from keyspace.errors import InvalidArgument, InvalidKey, TransactionConflict, TransactionTooLarge
from keyspace.schemes import Sublevel, TupleScheme
from keyspace.tuples import Versionstamp, pack

SEQUENCING_KEY = b"\xffkeyspace-append\x00" + pack((b"",)) + TupleScheme().prefix(("log",))
"""The sequencing key of the scope ``log`` of a keyspace of the default tuple scheme
(raw prefix ``b""``): the keyspace's base, then the scope's prefix."""


@pytest.fixture
def etcd_url() -> Iterator[str]:
    yield from own_url("append")


def number(stamp: Versionstamp) -> int:
    assert stamp.tr_version is not None  # complete
    return int.from_bytes(stamp.tr_version[:8], "big")


def test_four_processes_appending_at_once_get_strictly_increasing_keys(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as ks:
        ks.scope("log")[b"\x00"] = b"first"  # the scheme and the scope's records exist before the race
        ks.scope("log").discard(b"\x00")
    keys = [k for k, _ in four_appenders(etcd_url, 120, timeout=180)]
    assert all(k.is_complete() and k.user_version == 0 for k in keys)


def test_appends_inside_a_transaction_share_its_number_in_call_order(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as ks:
        log = ks.scope("log")
        first = log.append(b"a")
        with ks.transaction() as tx:
            inside = [tx.scope("log").append(b"b"), tx.scope("log").append(b"c")]
            assert inside == [Versionstamp.incomplete(0), Versionstamp.incomplete(1)]
            tx.scope("other")[b"k"] = b"v"
            tx.scope("log").append(b"d")
        with pytest.raises(LookupError), ks.transaction() as tx:
            tx.scope("log").append(b"never")
            raise LookupError
        last = log.append(b"e")
        assert ks.scope("other")[b"k"] == b"v"
        assert list(log.values()) == [b"a", b"b", b"c", b"d", b"e"]
        keys = list(log.keys())
        assert keys == sorted(keys) and keys[0] == first and keys[-1] == last
        assert [k.user_version for k in keys] == [0, 0, 1, 2, 0]
        assert len({k.tr_version for k in keys[1:4]}) == 1
        assert list(ks.scopes()) == ["log", "other"]  # the sequencing key is no scope's


def test_a_transaction_that_appends_conflicts_with_an_append_committed_meanwhile(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as a, keyspace.open(etcd_url) as b:
        a.scope("log").append(b"0")
        with pytest.raises(TransactionConflict), a.transaction() as tx:
            tx.scope("log").append(b"late")
            tx.scope("log")[b"plain"] = b"x"
            b.scope("log").append(b"won")  # commits between A's read and A's commit
        assert list(a.scope("log").values()) == [b"0", b"won"]


def test_appends_to_other_scopes_do_not_race(etcd_url: str) -> None:
    """Each scope has its own sequencing key: an append to another scope committed
    between a transaction's read and its commit leaves the transaction's append
    to its own scope free to commit, in order."""
    with keyspace.open(etcd_url) as a, keyspace.open(etcd_url) as b:
        first = a.scope("log").append(b"0")
        b.scope("other").append(b"0")
        with a.transaction() as tx:
            tx.scope("log").append(b"mine")
            b.scope("other").append(b"theirs")  # commits between A's read and A's commit
            b.scope("log", "below").append(b"a child's")  # a child scope is another scope
        keys = list(a.scope("log").keys())
        assert keys[0] == first and keys == sorted(keys)
        assert list(a.scope("log").values()) == [b"0", b"mine"]
        assert list(a.scope("other").values()) == [b"0", b"theirs"]
        assert a.store.get(SEQUENCING_KEY) is not None


def test_the_number_never_goes_back_whatever_the_sequencing_key_holds(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as ks:
        log = ks.scope("log")
        before = log.append(b"a")
        for held in (b"", b"\x00" * 12, b"\xff" * 12, b"garbage"):
            ks.store.put(SEQUENCING_KEY, held)
            after = log.append(held)
            assert after > before
            before = after
        assert list(log.values())[1:] == [b"", b"\x00" * 12, b"\xff" * 12, b"garbage"]


def test_a_watch_of_the_scope_sees_appended_keys_in_commit_order(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as ks:
        log = ks.scope("log")
        log[b"\x00"] = b"records"
        log.discard(b"\x00")
        with log.watch() as changes:
            made = [log.append(b"%d" % i) for i in range(5)]
            with ks.transaction() as tx:
                tx.scope("log").append(b"5")
                tx.scope("log").append(b"6")
            made.append(log.append(b"7"))
            events: list[Any] = []
            while len(events) < 8:
                event = changes.get(timeout=10)
                assert event is not None, events
                events.append(event)
        assert [e.kind for e in events] == ["put"] * 8
        assert [e.value for e in events] == [b"%d" % i for i in range(8)]
        keys = [e.key for e in events]
        assert keys == list(log.keys()) and all(a < b for a, b in itertools.pairwise(keys))
        assert keys[:5] == made[:5] and keys[-1] == made[-1]
        commits = [list(group) for _, group in itertools.groupby(events, key=lambda e: e.revision)]
        assert [len(c) for c in commits] == [1] * 5 + [2, 1]
        previous = 0
        for commit in commits:  # one number a commit: at most its revision, past the one before
            assert [e.key.user_version for e in commit] == list(range(len(commit)))
            assert {number(e.key) for e in commit} == {number(commit[0].key)}
            assert previous < number(commit[0].key) <= commit[0].revision
            previous = commit[0].revision


def test_async_appends_sort_in_commit_order(etcd_url: str) -> None:
    async def main() -> None:
        async with await keyspace.aio.open(etcd_url) as aks:
            log = aks.scope("acme", "log")
            made = [await log.append(b"%d" % i) for i in range(5)]
            assert all(isinstance(k, Versionstamp) and k.is_complete() for k in made)
            assert made == sorted(made) and len(set(made)) == 5
            assert [v async for v in log.values()] == [b"%d" % i for i in range(5)]
            async with aks.transaction() as tx:
                with pytest.raises(InvalidArgument, match="inside an async transaction"):
                    await tx.scope("acme", "log").append(b"x")
            assert await log.len() == 5

    asyncio.run(asyncio.wait_for(main(), 60))


def test_byte_schemes_append_the_versionstamps_bytes(etcd_url: str) -> None:
    with keyspace.open(etcd_url, scheme=Sublevel()) as ks:
        log = ks.scope("log")
        stamps = [log.append(b"%d" % i) for i in range(3)]
        assert list(log.keys()) == [s.to_bytes() for s in stamps]


def test_bad_input_gets_named_errors_and_writes_nothing(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as ks:
        log = ks.scope("log")
        with pytest.raises(InvalidKey, match=r"^value"):
            log.append("not bytes")
        with pytest.raises(InvalidArgument, match="takes neither a Versionstamp nor bytes"):
            ks.scope("named", key=STR).append(b"x")
        with pytest.raises(TransactionTooLarge, match="128"), ks.transaction() as tx:
            for i in range(200):  # etcd commits at most 128 puts in one Txn
                tx.scope("log").append(b"%d" % i)
        assert list(log.items()) == [] and list(ks.scope("named", key=STR).items()) == []
        assert ks.store.get(SEQUENCING_KEY) is None


def test_append_on_etcd_under_a_feature_without_a_log(etcd_url: str) -> None:
    """accounting=True hooks the store; etcd's revisions still number the appends."""
    with keyspace.open(etcd_url, accounting=True) as ks:
        log = ks.scope("log")
        first = log.append(b"a")
        with ks.transaction() as tx:
            tx.scope("log").append(b"b")
        assert list(log.values()) == [b"a", b"b"] and next(iter(log.keys())) == first
        assert log.stats().keys == 2


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=6))
def test_appends_in_any_mix_of_commits_come_back_in_that_order(
    etcd_url: str, steps: list[tuple[int, bool]]
) -> None:
    with keyspace.open(etcd_url) as ks:
        log = ks.scope("mix")
        log.clear()
        expected: list[bytes] = []
        for n, in_tx in steps:
            values = [b"%d" % (len(expected) + i) for i in range(n)]
            if in_tx:
                with ks.transaction() as tx:
                    for v in values:
                        tx.scope("mix").append(v)
            else:
                for v in values:
                    log.append(v)
            expected += values
        assert list(log.values()) == expected


@st.composite
def interleavings(draw: st.DrawFn) -> list[tuple[int, str]]:
    """The steps of up to three transactions that append (``begin``, ``append``
    a few times, ``commit``) and of appends outside any (``own``), interleaved
    at random, each client's steps in its order."""
    clients = draw(st.integers(1, 3))
    queues = [
        [(c, "begin")] + [(c, "append")] * draw(st.integers(1, 3)) + [(c, "commit")] for c in range(clients)
    ]
    queues.append([(clients, "own")] * draw(st.integers(0, 3)))
    steps: list[tuple[int, str]] = []
    while any(queues):
        queue = draw(st.sampled_from([q for q in queues if q]))
        steps.append(queue.pop(0))
    return steps


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=interleavings())
def test_interleaved_transactions_that_append_commit_in_order_or_write_nothing(
    etcd_url: str, steps: list[tuple[int, str]]
) -> None:
    """Transactions of separate clients appending at once: each that commits has
    its appends in the log, after those of every commit before it, in call order,
    under one number; each that conflicts wrote nothing."""
    with keyspace.open(etcd_url) as ks:
        ks.scope("race").clear()
        clients = {c for c, _ in steps}
        opened = {c: keyspace.open(etcd_url) for c in clients}
        try:
            blocks: dict[int, Any] = {}
            views: dict[int, Any] = {}
            made: dict[int, list[bytes]] = {c: [] for c in clients}
            committed: list[list[bytes]] = []
            for client, step in steps:
                value = b"%d-%d" % (client, len(made[client]))
                if step == "own":
                    opened[client].scope("race").append(value)
                    committed.append([value])
                elif step == "begin":
                    blocks[client] = opened[client].transaction()
                    views[client] = blocks[client].__enter__()
                elif step == "append":
                    views[client].scope("race").append(value)
                    made[client].append(value)
                else:
                    try:
                        blocks[client].__exit__(None, None, None)
                    except TransactionConflict:
                        continue
                    committed.append(made[client])
            items = list(ks.scope("race").items())
        finally:
            for other in opened.values():
                other.close()
    assert [v for _, v in items] == [v for commit in committed for v in commit]
    keys = [k for k, _ in items]
    assert all(a < b for a, b in itertools.pairwise(keys))
    at = 0
    for commit in committed:  # one number a commit, its appends in call order
        mine = keys[at : at + len(commit)]
        at += len(commit)
        assert len({k.tr_version for k in mine}) == 1
        assert [k.user_version for k in mine] == list(range(len(commit)))
