"""etcd: a call under way when its store is closed ends with :class:`StoreClosed`,
as a call made after the close does, sync and async. The close cancels the
channel's calls, and gRPC's ``CANCELLED: Stream removed (Channel closed!)`` was
reported as a :class:`StoreError` from the cluster (about 6 reads in 10 cut by a
close); a watch closed the same way is in tests/stores/test_watch_close.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from _etcd import own_url

import keyspace
import keyspace.aio
from keyspace.errors import StoreClosed, StoreError

pytestmark = pytest.mark.etcd

ROUNDS = 12
THREADS = 3
STEPS = 100_000
"""Operations per thread: a bound far past the close."""
JOIN_S = 20


@pytest.fixture
def url() -> Iterator[str]:
    yield from own_url("calls-cut-by-close")


def _worker(scope: keyspace.Scope, kind: int, ended: list[BaseException | str]) -> None:
    try:
        for i in range(STEPS):
            if kind == 0:
                scope.get(b"k")
            elif kind == 1:
                list(scope.items())
            else:
                scope[b"w%d" % (i % 20)] = b"v"
        ended.append("finished")
    except StoreError as exc:  # StoreClosed is one
        ended.append(exc)


def test_calls_under_way_when_the_store_closes_raise_store_closed(url: str) -> None:
    for round_ in range(ROUNDS):
        ks = keyspace.open(f"{url}-{round_}")
        scope = ks.scope("c")
        scope.update({b"k": b"v" * 2000, **{b"x%d" % i: b"v" * 200 for i in range(50)}})
        ended: list[BaseException | str] = []
        threads = [
            threading.Thread(target=_worker, args=(scope, n % 3, ended), daemon=True) for n in range(THREADS)
        ]
        for t in threads:
            t.start()
        time.sleep(0.05 + 0.02 * (round_ % 4))
        ks.close()
        for t in threads:
            t.join(JOIN_S)
        assert not any(t.is_alive() for t in threads), f"round {round_}: a thread still runs"
        wrong = [e for e in ended if not isinstance(e, StoreClosed)]
        assert not wrong, f"round {round_}: {wrong[0]!r}"


def test_async_calls_under_way_when_the_keyspace_closes_raise_store_closed(url: str) -> None:
    async def work(scope: keyspace.aio.AsyncScope, kind: int) -> BaseException | str:
        try:
            for i in range(STEPS):
                if kind == 0:
                    await scope.get(b"k")
                elif kind == 1:
                    [item async for item in scope.items()]
                else:
                    await scope.put(b"w%d" % (i % 20), b"v")
        except StoreError as exc:
            return exc
        return "finished"

    async def round_(n: int) -> list[BaseException | str]:
        aks = await keyspace.aio.open(f"{url}-a{n}")
        scope = aks.scope("c")
        await scope.put(b"k", b"v" * 2000)
        tasks = [asyncio.create_task(work(scope, k % 3)) for k in range(THREADS)]
        await asyncio.sleep(0.05 + 0.02 * (n % 4))
        await aks.close()
        return list(await asyncio.wait_for(asyncio.gather(*tasks), JOIN_S))

    for n in range(ROUNDS):
        ended = asyncio.run(round_(n))
        wrong = [e for e in ended if not isinstance(e, StoreClosed)]
        assert not wrong, f"round {n}: {wrong[0]!r}"
