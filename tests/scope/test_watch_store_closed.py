"""A watch whose store closes under it: the consumer wakes with StoreClosed (as an
etcd watch does when its store closes), never waits forever; a watch asked for
after the close is refused with StoreClosed, sync and async."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import keyspace
import keyspace.aio
from keyspace.errors import StoreClosed


def test_get_raises_store_closed_once_the_store_closes() -> None:
    ks = keyspace.open("memory:")
    w = ks.scope("a").watch()
    ks.scope("a")[b"k"] = b"1"
    ks.close()
    event = w.get(1)  # an event queued before the close is still delivered
    assert event is not None and event.key == b"k"
    started = time.monotonic()
    with pytest.raises(StoreClosed, match="closed"):
        w.get(5)
    assert time.monotonic() - started < 1  # not a timeout: the close woke it
    with pytest.raises(StoreClosed):
        w.get(0)


def test_blocked_iteration_wakes_when_another_thread_closes_the_store() -> None:
    ks = keyspace.open("memory:")
    w = ks.scope("a").watch()
    outcome: list[object] = []

    def consume() -> None:
        try:
            outcome.extend(e.key for e in w)
        except StoreClosed as exc:
            outcome.append(exc)

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    time.sleep(0.05)
    ks.scope("a")[b"x"] = b"1"
    time.sleep(0.05)
    ks.close()
    reader.join(5)
    assert not reader.is_alive(), "the consumer still waits on a watch of a closed store"
    assert outcome[0] == b"x"
    assert isinstance(outcome[-1], StoreClosed)


def test_async_iteration_raises_store_closed_when_the_async_keyspace_closes() -> None:
    """As iteration without ``async`` does: the events before the close, then StoreClosed."""

    async def main() -> list[object]:
        aks = await keyspace.aio.open("memory:")
        scope = aks.scope("a")
        w = await scope.watch()
        got: list[object] = []

        async def consume() -> None:
            try:
                async for event in w:
                    assert event.kind == "put"
                    got.append(event.key)
            except StoreClosed as exc:
                got.append(exc)

        task = asyncio.create_task(consume())
        await scope.put(b"k", b"v")
        await asyncio.sleep(0.05)
        await aks.close()
        await asyncio.wait_for(task, 5)
        return got

    got = asyncio.run(asyncio.wait_for(main(), 10))
    assert got[0] == b"k" and len(got) == 2 and isinstance(got[1], StoreClosed)


def test_watch_after_close_is_refused() -> None:
    ks = keyspace.open("memory:")
    scope = ks.scope("a")
    ks.close()
    with pytest.raises(StoreClosed):
        scope.watch()

    async def main() -> None:
        aks = await keyspace.aio.open("memory:")
        scope = aks.scope("a")
        await aks.close()
        with pytest.raises(StoreClosed):
            await scope.watch()
        with pytest.raises(StoreClosed):
            await scope.watch(subtree=True)

    asyncio.run(asyncio.wait_for(main(), 10))


def test_other_watches_and_later_writes_are_unaffected_by_closing_one_store() -> None:
    """Closing one memory store ends only its own watches."""
    one, two = keyspace.open("memory:"), keyspace.open("memory:")
    w1, w2 = one.scope("a").watch(), two.scope("a").watch()
    one.close()
    two.scope("a")[b"k"] = b"v"
    event = w2.get(1)
    assert event is not None and event.key == b"k"
    with pytest.raises(StoreClosed):
        w1.get(0)
    two.close()
