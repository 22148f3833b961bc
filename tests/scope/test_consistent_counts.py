"""``len(scope)`` is one state of the store while another thread commits batches.

A writer thread commits batches of ``N`` keys to one scope (``update``, a
transaction, ``clear_range`` of earlier batches); a reader thread counts the scope
with ``len`` meanwhile. Every count must be of one state of the store: the seed
key plus whole batches. On LMDB a count was read in pages of separate read
transactions, so a batch committed between two pages was counted in part; a
Sublevel scope's two own ranges, and an AsciiHex scope's paged scan, were read in
several states too.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme

URLS = {
    "lmdb": "lmdb://{}",
    "sqlite": "sqlite://{}/s.db",
    "leveldb": "leveldb://{}",
    "rocksdb": "rocksdb://{}",
}
SCHEMES: dict[str, tuple[type[Scheme], tuple[object, ...]]] = {
    "tuple": (TupleScheme, ("a",)),
    "scopehash": (ScopeHash, ("a",)),
    "length-prefixed": (LengthPrefixed, (b"t", b"a")),
    "sublevel": (Sublevel, ("a",)),  # two own ranges, one each side of its children's keys
    "asciihex": (AsciiHex, ("a",)),  # not exact: a keys-only scan, read in pages
}
N = 1000  # keys per batch: more than one page of a paged count (64, then 256)


@pytest.mark.parametrize("name", list(SCHEMES))
@pytest.mark.parametrize("engine", list(URLS))
def test_len_counts_whole_batches_while_they_commit(engine: str, name: str, tmp_path: Path) -> None:
    make, path = SCHEMES[name]
    with keyspace.open(URLS[engine].format(tmp_path), scheme=make()) as ks:
        scope = ks.scope(*path)
        scope[b"seed"] = b"0"
        torn: list[int] = []
        counts = [0]
        stop = threading.Event()

        def reader() -> None:
            for _ in range(1_000_000):  # bounded; ends when the writer is done
                if stop.is_set():
                    return
                n = len(scope)
                counts[0] += 1
                if (n - 1) % N:
                    torn.append(n)

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            for r in range(6):
                # keys on both sides of "!" (a Sublevel scope's two own ranges)
                batch = {(b" " if i % 2 else b"r") + b"%d-%05d" % (r, i): b"v" for i in range(N)}
                if r % 2:
                    with ks.transaction() as tx:
                        tx.scope(*path).update(batch)
                else:
                    scope.update(batch)
                if r % 3 == 2:
                    scope.clear_range(start=b" ", stop=b"s")
        finally:
            stop.set()
            thread.join(timeout=60)
        assert counts[0] > 0
        assert torn == [], f"{len(torn)} of {counts[0]} counts saw part of a batch: {torn[:5]}"


@pytest.mark.parametrize("name", ["sublevel", "asciihex"])
@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_async_len_counts_whole_batches_while_they_commit(engine: str, name: str, tmp_path: Path) -> None:
    """The async ``len`` of a scope read in pieces (two own ranges, or a paged scan)
    counts one state of the store too, outside a transaction."""
    import asyncio

    from keyspace.aio import AsyncKeyspace

    make, path = SCHEMES[name]
    ks = keyspace.open(URLS[engine].format(tmp_path), scheme=make())
    ks.scope(*path)[b"seed"] = b"0"
    torn: list[int] = []
    done = threading.Event()
    reading = threading.Event()  # the reader has counted once: the writes begin

    def writer() -> None:
        try:
            reading.wait(30)
            for r in range(6):
                batch = {(b" " if i % 2 else b"r") + b"%d-%05d" % (r, i): b"v" for i in range(N)}
                ks.scope(*path).update(batch)
                if r % 3 == 2:
                    ks.scope(*path).clear_range(start=b" ", stop=b"s")
        finally:
            done.set()

    async def main() -> int:
        async with AsyncKeyspace(ks) as aks:
            scope = aks.scope(*path)
            thread = threading.Thread(target=writer)
            thread.start()
            counted = 0
            try:
                for _ in range(1_000_000):  # bounded; ends when the writer is done
                    if done.is_set():
                        break
                    n = await scope.len()
                    counted += 1
                    reading.set()
                    if (n - 1) % N:
                        torn.append(n)
            finally:
                await asyncio.to_thread(thread.join, 60)
            return counted

    counted = asyncio.run(main())
    assert counted > 0
    assert torn == [], f"{len(torn)} of {counted} counts saw part of a batch: {torn[:5]}"
