"""``keyspace.aio`` answers as the synchronous API, call for call, in every scheme.

A differential test: Hypothesis draws a script of calls of the public scope API
(point reads and writes, ``pop``/``popitem``/``setdefault``/``update`` with
mappings, pair lists and keyword arguments, ranged ``items``/``keys``/``values``
with start/stop/include_*/reverse/limit/prefix, ``clear``/``clear_range``,
``drop``, ``scopes()``, ``subtree()``, ``len``, typed scopes (``str``/``json``,
``int``/``int``), transactions committed and aborted, snapshots taken before a
later write) on a few scope paths of each scheme: scopes, siblings, parents,
children, the root (a path the scheme refuses, a leaf/branch mix, or two
ScopeHash names of one hash, are part of the script too). Every call runs on a
synchronous keyspace and on an async one over a store of the same engine; both
must give the same result or raise the same named error with the same message
(for KeyTooLarge: the same sizes named), and after each step both raw stores
must hold exactly the same bytes, the keyspace's own records included. The keys
and values are drawn from one pool of bytes, ``str`` and ``int`` so that wrong
types, keys a scheme refuses and keys over the engine's limit are drawn too.
Memory, LMDB and SQLite.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.errors import KeyTooLarge
from keyspace.schemes import (
    AsciiHex,
    Delimited,
    LengthPrefixed,
    Naive,
    Scheme,
    ScopeHash,
    Sublevel,
    TupleScheme,
)

SCHEMES: dict[str, tuple[Callable[[], Scheme], list[tuple[Any, ...]]]] = {
    "tuple": (TupleScheme, [("t", "a"), ("t", "b"), ("t",), ("t", "a", "c"), ()]),
    "length-prefixed": (LengthPrefixed, [(b"t", b"a"), (b"t", b"b"), (b"t",), (b"t", b"a", b"c")]),
    "asciihex": (AsciiHex, [("t", "a"), ("t", "b"), ("t",), ("t", "a", "c"), ()]),
    "sublevel": (Sublevel, [("t", "a"), ("t", "b"), ("t",), ("t", "a", "c"), (), ("t!",)]),
    # scope72590 and scope159129: one xxh32 hash (the second is refused once the first holds it)
    "scopehash": (ScopeHash, [("a",), ("b",), (), ("a", "c"), ("scope72590",), ("scope159129",)]),
    "delimited": (lambda: Delimited(":"), [("a",), ("b",), ("ab",), (), ("a", "c")]),
    "naive": (lambda: Naive(allow_collisions=True), [("t", "a"), ("t", "b"), ("t",), ()]),
}

STORES: dict[str, Callable[[str], str]] = {
    "memory": lambda d: "memory:",
    "lmdb": lambda d: f"lmdb://{d}/store.lmdb",
    "sqlite": lambda d: f"sqlite://{d}/store.sqlite",
}

CODECS: list[tuple[str | None, str | None]] = [(None, None), ("str", "json"), ("int", "int")]

KEYS: dict[str | None, list[Any]] = {
    None: [b"", b"a", b"ab", b"\x00", b"\xff", b"!a", b"a:b", b"x" * 600],  # 600: over LMDB's limit
    "str": ["", "a", "b", "!a", "a:b", "\x00", "\u00e9"],
    "int": [0, -1, 300, 2**70],
}
VALUES: dict[str | None, list[Any]] = {
    None: [b"", b"v", b"\x00\xff"],
    "json": [None, 5, "s", [1], {"a": [True]}],
    "int": [0, -5, 2**40],
}
EVERY_KEY = [k for keys in KEYS.values() for k in keys]
EVERY_VALUE = [v for values in VALUES.values() for v in values] + [object()]
LIMITS = [0, 1, 2, 5, None, -1, True, "2"]  # the last three: bad


def _own_or_any(own: list[Any], every: list[Any]) -> st.SearchStrategy[Any]:
    """Mostly a value of the codec's own type; now and then any (a wrong type)."""
    return st.sampled_from(own) | st.sampled_from(own) | st.sampled_from(own) | st.sampled_from(every)


def range_args(codec: int) -> st.SearchStrategy[dict[str, Any]]:
    bounds = _own_or_any(KEYS[CODECS[codec][0]], [*EVERY_KEY, b"!"])
    ranged = st.fixed_dictionaries(
        {},
        optional={
            "start": bounds,
            "stop": bounds,
            "include_start": st.booleans(),
            "include_stop": st.booleans(),
            "reverse": st.booleans(),
            "limit": st.sampled_from(LIMITS),
        },
    )
    prefixed = st.fixed_dictionaries(
        {"prefix": bounds}, optional={"reverse": st.booleans(), "limit": st.integers(0, 3)}
    )
    return ranged | prefixed


