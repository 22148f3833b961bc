"""A delete made of several range deletes on etcd (a Sublevel scope's two own
ranges around its children's; a ScopeHash root's subtree, one range per name) is
one guarded ``Txn`` where it fits in one: a request that fails part-way leaves
all of it or none. Deletes over etcd's 128 operations go into nested
transactions (``test_nested_deletes.py``); a ScopeHash root drop of
130 names reads more registry entries than one ``Txn`` holds compares for, so it
runs range by range, and still deletes exactly the scope's keys. Sync and async
keyspaces alike."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from _etcd import InjectedFault, own_url, record_async_writes, record_writes

import keyspace
import keyspace.aio
from keyspace.schemes import ScopeHash, Sublevel

pytestmark = pytest.mark.etcd


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("multi-range")


def _sublevel_data(ks: keyspace.Keyspace) -> tuple[keyspace.Scope, dict[bytes, bytes]]:
    scope = ks.scope("t", "users")
    own = {b"\x00low": b"1", b"\x20space": b"2", b"a": b"3", b"zz": b"4"}  # both own ranges
    scope.update(own)
    scope.scope("child").update({b"c": b"x"})
    ks.scope("t", "users0").update({b"n": b"x"})
    return scope, own


def _others(ks: keyspace.Keyspace) -> list[Any]:
    return [list(ks.scope("t", "users", "child").items()), list(ks.scope("t", "users0").items())]


@pytest.mark.parametrize("fail", [False, True])
def test_a_sublevel_clear_is_all_or_nothing(url: str, fail: bool) -> None:
    with keyspace.open(url, scheme=Sublevel()) as ks:
        scope, own = _sublevel_data(ks)
        others = _others(ks)
        seen = record_writes(ks.store._conn, (lambda n: True) if fail else None)  # type: ignore[attr-defined]
        if fail:
            with pytest.raises(InjectedFault):
                scope.clear()
            assert dict(scope.items()) == own  # none of it
        else:
            scope.clear()
            assert dict(scope.items()) == {}
        assert seen == ["TxnRequest"]  # one request, whether it failed or not
        assert _others(ks) == others


def test_a_scopehash_root_drop_is_one_txn(url: str) -> None:
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        for name in ("a", "b", "c"):
            ks.scope(name).update({b"k1": b"v", b"k2": b"v"})
        seen = record_writes(ks.store._conn)  # type: ignore[attr-defined]
        ks.scope().drop()
        assert seen == ["TxnRequest"]
        assert all(not dict(ks.scope(name).items()) for name in ("a", "b", "c"))


def test_a_drop_over_etcds_transaction_limit_runs_range_by_range(url: str) -> None:
    names = [f"n{i:03d}" for i in range(130)]  # 130 ranges: over 128 operations
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        for name in names:
            ks.scope(name)[b"k"] = b"v"
        seen = record_writes(ks.store._conn)  # type: ignore[attr-defined]
        ks.scope().drop()
        assert len(seen) >= 130 and "DeleteRangeRequest" in seen
        assert all(ks.scope(name).get(b"k") is None for name in names)


def test_an_async_sublevel_clear_is_one_txn(url: str) -> None:
    async def run() -> None:
        async with await keyspace.aio.open(url, scheme=Sublevel()) as aks:
            scope = aks.scope("t", "users")
            await scope.update({b"\x00low": b"1", b"a": b"3"})  # both own ranges
            await scope.scope("child").update({b"c": b"x"})
            seen = record_async_writes(aks.store._client)  # type: ignore[attr-defined]
            await scope.clear()
            assert seen == ["Txn"]
            assert [k async for k in scope] == []
            assert [k async for k in scope.scope("child")] == [b"c"]

    asyncio.run(run())


def test_async_drop_over_etcds_transaction_limit_runs_range_by_range(url: str) -> None:
    """The async keyspace plans the transaction before it runs it: one over etcd's
    limit is refused while planning, and the drop goes range by range."""
    names = [f"n{i:03d}" for i in range(130)]

    async def run() -> None:
        async with await keyspace.aio.open(url, scheme=ScopeHash()) as aks:
            for name in names:
                await aks.scope(name).set(b"k", b"v")
            await aks.scope().drop()
            assert [name for name in names if await aks.scope(name).get(b"k") is not None] == []

    asyncio.run(run())
