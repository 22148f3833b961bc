"""Property: on the memory store (its own watch) and on every embedded engine with
the change log on (``changes=True``), in every scheme, a scope's own watch reports
exactly its own changes (no sibling whose name extends, shares a prefix with or is
a prefix of its own, no parent, no child), and its subtree watch exactly the
changes of the scope and the scopes below it; writes refused as bad input, and a
transaction that raises, report nothing. Sync writes and async writes alike."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_options, engine_url
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.errors import KeyspaceError

SCHEMES = ["tuple", "length-prefixed", "asciihex", "sublevel", "scopehash", "delimited"]
NAMES = ["a", "ab", "a!", "a:", "b", "", "a\x00", "aa"]
KEYS = [b"k", b"", b"!x", b":", b"\x00\x01", b"\xff"]


def _b(path: tuple[Any, ...]) -> tuple[bytes, ...]:
    return tuple(c.encode() if isinstance(c, str) else c for c in path)


def _drain(w: Any) -> list[tuple[str, tuple[bytes, ...], bytes]]:
    out = []
    while (event := w.get(0)) is not None:
        out.append((event.kind, _b(event.path), event.key))
    return out


@settings(max_examples=80)
@given(
    scheme=st.sampled_from(SCHEMES),
    target=st.sampled_from(NAMES),
    writes=st.lists(
        st.tuples(
            st.sampled_from([(n,) for n in NAMES] + [("a", "c"), ("ab", "c"), ("a", "")]),
            st.sampled_from(KEYS),
            st.booleans(),
            st.sampled_from(["sync", "async", "tx-fails", "bad"]),
        ),
        min_size=1,
        max_size=12,
    ),
)
@pytest.mark.parametrize("engine", ENGINES)
def test_watches_report_exactly_their_scope(
    engine: str,
    scheme: str,
    target: str,
    writes: list[tuple[tuple[str, ...], bytes, bool, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = engine_url(engine, str(tmp_path_factory.mktemp("watch")))

    async def main() -> None:
        aks = await keyspace.aio.open(url, scheme=scheme, **engine_options(engine))
        try:
            try:
                await aks.scope(target).put(b"probe", b"1")
            except KeyspaceError:
                return  # a name the scheme refuses
            own, sub = aks.sync.scope(target).watch(), await aks.scope(target).watch(subtree=True)
            expect_own: list[tuple[str, tuple[bytes, ...], bytes]] = []
            expect_sub: list[tuple[str, tuple[bytes, ...], bytes]] = []
            present: set[tuple[tuple[str, ...], bytes]] = set()
            for path, key, is_put, how in writes:
                try:
                    scope = aks.scope(*path) if how != "sync" else None
                    if how == "sync":
                        sync = aks.sync.scope(*path)
                        sync.__setitem__(key, b"v") if is_put else sync.discard(key)
                    elif how == "async":
                        assert scope is not None
                        await (scope.put(key, b"v") if is_put else scope.discard(key))
                    elif how == "tx-fails":
                        try:
                            async with aks.transaction() as tx:
                                await tx.scope(*path).put(key, b"v")
                                raise LookupError
                        except LookupError:
                            pass
                        continue
                    else:
                        assert scope is not None
                        try:
                            await scope.update({key: b"v", b"bad": 5})
                        except KeyspaceError:
                            continue
                        raise AssertionError("a bad value was accepted")
                except KeyspaceError:
                    continue  # a path the scheme refuses beside the others
                if not is_put and (path, key) not in present:
                    continue  # no change, no event
                (present.add if is_put else present.discard)((path, key))
                change = ("put" if is_put else "delete", _b(path), key)
                if path == (target,):
                    expect_own.append(change)
                if path[:1] == (target,):
                    expect_sub.append(change)
            assert _drain(own) == expect_own
            assert _drain(sub) == expect_sub
            own.close()
            sub.close()
        finally:
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 20))


def test_get_keeps_its_timeout_while_other_scopes_keep_writing() -> None:
    """On AsciiHex a scope's watched range holds its children's keys; each child
    write passed over started ``get``'s timeout again, so with writes that never
    stop ``get(0.3)`` never returned."""
    import threading
    import time

    from keyspace.schemes import AsciiHex

    with keyspace.open("memory:", scheme=AsciiHex()) as ks:
        own, child = ks.scope("a"), ks.scope("a", "c")
        stop = threading.Event()

        def write() -> None:
            for i in range(400):  # bounded: 8 s at most
                if stop.wait(0.02):
                    return
                child[b"k%d" % i] = b"v"

        with own.watch() as watch:
            writer = threading.Thread(target=write)
            writer.start()
            try:
                started = time.monotonic()
                assert watch.get(0.3) is None
                assert time.monotonic() - started < 1.5
            finally:
                stop.set()
                writer.join()
