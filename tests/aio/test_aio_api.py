"""keyspace.aio: same semantics and errors as the sync API, without blocking the loop.

- 100 concurrent tasks doing read-modify-write transactions on one async keyspace
  reach the exact total, while a heartbeat task keeps ticking (memory, LMDB,
  SQLite through the one worker thread; etcd through the pool, retrying conflicts);
- the store conformance suite runs through the async API (a store-shaped bridge
  over an async scope, driven from a loop in another thread).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from _etcd import etcd_cluster
from hypothesis import example, given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.errors import (
    CommitOutcomeUnknown,
    EtcdUnavailable,
    HashCollision,
    InvalidKey,
    KeyspaceError,
    KeyTooLarge,
    LayoutError,
    SchemeMismatch,
    StoreError,
    TransactionTooLarge,
    WatchUnsupported,
)
from keyspace.stores import Store, open_store
from keyspace.stores._base import Op, ReadView, WriteView
from keyspace.stores.etcd import TransactionConflict
from keyspace.testing import MakeStore, StoreSuite
from keyspace.testing.etcd_cluster import LocalCluster

T = TypeVar("T")


def _etcd() -> LocalCluster:
    return etcd_cluster()


def _url(kind: str, tmp_path: Path) -> str:
    if kind == "etcd":
        return _etcd().url + "/aio-" + uuid.uuid4().hex
    return {"memory": "memory:", "lmdb": f"lmdb:///{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db"}[kind]


def _wipe(kind: str, url: str) -> None:
    """Remove an etcd test keyspace's keys, its scheme record too."""
    if kind == "etcd":
        store = open_store(url)
        store.delete_range(b"", None)
        store.close()


KINDS = ["memory", "lmdb", "sqlite", pytest.param("etcd", marks=pytest.mark.etcd)]


