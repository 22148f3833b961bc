"""``LMDBStore``: the embedded default, on py-lmdb.

URL: ``lmdb:///path/to/dir`` (or a bare path). One LMDB environment (a directory
holding ``data.mdb`` and ``lock.mdb``), its unnamed database, or with ``db=NAME``
(``lmdb:///path?db=NAME``) one of its named databases (``max_dbs``: how many named
databases the environment may open; 16 when ``db`` is given and ``max_dbs`` is not).

- Readers never block and are never blocked; one writer at a time across processes.
- Every write outside a transaction is one LMDB write transaction (one commit);
  ``write(ops)`` and ``delete_range`` are one transaction each.
- The map is large by default (:data:`DEFAULT_MAP_SIZE`: 1 TiB on 64-bit systems
  other than Windows). That is a reservation of address space, not of disk or
  memory: the file holds only the pages in use (sparse on Linux). About a hundred
  such stores fit in one process's address space; pass a smaller ``map_size`` to
  open more at once.
- The map grows instead of failing: a write outside a transaction that fills it
  grows it (doubles it, as often as the write needs) and is retried; a
  ``transaction()`` doubles it first when it begins with the map more than half
  used. A transaction that begins with at least :data:`FAST_HEADROOM` free writes
  straight to LMDB (no per-write bookkeeping) and raises
  :class:`~keyspace.errors.StoreError` if it outgrows that free space; one that
  begins with less (a small ``map_size``) logs its writes, and a full map is grown
  and the transaction replayed on it. Growing ends the LMDB transaction, which
  releases LMDB's writer lock between processes: when another process committed
  meanwhile, a transaction that has read anything is not replayed (its writes may
  rest on what changed) but raises :class:`~keyspace.errors.TransactionConflict`,
  nothing of it written: run it again.
  Growing remaps the file, which needs no write transaction open in this process
  (writers of the store are serialised by a lock, so none is) and ends every read
  transaction: growth waits until the snapshots other threads hold have ended (at
  most :data:`GROWTH_WAIT` seconds), and store reads and scans never hold one for
  long (a scan reads pages of up to 1024 items, each in its own short read
  transaction), so they never see it. A map grown by another process
  (``MDB_MAP_RESIZED``) is adopted and the read, write or open retried.
- Keys are 1 to ``max_key_size`` bytes (511 with LMDB 0.9). Writing a longer key
  raises :class:`~keyspace.errors.KeyTooLarge`; reading one finds nothing. The
  empty key cannot be stored or read: :class:`~keyspace.errors.InvalidName`.
- One environment per path per process: stores of one path (its unnamed database
  and its named databases) share it, its writer lock and its growth, and it closes
  with the last of them. A ``transaction()`` begun on one of them while another's
  transaction is open in the same thread joins that transaction: their writes
  commit together when the first one ends, and are discarded together if either
  block raises. :meth:`LMDBStore.join` gives a view of a database inside a
  transaction or snapshot of another one, and :meth:`LMDBStore.databases` lists the
  named databases.
- LMDB keeps each named database as a record in the unnamed database. Such a
  record is never data: every read of the unnamed database (``get``, scans,
  counts, seekers, snapshots, transactions) leaves the records out, and
  ``delete_range`` keeps them; deleting one deletes nothing (no datum is
  there) and writing one raises :class:`~keyspace.errors.StoreError`. Which keys
  are records is asked of LMDB (see ``_records``); a key holding a NUL byte
  or a value of another size than a record's costs nothing more, a delete of a
  key holding no NUL byte a point read.

The store is here; its pieces beside it: the map's growth and the transactions
that retry through it (``_growth``), its snapshot (``_snapshot``), its
write and joined transactions (``_txn``), cursor scans and range deletes
(``_cursor``), keys-only reads (``_keys``), checks of the files on disk
(``_files``), the environment shared per path (``_env``) and the records
of its named databases (``_records``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain, islice
from operator import itemgetter
from typing import Any

import lmdb

from ...errors import InvalidName, KeyspaceError, KeyTooLarge, StoreClosed, StoreError, show_bytes
from .._base import Capabilities, Op, ReadView, Seeker, Store, byte_after, pages_by_range
from .._checked import CheckFailed
from .._key_sizes import bad_key
from .._translated import ended_call
from . import _env as _lmdb_env
from ._checked import LMDBCheckedReads
from ._cursor import SHORT_SCAN_MOST, cursor_delete_range, cursor_page, cursor_take
from ._files import check_environment, check_lock_file, check_map_size, nearly_full, os_cause
from ._growth import FAST_HEADROOM as FAST_HEADROOM
from ._growth import GROWTH_WAIT as GROWTH_WAIT
from ._growth import RETRIES, MapGrowth
from ._keys import CursorSeeker, count_keys
from ._records import RECORD_SIZE, Records, delete_data, drop_items, name_candidates, point_read, records_in
from ._snapshot import LMDBSnapshot
from ._txn import JoinedTransaction, LMDBTransaction
from ._watched import LMDBWatchedReads

_Also = Sequence[tuple[bytes, bytes | None]]
"""Keys and the values a checked write (:meth:`LMDBStore.write_if`) finds them holding."""

__all__ = ["LMDBStore"]

DEFAULT_MAP_SIZE = 1 << 40 if sys.maxsize > 1 << 32 and sys.platform != "win32" else 256 << 20
"""Initial map size: 1 TiB of address space on 64-bit systems (256 MiB on 32-bit
systems and on Windows, where LMDB sizes the file to the map); it doubles whenever
it fills."""

NAMED_DBS = 16
"""``max_dbs`` of an environment first opened with ``db=NAME`` and no ``max_dbs``."""

_NAMES_CHUNK = 4096
"""Keys of the unnamed database :meth:`LMDBStore.databases` reads at once."""


class LMDBStore(MapGrowth, Store):
    """An ordered byte store in one LMDB environment.

    ``LMDBStore(path, map_size=..., sync=True, max_readers=126)``: the directory is
    created if missing. ``sync=False`` skips the fsync at commit (a crash may lose the
    last transactions, never corrupt the store).

    Every reader writes LMDB's lock file, ``lock.mdb`` beside ``data.mdb`` (and
    creates it when missing): a user who may read the store but not write that
    file (or, without it, the directory) is refused by name before LMDB is asked.
    ``lock=False`` (``?lock=false``; read-only opens only) opens such a store
    without the lock file: unsafe while any process writes the store, whose
    writer may then reuse pages a read still holds (wrong or torn reads).

    Costs: ``get`` is one read transaction and one B-tree lookup (one C call:
    ``_records.point_read``); a write outside a
    transaction is one commit (an fsync with ``sync=True``); beginning a
    ``transaction()`` reads the map's size and use (one LMDB call) only when its
    last reading may be out of date (a large map: every few seconds; see
    ``MapGrowth._roomy``); inside it, puts
    and gets through a scope cost py-lmdb's own ``txn.put``/``txn.get`` plus the
    scope's one Python frame.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        sync: bool = True,
        max_readers: int = 126,
        max_dbs: int = 0,
        readonly: bool = False,
        db: str = "",
        lock: bool = True,
    ) -> None:
        self._path = os.path.abspath(os.fspath(path))
        self.url = f"lmdb://{self._path}" + (f"?db={db}" if db else "")
        self._txn_ended = ended_call(f"this transaction of {self.url} has ended")
        """``get`` and ``put`` of its ended transactions (made once: no message per transaction)."""
        if lock is not True and (lock is not False or not readonly):
            raise StoreError(
                f"option lock={lock!r} for {self.url}: lock=False is for read-only opens only "
                "(readonly=True), where it reads without LMDB's lock file"
            )
        self.db_name = db
        self._env: Any = None
        self._point_read: Any = None  # the C point read, once open (see below)
        self._opened = False
        self._grown = 0
        # Growth (set_mapsize) needs no write transaction in this process, and it
        # ends every read transaction of the environment: the stores of one path
        # share (in _shared) the writer lock, the snapshot count and the thread
        # holding the write transaction; growth waits until the snapshots other
        # threads hold have ended.
        if max_readers < 1:  # LMDB's own refusal says only "Invalid argument"
            raise StoreError(
                f"option max_readers={max_readers!r} must be 1 or more (the read transactions "
                f"LMDB serves at once) for {self.url}"
            )
        self._max_readers = max_readers
        if db and max_dbs < 1:
            max_dbs = NAMED_DBS
        _lmdb_env.db_name_bytes(db, self.url)  # a name LMDB cannot take: refused before anything is made
        check_environment(self._path, self.url, readonly)
        if readonly and lock:
            check_lock_file(self._path, self.url)

        def open_env() -> Any:
            check_map_size(map_size, self.url)  # LMDB would make its files before failing
            for attempt in range(RETRIES):
                try:
                    return lmdb.open(
                        self._path,
                        map_size=map_size,
                        sync=sync,
                        max_readers=max_readers,
                        max_dbs=max_dbs + _lmdb_env.PROBE_SLOTS,  # a slot to tell records from data
                        readonly=readonly,
                        create=not readonly,
                        lock=lock,
                    )
                except lmdb.MapResizedError as exc:  # another process grew the map meanwhile
                    if attempt + 1 == RETRIES:
                        raise self.translate(exc) from exc
            raise AssertionError("unreachable")  # pragma: no cover

        try:
            self._shared = _lmdb_env.acquire(
                self._path, max_dbs=max_dbs, readonly=readonly, url=self.url, open_env=open_env, sync=sync
            )
        except (lmdb.Error, OSError) as exc:
            raise self.translate(exc) from exc
        self._env = self._shared.env
        # the unnamed database holds LMDB's records of the named ones: its reads leave them out
        self._records: Records | None = None if db else self._shared.records
        self._is_record: Callable[[bytes, bytes], bool] | None = (
            None if self._records is None else self._records.is_record
        )  # cursor_take's test of a record
        try:
            self._db = self._open_db(db, create=not readonly)
        except BaseException:
            self._env = None
            _lmdb_env.release(self._shared)
            raise
        self._opened = True  # from now on, a missing environment means closed
        self._max = int(self._env.max_key_size())
        self.capabilities = Capabilities(
            max_key_size=self._max,
            empty_keys=False,
            atomic_batch=True,
            native_delete_range=False,
            snapshots=True,
            persistent=True,
            multi_process=True,
            serialized_transactions=True,
            shared_in_process=True,
        )
        # the point read in C, where built: the method get is its reference
        begin = partial(self._env.begin, db=self._db) if db else self._env.begin
        self._point_read = point_read(begin, self._shared, self._records, self._get_retrying)
        self.get = self._point_read or self.get  # type: ignore[method-assign]

    # -- error translation: the one place ------------------------------------

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """Translate a py-lmdb exception into a keyspace error (chain it with ``from``);
        ``key``: the key of the failed operation, if any."""
        if isinstance(exc, KeyspaceError):
            return exc
        if isinstance(exc, lmdb.BadValsizeError) and key is not None:
            bad = self._bad_key(key)
            if bad is not None:
                return bad
        if isinstance(exc, lmdb.MapFullError):  # only a transaction without a replay log
            return StoreError(
                f"a transaction on {self.url} outgrew the free space of the map (it began "
                f"with at least {FAST_HEADROOM} bytes free); commit in smaller transactions "
                f"or open the store with a larger map_size: {exc}"
            )
        text = str(exc)
        if isinstance(exc, lmdb.IncompatibleError) and self._opened:
            return StoreError(
                f"LMDB refused a write on {self.url}: a key of the unnamed database that is the record of "
                f"a named database cannot be written as data (nothing was changed): {text}"
            )
        if isinstance(exc, lmdb.DiskError) or (
            isinstance(exc, lmdb.Error) and "Input/output error" in text and nearly_full(self._path)
        ):
            return StoreError(
                f"the disk holding {self.url} is full (no space left on device): the write was not "
                f"committed; free some space and retry: {text}"
            )
        cause = os_cause(exc)
        if cause is not None:
            return StoreError(f"LMDB on {self.url}: {cause}")
        if isinstance(exc, lmdb.ReadersFullError):
            return StoreError(
                f"LMDB on {self.url} has no free reader slot (max_readers={self._max_readers}): too many "
                f"threads or processes read at once; open it with a larger max_readers: {text}"
            )
        if isinstance(exc, lmdb.BadTxnError):  # a write of this transaction failed before
            return StoreError(
                f"this transaction on {self.url} cannot go on: a write in it failed, so LMDB discards "
                f"it; nothing of it is committed: {text}"
            )
        if isinstance(exc, lmdb.InvalidError | lmdb.VersionMismatchError | lmdb.CorruptedError):
            return StoreError(f"{self.url} is not a usable LMDB store (corrupt, or another format): {text}")
        if self._opened and self._env is None and not text.startswith("The environment"):
            return StoreClosed(f"the store {self.url} is closed")
        if "closed/deleted/dropped" in text:
            grown = " (or the map grew, which ends open snapshots and scans)" if self._grown else ""
            return StoreClosed(f"this transaction, snapshot or scan of {self.url} has ended{grown}")
        if "already open in this process" in text:
            return StoreError(
                f"{self.url} is already open in this process; LMDB allows one environment "
                "per path per process, so share the open store"
            )
        return StoreError(f"LMDB failed on {self.url}: {text}")

    def _bad_key(self, key: bytes) -> KeyspaceError | None:
        if not key:
            return InvalidName(f"LMDB cannot store the empty key b'' ({self.url})")
        if len(key) > self._max:
            return KeyTooLarge(
                f"key of {len(key)} bytes is over LMDB's limit of {self._max} bytes: {show_bytes(key)}"
            )
        return None

    def key_refusal(self, key: bytes) -> KeyspaceError:
        refusal = self._bad_key(key)
        return super().key_refusal(key) if refusal is None else refusal

    def _check(self, key: bytes) -> None:
        if not key or len(key) > self._max:
            raise self._bad_key(key)  # type: ignore[misc]

    def _check_all(self, items: list[Any] | tuple[Any, ...]) -> None:
        """:meth:`_check` of every key of ``items`` (keys, or pairs whose first item
        is the key): one pass over their sizes (:func:`bad_key`), and
        :meth:`_check` of the first bad one to name it."""
        key = bad_key(items if type(items) is list else list(items), self._max, False)
        if key is not None:
            self._check(key)

    # -- scans in pages of short read transactions ----------------------------

    def _page(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        size: int,
        read: Callable[..., Any] = cursor_page,
        hold: Callable[[Any], object] | None = None,
    ) -> list[Any]:
        """At most ``size`` items (``read=_key_page``: keys) of ``[start, stop)``
        read in one short read transaction, read again after the map grew
        meanwhile (under the read or under ``hold``'s own reads); ``hold(txn)``
        first, where given (see :meth:`checked_reads`)."""
        for _ in range(RETRIES):
            txn = self._read_begin()
            try:
                if hold is not None:
                    hold(txn)
                return read(txn, start, stop, reverse, size)  # type: ignore[no-any-return]
            except lmdb.Error as exc:
                if self._env is None or "closed/deleted/dropped" not in str(exc):
                    raise self.translate(exc) from exc
            except StoreClosed as exc:
                # the hold's reads go through a view of ``txn``, which translates the same end
                if self._env is None or "closed/deleted/dropped" not in str(exc.__cause__):
                    raise
            finally:
                txn.abort()
        raise StoreError(f"the map of {self.url} kept growing under this scan ({RETRIES} attempts)")

    def _pages(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        hold: Callable[[Any], object] | None = None,
        cut: int = 0,
    ) -> Iterator[list[Any]]:
        """The items (``keys``: the keys) of a store scan, as pages read in short
        read transactions (64 items first, then up to 1024 items, so that a page
        decoded at once stays in the CPU cache, or 4096 keys), each continuing
        after the last key. Items: each key without its first ``cut`` bytes
        (the prefix every key of ``[start, stop)`` shares), LMDB's records of
        named databases left out, both as they are read."""
        left = limit
        size = 64
        records = records_in(self._records, start, stop)
        read: Callable[..., Any]
        if not keys:
            read = partial(_pair_page, self._db, None if records is None else self._is_record, cut)
        elif records is not None:  # the unnamed database: each page read without the records
            read = partial(_kept_key_page, records, [False])
        else:
            read = _key_page
        head = start[:cut]
        while left is None or left > 0:
            want = size if left is None else min(size, left)
            page = self._page(start, stop, reverse, want, read, hold)
            raw = page
            if keys and records is not None:
                raw, page = page
            if page:
                yield page
            if len(raw) < want:
                return
            if left is not None:
                left -= len(page)
            last = raw[-1] if keys else head + raw[-1][0]
            if reverse:
                stop = last
            else:
                start = last + b"\x00"
            size = min(size * 4, 4096 if keys else 1024)

    def _short_page(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, cut: int = 0
    ) -> list[tuple[bytes, bytes]] | None:
        """A scan of at most :data:`SHORT_SCAN_MOST` items as one page read in
        one frame (one read transaction, :func:`cursor_take`: the cursor's
        page cut in C, each key without its first ``cut`` bytes, LMDB's records
        of named databases left out); ``None`` for a longer one, or where the
        map is being grown or LMDB raises (then the paged route says what went
        wrong)."""
        self._live()
        if limit is not None and 0 < limit <= SHORT_SCAN_MOST and not self._shared.resizing:
            try:
                txn = self._env.begin()
            except lmdb.Error:
                return None
            try:
                is_record = self._is_record
                return cursor_take(txn, self._db, start, stop, limit, reverse, cut, is_record, RECORD_SIZE)
            except lmdb.Error:
                pass
            finally:
                txn.abort()
        return None

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """Pages read in short read transactions (a short read of one range: one
        page in one frame), so a scan never holds one open between pages
        (growing the map never ends it), one range after the other, their keys
        cut as they are read; keys only: no value copied, in the same pages."""
        return pages_by_range(
            self, self._range_pages, ranges, reverse, limit, keys_only, cut, self._range_key_pages, True
        )

    def _range_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, cut: int = 0
    ) -> Iterable[list[tuple[bytes, bytes]]]:
        """The pages of one range, each key without its first ``cut`` bytes: a
        short read's one page, else :meth:`_pages`."""
        page = self._short_page(start, stop, reverse, limit, cut)
        if page is not None:
            return [page] if page else ()
        return self._pages(start, stop, reverse, limit, cut=cut)

    def _range_key_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterable[list[bytes]]:
        """The keys of one range (no value copied) in the pages of :meth:`_pages`."""
        self._live()
        return self._pages(start, stop, reverse, limit, keys=True)

    # -- the Store contract --------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        """One read transaction around py-lmdb's get. Cost: one Python frame
        around the engine's calls, unless the map is being grown or a read meets
        an error (then the retrying route)."""
        env = self._env
        if env is not None and not self.db_name and not self._shared.resizing:
            try:
                txn = env.begin()
            except lmdb.Error:
                pass  # the retrying route says what went wrong
            else:
                try:
                    value: bytes | None = txn.get(key)
                    if (
                        value is None
                        or len(value) != RECORD_SIZE
                        or not self._shared.records.is_record(key, value)
                    ):
                        return value
                    return None  # a named database's record: no data
                except lmdb.Error:
                    pass
                finally:
                    txn.abort()
        return self._get_retrying(key)

    def checked_reads(self, check: ReadView, check_key: bytes, expected: bytes) -> LMDBCheckedReads | None:
        """This store's reads, each in a read transaction in which ``check_key`` of
        ``check`` holds ``expected`` (see
        :class:`~keyspace.stores._checked.CheckedReads`), or ``None`` where
        ``check`` is no store of this environment (no one transaction reads
        both)."""
        if not isinstance(check, LMDBStore) or check._shared is not self._shared:
            return None
        return LMDBCheckedReads(self, check._db, check_key, expected)

    def watched_reads(self, check: Callable[[ReadView], object]) -> LMDBWatchedReads:
        """This store's reads, each in a read transaction on which ``check`` has
        run (once per state of the environment: see
        :class:`~keyspace.stores._watched.WatchedReads`)."""
        return LMDBWatchedReads(self, check)

    def _get_retrying(self, key: bytes) -> bytes | None:
        for _ in range(RETRIES):
            txn = self._read_begin()
            try:
                value: bytes | None = txn.get(key)
                records = self._records
                if value is not None and records is not None and records.is_record(key, value):
                    return None
                return value
            except lmdb.Error as exc:
                if self._env is None or "closed/deleted/dropped" not in str(exc):
                    raise self.translate(exc, key) from exc
            finally:
                txn.abort()
        raise StoreError(f"the map of {self.url} kept growing under this read ({RETRIES} attempts)")

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        page = self._short_page(start, stop, reverse, limit)
        if page is not None:
            return iter(page)
        return chain.from_iterable(self._pages(start, stop, reverse, limit))

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """Keys of ``[start, stop)`` read without values by one cursor of ONE short
        read transaction, so that the count is of one state of the store (a batch
        that another thread or process commits meanwhile is counted whole or not at
        all); no Python code per key; with ``without``, each chunk of keys tested
        by one C pass. Read again after the map grew meanwhile."""
        return self._count(start, stop, None, None if without is None else byte_after(*without))

    def _count(
        self,
        start: bytes,
        stop: bytes | None,
        hold: Callable[[Any], object] | None = None,
        without: tuple[int, int] | None = None,
    ) -> int:
        """:meth:`count` (``without``: its ``(byte, at)``),
        ``hold(txn)`` first where given (see :meth:`_page`)."""
        if stop is not None and stop <= start:
            return 0
        read = partial(_count_keys, records=self._records, without=without)
        counted: list[int] = self._page(start, stop, False, 0, read, hold)
        return counted[0]

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One cursor of one read transaction (held like a :meth:`snapshot` until
        the seeker is released)."""
        snap = self.snapshot()
        try:
            return CursorSeeker(snap._txn.cursor(), stop, self.translate, snap.release, self._records)
        except lmdb.Error as exc:
            snap.release()
            raise self.translate(exc) from exc

    def put(self, key: bytes, value: bytes) -> None:
        self._check(key)
        self._write(lambda txn: txn.put(key, value), lambda: len(key) + len(value))

    def delete(self, key: bytes) -> None:
        self._check(key)
        records = self._records  # the unnamed database: a database's record is no data

        def body(txn: Any) -> None:
            delete_data(records, txn, key)

        self._write(body)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        records = self._records  # the unnamed database: its records stay
        self._write(lambda txn: cursor_delete_range(txn, start, stop, None, records))

    def write(self, ops: Iterable[Op]) -> None:
        batch = list(ops)
        self._check_all(batch)
        self._write(partial(_apply_batch, self._records, batch), partial(_batch_bytes, batch))

    def write_if(self, check_key: bytes, expected: bytes | None, ops: Iterable[Op], also: _Also = ()) -> bool:
        """Write ``ops`` in one write transaction if ``check_key`` holds ``expected``
        (``None``: no value) and each key of ``also`` its value in it, else ``False``,
        nothing written. The checks are read anew each time the body runs (a full
        map grows and runs it again). Cost: :meth:`write`'s and a point read a check."""
        batch = list(ops)
        self._check_all(batch)
        held = [False]
        records = self._records

        def body(txn: Any) -> None:
            get = txn.get
            held[0] = get(check_key) == expected and all(get(key) == value for key, value in also)
            if held[0]:
                _apply_batch(records, batch, txn)

        self._write(body, partial(_batch_bytes, batch))
        return held[0]

    def put_if(self, check_key: bytes, expected: bytes, key: bytes, value: bytes) -> None:
        """Put ``key`` in one write transaction if ``check_key`` holds ``expected``
        in it; raise :class:`~keyspace.stores._checked.CheckFailed`, with nothing
        written, where it does not (read anew each time the body runs, as in
        :meth:`write_if`). Cost: :meth:`put`'s and one point read, in as many
        Python frames as :meth:`put` (a directory handle's point write, bound
        with its node key and layer by ``functools.partial``)."""
        self._check(key)

        def body(txn: Any) -> None:
            if txn.get(check_key) != expected:
                raise CheckFailed
            txn.put(key, value)

        self._write(body, lambda: len(key) + len(value))

    def snapshot(self) -> LMDBSnapshot:
        """A read transaction held until the snapshot ends; growing the map (in
        this process) waits for it."""
        opener = self._view_opened()
        try:
            return LMDBSnapshot(self, self._read_begin(), True, opener)
        except BaseException:
            self._view_closed(opener)
            raise

    def transaction(self) -> LMDBTransaction:
        return LMDBTransaction(self)

    def join(self, view: ReadView) -> ReadView:
        """A view of this store's database inside ``view``, a snapshot or transaction
        of a store of the same environment: one LMDB transaction for both, so reads
        are consistent across the databases and writes commit together. The view
        ends with ``view``. Raises :class:`StoreError` for a view of another
        environment. Cost: one object, no LMDB call."""
        owner = getattr(view, "_store", None)
        if not isinstance(owner, LMDBStore) or owner._shared is not self._shared:
            raise StoreError(f"cannot join {self.url} to {view!r}: it is not a view of the same environment")
        if isinstance(view, LMDBTransaction):
            return JoinedTransaction(self, view)
        if isinstance(view, JoinedTransaction):
            return JoinedTransaction(self, view._outer)
        if isinstance(view, LMDBSnapshot):
            return LMDBSnapshot(self, view._txn, False)
        raise StoreError(f"cannot join {self.url} to {view!r}: not an LMDB snapshot or transaction")

    def _records_in(self, db: Any) -> Records | None:
        """The records to keep out of reads and range deletes of database ``db``
        of this environment (``None``: this store's own), ``None`` unless it is
        the unnamed database."""
        if db is None:
            return self._records
        return self._shared.records if db is self._shared.dbs.get("") else None

    def check_room(self, names: Iterable[str]) -> None:
        """Raise :class:`StoreError` unless the named databases ``names`` can all be
        opened in this process (``max_dbs``): asked before creating several, so
        that a refusal leaves none of them created."""
        self._shared.check_room(names, self.url)

    def databases(self) -> list[str]:
        """The names of the environment's named databases, sorted by their bytes:
        the keys of the unnamed database that LMDB opens as databases (asked in a
        slot kept for it, whatever ``max_dbs`` is; none is opened for good). A
        name that is not UTF-8 (no store can open it) is left out. Cost: one scan
        of the unnamed database's keys (no value copied), one C pass a chunk of
        them, then, for each key holding no NUL byte (a name never does), its
        value read and, where it has a record's size, LMDB asked."""
        records = self._shared.records
        unnamed = self._open_db("", create=False)
        names: list[str] = []
        try:
            with self._read_begin() as txn:
                keys = txn.cursor(db=unnamed).iternext(values=False)
                get = partial(txn.get, db=unnamed)
                while chunk := list(islice(keys, _NAMES_CHUNK)):
                    for at in name_candidates(chunk, RECORD_SIZE):
                        raw = chunk[at]
                        value = get(raw)
                        if value is not None and len(value) == RECORD_SIZE and records.is_record(raw, value):
                            try:
                                names.append(raw.decode("utf-8"))
                            except UnicodeDecodeError:
                                continue
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        return names

    def close(self) -> None:
        """Close the store; idempotent. A write transaction another thread holds on
        the environment ends first (its block commits or discards it as usual):
        the close waits for it. One of this thread's own ends with
        :class:`StoreClosed`, nothing of it committed."""
        if self._env is None:
            return
        shared = self._shared
        if shared.writer == threading.get_ident():
            self._release()
            return
        with shared.wlock:  # held by a write transaction until its block has ended
            self._release()

    def _release(self) -> None:
        if self._point_read is not None:
            self._point_read.close()  # its reads take the route that raises StoreClosed
        env, self._env = self._env, None
        if env is not None:
            _lmdb_env.release(self._shared)

    def __repr__(self) -> str:
        return f"LMDBStore({self._path!r})"


