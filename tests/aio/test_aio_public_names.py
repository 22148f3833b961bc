"""Every public name of :class:`keyspace.Scope` has its async counterpart on
:class:`keyspace.aio.AsyncScope`, and the attributes and ``check_key`` answer as
the synchronous scope's, in every scheme, on memory and LMDB (whose key limit
``check_key`` must report)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import keyspace
import keyspace.aio
from keyspace.aio import AsyncScope
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, ScopeHash, Sublevel, TupleScheme
from keyspace.scope import Scope

SCHEMES: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "tuple": (TupleScheme, ("t", "a")),
    "length-prefixed": (LengthPrefixed, (b"t", b"a")),
    "asciihex": (AsciiHex, ("t", "a")),
    "sublevel": (Sublevel, ("t", "a")),
    "scopehash": (ScopeHash, ("a",)),
    "delimited": (lambda: Delimited(":"), ("a",)),
}

KEYS: list[Any] = [b"k", b"", b"!a", b"x" * 600, "text", 5, None, b"a:b"]


def test_every_public_scope_name_has_an_async_counterpart() -> None:
    public = {n for n in dir(Scope) if not n.startswith("_")}
    missing = sorted(n for n in public if not hasattr(AsyncScope, n))
    assert missing == []


def _named(exc: Exception) -> tuple[Any, ...]:
    return (type(exc).__name__, str(exc).replace("/sync", "/<store>").replace("/aio", "/<store>"))


def _outcome(call: Any) -> tuple[Any, ...]:
    try:
        call()
    except Exception as exc:
        return _named(exc)
    return ("ok",)


@pytest.mark.parametrize("store", ["memory", "lmdb"])
@pytest.mark.parametrize("scheme_name", list(SCHEMES))
def test_attributes_and_check_key_answer_as_the_sync_scope(
    scheme_name: str, store: str, tmp_path: Path
) -> None:
    make, path = SCHEMES[scheme_name]

    def url(side: str) -> str:
        return "memory:" if store == "memory" else f"lmdb://{tmp_path}/{side}"

    async def main() -> None:
        ks = keyspace.open(url("sync"), scheme=make())
        aks = await keyspace.aio.open(url("aio"), scheme=make())
        try:
            for codec in (None, "str", "int"):
                s, a = ks.scope(*path, key=codec), aks.scope(*path, key=codec)
                assert a.prefix == s.prefix and a.scheme == s.scheme and a.keyspace is aks
                assert a.layout.prefix == s.layout.prefix
                async with aks.transaction() as tx:
                    assert tx.scope(*path, key=codec).prefix == s.prefix
                for key in KEYS:
                    want = _outcome(lambda key=key, s=s: s.check_key(key))
                    try:
                        await a.check_key(key)
                        got: tuple[Any, ...] = ("ok",)
                    except Exception as exc:
                        got = _named(exc)
                    assert got == want, (codec, key)
            # nothing was written by any of it
            assert [kv async for kv in aks.store.scan(b"", None)] == list(ks.store.scan(b"", None))
        finally:
            ks.close()
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 20))