class _Heartbeat:
    """Ticks every 5 ms on the loop; ``worst`` is the longest gap seen."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.ticks = 0

    async def run(self, stop: asyncio.Event) -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.monotonic()
            self.worst = max(self.worst, now - last)
            self.ticks += 1
            last = now


@pytest.mark.quiet  # the loop's stall bound assumes no other test loads the machine
@pytest.mark.parametrize("kind", KINDS)
def test_100_concurrent_read_modify_write_transactions(kind: str, tmp_path: Path) -> None:
    tasks, counters = 100, 10

    async def main() -> tuple[int, int, _Heartbeat]:
        ks = await keyspace.aio.open(_url(kind, tmp_path))
        heart, stop = _Heartbeat(), asyncio.Event()
        beating = asyncio.create_task(heart.run(stop))
        conflicts = 0

        async def increment(i: int) -> None:
            nonlocal conflicts
            for _attempt in range(200):  # bounded: conflicts only when another commit won
                try:
                    async with ks.transaction() as tx:
                        c = tx.scope("counters", value="int")
                        key = b"c%d" % (i % counters)
                        await c.put(key, await c.get(key, 0) + 1)
                    return
                except TransactionConflict:
                    conflicts += 1
                    await asyncio.sleep(0.001 * (i % 7))
            raise AssertionError(f"task {i} lost 200 races in a row")

        try:
            await asyncio.gather(*(increment(i) for i in range(tasks)))
            total = sum([v async for v in ks.scope("counters", value="int").values()])
        finally:
            stop.set()
            await beating
            await ks.scope().drop()
            await ks.close()
            _wipe(kind, ks.url)
        return total, conflicts, heart

    total, _conflicts, heart = asyncio.run(asyncio.wait_for(main(), 90))
    assert total == tasks
    # a call that blocks the loop stalls it for the whole run of the transactions; the
    # bound leaves room for the scheduler of a loaded machine (two cores running a
    # three-member cluster stalled a healthy loop 0.253 s once)
    assert heart.ticks > 0 and heart.worst < 0.5, f"the loop stalled {heart.worst:.3f} s"


@pytest.mark.parametrize("kind", KINDS)
def test_same_semantics_and_errors(kind: str, tmp_path: Path) -> None:
    async def main() -> None:
        ks = await keyspace.aio.open(_url(kind, tmp_path), chunk=3)
        try:
            s = ks.scope("t", "users")
            await s.set(b"b", b"2")
            await s.put(b"a", b"1")
            await s.update({b"c": b"3", b"d": b"4"})
            await s.scope("child").put(b"x", b"child")
            assert await s.get(b"a") == b"1" and await s.get(b"zz") is None
            assert await s.contains(b"b") and await s.len() == 4
            assert [kv async for kv in s.items()] == list(s.sync.items())  # chunks of 3
            newest = [k async for k in s.items(stop=b"c", reverse=True, limit=2)]
            assert newest == [(b"b", b"2"), (b"a", b"1")]
            assert await s.scopes() == ["child"]
            assert [p async for p, _k, _v in ks.scope("t").subtree()] == [("t", "users")] * 4 + [
                ("t", "users", "child")
            ]
            with pytest.raises(KeyError):
                await s.getitem(b"zz")
            with pytest.raises(KeyError):
                await s.delete(b"zz")
            with pytest.raises(InvalidKey):
                await ks.scope("typed", key="int").put("not an int", b"v")
            with pytest.raises(RuntimeError, match="rolled back"):
                async with ks.transaction() as tx:
                    await tx.scope("t", "users").put(b"a", b"changed")
                    raise RuntimeError("rolled back")
            assert await s.get(b"a") == b"1"
            async with ks.snapshot() as snap:
                assert await snap.scope("t", "users").get(b"d") == b"4"
                with pytest.raises(KeyspaceError, match="read-only"):
                    await snap.scope("t", "users").put(b"d", b"5")
            if ks.sync.store.capabilities.watch is None:
                with pytest.raises(WatchUnsupported):
                    await s.watch()
            await s.drop()
            assert [kv async for kv in ks.scope().subtree()] == []
        finally:
            await ks.scope().drop()
            await ks.close()
            _wipe(kind, ks.url)
        with pytest.raises(KeyspaceError):
            await s.get(b"a")  # closed

    asyncio.run(asyncio.wait_for(main(), 60))


def test_embedded_engines_run_on_one_thread(tmp_path: Path) -> None:
    async def main() -> set[str]:
        ks = await keyspace.aio.open(f"lmdb:///{tmp_path}/db")
        names: set[str] = set()
        try:
            assert ks.workers == 1
            await asyncio.gather(
                *(ks.store.runner.run(lambda: names.add(threading.current_thread().name)) for _ in range(20))
            )
        finally:
            await ks.close()
        return names

    assert len(asyncio.run(main())) == 1


@pytest.mark.etcd
def test_etcd_path_runs_on_the_loop_without_worker_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every etcd operation of the async API is a grpc.aio coroutine: with thread
    pools refusing work, 100 concurrent operations of every kind succeed and no
    thread appears."""
    url = _url("etcd", Path())

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an etcd operation was handed to a worker thread")

    async def main() -> None:
        ks = await keyspace.aio.open(url)  # opening reads the scheme record in a worker, once
        try:
            assert ks.workers == 0
            s = ks.scope("t", value="int")
            await s.put(b"warm", 0)  # the grpc.aio channel (and its poller) exists from here on
            monkeypatch.setattr(asyncio.get_running_loop(), "run_in_executor", refuse)
            monkeypatch.setattr(ThreadPoolExecutor, "submit", refuse)
            before = {t.ident for t in threading.enumerate()}
            await asyncio.gather(*(s.put(b"k%03d" % i, i) for i in range(100)))
            assert sum(await asyncio.gather(*(s.get(b"k%03d" % i) for i in range(100)))) == 4950
            assert [k async for k in s.keys(start=b"k", stop=b"l", limit=3, reverse=True)] == [
                b"k099",
                b"k098",
                b"k097",
            ]
            await s.update({b"u1": 1, b"u2": 2})
            async with ks.transaction() as tx:
                t = tx.scope("t", value="int")
                await t.put(b"sum", sum([v async for v in t.values(start=b"u", stop=b"v")]))
            assert await s.get(b"sum") == 3 and await s.contains(b"u2")
            await s.clear_range(start=b"k", stop=b"l")
            assert await s.len() == 4
            await s.drop()
            assert [kv async for kv in ks.scope().subtree()] == []
            assert {t.ident for t in threading.enumerate()} == before
            assert not [t for t in threading.enumerate() if t.name.startswith("keyspace-aio")]
            sent: list[str] = []
            client = ks.store._client  # type: ignore[attr-defined]
            real_call = client.call

            async def counted(what: str, method: str, request: object, **kw: bool) -> object:
                sent.append(method)
                return await real_call(what, method, request, **kw)

            monkeypatch.setattr(client, "call", counted)
            await s.put(b"n", 1)  # the path is prepared: one Put
            assert await s.get(b"n") == 1  # one Range
            async with ks.transaction() as tx:  # revision, read, guarded commit
                n = tx.scope("t", value="int")
                await n.put(b"n", await n.get(b"n") + 1)
            assert sent == ["Put", "Range", "Range", "Range", "Txn"]
        finally:
            monkeypatch.undo()
            await ks.close()
            _wipe("etcd", url)

    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("kind", ["memory", pytest.param("etcd", marks=pytest.mark.etcd)])
