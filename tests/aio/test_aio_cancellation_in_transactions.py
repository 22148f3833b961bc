"""Cancellation and concurrency of ``keyspace.aio`` seen from inside a transaction
and from sibling scopes, on memory, LMDB and SQLite:

- an operation inside a caller's transaction that a ``wait_for`` times out (the
  caller catches the timeout and goes on) is in the committed transaction whole
  or not at all: an update's pairs, a clear's or a drop's several range deletes,
  a pop's read and delete, never part of them, whatever await the timeout lands on;
- tasks working at once on sibling scopes of every scheme (names that extend or
  share a prefix with each other) never see each other's keys, and each ends with
  exactly its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

import keyspace.aio
from keyspace.aio import AsyncKeyspace, AsyncScope
from keyspace.stores._base import DelegatedReads, Op, WriteView

KINDS = ["memory", "lmdb", "sqlite"]


def _url(kind: str, tmp_path: Path) -> str:
    return {"memory": "memory:", "lmdb": f"lmdb:///{tmp_path}/db", "sqlite": f"sqlite:///{tmp_path}/db"}[kind]


class _SlowWrites(DelegatedReads, WriteView):
    """A transaction's view whose every write takes ``delay`` seconds (the worker
    thread sleeps), so that a timeout lands between the writes of one operation."""

    def __init__(self, inner: WriteView, delay: float) -> None:
        self.inner, self.delay = inner, delay

    def _reads(self) -> WriteView:
        return self.inner

    def put(self, key: bytes, value: bytes) -> None:
        time.sleep(self.delay)
        self.inner.put(key, value)

    def delete(self, key: bytes) -> None:
        time.sleep(self.delay)
        self.inner.delete(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        time.sleep(self.delay)
        self.inner.delete_range(start, stop)

    def write(self, ops: Iterable[Op]) -> None:  # pragma: no cover - not called in a transaction
        raise AssertionError("a transaction's view takes no batch")

    def transaction(self) -> Any:  # pragma: no cover
        raise AssertionError

    def snapshot(self) -> Any:  # pragma: no cover
        raise AssertionError

    def close(self) -> None:  # pragma: no cover
        raise AssertionError


def _slow(tx: Any, delay: float) -> None:
    """Make the writes of the async transaction handle ``tx`` slow."""
    threaded = tx._ctx.tx
    threaded.view = _SlowWrites(threaded.view, delay)


Prepare = Callable[[AsyncScope], Awaitable[None]]
Operate = Callable[[AsyncScope], Awaitable[Any]]


async def _setup_update(s: AsyncScope) -> None:
    await s.put(b"seed", b"0")


async def _op_update(s: AsyncScope) -> Any:
    return await s.update({b"k1": b"1", b"k2": b"2", b"k3": b"3", b"k4": b"4"})


async def _setup_keys(s: AsyncScope) -> None:
    await s.update({b" ": b"0", b"#": b"1", b"a": b"2", b"k": b"3"})
    await s.scope("child").put(b"c", b"4")


async def _op_clear(s: AsyncScope) -> Any:
    return await s.clear()


async def _op_drop(s: AsyncScope) -> Any:
    return await s.drop()


async def _op_pop(s: AsyncScope) -> Any:
    return await s.pop(b"a")


async def _op_clear_range(s: AsyncScope) -> Any:
    return await s.clear_range(start=b"#", stop=b"z")


CASES: dict[str, tuple[str, Prepare, Operate]] = {
    # case -> (scheme, set-up outside the transaction, the operation timed out)
    "tuple-update": ("tuple", _setup_update, _op_update),
    "sublevel-update": ("sublevel", _setup_update, _op_update),
    "sublevel-clear": ("sublevel", _setup_keys, _op_clear),  # two own ranges
    "sublevel-drop": ("sublevel", _setup_keys, _op_drop),
    "asciihex-clear-range": ("asciihex", _setup_keys, _op_clear_range),
    "tuple-pop": ("tuple", _setup_keys, _op_pop),
}


async def _subtree(aks: AsyncKeyspace, path: tuple[Any, ...]) -> list[tuple[Any, Any, Any]]:
    """``(path without its first name, key, value)`` below ``path``."""
    return [(p[1:], k, v) async for p, k, v in aks.scope(*path).subtree()]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(CASES))
def test_an_operation_timed_out_inside_a_transaction_is_in_it_whole_or_not_at_all(
    kind: str, case: str, tmp_path: Path
) -> None:
    scheme, prepare, operate = CASES[case]

    async def main() -> None:
        aks = await keyspace.aio.open(_url(kind, tmp_path), scheme=scheme)
        try:
            for n, timeout in enumerate([0.0, 0.001, 0.005, 0.012, 0.025, 0.04, 0.07, 1.0]):
                path = ("t", f"s{n}")
                await prepare(aks.scope(*path))
                # the commit holds the operation whole (as a twin run to its end
                # outside a transaction leaves its twin scope) or not at all
                before = await _subtree(aks, path)
                timed_out = False
                async with aks.transaction() as tx:
                    _slow(tx, 0.01)
                    try:
                        await asyncio.wait_for(operate(tx.scope(*path)), timeout)
                    except TimeoutError:
                        timed_out = True
                    await tx.scope("t", "after").put(b"n%d" % n, b"1")  # the transaction goes on
                after_commit = await _subtree(aks, path)
                twin = ("u", f"s{n}")
                await prepare(aks.scope(*twin))
                await operate(aks.scope(*twin))
                whole = await _subtree(aks, twin)
                assert after_commit in (before, whole), (timeout, before, whole, after_commit)
                if not timed_out:
                    assert after_commit == whole
                assert await aks.scope("t", "after").get(b"n%d" % n) == b"1"
        finally:
            await asyncio.wait_for(aks.close(), 5)

    asyncio.run(asyncio.wait_for(main(), 25))


SIBLINGS: dict[str, list[tuple[Any, ...]]] = {
    "tuple": [("a",), ("ab",), ("a", "b"), ("a\x00",), ()],
    "length-prefixed": [(b"a", b"b"), (b"a", b"bb"), (b"ab", b"b"), (b"a", b"")],
    "asciihex": [("a",), ("ab",), ("a", "b"), ("a\x00",), ()],
    "sublevel": [("a",), ("ab",), ("a", "b"), ("a~",), ()],
    "scopehash": [("a",), ("ab",), ("b",), ()],
    "delimited": [("a",), ("ab",), ("a\x00",), ("",)],
}


def _scheme(name: str) -> Any:
    return keyspace.schemes.Delimited(":") if name == "delimited" else name


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scheme", list(SIBLINGS))
def test_tasks_on_sibling_scopes_never_see_each_others_keys(kind: str, scheme: str, tmp_path: Path) -> None:
    paths = SIBLINGS[scheme]

    async def main() -> None:
        aks = await keyspace.aio.open(_url(kind, tmp_path), scheme=_scheme(scheme))

        async def worker(i: int, path: tuple[Any, ...]) -> dict[bytes, bytes]:
            s = aks.scope(*path)
            own: dict[bytes, bytes] = {}
            tag = b"%d" % i
            for step in range(12):
                key = b"k%d" % (step % 5)
                if step % 4 == 3:
                    async with aks.transaction() as tx:
                        t = tx.scope(*path)
                        await t.put(key + b"x", tag)
                        got = {k: v async for k, v in t.items()}
                        own[key + b"x"] = tag
                        assert got == own, (path, got, own)
                elif step % 5 == 4:
                    await s.clear()
                    own.clear()
                else:
                    await s.update({key: tag, key + b"y": tag})
                    own.update({key: tag, key + b"y": tag})
                got = {k: v async for k, v in s.items()}
                assert got == own, (path, got, own)
                assert await s.len() == len(own)
                async with aks.snapshot() as snap:
                    seen = {k: v async for k, v in snap.scope(*path).items()}
                assert set(seen.values()) <= {tag}, (path, seen)
                await asyncio.sleep(0)
            return own

        try:
            results = await asyncio.gather(*(worker(i, p) for i, p in enumerate(paths)))
            for path, own in zip(paths, results, strict=True):
                assert {k: v async for k, v in aks.scope(*path).items()} == own
        finally:
            await asyncio.wait_for(aks.close(), 5)

    asyncio.run(asyncio.wait_for(main(), 25))


def test_the_timed_out_operations_are_timed_out_somewhere(tmp_path: Path) -> None:
    """The timeouts above land inside the operation (not all before or after it):
    with writes of 10 ms, an update of four keys is cut for the shorter ones."""

    async def main() -> list[bool]:
        aks = await keyspace.aio.open(_url("memory", tmp_path))
        outcomes = []
        try:
            for n, timeout in enumerate([0.012, 0.025]):
                async with aks.transaction() as tx:
                    _slow(tx, 0.01)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(_op_update(tx.scope("t", f"s{n}")), timeout)
                        outcomes.append(False)
                        continue
                    outcomes.append(True)
        finally:
            await aks.close()
        return outcomes

    assert asyncio.run(main()) == [True, True]
