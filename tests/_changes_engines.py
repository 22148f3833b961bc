"""Keyspaces with the change log on (``changes=True``) on every embedded engine,
for the watch tests that run on each: ``"memory-native"`` is the memory store's
own watch (no change log), every other name an engine opened with changes on."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _workers import run_together

import keyspace

ENGINES = ["memory-native", "memory", "lmdb", "sqlite", "leveldb", "rocksdb"]


def engine_url(engine: str, directory: str) -> str:
    """The URL of a new store of ``engine`` in ``directory``."""
    if engine.startswith("memory"):
        return "memory:"
    return f"{engine}:///{directory}/db"


def engine_options(engine: str) -> dict[str, Any]:
    return {} if engine == "memory-native" else {"changes": True}


@contextmanager
def engine_keyspace(engine: str, **options: Any) -> Iterator[keyspace.Keyspace]:
    """A keyspace on a new store of ``engine`` (removed afterwards)."""
    directory = tempfile.mkdtemp(prefix="ks-changes-")
    try:
        ks = keyspace.open(engine_url(engine, directory), **engine_options(engine), **options)
        try:
            yield ks
        finally:
            ks.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def four_appenders(url: str, count: int, timeout: float) -> list[tuple[Any, bytes]]:
    """Four worker processes each appending ``count`` values ``p<i>-<n>`` to the
    scope ``log`` of ``url`` at once (``_changes_worker.py appender``); returns
    the scope's items after all exited, checked: none lost, none twice, keys
    strictly increasing, and each process's values in its own order."""
    worker = str(Path(__file__).parent / "_changes_worker.py")
    run_together([[worker, "appender", url, str(count), f"p{i}"] for i in range(4)], timeout=timeout)
    with keyspace.open(url) as ks:
        items = list(ks.scope("log").items())
    keys = [k for k, _ in items]
    assert len(keys) == 4 * count and len(set(keys)) == len(keys)  # none lost, none twice
    assert all(a < b for a, b in itertools.pairwise(keys))
    values = [v.decode() for _, v in items]
    for i in range(4):  # each process's own appends in its own order
        mine = [v for v in values if v.startswith(f"p{i}-")]
        assert mine == [f"p{i}-{n}" for n in range(count)]
    return items