def test_catalog_checks_hold_through_aio(kind: str, tmp_path: Path) -> None:
    """The safety checks run on the async path too, in the first write's batch:
    two keyspaces with overlapping schemes opened on one empty store before either
    wrote (the second is refused at its first write, its delete too, the store
    unchanged), the leaf/branch layout rule, and ScopeHash name collisions."""
    url = _url(kind, tmp_path)
    shared = open_store(url)

    made: list[keyspace.aio.AsyncKeyspace] = []

    def two(first: str, second: str) -> tuple[keyspace.aio.AsyncKeyspace, keyspace.aio.AsyncKeyspace]:
        pair = (
            keyspace.aio.AsyncKeyspace(keyspace.attach(shared, scheme=first, close_store=False)),
            keyspace.aio.AsyncKeyspace(keyspace.attach(shared, scheme=second, close_store=False)),
        )
        made.extend(pair)
        return pair

    async def main() -> None:
        a, b = two("tuple", "asciihex")  # both open an empty store: neither recorded yet
        await a.scope("x").put(b"k", b"first")
        before = list(shared.scan())
        with pytest.raises(SchemeMismatch):
            await b.scope("x").put(b"k", b"second")
        with pytest.raises(SchemeMismatch):
            await b.scope().drop()
        assert list(shared.scan()) == before
        shared.delete_range(b"", None)
        layered, _ = two("length-prefixed", "length-prefixed")
        await layered.scope(b"a", b"b").put(b"k", b"v")
        with pytest.raises(LayoutError):
            await layered.scope(b"a", b"b", b"c").put(b"k", b"v")
        with pytest.raises(LayoutError):
            await layered.scope(b"a").put(b"k", b"v")
        shared.delete_range(b"", None)
        hashed, other = two("scopehash", "scopehash")
        await hashed.scope("scope72590").put(b"k", b"v")
        for ks in (hashed, other):  # known through this keyspace, or only from the store
            with pytest.raises(HashCollision):
                await ks.scope("scope159129").put(b"k", b"v")
            with pytest.raises(HashCollision):
                await ks.scope("scope159129").get(b"k")
        assert await other.scope("scope72590").get(b"k") == b"v"
        for aks in made:
            await aks.close()
        assert shared.get(b"anything") is None  # attached with close_store=False: still open

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        shared.delete_range(b"", None)
        shared.close()


@pytest.mark.etcd
def test_etcd_errors_through_aio() -> None:
    """The native client raises the sync store's errors: a batch or transaction over
    etcd's 128 operations is TransactionTooLarge with nothing written; with every
    member paused, a read is EtcdUnavailable and a guarded commit CommitOutcomeUnknown,
    each within the retry budget."""
    cluster = _etcd()
    url = f"{cluster.url}/aio-{uuid.uuid4().hex}?retry_budget=1&timeout=0.3"

    async def main() -> None:
        ks = await keyspace.aio.open(url)
        s = ks.scope("big")
        try:
            await s.put(b"first", b"1")
            with pytest.raises(TransactionTooLarge):
                async with ks.transaction() as tx:
                    for i in range(200):
                        await tx.scope("big").put(b"%03d" % i, b"v")
            with pytest.raises(TransactionTooLarge):
                await s.update({b"%03d" % i: b"v" for i in range(200)})
            assert [kv async for kv in s.items()] == [(b"first", b"1")]
            paused: list[int] = []
            try:
                with pytest.raises(CommitOutcomeUnknown):
                    async with ks.transaction() as tx:
                        t = tx.scope("big")
                        await t.put(b"copy", await t.get(b"first"))
                        paused = cluster.pause()  # every thread of every member stopped
                started = time.monotonic()
                with pytest.raises(EtcdUnavailable):
                    await s.get(b"first")
                assert time.monotonic() - started < 3
            finally:
                cluster.resume(paused)
            cluster.wait_healthy()
        finally:
            await ks.close()
            _wipe("etcd", url.partition("?")[0])

    asyncio.run(asyncio.wait_for(main(), 60))


def test_open_errors_are_the_sync_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        asyncio.run(keyspace.aio.open("nosuch://x"))