def _typed(kind: str, n_paths: int, *parts: str) -> st.SearchStrategy[tuple[Any, ...]]:
    """``(kind, path index, codec index, *parts)``, each part drawn for the codec:
    ``k`` a key, ``v`` a value, ``pairs`` a list of pairs, ``range`` range arguments,
    or a fixed choice list of strings ``a|b|c``."""

    def build(c: int) -> st.SearchStrategy[tuple[Any, ...]]:
        key_codec, value_codec = CODECS[c]
        k = _own_or_any(KEYS[key_codec], EVERY_KEY)
        v = _own_or_any(VALUES[value_codec], EVERY_VALUE)
        made: list[st.SearchStrategy[Any]] = []
        for part in parts:
            if part == "k":
                made.append(k)
            elif part == "v":
                made.append(v)
            elif part == "pairs":
                made.append(st.lists(st.tuples(k, v), max_size=3))
            elif part == "range":
                made.append(range_args(c))
            elif part == "bool":
                made.append(st.booleans())
            else:
                made.append(st.sampled_from(part.split("|")))
        return st.tuples(st.just(kind), st.integers(0, n_paths - 1), st.just(c), *made)

    return st.sampled_from(range(len(CODECS))).flatmap(build)


def calls(n_paths: int) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    p = st.integers(0, n_paths - 1)
    point = st.one_of(
        _typed("put", n_paths, "k", "v"),
        _typed("put", n_paths, "k", "v"),
        _typed("put", n_paths, "k", "v"),
        _typed("get", n_paths, "k"),
        _typed("getitem", n_paths, "k"),
        _typed("contains", n_paths, "k"),
        _typed("delete", n_paths, "k"),
        _typed("discard", n_paths, "k"),
        _typed("pop", n_paths, "k", "bool"),
        _typed("popitem", n_paths),
        _typed("setdefault", n_paths, "k", "v"),
        _typed("update", n_paths, "pairs", "dict|list|iter|kwargs"),
        _typed("update", n_paths, "pairs", "dict|list|iter|kwargs"),
        _typed("clear", n_paths),
        _typed("clear_range", n_paths, "range"),
        st.tuples(st.just("drop"), p),
    )
    reads = st.one_of(
        _typed("items", n_paths, "items|keys|values", "range"),
        _typed("items", n_paths, "items|keys|values", "range"),
        _typed("len", n_paths),
        st.tuples(st.just("scopes"), p),
        _typed("subtree", n_paths),
    )
    return st.lists(
        st.one_of(
            point,
            point,
            reads,
            st.tuples(st.just("tx"), st.lists(point | reads, max_size=5), st.booleans()),
            st.tuples(st.just("snapshot"), point, st.lists(point | reads, min_size=1, max_size=3)),
        ),
        min_size=4,
        max_size=20,
    )


class _Abort(Exception):
    pass


Outcome = tuple[Any, ...]


def _error(exc: BaseException) -> Outcome:
    """A named error and its message (the store's own directory named alike)."""
    message = str(exc).replace("/sync/", "/<store>/").replace("/aio/", "/<store>/")
    if isinstance(exc, KeyTooLarge):
        # the key's size and the limit, compared as numbers: the words may come from
        # the engine's check or the catalog's, which asks the store for them
        message = " ".join(re.findall(r"\b\d+ bytes", message))
    return ("error", type(exc).__name__, message)


