"""Closing a keyspace while other threads read and write through its scopes.

Threads run point reads, point writes, short and long scans and ``len`` on one
scope; the main thread closes the keyspace mid-way. ``close()`` itself returns
normally (a RocksDB scan running in another thread made it raise ``ValueError``
half-way, leaving the store open), every thread ends with
:class:`~keyspace.errors.StoreClosed` or finishes its bounded loop, and the store
reopens (the directory lock released) with every write that returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed

URLS = {"lmdb": "lmdb://{}", "sqlite": "sqlite://{}/s.db", "rocksdb": "rocksdb://{}"}
ROUNDS = 6
STEPS = 20_000  # per thread: a bound, far past the close


def _work(scope: Any, kind: str, written: list[int]) -> Callable[[], None]:
    def run() -> None:
        for i in range(STEPS):
            if kind == "get":
                scope[b"k%04d" % (i % 500)]
            elif kind == "put":
                scope[b"n%05d" % i] = b"x"
                written.append(i)
            elif kind == "short-scan":
                list(scope.items(limit=50))
            elif kind == "long-scan":
                for j, _ in enumerate(scope.items()):
                    if j > 400:
                        break
            else:
                len(scope)

    return run


def _close_under_load(url: str) -> None:
    ks = keyspace.open(url)
    scope = ks.scope("a")
    scope.update({b"k%04d" % i: b"v" for i in range(500)})
    written: list[int] = []
    outcomes: list[str] = []
    started = threading.Barrier(6)

    def guarded(body: Callable[[], None]) -> None:
        started.wait(timeout=30)
        try:
            body()
            outcomes.append("finished")
        except StoreClosed:
            outcomes.append("closed")
        except Exception as exc:  # any other outcome fails the test below
            outcomes.append(f"{type(exc).__name__}: {exc}")

    kinds = ["get", "put", "short-scan", "long-scan", "len"]
    threads = [threading.Thread(target=guarded, args=(_work(scope, kind, written),)) for kind in kinds]
    for t in threads:
        t.start()
    started.wait(timeout=30)
    for _ in range(10_000):  # until the writer has written (bounded)
        if written:
            break
        threading.Event().wait(0.001)
    ks.close()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert set(outcomes) <= {"closed", "finished"}, outcomes
    assert "closed" in outcomes
    with keyspace.open(url) as again:
        stored = again.scope("a")
        assert all(stored.get(b"n%05d" % i) == b"x" for i in written)
        assert all(stored.get(b"k%04d" % i) == b"v" for i in range(500))


@pytest.mark.parametrize("engine", list(URLS))
def test_close_while_threads_use_the_store(engine: str, tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        where = tmp_path / str(round_)
        where.mkdir()
        _close_under_load(URLS[engine].format(where))