_KEYS = st.binary(max_size=3)


async def _outcome(items: AsyncIterator[T]) -> tuple[str, object]:
    try:
        return "ok", [item async for item in items]
    except KeyspaceError as exc:
        return "error", type(exc)


async def _error_of(call: Awaitable[object]) -> type[BaseException] | None:
    try:
        await call
    except KeyspaceError as exc:
        return type(exc)
    return None


def _sync_error_of(call: Callable[[], object]) -> type[BaseException] | None:
    try:
        call()
    except KeyspaceError as exc:
        return type(exc)
    return None


def _sync_outcome(make: Callable[[], Iterable[T]]) -> tuple[str, object]:
    try:
        return "ok", list(make())
    except KeyspaceError as exc:
        return "error", type(exc)


@settings(max_examples=60, deadline=None)
@given(
    scheme=st.sampled_from(["tuple", "length-prefixed", "asciihex", "sublevel", "scopehash"]),
    data=st.dictionaries(_KEYS, st.binary(max_size=2), max_size=12),
    child=st.dictionaries(_KEYS, st.binary(max_size=2), max_size=4),
    start=st.none() | _KEYS,
    stop=st.none() | _KEYS,
    prefix=st.none() | _KEYS,
    include=st.tuples(st.booleans(), st.booleans()),
    reverse=st.booleans(),
    limit=st.none() | st.integers(min_value=0, max_value=5),
)
# a bound or prefix that is no key of the scheme: the same error on both sides
@example("sublevel", {}, {}, None, b"!", None, (False, False), False, None)
@example("sublevel", {b"a": b"1"}, {}, None, None, b"!", (True, False), False, None)
def test_async_scans_are_the_sync_scans(
    scheme: str,
    data: dict[bytes, bytes],
    child: dict[bytes, bytes],
    start: bytes | None,
    stop: bytes | None,
    prefix: bytes | None,
    include: tuple[bool, bool],
    reverse: bool,
    limit: int | None,
) -> None:
    """Property: ``items``/``keys``/``values``/``len``/``subtree`` of an async scope
    yield what the sync scope yields for every argument combination, with a child
    scope's keys beside it (schemes that keep a scope's keys apart from its
    children's); the async writes are the sync writes."""
    sync = keyspace.open("memory:", scheme=scheme)
    layered = not sync.scheme.separates_own_keys
    path = ("scope",) if scheme == "scopehash" else (b"a",)
    kwargs = {"reverse": reverse, "limit": limit, "include_start": include[0], "include_stop": include[1]}
    if prefix is not None:
        kwargs["prefix"] = prefix
    else:
        kwargs.update(start=start, stop=stop)
    ranged = {k: v for k, v in kwargs.items() if k not in ("reverse", "limit")}

    async def main() -> None:
        aks = await keyspace.aio.open("memory:", scheme=scheme)
        s, mirror = aks.scope(*path), sync.scope(*path)
        assert await _error_of(s.update(data)) == _sync_error_of(lambda: mirror.update(data))
        if not layered and scheme != "scopehash":  # a bad key is the same error on both sides
            c, sync_c = s.scope(b"c"), mirror.scope(b"c")
            assert await _error_of(c.update(child)) == _sync_error_of(lambda: sync_c.update(child))
        # the same items, or the same error (a bound that is not a key of the scheme)
        assert await _outcome(s.items(**kwargs)) == _sync_outcome(lambda: mirror.items(**kwargs))
        assert await _outcome(s.keys(**kwargs)) == _sync_outcome(lambda: mirror.keys(**kwargs))
        assert await _outcome(s.values(**kwargs)) == _sync_outcome(lambda: mirror.values(**kwargs))
        assert await s.len() == len(mirror)
        assert await _outcome(aks.scope().subtree()) == _sync_outcome(sync.scope().subtree)
        assert await _error_of(s.clear_range(**ranged)) == _sync_error_of(
            lambda: mirror.clear_range(**ranged)
        )
        assert list(aks.sync.store.scan()) == list(sync.store.scan())  # records included
        await aks.close()

    asyncio.run(main())


# -- the conformance suite through the async API ----------------------------------------


