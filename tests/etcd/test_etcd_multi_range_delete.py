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
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _etcd import own_url

import keyspace
import keyspace.aio
from keyspace.schemes import ScopeHash, Sublevel
from keyspace.stores._etcd_proto import kv_pb2 as pb

pytestmark = pytest.mark.etcd

_WRITES = (pb.TxnRequest, pb.DeleteRangeRequest, pb.PutRequest)


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("multi-range")


class _Injected(Exception):
    pass


def _count_writes(conn: Any, fail_at: int | None = None) -> list[str]:
    """Record the write requests ``conn`` sends (a ``Txn`` that only reads is
    none); with ``fail_at``, the ``fail_at``-th raises before it is sent."""
    seen: list[str] = []
    call = conn.call

    def counted(what: str, method: Callable[..., Any], request: Any, **kw: Any) -> Any:
        reads_only = isinstance(request, pb.TxnRequest) and not request.success
        if isinstance(request, _WRITES) and not reads_only:
            seen.append(type(request).__name__)
            if fail_at is not None and len(seen) == fail_at:
                raise _Injected(f"request {fail_at} failed before it was sent")
        return call(what, method, request, **kw)

    conn.call = counted
    return seen


def _sublevel_data(ks: keyspace.Keyspace) -> tuple[keyspace.Scope, dict[bytes, bytes]]:
    scope = ks.scope("t", "users")
    own = {b"\x00low": b"1", b"\x20space": b"2", b"a": b"3", b"zz": b"4"}  # both own ranges
    scope.update(own)
    scope.scope("child").update({b"c": b"x"})
    ks.scope("t", "users0").update({b"n": b"x"})
    return scope, own


def _others(ks: keyspace.Keyspace) -> list[Any]:
    return [list(ks.scope("t", "users", "child").items()), list(ks.scope("t", "users0").items())]


@pytest.mark.parametrize("fail_at", [None, 1, 2])
def test_a_sublevel_clear_is_all_or_nothing(url: str, fail_at: int | None) -> None:
    with keyspace.open(url, scheme=Sublevel()) as ks:
        scope, own = _sublevel_data(ks)
        others = _others(ks)
        seen = _count_writes(ks.store._conn, fail_at)  # type: ignore[attr-defined]
        try:
            scope.clear()
        except _Injected:
            assert dict(scope.items()) == own  # none of it
        else:
            assert dict(scope.items()) == {}
        assert seen == ["TxnRequest"]  # one request, whether it failed or not
        assert _others(ks) == others


def test_a_scopehash_root_drop_is_one_txn(url: str) -> None:
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        for name in ("a", "b", "c"):
            ks.scope(name).update({b"k1": b"v", b"k2": b"v"})
        seen = _count_writes(ks.store._conn)  # type: ignore[attr-defined]
        ks.scope().drop()
        assert seen == ["TxnRequest"]
        assert all(not dict(ks.scope(name).items()) for name in ("a", "b", "c"))


def test_a_drop_over_etcds_transaction_limit_runs_range_by_range(url: str) -> None:
    names = [f"n{i:03d}" for i in range(130)]  # 130 ranges: over 128 operations
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        for name in names:
            ks.scope(name)[b"k"] = b"v"
        seen = _count_writes(ks.store._conn)  # type: ignore[attr-defined]
        ks.scope().drop()
        assert len(seen) >= 130 and "DeleteRangeRequest" in seen
        assert all(ks.scope(name).get(b"k") is None for name in names)


def test_an_async_sublevel_clear_is_one_txn(url: str) -> None:
    async def run() -> None:
        async with await keyspace.aio.open(url, scheme=Sublevel()) as aks:
            scope = aks.scope("t", "users")
            await scope.update({b"\x00low": b"1", b"a": b"3"})  # both own ranges
            await scope.scope("child").update({b"c": b"x"})
            client = aks.store._client  # type: ignore[attr-defined]
            seen: list[str] = []
            call = client.call

            async def counted(what: str, method: str, request: Any, **kw: Any) -> Any:
                if method in ("Txn", "DeleteRange", "Put") and not (method == "Txn" and not request.success):
                    seen.append(method)
                return await call(what, method, request, **kw)

            client.call = counted
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
