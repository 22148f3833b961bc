"""A transaction or snapshot used without ``with`` (``async with``) raises
:class:`NotEntered`, a named error that says to use the block, instead of a bare
``AttributeError`` naming ``_GeneratorContextManager`` or a ``view`` slot."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

import keyspace
import keyspace.aio
from keyspace.errors import KeyspaceError, NotEntered


@pytest.mark.parametrize(
    ("use", "what"),
    [
        (lambda ks: ks.transaction().scope("a"), "ks.transaction()"),
        (lambda ks: ks.transaction().directories, "ks.transaction()"),
        (lambda ks: ks.snapshot().scope("a"), "ks.snapshot()"),
        (lambda ks: ks.snapshot().scope("a", key="str"), "ks.snapshot()"),
    ],
)
def test_sync_blocks_used_without_with_say_so(tmp_path: Path, use: Any, what: str) -> None:
    with keyspace.open(f"lmdb://{tmp_path / 'db'}") as ks:
        ks.scope("a")[b"k"] = b"v"
        with pytest.raises(NotEntered) as info:
            use(ks)
        message = str(info.value)
        assert what in message and "without with" in message and f"with {what} as" in message
        assert "_GeneratorContextManager" not in message
        assert isinstance(info.value, KeyspaceError) and isinstance(info.value, AttributeError)
        # the blocks still work as blocks, and copy's probes are plain AttributeErrors
        copy.copy(ks.transaction())
        assert not hasattr(ks.transaction(), "scope")
        with ks.transaction() as tx:
            tx.scope("a")[b"k2"] = b"v2"
        with ks.snapshot() as snap:
            assert dict(snap.scope("a").items()) == {b"k": b"v", b"k2": b"v2"}


def test_async_blocks_used_without_async_with_say_so(tmp_path: Path) -> None:
    async def main() -> list[str]:
        messages = []
        ks = await keyspace.aio.open(f"lmdb://{tmp_path / 'db'}")
        try:
            for what, block in [("ks.transaction()", ks.transaction), ("ks.snapshot()", ks.snapshot)]:
                with pytest.raises(NotEntered) as info:
                    block().scope("a")
                messages.append(str(info.value))
                assert what in messages[-1] and f"async with {what} as" in messages[-1]
                with pytest.raises(NotEntered, match="async with"), block():
                    pass
            async with ks.transaction() as tx:
                await tx.scope("a").set(b"k", b"v")
            async with ks.snapshot() as snap:
                assert await snap.scope("a").get(b"k") == b"v"
        finally:
            await ks.close()
        return messages

    messages = asyncio.run(asyncio.wait_for(main(), 60))
    assert all("_AsyncGeneratorContextManager" not in m for m in messages)


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_transaction_block_entered_again_is_a_new_transaction(tmp_path: Path, engine: str) -> None:
    """Before, the second entry raised the AttributeError of a spent generator."""
    url = "memory:" if engine == "memory" else f"{engine}:///{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        block = ks.transaction()
        with block as tx:
            tx.scope("a")[b"k"] = b"1"
        with block as tx:
            assert tx.scope("a")[b"k"] == b"1"
            tx.scope("a")[b"k"] = b"2"
        with pytest.raises(ValueError, match="raised in the block"), block as tx:
            tx.scope("a")[b"k"] = b"3"
            raise ValueError("raised in the block")
        assert ks.scope("a")[b"k"] == b"2"


def test_async_blocks_entered_again_are_new_ones(tmp_path: Path) -> None:
    async def run() -> list[bytes]:
        aks = await keyspace.aio.open(f"lmdb://{tmp_path / 'db'}")
        try:
            block, seen = aks.transaction(), []
            for value in (b"1", b"2"):
                async with block as tx:
                    await tx.scope("a").put(b"k", value)
                snap = aks.snapshot()
                async with snap as s:
                    seen.append(await s.scope("a").get(b"k"))
                async with snap as s:  # the same snapshot block, entered again: a state of now
                    seen.append(await s.scope("a").get(b"k"))
            return seen
        finally:
            await aks.close()

    assert asyncio.run(run()) == [b"1", b"1", b"2", b"2"]
