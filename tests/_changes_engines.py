"""Keyspaces with the change log on (``changes=True``) on every embedded engine,
for the watch tests that run on each: ``"memory-native"`` is the memory store's
own watch (no change log), every other name an engine opened with changes on."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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
