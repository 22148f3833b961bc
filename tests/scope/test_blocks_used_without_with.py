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
