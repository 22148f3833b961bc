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

from ..errors import KeyspaceError, StoreError
from ._base import (
    Capabilities,
    Op,
    ReadView,
    Seeker,
    Store,
    WriteView,
    checked_pages,
    cut_pages,
    cut_ranges,
    keys_in,
    page_list,
    pages_by_range,
    pages_in_turn,
    pages_of,
)
from ._checked import CheckFailed
from ._options import checked_option, known_options, parse_value, resolve_options, split_query
from ._overlay import OverlayTransaction, TransactionGate
from ._paths import check_directory
from ._readonly import ReadOnlyStore
from ._translated import translated
from .memory import MemoryStore

if TYPE_CHECKING:
    from .etcd import EtcdStore
    from .leveldb import LevelDBStore
    from .lmdb import LMDBStore
    from .rocksdb import RocksDBStore
    from .sqlite import SQLiteStore

__all__ = [
    "Capabilities",
    "CheckFailed",
    "EtcdStore",
    "LMDBStore",
    "LevelDBStore",
    "MemoryStore",
    "Op",
    "OverlayTransaction",
    "ReadOnlyStore",
    "ReadView",
    "RocksDBStore",
    "SQLiteStore",
    "Seeker",
    "Store",
    "TransactionGate",
    "WriteView",
    "check_directory",
    "checked_pages",
    "cut_pages",
    "cut_ranges",
    "keys_in",
    "local_path",
    "open_store",
    "page_list",
    "pages_by_range",
    "pages_in_turn",
    "pages_of",
    "parse_url",
    "translated",
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


_EXTRAS = {"LevelDBStore": "leveldb", "RocksDBStore": "rocksdb", "EtcdStore": "etcd"}
"""Adapters whose engine is an optional dependency -> the extra that installs it."""


def open_store(url: str | os.PathLike[str], *, readonly: bool | str = False, **options: Any) -> Store:
    """Open the store named by ``url``; ``options`` go to the adapter's constructor.

    ``memory:`` gives a new empty :class:`MemoryStore`; ``lmdb:///path``,
    ``sqlite:///file``, ``leveldb:///dir`` and ``rocksdb:///dir`` open (creating if
    needed) the store at that path (``lmdb://relative/path`` is relative); a bare
    path means LMDB; ``etcd://h1:p1,h2:p2`` connects to an etcd cluster.

    Options are the keyword-only parameters of the adapter's constructor, given as
    keywords or as URL query parameters (``lmdb:///p?map_size=64GiB&sync=false``;
    keywords win); an unknown one raises :class:`~keyspace.errors.StoreError`
    listing the known ones. ``readonly=True`` opens a store that must already exist
    and be a store of that engine, creates and changes nothing, and refuses every
    write with :class:`~keyspace.errors.StoreError`.

    Every failure to open is a :class:`~keyspace.errors.StoreError` naming the
    cause: an empty URL, an unknown scheme (listing the known ones), a bare path
    that is a scheme name (``"memory"`` for ``"memory:"``), an engine that is not
    installed (with the ``pip install`` line), and each adapter's own causes.
    """
    text = os.fspath(url)
    engine, target, query = parse_url(text)
    if engine == "memory":
        return _open(MemoryStore, "memory", target, text, query, options, readonly)
    if engine == "etcd":
        return _open(_adapter("EtcdStore"), "etcd", target, text, query, options, readonly)
    name = _PATH_SCHEMES[engine]
    return _open(_adapter(name), name.removesuffix("Store"), target, text, query, options, readonly)


def parse_url(url: str | os.PathLike[str]) -> tuple[str, str, list[tuple[str, str]]]:
    """``(engine, target, options)`` of a store URL, as :func:`open_store` reads it:
    the engine (``memory``, ``lmdb``, ``sqlite``, ``leveldb``, ``rocksdb`` or
    ``etcd``; the URL scheme is case-insensitive and a bare path is ``lmdb``), what
    its adapter opens (the file-system path of a local store, as written: the
    ``//`` after the colon is optional, ``sqlite:rel.db`` is relative) and the
    query's options. Pure text: nothing is opened.

    Raises :class:`~keyspace.errors.StoreError` for an empty URL, an unknown
    scheme (listing the known ones), a bare path that is a scheme name with its
    colon missing (unless such a path exists) and a local URL naming no path.

    >>> parse_url("SQLite:data/x.db?timeout=5")
    ('sqlite', 'data/x.db', [('timeout', '5')])
    >>> parse_url("/srv/store")
    ('lmdb', '/srv/store', [])
    """
    text = os.fspath(url)
    if not text.strip():
        raise StoreError("the store URL is empty; give a path or a URL such as lmdb:///path or memory:")
    scheme, sep, rest = text.partition(":")
    if not sep or not scheme.isidentifier() or len(scheme) == 1:
        # No scheme (or a Windows drive letter): a bare path, the embedded default.
        path, query = split_query(text)
        _check_bare(path, text)
        return "lmdb", path, query
    scheme = scheme.lower()
    if scheme == "memory":
        base, query = split_query(text)
        return "memory", base, query
    if scheme == "etcd":
        # the etcd client reads its own options from the URL; readonly, an option
        # of every store, is split off here (the client would refuse it)
        base, query = split_query(text)
        common = [(name, value) for name, value in query if name == "readonly"]
        if not common:
            return "etcd", text, []
        rest = "&".join(f"{name}={value}" for name, value in query if name != "readonly")
        return "etcd", base + (f"?{rest}" if rest else ""), common
    if scheme not in _PATH_SCHEMES:
        raise StoreError(f"unknown store URL scheme {scheme!r} in {text!r}; known: {_known_schemes()}")
    rest, query = split_query(rest)
    path = rest[2:] if rest.startswith("//") else rest
    if not path:
        raise StoreError(f"the store URL {text!r} names no path")
    return scheme, path, query


def local_path(url: str | os.PathLike[str]) -> str | None:
    """The file-system path of the local store ``url`` names, as :func:`open_store`
    opens it (``None``: ``memory:`` and etcd). Raises as :func:`parse_url`.

    >>> local_path("LMDB:///srv/store?map_size=1GiB"), local_path("memory:")
    ('/srv/store', None)
    """
    engine, target, _ = parse_url(url)
    return target if engine in _PATH_SCHEMES else None


def _known_schemes() -> str:
    return ", ".join(["memory:", *(f"{s}://" for s in _PATH_SCHEMES), "etcd://"])


def _check_bare(path: str, text: str) -> None:
    """Refuse a bare path that is a URL scheme with its colon missing (``memory``,
    ``sqlite/x.db``) unless such a path exists."""
    head = path.replace("\\", "/").split("/", 1)[0].lower()
    if (head in _PATH_SCHEMES or head in ("memory", "etcd")) and not os.path.exists(path):
        raise StoreError(
            f"{text!r} looks like a store URL without its colon and no such path exists; "
            f"did you mean {head}:{'' if head == 'memory' else '//'}…? known: {_known_schemes()}"
        )


def _open(
    factory: Callable[..., Store],
    engine: str,
    target: str,
    text: str,
    query: list[tuple[str, str]],
    given: dict[str, Any],
    readonly: bool | str,
) -> Store:
    readonly = checked_option("readonly", readonly, False)  # None or 0, taken as false, would write
    for name, value in query:
        if name == "readonly":
            readonly = readonly or parse_value(name, value, False)
    query = [(n, v) for n, v in query if n != "readonly"]
    options = resolve_options(factory, engine, text, query, given)
    if readonly and "readonly" in known_options(factory):
        options["readonly"] = True
    try:
        store = factory(target, **options)
    except KeyspaceError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # a malformed URL or option value
        raise StoreError(f"cannot open {text!r}: {exc}") from exc
    except OSError as exc:
        raise StoreError(f"cannot open {text!r}: {exc.strerror or exc}") from exc
    return ReadOnlyStore(store) if readonly else store


def _adapter(name: str) -> Callable[..., Store]:
    try:
        return cast("Callable[..., Store]", __getattr__(name))
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get(name)
        if extra is None:
            raise
        raise StoreError(
            f"{name.removesuffix('Store')} support is not installed (no module {exc.name!r}); "
            f"install it with: pip install keyspace[{extra}]"
        ) from exc
