"""Reads of an SQLite store, each answering in a state of the database that a
caller's check has seen (the engine's side of
:class:`~keyspace.stores._watched.WatchedReads`)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any

from ._base import ReadView, cut_pages
from ._mutex import Lock
from ._sqlite_statements import GET, KEY_SCANS, SCANS

__all__ = ["SQLiteWatchedReads"]

_GET = "SELECT (SELECT v FROM kv WHERE k = ?), data_version FROM pragma_data_version"
_VERSION = "PRAGMA data_version"
_first = itemgetter(0)
_SHORT = 256
"""The largest limit a scan reads in one statement that also gives the
``data_version`` of its state (a column of every row: more rows cost more to
take apart than ``PRAGMA data_version`` after a page)."""


def _with_version(reverse: bool, bounded: bool, keys: bool) -> str:
    """A limited scan whose rows end with the ``data_version`` of the statement's
    state (an uncorrelated subquery: read once); parameters: the bounds, then
    the limit."""
    where = "k >= ? AND k < ?" if bounded else "k >= ?"
    return (
        f"SELECT {'k' if keys else 'k, v'}, (SELECT data_version FROM pragma_data_version) "
        f"FROM kv WHERE {where} ORDER BY k{' DESC' if reverse else ''} LIMIT ?"
    )


_SHORT_SCANS = {
    (reverse, bounded, keys): _with_version(reverse, bounded, keys)
    for reverse in (False, True)
    for bounded in (False, True)
    for keys in (False, True)
}


Pages = Callable[[bytes, "bytes | None", bool, "int | None", bool], Iterator[list[Any]]]
"""The store's scan as lists of rows, one per statement: ``(start, stop,
reverse, limit, keys)``; ``keys``: rows of the key alone."""


class SQLiteWatchedReads:
    """The reads of ``store`` (made by :meth:`SQLiteStore.watched_reads`), each
    answered from a state of the database that ``check`` (given the store) has
    seen: the state's mark moves with every commit of any connection, the
    store's own writer included, and the check runs again when it moved. The
    mark is the database's WAL-index header where the store offers it
    (``header``: 48 bytes of SQLite's mapping of the ``-shm`` file, no statement; see
    :mod:`~keyspace.stores._sqlite_wal_index`), else SQLite's ``data_version``
    of the store's reading connection.

    With the header, a read is the store's own statement, and the header is read
    right after it (a state at least as new). With ``data_version``, a point
    read asks the value and ``data_version`` in one statement (one state), and
    so does a short scan; a page of a longer scan reads ``data_version`` right
    after its statement. A check run then reads a state at least as new as the
    read's, and the facts it checks are never removed, so a read is never
    answered from a state the check would have refused. ``check`` raises to
    refuse the read.

    Cost: a point read, and a scan of up to 256 items, is one statement, as the
    store's own (with the header: that very statement and a read of 48 bytes of
    memory; else one that also reads ``data_version`` through its table-valued
    pragma, which prepares a statement at each run); a page of a longer scan or
    a count reads the mark after it (``data_version``: one short statement
    more); ``check`` once per commit of the database (with the header, and per
    checkpoint) that a read comes after."""

    __slots__ = ("_check", "_cursor", "_header", "_lock", "_pages", "_reading", "_state", "_store", "get")

    def __init__(
        self,
        store: ReadView,
        reading: Callable[[], sqlite3.Connection],
        lock: Lock,
        pages: Pages,
        check: Callable[[ReadView], object],
        header: Callable[[], bytes] | None = None,
    ) -> None:
        """``store``: the SQLite store; ``reading``: its reading connection (raising
        when the store is closed); ``lock``: the lock that connection's statements
        run under; ``pages``: the store's scan as statement pages; ``header``: the
        database's WAL-index header as it is now, where the store can read it
        (read under ``lock`` only, while the reading connection is open: it is
        closed under that lock)."""
        self._store = store
        self._reading = reading
        self._lock = lock
        self._pages = pages
        self._check = check
        self._header = header
        self._state: object = None  # the mark of the last state checked
        # a cursor of the store's reading connection, kept for the reads with the
        # header (a cursor made per statement costs more than the statement's
        # own steps); each of its statements is read to its end, which resets it,
        # so no read transaction stays open between reads. Once the store is
        # closed, its statements raise (translated to StoreClosed)
        self._cursor = reading().cursor()
        self.get: Callable[[bytes], bytes | None] = self._marked_get if header is not None else self._get

    def _renew(self) -> None:
        """Keep a new cursor in place of one whose statement failed or stopped
        before its end (under the lock): the old one, closed, resets its
        statement, so no read transaction stays open on the connection."""
        old = self._cursor
        with contextlib.suppress(sqlite3.Error):  # a closed store: its next read raises
            self._cursor = old.connection.cursor()
        with contextlib.suppress(sqlite3.Error):
            old.close()

    def _run(self, version: object) -> None:
        """Run the check unless it ran since the database was at ``version``."""
        if version != self._state:
            self._check(self._store)
            self._state = version

    def _version(self) -> object:
        """The database's mark now: the header, else ``data_version``."""
        header = self._header
        try:
            with self._lock:
                conn = self._reading()  # under the lock: the header is read only while it is open
                if header is not None:
                    return header()
                row = conn.execute(_VERSION).fetchone()
        except sqlite3.Error as exc:
            raise self._store.translate(exc) from exc
        return int(row[0])

    def hold(self) -> None:
        """Run the check unless it ran since the database last changed (one
        statement, or a read of the header)."""
        self._run(self._version())

    def _marked_get(self, key: bytes) -> bytes | None:
        """``get`` with the header: the store's own statement, the header read
        right after it under the same lock (a closed store's statement raises first)."""
        try:
            with self._lock:
                try:
                    rows = self._cursor.execute(GET, (key,)).fetchall()
                except BaseException:
                    self._renew()
                    raise
                version = self._header()  # type: ignore[misc]  # set: this method is chosen so
        except sqlite3.Error as exc:
            raise self._store.translate(exc) from exc
        if version != self._state:
            self._run(version)
        return rows[0][0] if rows else None

    def _get(self, key: bytes) -> bytes | None:
        """``get`` with ``data_version``: one statement reads the value and it."""
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
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        cut: int = 0,
    ) -> Iterator[list[Any]]:
        """The store's scan (``keys``: keys only; items: each key without its
        first ``cut`` bytes) in its statement pages, the check run after each
        page where the database moved (a scan that finds nothing has read a
        checked state too); a scan limited to :data:`_SHORT` items is one
        statement (that reads its ``data_version`` too where the store offers no
        header). Raises now on a closed store."""
        if limit is not None and 0 <= limit <= _SHORT:  # SQLite takes LIMIT -1 as none
            pages = self._short(start, stop, reverse, limit, keys)
        else:
            pages = self._checked(self._pages(start, stop, reverse, limit, keys), keys)
        return iter(cut_pages(pages, cut)) if cut and not keys else pages

    def _short(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int, keys: bool
    ) -> Iterator[list[Any]]:
        """The one page of a short scan and the mark of its state, read when the
        page is first asked for: the header right after the statement, else the
        ``data_version`` in the statement's rows (of an empty page, by ``PRAGMA
        data_version`` after it: a state at least as new)."""
        conn = self._reading()
        header = self._header
        args = (start, limit) if stop is None else (start, stop, limit)
        if header is not None:
            sql = (KEY_SCANS if keys else SCANS)[reverse, stop is not None][0]

            def plain() -> Iterator[list[Any]]:
                try:
                    with self._lock:
                        try:
                            rows = self._cursor.execute(sql, args).fetchall()
                        except BaseException:
                            self._renew()
                            raise
                        version = header()
                except sqlite3.Error as exc:
                    raise self._store.translate(exc) from exc
                if version != self._state:
                    self._run(version)
                if rows:
                    yield list(map(_first, rows)) if keys else rows

            return plain()
        sql = _SHORT_SCANS[reverse, stop is not None, keys]

        def page() -> Iterator[list[Any]]:
            try:
                with self._lock:
                    rows = conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise self._store.translate(exc) from exc
            version = rows[0][-1] if rows else self._version()
            if version != self._state:
                self._run(version)
            if rows:
                yield [k for k, _ in rows] if keys else [(k, v) for k, v, _ in rows]

        return page()

    def _checked(self, pages: Iterator[list[Any]], keys: bool) -> Iterator[list[Any]]:
        found = False
        for page in pages:
            version = self._version()  # after the page: a state at least as new as its own
            if version != self._state:
                self._run(version)
            found = True
            yield list(map(_first, page)) if keys else page
        if not found:
            self._run(self._version())

    def count(self, start: bytes, stop: bytes | None, without: tuple[int, int] | None = None) -> int:
        """The store's count, the check run after it where the database moved
        (the mark read after the count: a state at least as new)."""
        counted = self._store.count(start, stop, without)
        self._run(self._version())
        return counted
