"""Property: whatever an async scope does (put, update, delete, discard, clear,
clear_range with any bounds, pop-like reads, scans with any bounds and prefix,
len, drop of a scope that is not a neighbour's ancestor), its neighbours' keys —
sibling scopes whose names extend, share a prefix with or are a prefix of its own,
its parent and its children — are never read by it and never changed, in every
scheme (naive only reads: it refuses writes). Bad input raises a KeyspaceError and
leaves the store as it was. Memory and LMDB."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.aio import AsyncScope
from keyspace.errors import KeyspaceError, LayoutError

SCHEMES = ["tuple", "length-prefixed", "asciihex", "sublevel", "scopehash"]
NAMES = ["a", "ab", "a!", "a:", "b", "", "a\x00", "a\xff", "aa"]
KEYS = st.sampled_from([b"", b"k", b"k2", b"!", b"!x", b"\x00", b"\x00\x01", b"\xff", b"a", b"z" * 3])


def _paths(scheme: str, target: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The target's neighbours that the scheme can hold beside it."""
    if scheme == "scopehash":  # one level, any name
        return [(n,) for n in NAMES if (n,) != target]
    out = [(n,) for n in NAMES if (n,) != target]
    if scheme not in ("length-prefixed",):  # layered schemes: a scope is a leaf or a branch
        out += [(*target, "c"), (*target, "")]
        if len(target) > 1:
            out.append(target[:-1])
    return out


def _op(data: st.DataObject) -> tuple[str, Any]:
    kind = data.draw(
        st.sampled_from(["put", "update", "delete", "discard", "clear", "clear_range", "scan", "len", "bad"])
    )
    if kind == "clear_range":
        args = {
            "start": data.draw(st.none() | KEYS),
            "stop": data.draw(st.none() | KEYS),
            "include_stop": data.draw(st.booleans()),
        }
        return kind, args
    if kind == "scan":
        if data.draw(st.booleans()):
            return kind, {"prefix": data.draw(KEYS), "reverse": data.draw(st.booleans())}
        return kind, {
            "start": data.draw(st.none() | KEYS),
            "stop": data.draw(st.none() | KEYS),
            "include_start": data.draw(st.booleans()),
            "include_stop": data.draw(st.booleans()),
            "reverse": data.draw(st.booleans()),
            "limit": data.draw(st.none() | st.integers(0, 3)),
        }
    if kind == "update":
        return kind, data.draw(st.dictionaries(KEYS, st.binary(max_size=2), max_size=3))
    if kind == "bad":
        return kind, data.draw(st.sampled_from(["object key", "int value", "huge key", "bad update"]))
    return kind, data.draw(KEYS)


async def _apply(s: AsyncScope, kind: str, arg: Any, own: dict[bytes, bytes]) -> None:
    """Apply one operation, and keep ``own`` (the model of the scope's keys)."""

    async def named(call: Awaitable[Any]) -> bool:
        try:
            await call
        except KeyspaceError:
            return False
        return True

    if kind == "put":
        if await named(s.put(arg, b"v")):
            own[arg] = b"v"
    elif kind == "update":
        if await named(s.update(arg)):
            own.update(arg)
    elif kind in ("delete", "discard"):
        try:
            await (s.delete(arg) if kind == "delete" else s.discard(arg))
            own.pop(arg, None)
        except KeyError:
            assert arg not in own
        except KeyspaceError:
            pass
    elif kind == "clear":
        await s.clear()
        own.clear()
    elif kind == "clear_range":
        try:
            await s.clear_range(**arg)
        except KeyspaceError:
            return
        keep = await _keys(s)
        for k in list(own):
            if k not in keep:
                del own[k]
    elif kind == "scan":
        try:
            got = [k async for k in s.keys(**arg)]
        except KeyspaceError:
            return
        assert set(got) <= set(own), f"scan {arg} saw keys that are not the scope's: {set(got) - set(own)}"
    elif kind == "len":
        assert await s.len() == len(own)
    else:
        bad: dict[str, Callable[[], Awaitable[Any]]] = {
            "object key": lambda: s.put(object(), b"v"),
            "int value": lambda: s.put(b"k", 5),
            "huge key": lambda: s.put(b"h" * 600, b"v"),
            "bad update": lambda: s.update({b"ok": b"v", b"no": 5}),
        }
        before = dict(own)
        try:
            await bad[arg]()
        except (KeyspaceError, TypeError):
            assert await _items(s) == before
            return
        if arg == "huge key":  # an engine without a key limit stores it
            own[b"h" * 600] = b"v"
            return
        raise AssertionError(f"{arg}: accepted")