class _Loop:
    """An event loop in a thread; ``call(coro)`` runs a coroutine there and waits."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, make: Callable[[], Awaitable[T]]) -> T:
        async def run() -> T:
            return await make()

        future: Future[T] = asyncio.run_coroutine_threadsafe(run(), self.loop)
        return future.result(60)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class _Holding:
    """Calls through ``loop`` made as the holder of ``runner``'s transaction lock."""

    def __init__(self, loop: _Loop, runner: Any) -> None:
        self.inner, self.runner, self.holder = loop, runner, runner.holder

    def call(self, make: Callable[[], Awaitable[T]]) -> T:
        async def held() -> T:
            self.runner.holder = asyncio.current_task()
            try:
                return await make()
            finally:
                self.runner.holder = self.holder

        return self.inner.call(held)


_BRIDGE_PATH = ("aio", b"\x00\xff", "bridge")
_LOOP: list[_Loop] = []


@pytest.fixture(autouse=True, scope="module")
def _stop_shared_loop() -> Iterator[None]:
    """Stop the bridges' loop thread after this module: a thread running an event
    loop that used grpc.aio must not outlive the module (a later fork() would copy
    grpc's asyncio state mid-use)."""
    yield
    if _LOOP:
        _LOOP.pop().stop()


def _shared_loop() -> _Loop:
    """One loop thread for every bridge store of the run (it outlives their close,
    so use after close reaches the async API and its StoreClosed)."""
    if not _LOOP:
        _LOOP.append(_Loop())
    return _LOOP[0]


class _AsyncScopeView(WriteView):
    def __init__(self, scope: keyspace.aio.AsyncScope, loop: _Loop, limit: int | None) -> None:
        self.scope, self.loop, self.limit = scope, loop, limit

    def _check(self, key: bytes) -> None:
        from keyspace.errors import KeyTooLarge

        if self.limit is not None and len(key) > self.limit:
            raise KeyTooLarge(f"key of {len(key)} bytes; the limit here is {self.limit}")

    def get(self, key: bytes) -> bytes | None:
        value: bytes | None = self.loop.call(lambda: self.scope.get(key))
        return value

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """The async scan read through the loop a page of 64 items at a time, as a
        store's scan reads pages of its engine (so a scan of a snapshot or
        transaction meets the end of its block as the async scope does)."""
        source: AsyncIterator[tuple[bytes, bytes]] | None = None

        async def page() -> list[tuple[bytes, bytes]]:
            nonlocal source
            if source is None:
                source = self.scope.items(start=start, stop=stop, reverse=reverse, limit=limit).__aiter__()
            out: list[tuple[bytes, bytes]] = []
            while len(out) < 64:
                try:
                    out.append(await source.__anext__())
                except StopAsyncIteration:
                    break
            return out

        while True:
            got = self.loop.call(page)
            yield from got
            if len(got) < 64:
                return

    def put(self, key: bytes, value: bytes) -> None:
        self._check(key)
        self.loop.call(lambda: self.scope.put(key, value))

    def delete(self, key: bytes) -> None:
        self._check(key)
        self.loop.call(lambda: self.scope.discard(key))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self.loop.call(lambda: self.scope.clear_range(start, stop))


