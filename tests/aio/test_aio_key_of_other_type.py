"""keyspace.aio: a miss on a key whose text is a key of the other type (str /
bytes, two keys in the tuple scheme) says which key exists, as the sync Scope
does (the same sync code runs under the async one): ``getitem``, ``delete`` and
``pop`` without a default, outside and inside a transaction (and ``getitem`` in
a snapshot), on the memory store, LMDB (through the worker thread) and etcd (the
native async client). A plain miss stays a plain ``KeyError(key)``; nothing is
changed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _etcd import etcd_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace.aio
from keyspace.aio import AsyncKeyspace, AsyncScope
from keyspace.stores import open_store

KINDS = ["memory", "lmdb", pytest.param("etcd", marks=pytest.mark.etcd)]


def _url(kind: str, tmp_path: Path) -> str:
    if kind == "etcd":
        return etcd_cluster().url + "/aio-other-type-" + uuid.uuid4().hex
    return {"memory": "memory:", "lmdb": f"lmdb:///{tmp_path}/db"}[kind]


async def _opened(url: str) -> AsyncKeyspace:
    ks = await keyspace.aio.open(url)
    await ks.scope("acme", key="str").put("user1", b"v")
    await ks.scope("acme").put(b"raw", b"w")
    return ks


async def _error(call: Callable[[], Awaitable[Any]]) -> KeyError:
    with pytest.raises(KeyError) as info:
        await call()
    return info.value


def _ops(scope: AsyncScope, key: Any) -> list[Callable[[], Awaitable[Any]]]:
    return [lambda: scope.getitem(key), lambda: scope.delete(key), lambda: scope.pop(key)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_miss_names_the_key_of_the_other_type(kind: str, tmp_path: Path) -> None:
    url = _url(kind, tmp_path)

    async def main() -> None:
        ks = await _opened(url)
        try:
            scope = ks.scope("acme")
            for op in _ops(scope, b"user1"):
                error = await _error(op)
                assert str(error) == "b'user1' (a str key 'user1' exists: this scope's keys are str)"
                assert error.args == (b"user1",)
            for op in _ops(scope, "raw"):
                error = await _error(op)
                assert str(error) == "'raw' (a bytes key b'raw' exists: this scope's keys are bytes)"
            async with ks.transaction() as tx:
                inside = tx.scope("acme")
                for op in _ops(inside, b"user1"):
                    assert "a str key 'user1' exists" in str(await _error(op))
            async with ks.snapshot() as snap:
                error = await _error(lambda: snap.scope("acme").getitem(b"user1"))
                assert "a str key 'user1' exists" in str(error)
            for op in _ops(scope, b"nobody"):
                error = await _error(op)
                assert type(error) is KeyError and error.args == (b"nobody",)
            assert [kv async for kv in scope.items()] == [(b"raw", b"w"), ("user1", b"v")]
        finally:
            await ks.close()

    try:
        asyncio.run(main())
    finally:
        if kind == "etcd":
            store = open_store(url)
            store.delete_range(b"", None)
            store.close()


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=8), st.booleans())
def test_any_text_either_way(text: str, as_str: bool) -> None:
    written: str | bytes = text if as_str else text.encode()
    asked: str | bytes = text.encode() if as_str else text

    async def main() -> KeyError:
        ks = await keyspace.aio.open("memory:")
        try:
            await ks.scope("s").put(written, b"1")
            return await _error(lambda: ks.scope("s").getitem(asked))
        finally:
            await ks.close()

    error = asyncio.run(main())
    assert error.args == (asked,)
    assert f"a {type(written).__name__} key {written!r} exists" in str(error)