def _update_args(pairs: list[tuple[Any, Any]], form: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if form == "dict":
        return (dict(pairs),), {}
    if form == "list":
        return (list(pairs),), {}
    if form == "iter":  # read once: a generator
        return ((pair for pair in pairs),), {}
    # keyword arguments: str keys only (the other keys go in the mapping beside them)
    named = {key: value for key, value in pairs if isinstance(key, str)}
    rest = [(key, value) for key, value in pairs if not isinstance(key, str)]
    return (rest,), named


def sync_call(handle: Any, paths: list[tuple[Any, ...]], call: tuple[Any, ...]) -> Outcome:
    """One call on a synchronous keyspace, transaction or snapshot."""
    kind, *args = call
    try:
        if kind == "drop":
            handle.scope(*paths[args[0]]).drop()
            return ("ok", None)
        if kind == "scopes":
            return ("ok", handle.scope(*paths[args[0]]).scopes())
        i, c, *rest = args
        key_codec, value_codec = CODECS[c]
        s = handle.scope(*paths[i], key=key_codec, value=value_codec)
        if kind == "put":
            s[rest[0]] = rest[1]
            return ("ok", None)
        if kind == "get":
            return ("ok", s.get(rest[0]), s.get(rest[0], "default"))
        if kind == "getitem":
            return ("ok", s[rest[0]])
        if kind == "contains":
            return ("ok", rest[0] in s)
        if kind == "delete":
            del s[rest[0]]
            return ("ok", None)
        if kind == "discard":
            s.discard(rest[0])
            return ("ok", None)
        if kind == "pop":
            return ("ok", s.pop(rest[0], "default") if rest[1] else s.pop(rest[0]))
        if kind == "popitem":
            return ("ok", s.popitem())
        if kind == "setdefault":
            return ("ok", s.setdefault(rest[0], rest[1]))
        if kind == "update":
            positional, named = _update_args(*rest)
            s.update(*positional, **named)
            return ("ok", None)
        if kind == "clear":
            s.clear()
            return ("ok", None)
        if kind == "clear_range":
            s.clear_range(**{n: a for n, a in rest[0].items() if n not in ("reverse", "limit")})
            return ("ok", None)
        if kind == "items":
            which, ranged = rest
            return ("ok", list(getattr(s, which)(**ranged)))
        if kind == "len":
            return ("ok", len(s))
        if kind == "subtree":
            return ("ok", list(s.subtree()))
    except Exception as exc:
        return _error(exc)
    raise AssertionError(kind)  # pragma: no cover - the strategy makes no other


async def aio_call(handle: Any, paths: list[tuple[Any, ...]], call: tuple[Any, ...]) -> Outcome:
    """The same call on an async keyspace, transaction or snapshot."""
    kind, *args = call
    try:
        if kind == "drop":
            await handle.scope(*paths[args[0]]).drop()
            return ("ok", None)
        if kind == "scopes":
            return ("ok", await handle.scope(*paths[args[0]]).scopes())
        i, c, *rest = args
        key_codec, value_codec = CODECS[c]
        s = handle.scope(*paths[i], key=key_codec, value=value_codec)
        if kind == "put":
            await s.put(rest[0], rest[1])
            return ("ok", None)
        if kind == "get":
            return ("ok", await s.get(rest[0]), await s.get(rest[0], "default"))
        if kind == "getitem":
            return ("ok", await s.getitem(rest[0]))
        if kind == "contains":
            return ("ok", await s.contains(rest[0]))
        if kind == "delete":
            await s.delete(rest[0])
            return ("ok", None)
        if kind == "discard":
            await s.discard(rest[0])
            return ("ok", None)
        if kind == "pop":
            return ("ok", await (s.pop(rest[0], "default") if rest[1] else s.pop(rest[0])))
        if kind == "popitem":
            return ("ok", await s.popitem())
        if kind == "setdefault":
            return ("ok", await s.setdefault(rest[0], rest[1]))
        if kind == "update":
            positional, named = _update_args(*rest)
            await s.update(*positional, **named)
            return ("ok", None)
        if kind == "clear":
            await s.clear()
            return ("ok", None)
        if kind == "clear_range":
            await s.clear_range(**{n: a for n, a in rest[0].items() if n not in ("reverse", "limit")})
            return ("ok", None)
        if kind == "items":
            which, ranged = rest
            return ("ok", [x async for x in getattr(s, which)(**ranged)])
        if kind == "len":
            return ("ok", await s.len())
        if kind == "subtree":
            return ("ok", [x async for x in s.subtree()])
    except Exception as exc:
        return _error(exc)
    raise AssertionError(kind)  # pragma: no cover - the strategy makes no other


class Pair:
    """A synchronous and an async keyspace of one scheme over two stores of one engine."""

    def __init__(self, ks: keyspace.Keyspace, aks: keyspace.aio.AsyncKeyspace, paths: list[Any]) -> None:
        self.ks, self.aks, self.paths = ks, aks, paths

    async def raw(self) -> None:
        """Both stores hold the same bytes (records included)."""
        want = list(self.ks.store.scan(b"", None))
        got = [kv async for kv in self.aks.store.scan(b"", None)]
        assert got == want

    async def step(self, call: tuple[Any, ...]) -> None:
        kind = call[0]
        if kind == "tx":
            await self.transaction(call[1], call[2])
        elif kind == "snapshot":
            await self.snapshot(call[1], call[2])
        else:
            want = sync_call(self.ks, self.paths, call)
            got = await aio_call(self.aks, self.paths, call)
            assert got == want, call
        await self.raw()

    async def transaction(self, ops: list[tuple[Any, ...]], abort: bool) -> None:
        want: list[Outcome] = []
        got: list[Outcome] = []
        try:
            with self.ks.transaction() as tx:
                want.extend(sync_call(tx, self.paths, op) for op in ops)
                if abort:
                    raise _Abort
        except _Abort:
            want.append(("aborted",))
        except Exception as exc:
            want.append(_error(exc))
        try:
            async with self.aks.transaction() as atx:
                got.extend([await aio_call(atx, self.paths, op) for op in ops])
                if abort:
                    raise _Abort
        except _Abort:
            got.append(("aborted",))
        except Exception as exc:
            got.append(_error(exc))
        assert got == want, ops

    async def snapshot(self, write: tuple[Any, ...], reads: list[tuple[Any, ...]]) -> None:
        """Calls on a snapshot taken before ``write``: they do not see it (and a
        write on the snapshot is refused alike)."""
        with self.ks.snapshot() as snap:
            want = [sync_call(self.ks, self.paths, write)]
            want.extend(sync_call(snap, self.paths, op) for op in reads)
        async with self.aks.snapshot() as asnap:
            got = [await aio_call(self.aks, self.paths, write)]
            got.extend([await aio_call(asnap, self.paths, op) for op in reads])
        assert got == want, (write, reads)


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="ks-aio-differential-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("store", list(STORES))
@pytest.mark.parametrize("scheme_name", list(SCHEMES))
def test_async_calls_answer_and_store_as_the_sync_calls(scheme_name: str, store: str, workdir: Path) -> None:
    make_scheme, paths = SCHEMES[scheme_name]

    @settings(
        max_examples=30 if store == "memory" else 10,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(script=calls(len(paths)))
    def check(script: list[tuple[Any, ...]]) -> None:
        d = Path(tempfile.mkdtemp(dir=workdir))
        (d / "sync").mkdir()
        (d / "aio").mkdir()

        async def main() -> None:
            with keyspace.open(STORES[store](str(d / "sync")), scheme=make_scheme()) as ks:
                aks = await keyspace.aio.open(STORES[store](str(d / "aio")), scheme=make_scheme())
                try:
                    pair = Pair(ks, aks, paths)
                    await pair.raw()
                    for call in script:
                        await pair.step(call)
                finally:
                    await aks.close()

        try:
            asyncio.run(asyncio.wait_for(main(), 60))
        finally:
            shutil.rmtree(d, ignore_errors=True)

    check()


@pytest.mark.parametrize("store", list(STORES))
def test_update_reads_an_iterator_once_and_takes_keyword_arguments(store: str, tmp_path: Path) -> None:
    """An update runs several times before it completes (a first write reads the
    catalog, one read per run): a generator of pairs was read up by the first
    run, and the update wrote nothing, outside a transaction and inside; keyword
    arguments, which the synchronous update takes, raised TypeError."""

    async def main() -> None:
        aks = await keyspace.aio.open(STORES[store](str(tmp_path)))
        try:
            s = aks.scope("t")
            await s.update((b"k%d" % i, b"v") for i in range(3))
            assert [k async for k in s] == [b"k0", b"k1", b"k2"]
            async with aks.transaction() as tx:
                await tx.scope("u").update(iter([(b"a", b"1"), (b"b", b"2")]))
            assert [kv async for kv in aks.scope("u").items()] == [(b"a", b"1"), (b"b", b"2")]
            texts = aks.scope("w", key="str", value="json")
            await texts.update([("a", 1)], b=[2], c=None)
            assert [kv async for kv in texts.items()] == [("a", 1), ("b", [2]), ("c", None)]
        finally:
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 20))


