"""The asyncio face writes through the keyspace's features as the synchronous
API does, on every engine: with ``accounting=True`` its puts, deletes and
transactions keep the counts, and a quota refuses what goes over it. On etcd
it used to write through the cluster's own asyncio client, which runs no
feature, so the counts missed every asyncio write."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from _etcd import own_url

import keyspace
import keyspace.aio
from keyspace.errors import QuotaExceeded


@pytest.fixture(params=["lmdb", "etcd"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "lmdb":
        yield f"lmdb:///{tmp_path}/db"
    else:
        yield from own_url("aio-features")


def test_asyncio_writes_keep_the_counts_and_quotas(url: str) -> None:
    ks = keyspace.open(url, accounting=True)
    ks.scope("t")[b"first"] = b"1"  # records accounting: every later opener runs it

    async def main() -> None:
        aks = await keyspace.aio.open(url)
        try:
            scope = aks.scope("t")
            await scope.put(b"a", b"22")
            await scope.put(b"b", b"333")
            await scope.delete(b"first")
            async with aks.transaction() as tx:
                await tx.scope("t").put(b"c", b"4444")
            aks.sync.set_quota(("t",), keys=3)
            with pytest.raises(QuotaExceeded):
                await scope.put(b"d", b"5")
        finally:
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 60))
    stats = ks.scope("t").stats()
    stored = sum(len(ks.scheme.encode(("t",), k)) + len(v) for k, v in ks.scope("t").items())
    assert (stats.keys, stats.bytes) == (3, stored)  # stored keys and values, as counted
    assert sorted(ks.scope("t").keys()) == [b"a", b"b", b"c"]
    ks.close()