async def _keys(s: AsyncScope) -> set[bytes]:
    return {k async for k in s}


async def _items(s: AsyncScope) -> dict[bytes, bytes]:
    return {k: v async for k, v in s.items()}


def _check(url: str, scheme: str, target: tuple[str, ...], ops: list[tuple[str, Any]]) -> None:
    async def main() -> None:
        aks = await keyspace.aio.open(url, scheme=scheme)
        try:
            neighbours: dict[tuple[str, ...], dict[bytes, bytes]] = {}
            for path in _paths(scheme, target):
                try:
                    scope = aks.sync.scope(*path)
                    scope.update({b"k": b"N", b"!x": b"N", b"\xff": b"N", b"": b"N"})
                except KeyspaceError:
                    continue
                neighbours[path] = dict(scope.items())
            s = aks.scope(*target)
            own: dict[bytes, bytes] = {}
            for kind, arg in ops:
                await _apply(s, kind, arg, own)
                assert await _items(s) == own, f"after {kind} {arg!r}"
            for path, items in neighbours.items():
                assert dict(aks.sync.scope(*path).items()) == items, f"{path} changed"
            await s.drop()
            assert await _items(s) == {}
            for path, items in neighbours.items():
                if path[: len(target)] != target:
                    assert dict(aks.sync.scope(*path).items()) == items, f"{path} changed by the drop"
        finally:
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 20))


def _takes(scheme: str, target: str) -> bool:
    """Whether ``scheme`` takes a scope named ``target`` (it may refuse the name)."""
    try:
        keyspace.open("memory:", scheme=scheme).scope(target)[b"probe"] = b"1"
    except KeyspaceError:
        return False
    return True


@settings(max_examples=120)
@given(scheme=st.sampled_from(SCHEMES), target=st.sampled_from(NAMES), data=st.data())
def test_async_scope_never_reaches_a_neighbour_memory(scheme: str, target: str, data: st.DataObject) -> None:
    assume(_takes(scheme, target))
    ops = [_op(data) for _ in range(data.draw(st.integers(1, 8)))]
    _check("memory:", scheme, (target,), ops)


@settings(max_examples=30)
@given(scheme=st.sampled_from(SCHEMES), target=st.sampled_from(NAMES), data=st.data())
def test_async_scope_never_reaches_a_neighbour_lmdb(scheme: str, target: str, data: st.DataObject) -> None:
    assume(_takes(scheme, target))
    ops = [_op(data) for _ in range(data.draw(st.integers(1, 6)))]
    with tempfile.TemporaryDirectory() as d:
        _check(f"lmdb:///{d}/db", scheme, (target,), ops)


def test_naive_reads_stay_in_their_scope_and_writes_and_deletes_are_refused() -> None:
    """Naive keys do not record where a name ends: scope ``a``'s range holds key
    ``bk`` of scope ``ab``. Reads are the caller's risk; every write, deletes
    included (clear, clear_range, drop, delete, discard), is refused with a
    LayoutError and changes nothing, async and sync."""

    async def main() -> None:
        aks = await keyspace.aio.open("memory:", scheme="naive", leaf_depth=1)
        aks.sync.store.put(b"ak", b"1")
        aks.sync.store.put(b"abk", b"2")
        before = list(aks.sync.store.scan())
        assert [k async for k in aks.scope("ab")] == [b"k"]
        for name in ("a", "ab"):
            await _all_refused(aks.scope(name), aks.sync.scope(name))
            assert list(aks.sync.store.scan()) == before
        await aks.close()

    asyncio.run(asyncio.wait_for(main(), 10))


async def _all_refused(s: AsyncScope, mirror: keyspace.Scope) -> None:
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: s.put(b"x", b"1"),
        lambda: s.update({b"x": b"1"}),
        s.clear,
        lambda: s.clear_range(start=b"a"),
        s.drop,
        lambda: s.discard(b"bk"),
        lambda: s.delete(b"k"),
    ]
    for call in calls:
        try:
            await call()
        except LayoutError:
            continue
        raise AssertionError(f"naive scope {s.path!r} wrote")
    for sync_call in (mirror.clear, mirror.drop, lambda: mirror.discard(b"bk")):
        try:
            sync_call()
        except LayoutError:
            continue
        raise AssertionError(f"naive scope {s.path!r} wrote")
