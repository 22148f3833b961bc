"""Ordered byte stores: one small contract (:class:`Store`), one adapter per engine.

=====================  ===============================  ==========================
URL                    class                            engine (import)
=====================  ===============================  ==========================
``memory:``            :class:`MemoryStore`             sortedcontainers
``lmdb:///path``       :class:`LMDBStore`               py-lmdb (``lmdb``)
``/path`` (bare)       :class:`LMDBStore`               the embedded default
``sqlite:///file``     :class:`SQLiteStore`             stdlib ``sqlite3``
``leveldb:///dir``     :class:`LevelDBStore`            plyvel (optional)
``rocksdb:///dir``     :class:`RocksDBStore`            rocksdict (optional)
``etcd://h1:p1,h2:p2``  :class:`EtcdStore`               grpc (optional)
=====================  ===============================  ==========================

Engine drivers are imported only when their adapter is first used, so
``import keyspace`` needs none of the optional ones.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import StoreError
from ._base import Capabilities, Op, ReadView, Store, WriteView
from ._overlay import OverlayTransaction
from .memory import MemoryStore

if TYPE_CHECKING:
    from .etcd import EtcdStore
    from .leveldb import LevelDBStore
    from .lmdb import LMDBStore
    from .rocksdb import RocksDBStore
    from .sqlite import SQLiteStore

__all__ = [
    "Capabilities",
    "EtcdStore",
    "LMDBStore",
    "LevelDBStore",
    "MemoryStore",
    "Op",
    "OverlayTransaction",
    "ReadView",
    "RocksDBStore",
    "SQLiteStore",
    "Store",
    "WriteView",
    "open_store",
]

# class name -> module that defines it (imported on first access)
_LAZY = {
    "LMDBStore": ".lmdb",
    "SQLiteStore": ".sqlite",
    "LevelDBStore": ".leveldb",
    "RocksDBStore": ".rocksdb",
    "EtcdStore": ".etcd",
}

# URL scheme -> class name of the adapter whose constructor takes a filesystem path
_PATH_SCHEMES = {
    "lmdb": "LMDBStore",
    "sqlite": "SQLiteStore",
    "leveldb": "LevelDBStore",
    "rocksdb": "RocksDBStore",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = cls
    return cls


def open_store(url: str | os.PathLike[str], **options: Any) -> Store:
    """Open the store named by ``url``; ``options`` go to the adapter's constructor.

    ``memory:`` gives a new empty :class:`MemoryStore`; ``lmdb:///path``,
    ``sqlite:///file``, ``leveldb:///dir`` and ``rocksdb:///dir`` open (creating if
    needed) the store at that path (``lmdb://relative/path`` is relative); a bare
    path means LMDB; ``etcd://h1:p1,h2:p2`` connects to an etcd cluster. An unknown
    scheme raises :class:`~keyspace.errors.StoreError` listing the known ones.
    """
    text = os.fspath(url)
    scheme, sep, rest = text.partition(":")
    if not sep or not scheme.isidentifier() or len(scheme) == 1:
        # No scheme (or a Windows drive letter): a bare path, the embedded default.
        return _adapter("LMDBStore")(text, **options)
    scheme = scheme.lower()
    if scheme == "memory":
        return MemoryStore(text, **options)
    if scheme == "etcd":
        return _adapter("EtcdStore")(text, **options)
    name = _PATH_SCHEMES.get(scheme)
    if name is None:
        known = ", ".join(["memory:", *(f"{s}://" for s in _PATH_SCHEMES), "etcd://"])
        raise StoreError(f"unknown store URL scheme {scheme!r} in {text!r}; known: {known}")
    path = rest[2:] if rest.startswith("//") else rest
    if not path:
        raise StoreError(f"the store URL {text!r} names no path")
    return _adapter(name)(path, **options)


def _adapter(name: str) -> Callable[..., Store]:
    return cast("Callable[..., Store]", __getattr__(name))