class AsyncBridgeStore(_AsyncScopeView, Store):
    """The store contract over an async scope: every call crosses into the loop."""

    def __init__(self, url: str) -> None:
        self.loop = _shared_loop()
        self.aks: keyspace.aio.AsyncKeyspace = self.loop.call(lambda: keyspace.aio.open(url, chunk=5))
        store = self.aks.sync.store
        limit = store.capabilities.max_key_size
        scope = self.aks.scope(*_BRIDGE_PATH)
        own = None if limit is None else max(0, (limit - len(scope.sync.prefix) - 2) // 2)
        super().__init__(scope, self.loop, own)
        self.url = url
        self.capabilities = replace(
            store.capabilities,
            max_key_size=own,
            empty_keys=True,
            multi_process=False,
            watch=None,
            access_control=False,
        )
        self._closed = False

    def write(self, ops: Iterable[Op]) -> None:
        batch = list(ops)
        for k, _ in batch:
            self._check(k)

        async def run() -> None:
            async with self.aks.transaction() as tx:
                s = tx.scope(*_BRIDGE_PATH)
                for k, v in batch:
                    await (s.discard(k) if v is None else s.put(k, v))

        self.loop.call(run)

    @contextmanager
    def transaction(self) -> Iterator[WriteView]:
        manager = self.aks.transaction()
        tx = self.loop.call(manager.__aenter__)
        # The bridge is one caller: while its transaction is open, its own calls
        # outside it act as the holder's (as one task inside `async with` would).
        runner = getattr(self.aks.store, "runner", None)
        outside = self.loop
        if runner is not None:
            self.loop = _Holding(outside, runner)
        try:
            yield _AsyncScopeView(tx.scope(*_BRIDGE_PATH), self.loop, self.limit)
        except BaseException as exc:
            error = exc
            self.loop.call(lambda: manager.__aexit__(type(error), error, error.__traceback__))
            raise
        finally:
            self.loop = outside
        self.loop.call(lambda: manager.__aexit__(None, None, None))

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        manager = self.aks.snapshot()
        snap = self.loop.call(manager.__aenter__)
        try:
            yield _AsyncScopeView(snap.scope(*_BRIDGE_PATH), self.loop, self.limit)
        finally:
            self.loop.call(lambda: manager.__aexit__(None, None, None))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.loop.call(self.aks.close)


class TestSuiteThroughAioOverLMDB(StoreSuite):
    model_examples = 10

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        urls: dict[str, str] = {}

        def make(url: str | None = None) -> Store:
            raw = urls[url] if url is not None else f"lmdb://{tmp_path / uuid.uuid4().hex}"
            store = AsyncBridgeStore(raw)
            urls[store.url] = raw
            return store

        return make


class TestSuiteThroughAioOverMemory(StoreSuite):
    model_examples = 10

    @pytest.fixture
    def make_store(self) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return AsyncBridgeStore("memory:")

        return make


@pytest.mark.etcd
class TestSuiteThroughAioOverEtcd(StoreSuite):
    model_examples = 5

    @pytest.fixture
    def make_store(self) -> Iterator[MakeStore]:
        cluster = _etcd()
        made: list[str] = []

        def make(url: str | None = None) -> Store:
            raw = url if url is not None else f"{cluster.url}/aio-suite-{uuid.uuid4().hex}"
            made.append(raw)
            return AsyncBridgeStore(raw)

        yield make
        for raw in made:
            _wipe("etcd", raw)

    def test_sharing_between_processes(self, opened: Callable[..., Store]) -> None:
        """A scope of a shared server has no store URL of its own that another
        process could open (the scope bridge says multi_process=False); a second
        client of the same server sees the data instead."""
        store = opened()
        store.put(b"shared", b"yes")
        assert opened(store.url).get(b"shared") == b"yes"


def test_an_update_in_a_transaction_refuses_a_key_before_any_of_it_is_written(tmp_path: Path) -> None:
    """An async update inside the caller's transaction with a key the engine
    refuses (LMDB: over 511 bytes): its other pairs were moved into the
    transaction one put at a time, ahead of the refused one, and committed with
    it; the synchronous update writes none of them."""

    async def main() -> None:
        ks = await keyspace.aio.open(str(tmp_path / "a.lmdb"))
        await ks.scope("t").put(b"warm", b"1")
        async with ks.transaction() as tx:
            with pytest.raises(KeyTooLarge):
                await tx.scope("t").update([(b"k1", b"v"), (b"x" * 600, b"v"), (b"k2", b"v")])
            await tx.scope("t").put(b"after", b"2")  # the transaction goes on
        assert dict(ks.sync.scope("t").items()) == {b"warm": b"1", b"after": b"2"}
        await ks.close()

    asyncio.run(main())


@pytest.mark.parametrize("scheme", ["tuple", "sublevel", "scopehash", "length-prefixed"])
def test_pop_setdefault_and_popitem_work_as_the_sync_scopes(tmp_path: Path, scheme: str) -> None:
    async def main() -> None:
        ks = await keyspace.aio.open(f"lmdb://{tmp_path}/db", scheme=scheme)
        s = ks.scope("a")
        await s.update({b"k1": b"1", b"k2": b"2", b"k3": b"3"})
        assert await s.pop(b"k1") == b"1" and await s.pop(b"missing", b"d") == b"d"
        with pytest.raises(KeyError):
            await s.pop(b"missing")
        assert await s.setdefault(b"k9", b"9") == b"9" and await s.setdefault(b"k2", b"x") == b"2"
        assert await s.popitem() == (b"k9", b"9")
        async with ks.transaction() as tx:
            t = tx.scope("a")
            assert await t.pop(b"k2") == b"2" and await t.setdefault(b"new", b"n") == b"n"
        assert dict(ks.sync.scope("a").items()) == {b"k3": b"3", b"new": b"n"}
        await s.put(b"once", b"v")  # concurrent pops of one key: one gets its value
        got = await asyncio.gather(*(s.pop(b"once", None) for _ in range(10)))
        assert got.count(b"v") == 1 and got.count(None) == 9
        await ks.close()

    asyncio.run(main())