def _apply_batch(records: Records | None, batch: list[Op], txn: Any) -> None:
    """Apply ``batch`` in ``txn`` in order (for :meth:`LMDBStore.write` and
    :meth:`~LMDBStore.write_if`); ``records`` given (the unnamed database), a
    delete of a named database's record deletes nothing (:func:`delete_data`)."""
    put = txn.put
    delete = txn.delete if records is None else partial(delete_data, records, txn)
    for key, value in batch:
        if value is None:
            delete(key)
        else:
            put(key, value)


def _batch_bytes(batch: list[Op]) -> int:
    """The bytes of ``batch``'s keys and values: what a full map must grow by."""
    return sum(len(key) + len(value or b"") for key, value in batch)


def _count_keys(
    txn: Any,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
    records: Records | None = None,
    without: tuple[int, int] | None = None,
) -> list[int]:
    """``[n]``, the number of keys of ``[start, stop)`` in ``txn``, a read
    transaction (for :meth:`LMDBStore._page`): see
    :func:`~keyspace.stores.lmdb._keys.count_keys`, which may remember facts of
    its state."""
    return [count_keys(txn, start, stop, None, records, without, None if records is None else txn.id())]


def _kept_key_page(
    records: Records,
    met: list[bool],
    txn: Any,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    size: int,
) -> tuple[list[bytes], list[bytes]]:
    """``(page, kept)``: a page of the keys of the unnamed database, and the same
    without LMDB's records of named databases, for :meth:`LMDBStore._pages`,
    which goes on after the last key read. A page holding no key that may be a
    record (one C pass) is kept as it is; else its items are read to tell them,
    and so are the next pages of the scan (``met[0]`` set: their keys are
    likely alike)."""
    if not met[0]:
        page = _key_page(txn, start, stop, reverse, size)
        if not name_candidates(page, RECORD_SIZE):
            return page, page
        met[0] = True
    items = cursor_page(txn, start, stop, reverse, size)
    return list(map(itemgetter(0), items)), list(map(itemgetter(0), drop_items(records, items)))


def _pair_page(
    db: Any,
    is_record: Callable[[bytes, bytes], bool] | None,
    cut: int,
    txn: Any,
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    size: int,
) -> list[tuple[bytes, bytes]]:
    """At most ``size`` items of ``[start, stop)`` in ``txn`` (for
    :meth:`LMDBStore._page`), each key without its first ``cut`` bytes, the
    records ``is_record`` tells left out as they are read (:func:`cursor_take`)."""
    return cursor_take(txn, db, start, stop, size, reverse, cut, is_record, RECORD_SIZE)


def _key_page(txn: Any, start: bytes, stop: bytes | None, reverse: bool, size: int) -> list[bytes]:
    """At most ``size`` keys of ``[start, stop)`` in ``txn`` (for :meth:`LMDBStore._page`)."""
    return cursor_page(txn, start, stop, reverse, size, values=False)