@pytest.mark.parametrize("scheme_name", list(SCHEMES))
def test_deletes_of_keys_over_the_engine_limit_in_a_transaction_answer_as_the_sync_calls(
    scheme_name: str, tmp_path: Path
) -> None:
    """In a transaction on LMDB (keys of at most 511 bytes), ``discard``,
    ``delete``, ``pop`` and ``clear_range`` of a key over the limit answer as the
    synchronous scope's: ``discard`` raises KeyTooLarge, as a delete of such a
    key does on every path of the store (``pop`` and ``delete`` read first and
    find nothing)."""
    make_scheme, paths = SCHEMES[scheme_name]
    huge = b"x" * 600
    ops: list[tuple[Any, ...]] = [
        ("put", 0, 0, b"a", b"1"),
        ("discard", 0, 0, huge),
        ("delete", 0, 0, huge),
        ("pop", 0, 0, huge, True),
        ("pop", 0, 0, huge, False),
        ("clear_range", 0, 0, {"start": huge}),
        ("put", 0, 0, huge, b"1"),
        ("discard", 0, 0, huge),
        ("items", 0, 0, "items", {}),
    ]

    async def main() -> None:
        with keyspace.open(f"lmdb://{tmp_path}/sync", scheme=make_scheme()) as ks:
            aks = await keyspace.aio.open(f"lmdb://{tmp_path}/aio", scheme=make_scheme())
            try:
                pair = Pair(ks, aks, paths)
                await pair.step(("tx", ops, False))
                await pair.step(("tx", ops[1:], False))  # the scope recorded by now
                for call in ops[1:]:
                    await pair.step(call)
            finally:
                await aks.close()

    asyncio.run(asyncio.wait_for(main(), 20))
