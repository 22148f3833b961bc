"""The memory store read from one thread while another commits: a snapshot (and
so a scan) and a count see all or nothing of each transaction and batch, never
half of one.

A view took the map without the write lock, so it could take it in the middle
of a commit being applied in place, and read on as the commit went on. The
thread switch interval is cut to a microsecond while the threads run, so that
the interpreter switches inside a commit often enough for a torn read to show.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from keyspace.stores import MemoryStore

TRIALS = 15
COMMITS = 300
KEYS = [b"k%03d" % i for i in range(200)]
JOIN_S = 60


@pytest.fixture
def fast_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _race(store: MemoryStore, read: Callable[[], str | None]) -> list[str]:
    """One thread commits :data:`COMMITS` transactions, each setting every key of
    :data:`KEYS` to its number, while another calls ``read`` (a description of
    what it saw torn, or None) until the writer is done; what was torn."""
    done = threading.Event()
    torn: list[str] = []

    def writer() -> None:
        try:
            for n in range(1, COMMITS + 1):
                with store.transaction() as tx:
                    for key in KEYS:
                        tx.put(key, b"%d" % n)
        finally:
            done.set()

    def reader() -> None:
        while not done.is_set() and not torn:
            seen = read()
            if seen is not None:
                torn.append(seen)

    threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=reader, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_S)
    assert not any(t.is_alive() for t in threads), f"still running after {JOIN_S} s"
    return torn


def _store() -> MemoryStore:
    store = MemoryStore()
    store.write([(key, b"0") for key in KEYS])
    return store


def test_a_snapshot_sees_all_or_nothing_of_a_commit(fast_switching: None) -> None:
    for trial in range(TRIALS):
        store = _store()

        def read(store: MemoryStore = store) -> str | None:
            snap = store.snapshot()
            try:
                values = {v for _, v in snap.scan()}
            finally:
                snap.release()
            return None if len(values) == 1 else f"one snapshot holds {sorted(values)}"

        torn = _race(store, read)
        assert not torn, f"trial {trial}: {torn[0]}"


def test_a_scan_of_the_store_sees_all_or_nothing_of_a_commit(fast_switching: None) -> None:
    for trial in range(TRIALS):
        store = _store()

        def read(store: MemoryStore = store) -> str | None:
            values = {v for _, v in store.scan()}
            return None if len(values) == 1 else f"one scan holds {sorted(values)}"

        torn = _race(store, read)
        assert not torn, f"trial {trial}: {torn[0]}"


def test_a_count_sees_all_or_nothing_of_a_batch(fast_switching: None) -> None:
    """A batch that adds keys and deletes as many: every count sees the same number."""
    store = MemoryStore()
    old = [b"a%03d" % i for i in range(60)]
    new = [b"b%03d" % i for i in range(60)]
    store.write([(k, b"v") for k in old])
    done = threading.Event()
    counts: set[int] = set()

    def writer() -> None:
        try:
            for n in range(COMMITS):
                gone, come = (old, new) if n % 2 == 0 else (new, old)
                store.write([(k, None) for k in gone] + [(k, b"v") for k in come])
        finally:
            done.set()

    def reader() -> None:
        while not done.is_set():
            counts.add(store.count())

    threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=reader, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_S)
    assert counts == {60}
