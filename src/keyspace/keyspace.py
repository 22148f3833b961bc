"""Keyspace: one store, one scheme, many scopes.

``keyspace.open(url_or_path)`` opens a store (a bare path is LMDB) with a scheme
(``TupleScheme`` unless the store records another) and hands out :class:`Scope`
objects. ``ks.transaction()`` makes reads and writes across any scopes atomic;
outside a transaction each operation is atomic on its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from . import _metadata
from ._layout import WriteState
from .codecs import BYTES, Codec, resolve_codec
from .errors import StoreError
from .schemes import Scheme, TupleScheme, scheme_from_name
from .schemes._layouts import LayoutCache
from .scope import Scope
from .stores import open_store
from .stores._base import ReadView, Store

__all__ = ["Keyspace", "Transaction", "open"]

# Exported for scope.py's type hints.
_WriteState = WriteState


class Keyspace:
    """A store seen through a scheme. Use :func:`keyspace.open` to make one.

    ``scope(*path)`` gives a :class:`Scope`; ``transaction()`` an atomic context;
    ``close()`` (or ``with``) releases the store. ``scheme``, ``store`` and ``url``
    are read-only attributes.
    """

    def __init__(self, store: Store, scheme: Scheme, *, recorded: bool) -> None:
        self.store = store
        self.scheme = scheme
        self._state = WriteState(self, recorded=recorded)
        self._layouts = LayoutCache(scheme)
        limit = store.capabilities.max_batch_ops
        self.batch_limit = limit if limit is not None else 1 << 62

    @property
    def url(self) -> str:
        return self.store.url

    def __repr__(self) -> str:
        return f"Keyspace({self.url!r}, scheme={self.scheme!r})"

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path`` (any depth; ``()`` is the root). Nothing is written
        until a key is set. ``key``/``value`` name codecs (``"str"``, ``"int"``,
        ``"json"``, ``"bytes"``) or pass objects with ``encode``/``decode``.

        Raises :class:`InvalidName` when the scheme cannot represent the path."""
        if key is None and value is None:
            return Scope(self, self.store, self._state, path, BYTES, BYTES)
        return Scope(self, self.store, self._state, path, resolve_codec(key), resolve_codec(value))

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Atomic reads and writes across scopes::

            with ks.transaction() as tx:
                tx.scope("tenant1", "users")[b"bob"] = b"..."
                tx.scope("tenant1", "audit")[b"0001"] = b"added bob"

        Commits when the block exits normally; discards everything when it raises.
        Reads inside see a consistent snapshot and the transaction's own writes."""
        state = self._state.child()
        with self.store.transaction() as view:
            yield Transaction(self, view, state)
        state.commit()

    @contextmanager
    def snapshot(self) -> Iterator[Transaction]:
        """A read-only consistent view: ``snap.scope(...)`` reads the store as it
        was when the block was entered."""
        with self.store.snapshot() as view:
            yield Transaction(self, view, self._state.child())

    def close(self) -> None:
        """Close the store. Idempotent; further use raises :class:`StoreClosed`."""
        self.store.close()

    def __enter__(self) -> Keyspace:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Transaction:
    """The handle of :meth:`Keyspace.transaction`: ``scope(*path)`` gives scopes
    whose reads and writes belong to the transaction."""

    def __init__(self, keyspace: Keyspace, view: ReadView, state: WriteState) -> None:
        self.keyspace = keyspace
        self.view = view
        self._state = state

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path`` inside this transaction (same API as outside)."""
        return Scope(self.keyspace, self.view, self._state, path, resolve_codec(key), resolve_codec(value))


def _local_path(url: str) -> str | None:
    """The file-system path of a local store URL (``None`` for memory/etcd)."""
    for scheme in ("lmdb://", "sqlite://", "leveldb://", "rocksdb://"):
        if url.startswith(scheme):
            return url[len(scheme) :]
    if url == "memory:" or url.startswith(("memory:", "etcd://")):
        return None
    return url


def open(
    url_or_path: str | os.PathLike[str],
    *,
    scheme: Scheme | str | None = None,
    create: bool = True,
) -> Keyspace:
    """Open a keyspace on the store at ``url_or_path``.

    A bare path opens LMDB; URLs: ``memory:``, ``lmdb:///path``,
    ``sqlite:///file``, ``leveldb:///dir``, ``rocksdb:///dir``,
    ``etcd://h1:p1,h2:p2``. ``scheme`` is a :class:`Scheme` or a scheme name;
    without one, the scheme recorded in the store is used, else ``TupleScheme()``.
    Opening with another scheme than the recorded one raises
    :class:`SchemeMismatch`. With ``create=False`` a missing local store raises
    :class:`StoreError` instead of being created.

    The scheme is recorded (for schemes with reserved space) with the first write,
    so opening and reading never change a store.
    """
    url = os.fspath(url_or_path)
    if not create:
        local = _local_path(url)
        if local is not None and not os.path.exists(local):
            raise StoreError(f"no store at {url!r} (create=False)")
    if isinstance(scheme, str):
        scheme = scheme_from_name(scheme)
    store = open_store(url)
    try:
        recorded = _metadata.read(store, scheme)
        if scheme is None:
            scheme = recorded if recorded is not None else TupleScheme()
        elif recorded is not None:
            _metadata.check(recorded, scheme, url)
    except BaseException:
        store.close()
        raise
    return Keyspace(store, scheme, recorded=recorded is not None)
