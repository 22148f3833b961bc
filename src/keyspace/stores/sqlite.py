"""``SQLiteStore``: an ordered byte store in one SQLite file (stdlib ``sqlite3``).

URL: ``sqlite:///path/to/file``. One ``WITHOUT ROWID`` table ``kv(k BLOB PRIMARY
KEY, v BLOB)``; keys and values are always bound as ``bytes``, so every row is a BLOB
and rows sort as Python sorts ``bytes``. WAL mode: readers do not block the writer.

- Two connections per store, each shared by the store's threads behind its own
  lock: one writes, one reads (so reads never wait for a transaction and see the
  last committed state). A snapshot opens its own connection and holds one read
  transaction.
- ``transaction()`` is ``BEGIN IMMEDIATE`` … ``COMMIT`` on the writing connection:
  it excludes every other writer (threads wait on the lock, processes on the busy
  timeout) until it ends.
- ``delete_range`` is one ``DELETE … WHERE k >= ? AND k < ?`` on the primary key.
- Scans read pages of rows, so no statement stays open between items: writing to
  the store while a scan runs is safe (whether the scan sees those writes is not
  specified). Each page first asks its view for the connection, so a scan or
  seeker of a snapshot or transaction raises :class:`~keyspace.errors.StoreClosed`
  at its next page once the block has ended, instead of reading the store's
  connection (a transaction's) as it is then.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter
from types import TracebackType
from typing import Any, Literal
from urllib.parse import quote

from ..errors import KeyspaceError, StoreClosed, StoreError
from ._base import (
    Capabilities,
    Op,
    ReadView,
    Releasable,
    Seeker,
    Store,
    WriteView,
    byte_after,
    pages_by_range,
)
from ._mutex import Lock, Mutex
from ._paths import kind_of
from ._sqlite_statements import GET as _GET
from ._sqlite_statements import KEY_PAIR_SCANS as _KEY_PAIR_SCANS
from ._sqlite_statements import KEY_SCANS as _KEY_SCANS
from ._sqlite_statements import SCANS as _SCANS
from ._sqlite_wal_index import WalIndexHeader, wal_index_header
from ._sqlite_watched import SQLiteWatchedReads

__all__ = ["SQLiteStore"]

_PAGE = 256
_IDLE = 2
"""How many connections of ended snapshots and seekers a store keeps open for
the next ones (each holds an open file and SQLite's page cache)."""

_SCHEMA = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID"
_KV_SHAPE = [("k", "BLOB", 1, 1), ("v", "BLOB", 1, 0)]
"""``PRAGMA table_info(kv)`` of :data:`_SCHEMA`: (name, type, not null, primary key)
of each column. A ``kv`` table of another shape (TEXT keys, whose rows a scan of
BLOB keys never sees) is another application's."""
_PUT = "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)"
_DELETE = "DELETE FROM kv WHERE k = ?"
_DELETE_FROM = "DELETE FROM kv WHERE k >= ?"
_DELETE_RANGE = "DELETE FROM kv WHERE k >= ? AND k < ?"

_COUNTS = ("SELECT count(*) FROM kv WHERE k >= ?", "SELECT count(*) FROM kv WHERE k >= ? AND k < ?")
_SEEKS = (
    "SELECT k FROM kv WHERE k >= ? ORDER BY k LIMIT 1",
    "SELECT k FROM kv WHERE k >= ? AND k < ? ORDER BY k LIMIT 1",
)
_first = itemgetter(0)


Connect = Callable[[], sqlite3.Connection]
"""A view's connection, asked for before each statement (and each page of a scan):
it raises :class:`~keyspace.errors.StoreClosed` once the view has ended."""


class _Keys:
    """``read_pages`` (one statement per page; keys only, paged ``SELECT k, x''``),
    ``count`` (one ``SELECT count(*)``) and ``seeker`` (one ``SELECT k … LIMIT 1``
    per seek) of a view that reads one
    connection: the view gives :meth:`_keys_conn` (its store, the function that
    gives its connection while the view lasts, and the lock to hold per
    statement, if any)."""

    __slots__ = ()

    def _keys_conn(self) -> tuple[SQLiteStore, Connect, Lock | None]:
        raise NotImplementedError

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The statements' pages of each range (:func:`_statement_pages`, through
        :func:`~keyspace.stores._base.pages_by_range`): a read of up to a page
        is one statement run now; keys only, statements that read each key and
        an empty blob, so that their rows are the pages' pairs."""
        # the mixin is a ReadView in every class it serves (no runtime cast on the read path)
        view: ReadView = self  # type: ignore[assignment]
        pages = self._range_key_pairs if keys_only else self._range_pages
        return pages_by_range(view, pages, ranges, reverse, limit, False, cut)

    def _range_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterable[list[Any]]:
        store, connect, lock = self._keys_conn()
        return _statement_pages(store, connect, lock, start, stop, reverse, limit)

    def _range_key_pairs(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterable[list[Any]]:
        store, connect, lock = self._keys_conn()
        return _statement_pages(store, connect, lock, start, stop, reverse, limit, _KEY_PAIR_SCANS)

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """One ``SELECT count(*)``, counted by SQLite itself; with ``without=(byte,
        at)``, of the keys whose bytes from index ``at`` on hold no ``byte``
        (``instr`` of the key's ``substr``)."""
        sql = _COUNTS[stop is not None]
        if without is not None:
            byte, at = byte_after(*without)
            # substr of an empty blob is NULL, not an empty blob: ifnull counts that key
            sql += f" AND ifnull(instr(substr(k, {at + 1}), x'{byte:02x}'), 0) = 0"
        if stop is not None and stop <= start:
            return 0
        store, connect, lock = self._keys_conn()
        args = (start,) if stop is None else (start, stop)
        row = _one(store, connect(), lock, sql, args)
        return int(row[0]) if row is not None else 0

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One ``SELECT k … LIMIT 1`` per seek, on the view's connection while the
        view lasts (a seek after a snapshot or transaction ended raises
        :class:`~keyspace.errors.StoreClosed`)."""
        store, connect, lock = self._keys_conn()
        connect()
        return _SQLiteSeeker(store, connect, lock, stop)


class _Statements:
    """``put``, ``delete`` and ``delete_range`` of a writable view, each one
    statement through the view's :meth:`_execute` (which holds the view's lock and
    translates its errors)."""

    __slots__ = ()

    def _execute(self, sql: str, args: tuple[bytes, ...]) -> None:
        raise NotImplementedError

    def put(self, key: bytes, value: bytes) -> None:
        self._execute(_PUT, (key, value))

    def delete(self, key: bytes) -> None:
        self._execute(_DELETE, (key,))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        if stop is None:
            self._execute(_DELETE_FROM, (start,))
        else:
            self._execute(_DELETE_RANGE, (start, stop))


class _SQLiteSeeker(Seeker):
    """One ``SELECT k … LIMIT 1`` per seek on the connection ``connect()`` gives;
    ``ended``: called once at :meth:`release` (a seeker of the store's own read
    transaction ends it there)."""

    __slots__ = ("_connect", "_ended", "_lock", "_stop", "_store")

    def __init__(
        self,
        store: SQLiteStore,
        connect: Connect,
        lock: Lock | None,
        stop: bytes | None,
        ended: Callable[[], None] | None = None,
    ) -> None:
        self._store = store
        self._connect: Connect | None = connect
        self._lock = lock
        self._stop = stop
        self._ended = ended

    def seek(self, start: bytes) -> bytes | None:
        connect = self._connect
        if connect is None:
            raise StoreClosed("this seeker has been released")
        conn = connect()
        stop = self._stop
        if stop is not None and stop <= start:
            return None
        args = (start,) if stop is None else (start, stop)
        row = _one(self._store, conn, self._lock, _SEEKS[stop is not None], args)
        return None if row is None else row[0]

    def release(self) -> None:
        self._connect = None
        ended, self._ended = self._ended, None
        if ended is not None:
            ended()


def _one(
    store: SQLiteStore,
    conn: sqlite3.Connection,
    lock: Lock | None,
    sql: str,
    args: tuple[bytes, ...],
) -> Any:
    """The first row of one statement (``lock`` held for it), or ``None``."""
    try:
        if lock is None:
            return conn.execute(sql, args).fetchone()
        with lock:
            return conn.execute(sql, args).fetchone()
    except sqlite3.Error as exc:
        raise store.translate(exc) from exc


_SQLITE_BUSY = 5
"""SQLite's primary result code for a database another connection has locked
(``SQLITE_LOCKED``, 6, is a table locked within one connection: no wait)."""


def _is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's ``SQLITE_BUSY`` (any extended code of it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF == _SQLITE_BUSY


def _to_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Put ``conn``'s database in WAL mode (nothing to do when it is already).

    The switch reads the file header, then takes the write lock; when another
    connection took that lock in between (two processes making one new store at
    once), SQLite answers ``SQLITE_BUSY`` at once, without calling its busy handler
    (waiting there could deadlock two readers that both want to write). So it is
    retried here, after pauses of 1 ms doubling to 50 ms, until ``timeout`` seconds
    (the busy timeout) have passed: then the ``SQLITE_BUSY`` is raised. Cost: one
    statement when no other connection writes."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            left = deadline - time.monotonic()
            if not _is_busy(exc) or left <= 0:
                raise
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)


TIMEOUT_MOST = (2**31 - 1) / 1000
"""The longest busy timeout, in seconds: SQLite takes it as an int of milliseconds
(a longer one wrapped round to none at all)."""


def _checked_timeout(timeout: Any, url: str) -> float:
    """``timeout`` as the busy timeout of the store at ``url``: a number of seconds
    from 0 to :data:`TIMEOUT_MOST`; else :class:`~keyspace.errors.StoreError`
    naming it and the limit, before anything is opened (``inf``, ``nan`` and
    negative numbers were taken, and meant no wait at all)."""
    if type(timeout) not in (int, float) or not 0 <= timeout <= TIMEOUT_MOST:
        raise StoreError(
            f"cannot open {url}: option timeout={timeout!r} must be a number of seconds from 0 to "
            f"{TIMEOUT_MOST} (SQLite's busy timeout is an int of milliseconds)"
        )
    return float(timeout)


def _check_reader_files(path: str, url: str, immutable: bool) -> None:
    """Refuse a read-only open SQLite would refuse with only "attempt to write a
    readonly database": a WAL-mode database (byte 18 of its header is 2) whose
    ``-wal`` or ``-shm`` file is missing, in a directory this process may not
    write, where a reader must create them; the message says what readers need
    and names ``immutable=true``. With ``immutable``, refuse a ``-wal`` file that
    holds commits (more than its header): an immutable read would not see them.
    Cost: a few ``stat``/``access`` calls and one read of 20 bytes."""
    wal = path + "-wal"
    if immutable:
        try:
            size = os.path.getsize(wal)
        except OSError:
            return
        if size > 32:
            raise StoreError(
                f"cannot open {url} with immutable=true: {wal} holds {size} bytes of commits not yet "
                "in the database file, which an immutable read would not see; open it once as a user "
                "who may write beside the file (a checkpoint moves them into the file), then retry"
            )
        return
    try:
        with open(path, "rb") as file:
            header = file.read(20)
    except OSError:
        return  # SQLite names the fault itself
    if len(header) < 20 or header[18] != 2:
        return  # not WAL mode: a reader needs no other file
    missing = [name for name in (wal, path + "-shm") if not os.path.exists(name)]
    folder = os.path.dirname(path)
    if missing and not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(
            f"cannot open {url} read-only: permission denied: the store is in WAL mode, whose readers "
            f"need the files {path}-wal and {path}-shm beside it, and this user cannot create "
            f"{' and '.join(os.path.basename(m) for m in missing)} in {folder}; let it write there, or "
            "open with immutable=true (?immutable=true), which reads the file alone and is safe only "
            "while no process writes the store"
        )


def _check_file(path: str, url: str, readonly: bool) -> None:
    """Refuse what cannot be an SQLite store before SQLite touches it: a missing
    parent directory, a directory, and (``readonly``) a missing file."""
    parent = os.path.dirname(path)
    if kind_of(parent, url) != "dir":
        raise StoreError(f"cannot open {url}: the parent directory {parent} does not exist")
    kind = kind_of(path, url)
    if kind == "dir":
        raise StoreError(f"cannot open {url}: {path} is a directory, not an SQLite file")
    if kind is not None and not os.access(path, os.R_OK if readonly else os.R_OK | os.W_OK):
        raise StoreError(f"cannot open {url}: permission denied: {path}")
    if kind is None and not readonly and not os.access(parent, os.W_OK | os.X_OK):
        raise StoreError(f"cannot open {url}: permission denied: cannot create a file in {parent}")
    if readonly and kind is None:
        raise StoreError(f"{url} is not an SQLite store: {path} does not exist (opened read-only)")


def _holds_store(conn: sqlite3.Connection, url: str, readonly: bool) -> bool:
    """Whether the database holds keyspace's ``kv`` table. An empty database (a new
    file) does not, and is made a store unless ``readonly``; a database with other
    tables only (another application's) is refused, and never changed."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    names = sorted(str(row[0]) for row in rows)
    if "kv" in names:
        shape = [(row[1], row[2], row[3], row[5]) for row in conn.execute("PRAGMA table_info(kv)").fetchall()]
        sql = " ".join(str(next(row[1] for row in rows if row[0] == "kv")).split())
        if shape == _KV_SHAPE and sql.upper().endswith("WITHOUT ROWID"):
            return True
        raise StoreError(
            f"{url} is not a keyspace store: its kv table is not keyspace's ({sql}; a keyspace store's "
            f"is {_SCHEMA.replace('IF NOT EXISTS ', '')}); it was left unchanged"
        )
    if names:
        shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
        raise StoreError(
            f"{url} is not a keyspace store: an SQLite database of another application "
            f"(tables: {shown}; a keyspace store holds one table, kv); it was left unchanged"
        )
    if readonly:
        raise StoreError(f"{url} is not a keyspace store: an empty SQLite database (opened read-only)")
    return False


class SQLiteStore(_Keys, _Statements, Store):
    """An ordered byte store in one SQLite database file.

    ``SQLiteStore(path, timeout=30.0, sync=True)``: ``timeout`` is the busy timeout in
    seconds (how long a writer waits for another process); ``sync=False`` uses
    ``synchronous=NORMAL`` (a power loss may lose the last commits, never corrupt).

    A store is in WAL mode, whose readers need the ``-wal`` and ``-shm`` files
    beside the database file (and create them when missing: the last connection
    to close removes them): a read-only open by a user who cannot create them in
    the file's directory is refused by name before SQLite is asked.
    ``immutable=True`` (``?immutable=true``; read-only opens only) reads such a
    store anyway, as SQLite's ``immutable`` URI parameter does, from the file
    alone, with no lock: unsafe while any process writes the store (reads may
    see a half-written page); refused while a ``-wal`` file holds commits not
    yet in the file, which it would not see.

    Costs: a point operation is one statement on the primary key (a few µs); a
    write outside a transaction is one commit.
    """

    capabilities = Capabilities(
        max_key_size=None,
        empty_keys=True,
        atomic_batch=True,
        native_delete_range=True,
        snapshots=True,
        persistent=True,
        multi_process=True,
        serialized_transactions=True,
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 30.0,
        sync: bool = True,
        readonly: bool = False,
        immutable: bool = False,
    ) -> None:
        self._path = os.path.abspath(os.fspath(path))
        self.url = f"sqlite://{self._path}"
        self._timeout = _checked_timeout(timeout, self.url)
        self._readonly = readonly
        if immutable is not False and (immutable is not True or not readonly):
            raise StoreError(
                f"option immutable={immutable!r} for {self.url}: immutable=True is for read-only opens "
                "only (readonly=True), where it reads the file without the -wal and -shm files"
            )
        self._immutable = immutable
        self._lock = threading.Lock()
        self._owner: int | None = None  # thread holding this store's transaction()
        self._held: _SQLiteTransaction | None = None  # that transaction
        self._snapshots: weakref.WeakSet[_SQLiteSnapshot] = weakref.WeakSet()  # ended by close()
        self._read_lock = Mutex()  # taken around each statement of the reading connection
        # connections of ended snapshots and seekers, kept for the next (at most _IDLE)
        self._idle: list[sqlite3.Connection] = []
        self._idle_lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        # the WAL-index header of watched reads: False until first asked for
        self._header: WalIndexHeader | Literal[False] | None = False
        self._opened = False
        _check_file(self._path, self.url, readonly)
        if readonly:
            _check_reader_files(self._path, self.url, immutable)
        conn: sqlite3.Connection | None = None
        try:
            if readonly:
                self._probe()
            conn = self._connect()
            if not _holds_store(conn, self.url, readonly):
                _to_wal(conn, self._timeout)
                conn.execute(_SCHEMA)
            if not readonly:
                _to_wal(conn, self._timeout)
                conn.execute(f"PRAGMA synchronous={'FULL' if sync else 'NORMAL'}")
            self._reader = self._connect()
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.Error):
                raise self._open_error(exc) from exc
            raise
        self._conn = conn
        self._opened = True

    def _probe(self) -> None:
        """Check, for a read-only open, that the file holds a keyspace store without
        leaving a trace: with no ``-wal`` file beside it, the whole database is in the
        file, and an ``immutable`` connection reads it without creating the
        ``-wal``/``-shm`` files a reader of a WAL database otherwise leaves behind."""
        immutable = "&immutable=1" if not os.path.exists(self._path + "-wal") else ""
        probe = sqlite3.connect(f"file:{quote('/' + self._path.lstrip('/'))}?mode=ro{immutable}", uri=True)
        try:
            _holds_store(probe, self.url, True)
        finally:
            probe.close()

    def _open_error(self, exc: sqlite3.Error) -> KeyspaceError:
        text = str(exc)
        if "not a database" in text:
            return StoreError(f"{self.url} is not a store of this engine: not an SQLite database ({text})")
        if "malformed" in text:
            return StoreError(f"{self.url} is corrupt: {text}")
        return self.translate(exc)

    # -- error translation: the one place ------------------------------------

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """Translate a ``sqlite3`` exception into a keyspace error."""
        text = str(exc)
        if "database or disk is full" in text or "No space left" in text:
            return StoreError(
                f"the disk holding {self.url} is full (SQLite: {text}); nothing of the failed "
                "write or transaction was committed; free some space and retry"
            )
        if "malformed" in text or "not a database" in text:
            return StoreError(f"{self.url} is corrupt or not an SQLite database: {text}")
        if "readonly database" in text:
            return StoreError(f"SQLite at {self.url} cannot be written (read-only file or open): {text}")
        if "unable to open" in text:
            return StoreError(f"cannot open {self.url}: {text} (check the path and its permissions)")
        if (self._opened and self._conn is None) or "closed database" in text:
            return StoreClosed(f"the store {self.url} (or this snapshot) is closed")
        if _is_busy(exc):
            # every statement that can answer SQLITE_BUSY here ran under the busy
            # handler or under _to_wal's retries, both bounded by the busy timeout
            return StoreError(
                f"SQLite at {self.url} stayed locked by another writer for the whole busy "
                f"timeout ({self._timeout} s; open it with a larger timeout= to wait longer): {text}"
            )
        if "locked" in text or "busy" in text:
            return StoreError(f"SQLite at {self.url} refused the statement at once: {text}")
        return StoreError(f"SQLite failed on {self.url}: {text}")

    # -- plumbing ------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._readonly:
            immutable = "&immutable=1" if self._immutable else ""
            return sqlite3.connect(
                f"file:{quote('/' + self._path.lstrip('/'))}?mode=ro{immutable}",  # "//x": a URI authority
                uri=True,
                timeout=self._timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        return sqlite3.connect(
            self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False
        )

    def _free(self) -> sqlite3.Connection:
        """The connection, for an operation outside a transaction."""
        conn = self._conn
        if conn is None:
            raise StoreClosed(f"the store {self.url} is closed")
        if self._owner == threading.get_ident():
            raise StoreError(
                f"a transaction on {self.url} is open in this thread; use it "
                "(using the store would wait for it forever)"
            )
        return conn

    # -- the Store contract --------------------------------------------------

    def _reading(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return self._reader

    def _keys_conn(self) -> tuple[SQLiteStore, Connect, Lock | None]:
        return self, self._reading, self._read_lock

    def get(self, key: bytes) -> bytes | None:
        conn = self._reading()
        try:
            with self._read_lock:
                row = conn.execute(_GET, (key,)).fetchone()
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc
        return None if row is None else row[0]

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return _paged_scan(self, self._reading, self._read_lock, start, stop, reverse, limit)

    def watched_reads(self, check: Callable[[ReadView], object]) -> SQLiteWatchedReads:
        """This store's reads, each preceded by ``check`` when the database changed
        since the last one (see :class:`~keyspace.stores._watched.WatchedReads`):
        told by the database's WAL-index header (:meth:`_wal_header`) where the
        store reads it, else by ``data_version``."""
        header = self._wal_header()
        read = None if header is None else header.read
        return SQLiteWatchedReads(self, self._reading, self._read_lock, self._pages, check, read)

    def _wal_header(self) -> WalIndexHeader | None:
        """The WAL-index header of the database as the reading connection reads it
        (see :mod:`~keyspace.stores._sqlite_wal_index`), found once per store
        and read only while the reading connection is open (under its lock);
        ``None`` for a read-only open (whose ``-shm`` file SQLite may read in
        ways this store does not follow) and where the header cannot be told
        to be the connection's."""
        if self._readonly:
            return None
        conn = self._reading()
        with self._read_lock:
            if self._header is False:
                try:
                    self._header = wal_index_header(conn)
                except sqlite3.Error as exc:
                    raise self.translate(exc) from exc
            return self._header

    def _pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, keys: bool
    ) -> Iterator[list[Any]]:
        """The rows of a scan (``keys``: 1-tuples of the key) one list per
        statement, on the reading connection (see :func:`_row_pages`)."""
        scans = _KEY_SCANS if keys else _SCANS
        return _row_pages(self, self._reading, self._read_lock, start, stop, reverse, limit, scans)

    def _execute(self, sql: str, args: tuple[bytes, ...]) -> None:
        conn = self._free()
        try:
            with self._lock:
                conn.execute(sql, args)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    def write(self, ops: Iterable[Op]) -> None:
        batch = list(ops)
        conn = self._free()
        with self._lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self.translate(exc) from exc
            try:
                _apply(conn, batch)
                conn.execute("COMMIT")
            except BaseException as exc:
                _rollback(conn)
                if isinstance(exc, sqlite3.Error):
                    raise self.translate(exc) from exc
                raise

    def _read_transaction(self, pin: bool) -> _SQLiteSnapshot:
        """A read transaction on a connection of its own: an idle one of an ended
        snapshot or seeker where there is one, else a new one (``pin``: its state
        is taken now, else at its first read)."""
        self._reading()
        with self._idle_lock:
            conn = self._idle.pop() if self._idle else None
        try:
            if conn is None:
                conn = self._connect()
            conn.execute("BEGIN")
            if pin:
                conn.execute("SELECT 1 FROM kv LIMIT 1").fetchall()  # starts the read transaction
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise self.translate(exc) from exc
        snap = _SQLiteSnapshot(self, conn)
        self._snapshots.add(snap)
        return snap

    def _done_with(self, conn: sqlite3.Connection) -> None:
        """Take back the connection of an ended snapshot or seeker: its read
        transaction ended, it is kept for the next one (at most :data:`_IDLE`
        are kept, none once the store is closed), else closed."""
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            conn.close()
            return
        with self._idle_lock:
            if self._conn is not None and len(self._idle) < _IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def snapshot(self) -> _SQLiteSnapshot:
        """One read transaction on a connection of its own (an ended snapshot's,
        where one is idle: no file is opened then), its state taken now."""
        return self._read_transaction(True)

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One ``SELECT k … LIMIT 1`` per seek, all in one read transaction of a
        connection of its own (as a snapshot's; ended at :meth:`Seeker.release`):
        the seeker reads one state of the store, the one of its first seek, and
        its seeks take no read lock each (a statement outside a transaction
        takes and drops one)."""
        snap = self._read_transaction(False)
        return _SQLiteSeeker(self, snap._live, None, stop, snap.release)

    def transaction(self) -> _SQLiteTransaction:
        return _SQLiteTransaction(self)

    def close(self) -> None:
        """Close the connections, the open snapshots' too (their reads then raise
        :class:`StoreClosed`); a transaction open in another thread is waited
        for. One open in this thread (whose lock this thread holds, so waiting
        would wait for ever) is rolled back: its block ends with
        :class:`StoreClosed`, nothing of it committed, as on the other engines."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        for snap in list(self._snapshots):  # each on a connection of its own
            snap.release()
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for spare in idle:
            spare.close()
        with self._read_lock:
            self._header = None  # read under this lock only while the reader is open
            self._reader.close()
        held = self._held
        if held is not None and self._owner == threading.get_ident():
            held._conn = None  # ended: its operations and its exit raise StoreClosed
            self._owner = self._held = None
            try:
                _rollback(conn)
            finally:
                conn.close()
                self._lock.release()
            return
        with self._lock:
            conn.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self._path!r})"


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so (it rolls
    back by itself on ``SQLITE_FULL`` and a few other errors)."""
    if conn.in_transaction:
        # If the engine ended it meanwhile, nothing of it is committed either way.
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _apply(conn: sqlite3.Connection, ops: list[Op]) -> None:
    for key, value in ops:
        if value is None:
            conn.execute(_DELETE, (key,))
        else:
            conn.execute(_PUT, (key, value))


def _point_get(store: SQLiteStore, conn: sqlite3.Connection, key: bytes) -> bytes | None:
    """The value of ``key`` on ``conn`` (a snapshot's or a transaction's), or None."""
    try:
        row = conn.execute(_GET, (key,)).fetchone()
    except sqlite3.Error as exc:
        raise store.translate(exc) from exc
    return None if row is None else row[0]


def _statement_pages(
    store: SQLiteStore,
    connect: Connect,
    lock: Lock | None,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    scans: dict[tuple[bool, bool], tuple[str, str]] = _SCANS,
) -> Iterable[list[Any]]:
    """The pages of one range of a view's reads: a read of up to 256 items (a page)
    is one statement on ``connect()``, run now, its rows read at once (no
    generator between them and the caller); a longer one gives the pages of
    :func:`_row_pages`. ``scans``: the statements (see :func:`_row_pages`).
    Errors translated by ``store``."""
    if limit is None or not 0 <= limit <= _PAGE:
        return _row_pages(store, connect, lock, start, stop, reverse, limit, scans)
    conn = connect()
    args = (start, limit) if stop is None else (start, stop, limit)
    try:
        if lock is None:
            rows = conn.execute(scans[reverse, stop is not None][0], args).fetchall()
        else:
            with lock:
                rows = conn.execute(scans[reverse, stop is not None][0], args).fetchall()
    except sqlite3.Error as exc:
        raise store.translate(exc) from exc
    return [rows] if rows else ()


def _paged_scan(
    store: SQLiteStore,
    connect: Connect,
    lock: Lock | None,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    scans: dict[tuple[bool, bool], tuple[str, str]] = _SCANS,
) -> Iterator[Any]:
    """Rows of ``[start, stop)``, the rows of :func:`_row_pages` one by one."""
    return chain.from_iterable(_row_pages(store, connect, lock, start, stop, reverse, limit, scans))


def _row_pages(
    store: SQLiteStore,
    connect: Connect,
    lock: Lock | None,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    scans: dict[tuple[bool, bool], tuple[str, str]] = _SCANS,
) -> Iterator[list[Any]]:
    """Rows of ``[start, stop)`` in pages of up to 256, one list per statement
    (``lock`` held for it), each on the connection ``connect()`` gives then (it
    raises once the view has ended, so nothing is read after; called once now
    too, so that a scan of an ended view raises when it is asked for);
    ``scans``: the statements (``_KEY_SCANS``: rows of the key alone). Cost: one
    statement and one call of ``connect`` per page; a scan whose limit is
    reached or whose range ends within a page reads one statement for it."""
    connect()
    first, then = scans[reverse, stop is not None]

    def pages() -> Iterator[list[Any]]:
        left = limit
        sql = first
        args: tuple[bytes, ...] = (start,) if stop is None else (start, stop)
        while left is None or left > 0:
            size = _PAGE if left is None else min(_PAGE, left)
            conn = connect()
            try:
                if lock is None:
                    rows = conn.execute(sql, (*args, size)).fetchall()
                else:
                    with lock:
                        rows = conn.execute(sql, (*args, size)).fetchall()
            except sqlite3.Error as exc:
                raise store.translate(exc) from exc
            if rows:
                yield rows
            if len(rows) < size:
                return
            if left is not None:
                left -= len(rows)
            last = rows[-1][0]
            sql = then
            args = ((last,) if stop is None else (last, stop)) if not reverse else (start, last)

    return pages()


class _SQLiteSnapshot(_Keys, Releasable, ReadView):
    """A read transaction on a connection of its own (WAL snapshot isolation);
    once released, every read (a running scan's next page, a seeker's next seek)
    raises :class:`~keyspace.errors.StoreClosed`."""

    __slots__ = ("_conn", "_store")

    def __init__(self, store: SQLiteStore, conn: sqlite3.Connection) -> None:
        self._store = store
        self._conn: sqlite3.Connection | None = conn

    def _live(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            raise StoreClosed(f"this snapshot of {self._store.url} has ended")
        return conn

    def _keys_conn(self) -> tuple[SQLiteStore, Connect, Lock | None]:
        return self._store, self._live, None

    def get(self, key: bytes) -> bytes | None:
        return _point_get(self._store, self._live(), key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return _paged_scan(self._store, self._live, None, start, stop, reverse, limit)

    def release(self) -> None:
        """End the snapshot (its read transaction; the store keeps the connection
        for its next snapshot or seeker). Idempotent."""
        conn, self._conn = self._conn, None
        if conn is not None:
            self._store._done_with(conn)


class _SQLiteTransaction(_Keys, _Statements, WriteView):
    """``BEGIN IMMEDIATE`` on the store's connection, holding the store's lock.

    A write statement that fails kills this transaction: it is rolled back, and
    every later operation and the commit raise that same
    :class:`~keyspace.errors.StoreError`, so nothing of it is committed even when
    the caller catches the first error and carries on. Where SQLite ended its
    transaction itself (a full disk: ``SQLITE_FULL``), statements after it would
    otherwise run in autocommit mode, one by one; where it undid only the failed
    statement (an I/O error it recovered from, a blob over the length limit, an
    interrupt), the statements of the same operation before it (the first pairs of
    an ``update``, the record of an indexed save, the first keys of a ``clear``)
    would otherwise commit without the rest. Keys refused before any statement
    runs (too large, bad input) leave the transaction usable.

    Its scans and seekers ask it for the connection before each page or seek: once
    the block has ended they raise :class:`~keyspace.errors.StoreClosed` (the
    connection is the store's, which then reads and writes outside any
    transaction), and after a failed write that same ``StoreError``."""

    __slots__ = ("_conn", "_dead", "_store")

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store
        self._conn: sqlite3.Connection | None = None
        self._dead: KeyspaceError | None = None

    def _live(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            raise StoreClosed(f"this transaction on {self._store.url} has ended")
        if self._dead is not None:
            raise StoreError(f"this transaction on {self._store.url} was rolled back: {self._dead}")
        return conn

    def _failed(self, conn: sqlite3.Connection, exc: sqlite3.Error) -> KeyspaceError:
        """Translate ``exc`` (a failed write statement), roll back what is left of
        the transaction and mark it dead: a part of an operation never commits."""
        error = self._store.translate(exc)
        _rollback(conn)
        self._dead = error
        return error

    def _keys_conn(self) -> tuple[SQLiteStore, Connect, Lock | None]:
        return self._store, self._live, None

    def get(self, key: bytes) -> bytes | None:
        return _point_get(self._store, self._live(), key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return _paged_scan(self._store, self._live, None, start, stop, reverse, limit)

    def _execute(self, sql: str, args: tuple[bytes, ...]) -> None:
        conn = self._live()
        try:
            conn.execute(sql, args)
        except sqlite3.Error as exc:
            raise self._failed(conn, exc) from exc

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """One ``executemany`` of the insert statement."""
        pairs = items if isinstance(items, list) else list(items)
        conn = self._live()
        try:
            conn.executemany(_PUT, pairs)
        except sqlite3.Error as exc:
            raise self._failed(conn, exc) from exc
        return len(pairs)

    def __enter__(self) -> _SQLiteTransaction:
        store = self._store
        conn = store._free()
        store._lock.acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            store._lock.release()
            if isinstance(exc, sqlite3.Error):
                raise store.translate(exc) from exc
            raise
        store._owner, store._held = threading.get_ident(), self
        self._conn = conn
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        store, conn, dead = self._store, self._conn, self._dead
        if conn is None:
            raise StoreClosed(f"this transaction on {store.url} has ended, nothing of it committed")
        self._conn = None
        store._owner = store._held = None
        try:
            if dead is not None or exc_type is not None:
                _rollback(conn)
                if dead is not None and exc_type is None:
                    raise StoreError(f"this transaction on {store.url} was rolled back: {dead}") from dead
                return
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as error:
                _rollback(conn)
                raise store.translate(error) from error
        finally:
            store._lock.release()
