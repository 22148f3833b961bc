"""Codecs on paths that run later or elsewhere than their scope: an asyncio
watch decoding an event that needs the catalog, and ``migrate`` into a
scoped-heed database whose types are named."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _cli import run

import keyspace
import keyspace.aio
from keyspace import scoped_heed
from keyspace.schemes import LengthPrefixed, Scheme, ScopeHash


@pytest.mark.parametrize(("scheme", "subtree"), [(LengthPrefixed(), False), (ScopeHash(), True)])
def test_an_asyncio_watch_decodes_an_event_of_a_new_scope(scheme: Scheme, subtree: bool) -> None:
    """The event's decoder read the catalog's records through the async
    keyspace's plan store, which reads only inside operations: StoreError on
    the first event of a scope made after the watch."""
    ks = keyspace.open("memory:", scheme=scheme)

    async def main() -> None:
        aks = keyspace.aio.AsyncKeyspace(ks)
        watch = await aks.scope("a", value="json").watch(subtree=subtree)
        try:
            ks.scope("a", value="json")[b"k"] = {"n": 1}
            event = watch.get(5)
            assert event is not None and (event.path, event.key, event.value) == (("a",), b"k", {"n": 1})
            await aks.scope("a", value="json").put(b"l", {"n": 2})
            async for event in watch:
                assert (event.key, event.value) == (b"l", {"n": 2})
                break
        finally:
            watch.close()
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.parametrize(
    ("api", "types", "key", "value"),
    [("bytes_keys", "value=String", b"k", "hello"), ("types", "key=u64&value=String", 7, "hello")],
)
def test_migrate_into_a_typed_scoped_heed_database_copies_the_stored_bytes(
    tmp_path: Path, api: str, types: str, key: object, value: str
) -> None:
    """The destination was written through its database's types: a value was
    encoded a second time (a bincode String of the source's bincode String), and
    a typed key was refused."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    codecs = {"value": "bincode:String", **({"key": "bincode:u64"} if api == "types" else {})}
    ks = scoped_heed.open(src, "db", api=api, **codecs)
    ks.scope("t1")[key] = value
    ks.close()
    url = "scoped-heed://{}?name=db&api=" + api + "&" + types
    run("migrate", url.format(src), url.format(dst))
    copied = scoped_heed.open(dst, "db", api=api, **codecs)
    try:
        assert dict(copied.scope("t1").items()) == {key: value}
    finally:
        copied.close()
    run("migrate", url.format(src), url.format(dst))  # again: found there, the same
