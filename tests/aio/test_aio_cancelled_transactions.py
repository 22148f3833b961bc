"""An async transaction that raises, is cancelled or times out, at any point from
``begin`` to ``commit``: nothing is half-applied, and the store is not left held by
the abandoned transaction (later transactions, writes and snapshots run), on the
memory, LMDB and SQLite engines (one worker thread each)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace.aio
from keyspace.aio import AsyncKeyspace

KINDS = ["memory", "lmdb", "sqlite"]


def _url(kind: str, tmp_path: Path) -> str:
    return {"memory": "memory:", "lmdb": f"lmdb:///{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db"}[kind]


def _run(kind: str, tmp_path: Path, body: Callable[[AsyncKeyspace], Any]) -> None:
    async def main() -> None:
        aks = await keyspace.aio.open(_url(kind, tmp_path))
        try:
            await aks.scope("a").update({b"x": b"0", b"y": b"0"})
            await body(aks)
            await _still_usable(aks)
        finally:
            await asyncio.wait_for(aks.close(), 5)

    asyncio.run(asyncio.wait_for(main(), 20))


async def _still_usable(aks: AsyncKeyspace) -> None:
    """Writes, transactions and snapshots all run (bounded: a held store hangs)."""
    scope = aks.scope("a")

    async def check() -> None:
        await scope.put(b"after", b"1")
        async with aks.transaction() as tx:
            await tx.scope("a").put(b"after", b"2")
        async with aks.snapshot() as snap:
            assert await snap.scope("a").get(b"after") == b"2"

    await asyncio.wait_for(check(), 5)


async def _pair(aks: AsyncKeyspace) -> tuple[bytes | None, bytes | None]:
    scope = aks.scope("a")
    return await scope.get(b"x"), await scope.get(b"y")


def _busy(aks: AsyncKeyspace, seconds: float) -> asyncio.Future[Any]:
    """Keep the store's one worker thread busy for ``seconds``."""
    return asyncio.ensure_future(aks.store.runner.run_held(time.sleep, seconds))  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", KINDS)
