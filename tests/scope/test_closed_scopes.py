"""Every read of a closed keyspace raises StoreClosed, also where the layout alone
would answer it."""

from __future__ import annotations

from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed
from keyspace.schemes import LengthPrefixed, Naive, Scheme, ScopeHash, TupleScheme


@pytest.mark.parametrize(
    ("scheme", "options"),
    [
        (ScopeHash(), {}),
        (LengthPrefixed(), {"leaf_depth": 1}),
        (LengthPrefixed(), {}),
        (Naive(allow_collisions=True), {}),
        (TupleScheme(), {}),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
@pytest.mark.parametrize("engine", ["memory", "lmdb", "leveldb"])
def test_scopes_of_a_closed_store_raise(
    scheme: Scheme, options: dict[str, Any], engine: str, tmp_path: Any
) -> None:
    """``scopes()`` of a scope with no children by its layout (a ScopeHash name, a
    LengthPrefixed leaf, a Naive scope) reads the store all the same: [] while it is
    open, StoreClosed once it is closed, as every other read."""
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"
    ks = keyspace.open(url, scheme=scheme, **options)
    scope = ks.scope("a")
    scope[b"k"] = b"v"
    assert scope.scopes() == []
    ks.close()
    with pytest.raises(StoreClosed):
        scope.scopes()
    with pytest.raises(StoreClosed):
        scope.get(b"k")


@pytest.mark.parametrize(
    ("scheme", "options", "warm"),
    [
        (LengthPrefixed(), {"leaf_depth": 2}, False),
        (LengthPrefixed(), {}, True),
        (Naive(allow_collisions=True), {}, True),
    ],
    ids=["declared", "recorded", "naive"],
)
@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_reads_of_a_known_branch_of_a_closed_store_raise(
    scheme: Scheme, options: dict[str, Any], warm: bool, engine: str, tmp_path: Any
) -> None:
    """A branch scope, known as one from the declared depth or from a read before
    the close, answered get/in/len/bool/items from that fact alone after the
    close (empty answers on some engines, StoreClosed on others)."""
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"
    ks = keyspace.open(url, scheme=scheme, **options)
    ks.scope(b"a", b"b")[b"k"] = b"v"
    branch = ks.scope(b"a")
    if warm:
        assert list(branch.items()) == []
    ks.close()
    for read in (
        lambda: branch.get(b"k"),
        lambda: b"k" in branch,
        lambda: len(branch),
        lambda: bool(branch),
        lambda: list(branch.items()),
    ):
        with pytest.raises(StoreClosed):
            read()


@pytest.mark.parametrize("scheme", [LengthPrefixed(), Naive(allow_collisions=True)], ids=lambda s: s.name)
@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_snapshot_reads_by_the_layout_of_its_own_state(scheme: Scheme, engine: str, tmp_path: Any) -> None:
    """A leaf made outside a snapshot after it began reached the snapshot's
    checks: the same read of its child, empty in the snapshot's state, then
    raised LayoutError (LengthPrefixed) or changed its answer (Naive)."""
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"
    with keyspace.open(url, scheme=scheme) as ks:
        ks.scope(b"x")[b"k"] = b"v"  # an owned keyspace: records its leaves
        with ks.snapshot() as snap:
            assert list(snap.scope(b"a", b"b").items()) == []
            ks.scope(b"a")[b"k"] = b"v"  # (a,) becomes a leaf, outside the snapshot
            assert list(snap.scope(b"a", b"b").items()) == []
            assert snap.scope(b"a").get(b"k") is None
        assert ks.scope(b"a")[b"k"] == b"v"


@pytest.mark.parametrize("scheme", [LengthPrefixed(), Naive(allow_collisions=True)], ids=lambda s: s.name)
@pytest.mark.parametrize("engine", ["memory", "lmdb"])
def test_an_asyncio_snapshot_reads_by_the_layout_of_its_own_state(
    scheme: Scheme, engine: str, tmp_path: Any
) -> None:
    """The asyncio snapshot's catalog was the live one's child, taken after the
    snapshot began: a leaf made outside it reached its checks as in the sync face."""
    import asyncio

    import keyspace.aio

    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"

    async def main() -> None:
        aks = await keyspace.aio.open(url, scheme=scheme)
        try:
            await aks.scope(b"x").put(b"k", b"v")
            async with aks.snapshot() as snap:
                assert [item async for item in snap.scope(b"a", b"b").items()] == []
                await aks.scope(b"a").put(b"k", b"v")  # (a,) becomes a leaf, outside the snapshot
                assert [item async for item in snap.scope(b"a", b"b").items()] == []
            assert await aks.scope(b"a").get(b"k") == b"v"
        finally:
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 30))
