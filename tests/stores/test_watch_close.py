"""Closing a store (or its keyspace) under a watch ends the watch the same way on
every engine that watches: its consumer gets the events queued before the
close, then :class:`StoreClosed`, as any other read of a closed store raises;
iterating (with or without ``async``) raises it too. Closing the watch itself
ends iteration cleanly. etcd ended such a watch with the gRPC ``CANCELLED:
Stream removed`` of its closed channel (a :class:`StoreError`), memory with
:class:`StoreClosed`.

One test per behaviour, run on every engine of :data:`ENGINES` (an engine that
learns to watch joins the list).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from _etcd import own_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.errors import StoreClosed
from keyspace.stores import Store, open_store

ENGINES = ["memory", pytest.param("etcd", marks=pytest.mark.etcd)]
WAKE_S = 5.0
"""The longest a consumer may take to notice the close."""


@pytest.fixture(params=ENGINES)
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A URL of a new, empty store of the engine (etcd: a key prefix of the test
    cluster of this test's own, emptied afterwards)."""
    if request.param == "memory":
        yield "memory:"
    else:
        yield from own_url("watch-close")


def _open(url: str, n: int = 0) -> keyspace.Keyspace:
    """The keyspace at ``url`` (etcd: under the ``n``-th key prefix of its own)."""
    return keyspace.open(url if url == "memory:" else f"{url}-{n}")


def _started(watch: keyspace.ScopeWatch) -> keyspace.ScopeWatch:
    assert watch.store_watch.wait_started(10), "the watch was not set up in 10 s"
    return watch


def _consume_in_thread(watch: keyspace.ScopeWatch) -> tuple[threading.Thread, list[object]]:
    """Iterate ``watch`` in a thread: its list gets each event's key, then the
    exception that ended the iteration, or ``"end"``."""
    got: list[object] = []

    def run() -> None:
        try:
            for event in watch:
                assert event.kind == "put"
                got.append(event.key)
            got.append("end")
        except Exception as exc:
            got.append(exc)

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    return reader, got


def test_iteration_raises_store_closed_when_the_keyspace_closes(url: str) -> None:
    ks = _open(url)
    scope = ks.scope("w")
    watch = _started(scope.watch())
    reader, got = _consume_in_thread(watch)
    scope[b"a"] = b"1"
    scope[b"b"] = b"2"
    deadline = time.monotonic() + WAKE_S
    while len(got) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    ks.close()
    reader.join(WAKE_S)
    assert not reader.is_alive(), "the consumer still waits on a watch of a closed store"
    assert got[:2] == [b"a", b"b"]
    assert len(got) == 3 and isinstance(got[2], StoreClosed), got
    assert "closed" in str(got[2])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=st.integers(min_value=0, max_value=4), batch=st.booleans())
def test_get_gives_the_events_before_the_close_then_store_closed(url: str, writes: int, batch: bool) -> None:
    """Whatever was written before the close is delivered, then ``get`` raises
    StoreClosed at once (not after its timeout), and again on every later call."""
    ks = _open(url, time.monotonic_ns())
    scope = ks.scope("w")
    watch = _started(scope.watch())
    expected = [b"%d" % i for i in range(writes)]
    if batch:
        scope.update(dict.fromkeys(expected, b"v"))
    else:
        for key in expected:
            scope[key] = b"v"
    got = []
    for _ in expected:  # etcd: every event is in before the close
        event = watch.get(WAKE_S)
        assert event is not None, f"{len(got)} of {writes} events came"
        got.append(event.key)
    ks.close()
    started = time.monotonic()
    with pytest.raises(StoreClosed, match="closed"):
        watch.get(WAKE_S * 2)
    assert time.monotonic() - started < WAKE_S
    with pytest.raises(StoreClosed):
        watch.get(0)
    assert sorted(got) == expected


def test_async_iteration_raises_store_closed_when_the_keyspace_closes(url: str) -> None:
    async def main() -> list[object]:
        aks = await keyspace.aio.open(url)
        scope = aks.scope("w")
        watch = await scope.watch()
        assert watch.store_watch.wait_started(10)
        got: list[object] = []

        async def consume() -> None:
            try:
                async for event in watch:
                    assert event.kind == "put"
                    got.append(event.key)
                got.append("end")
            except Exception as exc:
                got.append(exc)

        task = asyncio.create_task(consume())
        await scope.put(b"k", b"v")
        deadline = time.monotonic() + WAKE_S
        while not got and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await aks.close()
        await asyncio.wait_for(task, WAKE_S)
        return got

    got = asyncio.run(asyncio.wait_for(main(), 30))
    assert got[0] == b"k"
    assert len(got) == 2 and isinstance(got[1], StoreClosed), got


def test_closing_the_watch_itself_ends_iteration_cleanly(url: str) -> None:
    ks = _open(url)
    try:
        watch = _started(ks.scope("w").watch())
        reader, got = _consume_in_thread(watch)
        ks.scope("w")[b"a"] = b"1"
        deadline = time.monotonic() + WAKE_S
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        watch.close()
        reader.join(WAKE_S)
        assert not reader.is_alive()
        assert got == [b"a", "end"]
    finally:
        ks.close()


def test_a_store_watch_of_an_empty_range_ends_when_the_store_closes(url: str) -> None:
    """A watch that can see no key (etcd: no stream at all) is ended by the close too."""
    store: Store = open_store(url)
    watch = store.watch([(b"m", b"m")])
    store.close()
    started = time.monotonic()
    with pytest.raises(StoreClosed):
        watch.get(WAKE_S * 2)
    assert time.monotonic() - started < WAKE_S
