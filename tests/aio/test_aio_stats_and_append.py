"""The asyncio scope answers ``stats()`` and ``append()`` as the synchronous scope
does: the counters of a keyspace opened with ``accounting=True``, and keys filled
in with their place in the commit order on one opened with ``changes=True``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import keyspace
import keyspace.aio
from keyspace.errors import AccountingUnavailable
from keyspace.tuples import Versionstamp


def test_async_stats_are_the_counters(tmp_path: Path) -> None:
    async def main() -> None:
        ks = await keyspace.aio.open(f"lmdb:///{tmp_path}/db", accounting=True)
        try:
            users = ks.scope("acme", "users")
            await users.put(b"alice", b"1")
            await users.put(b"bob", b"22")
            stats = await users.stats()
            assert stats == ks.sync.scope("acme", "users").stats()
            assert (stats.keys, stats.subtree_keys) == (2, 2)
            assert (await ks.scope("acme").stats()).subtree_keys == 2
        finally:
            await ks.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_async_stats_without_accounting_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        ks = await keyspace.aio.open(f"lmdb:///{tmp_path}/db")
        try:
            try:
                await ks.scope("acme").stats()
            except AccountingUnavailable:
                return
            raise AssertionError("stats() without accounting answered")
        finally:
            await ks.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_async_appends_sort_in_commit_order(tmp_path: Path) -> None:
    async def main() -> None:
        ks = await keyspace.aio.open(f"lmdb:///{tmp_path}/db", changes=True)
        try:
            log = ks.scope("acme", "log")
            made = [await log.append(b"%d" % i) for i in range(5)]
            assert all(isinstance(key, Versionstamp) and key.is_complete() for key in made)
            assert made == sorted(made)
            assert [v async for v in log.values()] == [b"%d" % i for i in range(5)]
        finally:
            await ks.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_async_append_inside_a_transaction_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        ks = await keyspace.aio.open(f"lmdb:///{tmp_path}/db", changes=True)
        try:
            async with ks.transaction() as tx:
                try:
                    await tx.scope("acme", "log").append(b"x")
                except keyspace.errors.InvalidArgument as exc:
                    assert "inside an async transaction" in str(exc)
                else:
                    raise AssertionError("append in an async transaction answered")
            assert await ks.scope("acme", "log").len() == 0
        finally:
            await ks.close()

    asyncio.run(asyncio.wait_for(main(), 60))
