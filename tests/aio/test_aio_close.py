"""Closing an async keyspace: it never waits for a transaction another task
holds, and a close that is cancelled still closes the store.

``ThreadedStore.close`` waited for the lock of a transaction another task held
open, for as long as it was held (for ever, if that task waited on the
shutdown); and ``AsyncKeyspace.close`` marked itself closed before it awaited the
store's close, so a close cut by a timeout left the store open (a LevelDB
directory locked for the life of the process) and every later ``close()``
returned at once.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

import keyspace
import keyspace.aio
from keyspace.errors import StoreClosed

pytestmark = pytest.mark.timeout(60)

ENGINES = {
    "memory": lambda d: "memory:",
    "lmdb": lambda d: f"lmdb://{d / 'db'}",
    "sqlite": lambda d: f"sqlite://{d / 'db.sqlite'}",
    "leveldb": lambda d: f"leveldb://{d / 'db'}",
    "rocksdb": lambda d: f"rocksdb://{d / 'db'}",
}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_close_ends_a_transaction_another_task_holds(tmp_path: Path, engine: str) -> None:
    async def main() -> tuple[float, list[str]]:
        aks = await keyspace.aio.open(ENGINES[engine](tmp_path))
        inside, shutdown = asyncio.Event(), asyncio.Event()
        outcome: list[str] = []

        async def holder() -> None:
            try:
                async with aks.transaction() as tx:
                    await tx.scope("a").put(b"k", b"v")
                    inside.set()
                    await shutdown.wait()  # set only once close() has returned
                    await tx.scope("a").put(b"k2", b"v")
                outcome.append("committed")
            except StoreClosed:
                outcome.append("StoreClosed")

        task = asyncio.create_task(holder())
        await inside.wait()
        started = time.monotonic()
        await asyncio.wait_for(aks.close(), 10)
        took = time.monotonic() - started
        shutdown.set()
        await task
        return took, outcome

    took, outcome = asyncio.run(main())
    assert took < 5 and outcome == ["StoreClosed"]
    if engine != "memory":
        with keyspace.open(ENGINES[engine](tmp_path)) as ks:  # reopens: nothing held, nothing committed
            assert ks.scope("a").get(b"k") is None


@pytest.mark.parametrize("engine", ["leveldb", "lmdb"])
def test_a_cancelled_close_still_closes_the_store(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = ENGINES[engine](tmp_path)

    async def main() -> Any:
        aks = await keyspace.aio.open(url)
        await aks.scope("a").put(b"k", b"v")
        close = aks.sync.close

        def slow_close() -> None:  # a close that takes a while (a flush, a sync)
            time.sleep(0.5)
            close()

        monkeypatch.setattr(aks.sync, "close", slow_close)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(aks.close(), 0.1)
        await aks.close()  # returns once the close has ended
        return aks

    aks = asyncio.run(main())
    with pytest.raises(StoreClosed):
        aks.sync.scope("a").get(b"k")
    with keyspace.open(url) as again:  # LevelDB: its lock is free again
        assert again.scope("a")[b"k"] == b"v"