def test_cancelled_while_begin_waits_for_the_worker(kind: str, tmp_path: Path) -> None:
    async def body(aks: AsyncKeyspace) -> None:
        busy = _busy(aks, 0.2)

        async def txn() -> None:
            async with aks.transaction() as tx:
                await tx.scope("a").put(b"x", b"1")

        task = asyncio.create_task(txn())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await busy
        assert await _pair(aks) == (b"0", b"0")

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("what", ["transaction", "snapshot"])
def test_cancelled_while_the_worker_opens_the_view(kind: str, what: str, tmp_path: Path) -> None:
    """The cancel lands while the worker is inside the engine's begin: the view it
    opens is ended once open."""

    async def body(aks: AsyncKeyspace) -> None:
        store = aks.sync.store
        real = getattr(store, what)

        def slow() -> Any:
            time.sleep(0.2)
            return real()

        setattr(store, what, slow)
        try:
            opening = aks.transaction() if what == "transaction" else aks.snapshot()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(opening.__aenter__(), 0.05)
        finally:
            del store.__dict__[what]
        await asyncio.sleep(0.3)
        assert await _pair(aks) == (b"0", b"0")

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", KINDS)
def test_cancelled_between_writes_applies_nothing(kind: str, tmp_path: Path) -> None:
    async def body(aks: AsyncKeyspace) -> None:
        wrote_one = asyncio.Event()

        async def txn() -> None:
            async with aks.transaction() as tx:
                await tx.scope("a").put(b"x", b"1")
                wrote_one.set()
                await asyncio.sleep(10)
                await tx.scope("a").put(b"y", b"1")

        task = asyncio.create_task(txn())
        await asyncio.wait_for(wrote_one.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _pair(aks) == (b"0", b"0")

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", KINDS)
def test_error_between_writes_applies_nothing(kind: str, tmp_path: Path) -> None:
    async def body(aks: AsyncKeyspace) -> None:
        with pytest.raises(ZeroDivisionError):
            async with aks.transaction() as tx:
                await tx.scope("a").put(b"x", b"1")
                await tx.scope("b").update({b"z": b"1"})
                _ = 1 / 0
        assert await _pair(aks) == (b"0", b"0")
        assert [k async for k in aks.scope("b")] == []

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
def test_timeout_around_a_whole_transaction_is_all_or_nothing(
    kind: str, delay: float, tmp_path: Path
) -> None:
    """A timeout that may land anywhere, the commit included: both writes or none."""

    async def body(aks: AsyncKeyspace) -> None:
        busy = _busy(aks, delay)

        async def txn() -> None:
            async with aks.transaction() as tx:
                await tx.scope("a").put(b"x", b"1")
                await tx.scope("a").put(b"y", b"1")

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(txn(), 0.02)
        await busy
        await asyncio.sleep(0.05)
        assert await _pair(aks) in ((b"0", b"0"), (b"1", b"1"))

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", ["sublevel-clear", "scopehash-root-drop"])
def test_an_operation_of_several_range_deletes_is_not_cut_by_a_timeout(
    kind: str, case: str, tmp_path: Path
) -> None:
    """A sublevel scope's clear deletes its two own ranges (keys below the
    separator, keys above it), a ScopeHash root's drop one range per name: a
    timeout that lands during the first delete leaves none of them or all."""
    scheme = case.split("-")[0]

    async def main() -> None:
        aks = await keyspace.aio.open(_url(kind, tmp_path), scheme=scheme)
        try:
            if scheme == "sublevel":
                target = aks.scope("a")
                await target.update({b" ": b"0", b"#": b"1", b"a": b"2", b"~z": b"3"})
                op = target.clear
            else:
                target = aks.scope()
                await target.put(b"r", b"0")
                for name in ("a", "b", "c"):
                    await aks.scope(name).put(b"k", b"1")
                op = target.drop
            before = [k async for k in target]
            store = aks.sync.store
            real = store.delete_range

            def slow(start: bytes, stop: bytes | None) -> None:
                time.sleep(0.15)
                real(start, stop)

            store.delete_range = slow  # type: ignore[method-assign]
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(op(), 0.05)
            finally:
                await asyncio.sleep(0.8)  # every delete that was to run has run
                del store.delete_range
            after = {k async for k in target}
            assert after in (set(), set(before)), f"half applied: {sorted(after)} of {before} left"
            if scheme == "scopehash":
                names = [[k async for k in aks.scope(n)] for n in ("a", "b", "c")]
                assert names in ([[], [], []], [[b"k"]] * 3) and (not names[0]) == (not after)
            await _still_usable(aks)
        finally:
            await asyncio.wait_for(aks.close(), 5)

    asyncio.run(asyncio.wait_for(main(), 20))


@pytest.mark.parametrize("kind", KINDS)
def test_cancelled_while_the_commit_waits_for_the_worker(kind: str, tmp_path: Path) -> None:
    """The block has ended and its commit waits behind another call of the worker
    when the cancel lands: the transaction still ends (both writes or none), and
    the store is not left with an engine transaction open."""

    async def body(aks: AsyncKeyspace) -> None:
        written = asyncio.Event()
        busy: list[asyncio.Future[Any]] = []

        async def txn() -> None:
            async with aks.transaction() as tx:
                await tx.scope("a").put(b"x", b"1")
                await tx.scope("a").put(b"y", b"1")
                busy.append(_busy(aks, 0.3))  # the commit queues behind it
                await asyncio.sleep(0.01)  # the busy call reaches the worker first
                written.set()

        task = asyncio.create_task(txn())
        await asyncio.wait_for(written.wait(), 5)
        await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await busy[0]
        await asyncio.sleep(0.1)
        assert await _pair(aks) in ((b"0", b"0"), (b"1", b"1"))

    _run(kind, tmp_path, body)
