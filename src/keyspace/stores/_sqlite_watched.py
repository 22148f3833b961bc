"""Reads of an SQLite store, each answering in a state of the database that a
caller's check has seen (the engine's side of
:class:`~keyspace.stores._watched.WatchedReads`)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from ._base import ReadView

__all__ = ["SQLiteWatchedReads"]

_GET = "SELECT (SELECT v FROM kv WHERE k = ?), data_version FROM pragma_data_version"
_VERSION = "SELECT data_version FROM pragma_data_version"
_PAGE = 1024


class SQLiteWatchedReads:
    """The reads of ``store`` (made by :meth:`SQLiteStore.watched_reads`), each
    preceded by ``check`` (given the store) when the database changed since the
    last check: SQLite's ``data_version`` of the store's reading connection
    moves with every commit of any other connection, the store's own writer
    included. A point read asks the value and ``data_version`` in one statement
    (one state); a check run after it reads a state at least as new, and the
    facts it checks are never removed, so a read is never answered from a state
    the check would have refused. ``check`` raises to refuse the read.

    Cost: a point read is one statement, as the store's own; a scan or a count
    one statement more (``data_version``); ``check`` once per commit of the
    database that a read comes after."""

    __slots__ = ("_check", "_lock", "_reading", "_state", "_store")

    def __init__(
        self,
        store: ReadView,
        reading: Callable[[], sqlite3.Connection],
        lock: threading.Lock,
        check: Callable[[ReadView], object],
    ) -> None:
        """``store``: the SQLite store; ``reading``: its reading connection (raising
        when the store is closed); ``lock``: the lock that connection's statements
        run under."""
        self._store = store
        self._reading = reading
        self._lock = lock
        self._check = check
        self._state: int | None = None  # the data_version of the last state checked

    def _run(self, version: int) -> None:
        """Run the check unless it ran since the database was at ``version``."""
        if version != self._state:
            self._check(self._store)
            self._state = version

    def _version(self) -> int:
        conn = self._reading()
        try:
            with self._lock:
                row = conn.execute(_VERSION).fetchone()
        except sqlite3.Error as exc:
            raise self._store.translate(exc) from exc
        return int(row[0])

    def hold(self) -> None:
        """Run the check unless it ran since the database last changed (one
        statement)."""
        self._run(self._version())

    def get(self, key: bytes) -> bytes | None:
        conn = self._reading()
        try:
            with self._lock:
                value, version = conn.execute(_GET, (key,)).fetchone()
        except sqlite3.Error as exc:
            raise self._store.translate(exc) from exc
        if version != self._state:
            self._run(version)
        return value  # type: ignore[no-any-return]

    def pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, keys: bool = False
    ) -> Iterator[list[Any]]:
        """The store's scan (``keys``: keys only) in pages, the check run first."""
        self._run(self._version())
        store = self._store
        items: Iterator[Any] = (store.scan_keys if keys else store.scan)(
            start, stop, reverse=reverse, limit=limit
        )
        return iter(lambda: list(islice(items, _PAGE)), [])

    def count(self, start: bytes, stop: bytes | None) -> int:
        """The store's count, the check run first."""
        self._run(self._version())
        return self._store.count(start, stop)
