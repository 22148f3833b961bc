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
  grows it (doubles it) and is retried; a ``transaction()`` doubles it first when it
  begins with the map more than half used. A transaction that begins with at least
  :data:`FAST_HEADROOM` free writes straight to LMDB (no per-write bookkeeping) and
  raises :class:`~keyspace.errors.StoreError` if it outgrows that free space; one that
  begins with less (a small ``map_size``) logs its writes, and a full map is grown
  and the transaction replayed on it.
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
"""

from __future__ import annotations

import errno
import os
import struct
import sys
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import chain, islice, takewhile
from operator import gt, itemgetter, le
from types import TracebackType
from typing import Any

import lmdb

from ..errors import InvalidName, KeyspaceError, KeyTooLarge, StoreClosed, StoreError, show_bytes
from . import _lmdb_env
from ._base import Capabilities, Op, ReadView, Releasable, Seeker, Store, WriteView
from ._lmdb_keys import CursorSeeker, TxnKeys, cursor_keys
from ._paths import check_directory

__all__ = ["LMDBStore"]

DEFAULT_MAP_SIZE = 1 << 40 if sys.maxsize > 1 << 32 and sys.platform != "win32" else 256 << 20
"""Initial map size: 1 TiB of address space on 64-bit systems (256 MiB on 32-bit
systems and on Windows, where LMDB sizes the file to the map); it doubles whenever
it fills."""

FAST_HEADROOM = 1 << 30
"""Free map space (bytes) a ``transaction()`` needs when it begins to write without
a replay log (always the case with the default map size)."""

GROWTH_WAIT = 10.0
"""Seconds growing the map waits for other threads' snapshots to end before it
ends them."""

_RETRIES = 64
"""Attempts of a read whose map grew (in this process or another) meanwhile."""

NAMED_DBS = 16
"""``max_dbs`` of an environment first opened with ``db=NAME`` and no ``max_dbs``."""

_PUT, _DELETE, _RANGE = 0, 1, 2
_Logged = tuple[int, bytes, bytes | None, Any]  # op, key, value or stop, database (None: own)


_first = itemgetter(0)

_SHORT_SCAN = 16
"""A forward scan limited to this many items reads them at once and cuts them at
``stop`` with one binary search, instead of testing every item against ``stop``
(about 85 ns an item): it reads at most this many items past ``stop``."""


def _cursor_scan(
    txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, db: Any = None
) -> Iterator[tuple[bytes, bytes]]:
    """Items of ``[start, stop)`` read by one cursor (on database ``db``, default: the
    transaction's): an ``itertools`` chain over ``iternext``/``iterprev``, so no
    Python code runs per item (a short forward scan: one list, see
    :data:`_SHORT_SCAN`). The cursor keeps ``txn`` alive as long as the chain
    lives."""
    cursor = txn.cursor(db)
    items: Iterator[tuple[bytes, bytes]]
    if not reverse:
        if not cursor.set_range(start):
            return iter(())
        if limit is not None and limit <= _SHORT_SCAN:
            page = list(islice(cursor.iternext(), max(limit, 0)))
            if stop is not None and page and page[-1][0] >= stop:
                del page[bisect_left(page, (stop,)) :]  # (stop,) sorts before (stop, value)
            return iter(page)
        items = cursor.iternext()
        if stop is not None:
            items = takewhile(partial(gt, (stop,)), items)  # (stop,) > (k, v)  <=>  k < stop
    else:
        found = cursor.last() if stop is None or not cursor.set_range(stop) else cursor.prev()
        if not found:
            return iter(())
        items = cursor.iterprev()
        if start:
            items = takewhile(partial(le, (start,)), items)  # (start,) <= (k, v)  <=>  k >= start
    if limit is not None:
        items = islice(items, max(limit, 0))
    return items


def _delete_range(txn: Any, start: bytes, stop: bytes | None, db: Any = None) -> None:
    cursor = txn.cursor(db)
    if not cursor.set_range(start):
        return
    delete = cursor.delete
    key = cursor.key
    while stop is None or key() < stop:
        if not delete():  # deletes and moves to the next key; False at the end
            break


_META_MAGIC = 0xBEEFC0DE
_META = struct.Struct("<II")  # mm_magic, mm_version at offset 16 of a meta page
_META_TAIL = struct.Struct("<QQ")  # mm_last_pg, mm_txnid at offset 136 (64-bit builds)


def _check_environment(path: str, url: str, readonly: bool) -> None:
    """Refuse, before LMDB maps anything, a path that cannot be an LMDB store: a
    missing parent directory, a file where the environment directory belongs, a
    ``data.mdb`` that is not LMDB or is shorter than its header says (mapping a
    truncated file kills the process with SIGBUS on the first read past its end),
    and, for ``readonly``, a directory without ``data.mdb``. Cost: one stat and,
    when ``data.mdb`` exists, one read of its first two pages."""
    if not check_directory(path, url, "LMDB", ("data.mdb", "lock.mdb"), create=not readonly):
        return
    data = os.path.join(path, "data.mdb")
    if not os.path.isfile(data):
        if readonly:
            raise StoreError(f"{url} is not an LMDB store: {path} holds no data.mdb")
        return
    try:
        with open(data, "rb") as file:
            head = file.read(2 * 65536)
            size = os.fstat(file.fileno()).st_size  # after the header: the file only grows
    except OSError as exc:
        raise StoreError(f"cannot open {url}: {exc.strerror or exc}: {data}") from exc
    if size == 0 and not readonly:
        return  # a new environment that was never written: LMDB initialises it
    psize = struct.unpack_from("<I", head, 40)[0] if len(head) >= 44 else 0
    if psize < 512 or psize > 65536 or psize & (psize - 1):
        psize = 0  # not a page size: no LMDB header
    metas = []
    for offset in (0, psize):
        if psize and offset + 152 <= len(head):
            magic, _version = _META.unpack_from(head, offset + 16)
            if magic == _META_MAGIC:
                metas.append(_META_TAIL.unpack_from(head, offset + 136))
    if not metas:
        raise StoreError(f"{url} is not an LMDB store: {data} has no LMDB header")
    last_page, _txnid = max(metas, key=lambda meta: meta[1])
    needed = (last_page + 1) * psize
    if size < needed:
        raise StoreError(
            f"{url} is truncated or corrupt: {data} has {size} bytes but its header says "
            f"{needed} ({last_page + 1} pages of {psize}); restore it from a copy"
        )


def _nearly_full(path: str) -> bool:
    """Whether the file system holding ``path`` has under 1 MiB free: LMDB reports a
    write that ran out of space as a short write ("Input/output error")."""
    try:
        stat = os.statvfs(path)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < 1 << 20


def _os_cause(exc: BaseException) -> str | None:
    """The operating-system cause of an LMDB or OS error, worded for a user, or None."""
    number = getattr(exc, "errno", None)
    text = str(exc)
    if number == errno.ENOSPC or "No space left on device" in text:
        return f"the disk is full (no space left on device): {text}"
    if number in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
        return f"permission denied: {text}"
    if number == errno.EROFS or "Read-only file system" in text:
        return f"the file system is read-only: {text}"
    if number == errno.ENOENT and isinstance(exc, OSError):
        return f"no such file or directory: {text}"
    return None


class LMDBStore(Store):
    """An ordered byte store in one LMDB environment.

    ``LMDBStore(path, map_size=..., sync=True, max_readers=126)``: the directory is
    created if missing. ``sync=False`` skips the fsync at commit (a crash may lose the
    last transactions, never corrupt the store).

    Costs: ``get`` is one read transaction and one B-tree lookup; a write outside a
    transaction is one commit (an fsync with ``sync=True``); beginning a
    ``transaction()`` reads the map's size and use (two LMDB calls); inside it, puts
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
    ) -> None:
        self._path = os.path.abspath(os.fspath(path))
        self.url = f"lmdb://{self._path}" + (f"?db={db}" if db else "")
        self.db_name = db
        self._env: Any = None
        self._opened = False
        self._grown = 0
        # Growth (set_mapsize) needs no write transaction in this process, and it
        # ends every read transaction of the environment: the stores of one path
        # share (in _shared) the writer lock, the snapshot count and the thread
        # holding the write transaction; growth waits until the snapshots other
        # threads hold have ended.
        self._max_readers = max_readers
        if db and max_dbs < 1:
            max_dbs = NAMED_DBS
        _check_environment(self._path, self.url, readonly)

        def open_env() -> Any:
            for attempt in range(_RETRIES):
                try:
                    return lmdb.open(
                        self._path,
                        map_size=map_size,
                        sync=sync,
                        max_readers=max_readers,
                        max_dbs=max_dbs,
                        readonly=readonly,
                        create=not readonly,
                    )
                except lmdb.MapResizedError as exc:  # another process grew the map meanwhile
                    if attempt + 1 == _RETRIES:
                        raise self.translate(exc) from exc
            raise AssertionError("unreachable")  # pragma: no cover

        try:
            self._shared = _lmdb_env.acquire(
                self._path, max_dbs=max_dbs, readonly=readonly, url=self.url, open_env=open_env
            )
        except (lmdb.Error, OSError) as exc:
            raise self.translate(exc) from exc
        self._env = self._shared.env
        try:
            self._db = self._open_db(db, create=not readonly)
        except BaseException:
            self._env = None
            _lmdb_env.release(self._shared)
            raise
        self._opened = True  # from now on, a missing environment means closed
        self._max = int(self._env.max_key_size())
        self.fast_scan = self._scan_raw
        self.fast_pages = self._pages_raw
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
                f"a named database cannot be written or deleted as data (nothing was changed): {text}"
            )
        if isinstance(exc, lmdb.DiskError) or (
            isinstance(exc, lmdb.Error) and "Input/output error" in text and _nearly_full(self._path)
        ):
            return StoreError(
                f"the disk holding {self.url} is full (no space left on device): the write was not "
                f"committed; free some space and retry: {text}"
            )
        cause = _os_cause(exc)
        if cause is not None:
            return StoreError(f"LMDB on {self.url}: {cause}")
        if isinstance(exc, lmdb.ReadersFullError):
            return StoreError(
                f"LMDB on {self.url} has no free reader slot (max_readers={self._max_readers}): too many "
                f"threads or processes read at once; open it with a larger max_readers: {text}"
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

    def _check(self, key: bytes) -> None:
        if not key or len(key) > self._max:
            raise self._bad_key(key)  # type: ignore[misc]

    def _check_all(self, keys: Iterable[bytes]) -> None:
        """:meth:`_check` of every key, in two passes in C (their lengths, their
        truth); a Python loop only to name the first bad key."""
        batch = keys if isinstance(keys, list) else list(keys)
        if batch and (max(map(len, batch)) > self._max or not all(batch)):
            for key in batch:
                self._check(key)

    # -- plumbing ------------------------------------------------------------

    def _live(self) -> Any:
        env = self._env
        if env is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return env

    def _grow(self) -> None:
        """Double the map. Call holding ``_wlock`` with no write transaction open."""
        self._resize(int(self._live().info()["map_size"]) * 2)
        self._grown += 1

    def _resize(self, size: int) -> None:
        """``set_mapsize(size)`` (0: adopt the size another process gave the map),
        once the snapshots of other threads have ended (at most
        :data:`GROWTH_WAIT` seconds; a snapshot still open then is ended, and its next
        use raises :class:`~keyspace.errors.StoreClosed`). New snapshots and reads
        wait meanwhile. Call holding ``_wlock`` with no write transaction open."""
        env = self._live()
        mine = getattr(self._shared.local, "views", 0)
        with self._shared.cond:
            self._shared.resizing = True
            try:
                self._shared.cond.wait_for(lambda: self._shared.views <= mine, timeout=GROWTH_WAIT)
                env.set_mapsize(size)
            except lmdb.Error as exc:
                raise self.translate(exc) from exc
            finally:
                self._shared.resizing = False
                self._shared.cond.notify_all()

    def _adopt(self) -> None:
        """Adopt the map size another process gave the map (after
        ``MDB_MAP_RESIZED``), for a reader that holds no write transaction."""
        if self._shared.writer == threading.get_ident():
            raise StoreError(f"the map of {self.url} grew while this thread's transaction was open")
        with self._shared.wlock:
            self._resize(0)

    def _settled(self) -> None:
        """Wait while this store's map is being resized (bounded)."""
        with self._shared.cond:
            self._shared.cond.wait_for(lambda: not self._shared.resizing, timeout=GROWTH_WAIT)

    def _view_opened(self) -> None:
        with self._shared.cond:
            self._shared.cond.wait_for(lambda: not self._shared.resizing, timeout=GROWTH_WAIT)
            self._shared.views += 1
        self._shared.local.views = getattr(self._shared.local, "views", 0) + 1

    def _view_closed(self) -> None:
        with self._shared.cond:
            self._shared.views -= 1
            self._shared.cond.notify_all()
        self._shared.local.views = max(getattr(self._shared.local, "views", 0) - 1, 0)

    def _open_db(self, name: str, *, create: bool) -> Any:
        """The handle of database ``name`` (``""``: the unnamed one). Opening one
        begins an LMDB transaction, so a map another process grew since this
        environment was mapped is adopted first and the open retried."""
        for _ in range(_RETRIES):
            try:
                return self._shared.open_db(name, create=create, url=self.url)
            except lmdb.MapResizedError:
                self._adopt()
            except lmdb.Error as exc:
                raise self.translate(exc) from exc
        raise StoreError(f"the map of {self.url} kept growing while it was opened ({_RETRIES} attempts)")

    def _read_begin(self) -> Any:
        """A read transaction; a map another process grew is adopted first."""
        for _ in range(_RETRIES):
            if self._shared.resizing:
                self._settled()
            env = self._live()
            try:
                # py-lmdb parses keyword arguments slowly (about 160 ns): the unnamed
                # database is begin()'s default
                return env.begin(db=self._db) if self.db_name else env.begin()
            except lmdb.MapResizedError:
                self._adopt()
            except lmdb.Error as exc:
                raise self.translate(exc) from exc
        raise StoreError(f"the map of {self.url} kept growing under this read ({_RETRIES} attempts)")

    def _headroom(self) -> int:
        """Free bytes in the map, after doubling it when more than half is used.
        Call with no write transaction of this store open."""
        env = self._live()
        try:
            for _attempt in range(_RETRIES):
                info = env.info()
                size = int(info["map_size"])
                used = (int(info["last_pgno"]) + 1) * int(env.stat()["psize"])
                if used <= size // 2:
                    return size - used
                self._grow()
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        raise StoreError(f"the map of {self.url} could not be grown to twice its use ({_RETRIES} attempts)")

    def _write(self, body: Callable[[Any], None]) -> None:
        """Run ``body(txn)`` in one write transaction; a full map grows and retries."""
        env = self._live()
        if self._shared.writer == threading.get_ident():
            raise StoreError(
                f"a transaction on {self.url} is open in this thread; write through it "
                "(writing through the store would wait for it forever)"
            )
        with self._shared.wlock:
            for _attempt in range(_RETRIES):
                try:
                    txn = env.begin(write=True, db=self._db)
                except lmdb.MapResizedError:
                    self._resize(0)  # another process grew the map: adopt its size
                    continue
                except lmdb.Error as exc:
                    raise self.translate(exc) from exc
                try:
                    body(txn)
                    txn.commit()
                    return
                except lmdb.MapFullError:
                    txn.abort()
                    self._grow()
                except lmdb.Error as exc:
                    txn.abort()
                    raise self.translate(exc) from exc
                except BaseException:
                    txn.abort()
                    raise
            raise StoreError(f"a write to {self.url} kept finding the map full or resized ({_RETRIES} tries)")

    def _page(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        size: int,
        read: Callable[..., Any] = _cursor_scan,
    ) -> list[Any]:
        """At most ``size`` items (``read=cursor_keys``: keys) of ``[start, stop)``
        read in one short read transaction, read again after the map grew meanwhile."""
        for _ in range(_RETRIES):
            txn = self._read_begin()
            try:
                return list(read(txn, start, stop, reverse, size))
            except lmdb.Error as exc:
                if self._env is None or "closed/deleted/dropped" not in str(exc):
                    raise self.translate(exc) from exc
            finally:
                txn.abort()
        raise StoreError(f"the map of {self.url} kept growing under this scan ({_RETRIES} attempts)")

    def _pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, keys: bool = False
    ) -> Iterator[list[Any]]:
        """The items (``keys``: the keys) of a store scan, as pages read in short
        read transactions (64 items first, then up to 1024 items, so that a page
        decoded at once stays in the CPU cache, or 4096 keys), each continuing
        after the last key."""
        left = limit
        size = 64
        read = cursor_keys if keys else _cursor_scan
        while left is None or left > 0:
            want = size if left is None else min(size, left)
            page = self._page(start, stop, reverse, want, read)
            if page:
                yield page
            if len(page) < want:
                return
            if left is not None:
                left -= len(page)
            last = page[-1] if keys else page[-1][0]
            if reverse:
                stop = last
            else:
                start = last + b"\x00"
            size = min(size * 4, 4096 if keys else 1024)

    def _owned_scan(
        self,
        txn: Any,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        end: bool,
        db: Any = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Scan ``txn`` (database ``db``, default: the transaction's), translating
        errors; ``end``: abort ``txn`` when done."""
        try:
            yield from _cursor_scan(txn, start, stop, reverse, limit, db)
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        finally:
            if end:
                txn.abort()

    def _scan_raw(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[tuple[bytes, bytes]]:
        """The store's ``fast_scan``: pages read in short read transactions, so a
        scan never holds one open between pages (growing the map never ends it)."""
        self._live()
        return chain.from_iterable(self._pages(start, stop, reverse, limit))

    def _pages_raw(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        """The store's ``fast_pages``: the pages of :meth:`_scan_raw` themselves."""
        self._live()
        return self._pages(start, stop, reverse, limit)

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
                    return txn.get(key)  # type: ignore[no-any-return]
                except lmdb.Error:
                    pass
                finally:
                    txn.abort()
        return self._get_retrying(key)

    def _get_retrying(self, key: bytes) -> bytes | None:
        for _ in range(_RETRIES):
            txn = self._read_begin()
            try:
                return txn.get(key)  # type: ignore[no-any-return]
            except lmdb.Error as exc:
                if self._env is None or "closed/deleted/dropped" not in str(exc):
                    raise self.translate(exc, key) from exc
            finally:
                txn.abort()
        raise StoreError(f"the map of {self.url} kept growing under this read ({_RETRIES} attempts)")

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._scan_raw(start, stop, reverse, limit)

    def scan_keys(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[bytes]:
        """Keys only (no value copied), in pages of short read transactions as :meth:`scan`."""
        self._live()
        return chain.from_iterable(self._pages(start, stop, reverse, limit, keys=True))

    def count(self, start: bytes = b"", stop: bytes | None = None) -> int:
        """Keys of ``[start, stop)`` read without values by one cursor of ONE short
        read transaction, so that the count is of one state of the store (a batch
        that another thread or process commits meanwhile is counted whole or not at
        all); no Python code per key. Read again after the map grew meanwhile."""
        if stop is not None and stop <= start:
            return 0
        counted: list[int] = self._page(start, stop, False, 0, _count_keys)
        return counted[0]

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One cursor of one read transaction (held like a :meth:`snapshot` until
        the seeker is released)."""
        snap = self.snapshot()
        try:
            return CursorSeeker(snap._txn.cursor(), stop, self.translate, snap.release)
        except lmdb.Error as exc:
            snap.release()
            raise self.translate(exc) from exc

    def put(self, key: bytes, value: bytes) -> None:
        self._check(key)
        self._write(lambda txn: txn.put(key, value))

    def delete(self, key: bytes) -> None:
        self._check(key)
        self._write(lambda txn: txn.delete(key))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._write(lambda txn: _delete_range(txn, start, stop))

    def write(self, ops: Iterable[Op]) -> None:
        batch = list(ops)
        self._check_all(map(_first, batch))

        def body(txn: Any) -> None:
            put, delete = txn.put, txn.delete
            for key, value in batch:
                if value is None:
                    delete(key)
                else:
                    put(key, value)

        self._write(body)

    def snapshot(self) -> _LMDBSnapshot:
        """A read transaction held until the snapshot ends; growing the map (in
        this process) waits for it."""
        self._view_opened()
        try:
            return _LMDBSnapshot(self, self._read_begin())
        except BaseException:
            self._view_closed()
            raise

    def transaction(self) -> _LMDBTransaction:
        return _LMDBTransaction(self)

    def join(self, view: ReadView) -> ReadView:
        """A view of this store's database inside ``view``, a snapshot or transaction
        of a store of the same environment: one LMDB transaction for both, so reads
        are consistent across the databases and writes commit together. The view
        ends with ``view``. Raises :class:`StoreError` for a view of another
        environment. Cost: one object, no LMDB call."""
        owner = getattr(view, "_store", None)
        if not isinstance(owner, LMDBStore) or owner._shared is not self._shared:
            raise StoreError(f"cannot join {self.url} to {view!r}: it is not a view of the same environment")
        if isinstance(view, _LMDBTransaction):
            return _JoinedTransaction(self, view)
        if isinstance(view, _JoinedTransaction):
            return _JoinedTransaction(self, view._outer)
        if isinstance(view, _LMDBSnapshot):
            return _LMDBSnapshot(self, view._txn, owned=False)
        raise StoreError(f"cannot join {self.url} to {view!r}: not an LMDB snapshot or transaction")

    def databases(self) -> list[str]:
        """The names of the environment's named databases, sorted by their bytes
        (the keys of the unnamed database that LMDB marks as databases). Opening
        each one to tell takes one of the ``max_dbs`` slots (an environment opened
        with ``max_dbs=0`` lists none; running out of slots raises
        :class:`StoreError`). Cost: one scan of the unnamed database."""
        shared = self._shared
        if shared.max_dbs < 1:
            return []
        names: list[str] = []
        unnamed = self._open_db("", create=False)
        try:
            with self._read_begin() as txn:
                candidates = [k for k, v in txn.cursor(db=unnamed) if len(v) == 48]
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        for raw in candidates:
            try:
                name = raw.decode("utf-8")
                self._open_db(name, create=False)
            except (UnicodeDecodeError, _lmdb_env.NotADatabase):
                continue  # a 48-byte value of a plain key, or a name that is not UTF-8
            names.append(name)
        return names

    def close(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            _lmdb_env.release(self._shared)

    def __repr__(self) -> str:
        return f"LMDBStore({self._path!r})"


class _LMDBSnapshot(TxnKeys, Releasable, ReadView):
    """A read transaction: the store as it was when the snapshot began. With
    ``owned=False`` it reads the store's database through another store's snapshot
    of the same environment (:meth:`LMDBStore.join`) and ends with that one."""

    __slots__ = ("_db", "_open", "_store", "_txn", "fast_get", "fast_scan")

    def __init__(self, store: LMDBStore, txn: Any, *, owned: bool = True) -> None:
        self._store = store
        self._open = owned  # a joined snapshot's transaction is its owner's to end
        self._txn = txn
        self._db = None if owned else store._db  # owned: the transaction's default database
        # joined: a cursor of the database (its get takes no db= keyword to parse)
        self.fast_get = txn.get if owned else txn.cursor(db=store._db).get
        self.fast_scan = partial(_cursor_scan, txn, db=self._db)  # its errors raw

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._store.translate(exc, key)

    def _keys_txn(self) -> tuple[Any, Any]:
        return self._txn, self._db

    def get(self, key: bytes) -> bytes | None:
        try:
            return self._txn.get(key, db=self._db)  # type: ignore[no-any-return]
        except lmdb.Error as exc:
            raise self._store.translate(exc, key) from exc

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._store._owned_scan(self._txn, start, stop, reverse, limit, False, self._db)

    def release(self) -> None:
        if self._open:
            self._open = False
            self._txn.abort()
            self._store._view_closed()


class _LMDBTransaction(TxnKeys, WriteView):
    """One LMDB write transaction; commits on a clean exit, aborts on an exception.

    When it begins with at least :data:`FAST_HEADROOM` of free map space (always,
    with the default map size) it writes straight to LMDB: ``get`` and ``put`` are
    one Python call around py-lmdb's bound ``txn.get``/``txn.put``, and
    ``fast_get``/``fast_put``/``fast_scan`` are py-lmdb's own callables (no Python
    frame per call); filling the map then raises
    :class:`~keyspace.errors.StoreError`. With less free space it logs its writes
    instead (one list append per write, no fast paths), so that a full map can be
    grown and the transaction replayed on a fresh LMDB transaction.
    """

    __slots__ = (
        "_delete",
        "_failed",
        "_get",
        "_joined",
        "_log",
        "_put",
        "_store",
        "_txn",
        "fast_get",
        "fast_put",
        "fast_scan",
    )

    def __init__(self, store: LMDBStore) -> None:
        self._store = store
        self._txn: Any = None
        self._log: list[_Logged] | None = None
        self._joined: _JoinedTransaction | None = None  # set when it joins another's transaction
        self._failed = False  # a joined block raised: abort at the end
        self.fast_get = self.fast_put = self.fast_scan = None

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._store.translate(exc, key)

    def _keys_txn(self) -> tuple[Any, Any]:
        return self._txn, None

    def _begin(self) -> None:
        store = self._store
        for _attempt in range(_RETRIES):
            try:
                txn = store._live().begin(write=True, db=store._db)
                break
            except lmdb.MapResizedError:
                store._resize(0)  # another process grew the map (we hold _wlock)
            except lmdb.Error as exc:
                raise store.translate(exc) from exc
        else:
            raise StoreError(f"the map of {store.url} kept growing under this transaction ({_RETRIES} tries)")
        self._txn = txn
        self._get, self._put, self._delete = txn.get, txn.put, txn.delete

    def _recover(self, exc: lmdb.Error, key: bytes | None) -> None:
        """Handle a failed write: with a replay log, a full map is grown and the log
        replayed; anything else is raised translated (the transaction stays usable
        for reads)."""
        if self._log is None or not isinstance(exc, lmdb.MapFullError):
            raise self._store.translate(exc, key) from exc
        for _attempt in range(_RETRIES):
            self._txn.abort()
            self._store._grow()
            self._begin()
            try:
                self._replay(self._log)
                return
            except lmdb.MapFullError:
                continue
        raise StoreError(f"the map of {self._store.url} stayed full while growing ({_RETRIES} attempts)")

    def _replay(self, log: list[_Logged]) -> None:
        txn = self._txn
        for op, key, value, db in log:
            self._run(txn, op, key, value, db)

    @staticmethod
    def _run(txn: Any, op: int, key: bytes, value: bytes | None, db: Any) -> None:
        if op == _PUT:
            txn.put(key, value, db=db)
        elif op == _DELETE:
            txn.delete(key, db=db)
        else:
            _delete_range(txn, key, value, db)

    def _apply(self, op: int, key: bytes, value: bytes | None, db: Any) -> None:
        """One write to database ``db`` of this transaction's environment, made for a
        joined store: logged, grown and replayed like this transaction's own."""
        try:
            self._run(self._txn, op, key, value, db)
        except lmdb.Error as exc:
            self._recover(exc, None if op == _RANGE else key)
            self._run(self._txn, op, key, value, db)
        if self._log is not None:
            self._log.append((op, key, value, db))

    def get(self, key: bytes) -> bytes | None:
        try:
            return self._get(key)  # type: ignore[no-any-return]
        except lmdb.Error as exc:
            raise self._store.translate(exc, key) from exc

    def put(self, key: bytes, value: bytes) -> None:
        try:
            self._put(key, value)
        except lmdb.Error as exc:
            self._recover(exc, key)
            self._put(key, value)  # never full right after growing
        if self._log is not None:
            self._log.append((_PUT, key, value, None))

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """One ``cursor.putmulti`` (a loop of :meth:`put` with a replay log). Every
        key is checked first, so a bad one leaves none of the pairs written."""
        pairs = items if isinstance(items, list | tuple) else list(items)
        self._store._check_all(map(_first, pairs))
        if self._log is not None:
            return super().put_many(pairs)
        try:
            self._txn.cursor().putmulti(pairs)
            return len(pairs)
        except lmdb.Error as exc:
            store = self._store
            bad = next((k for k, _ in pairs if store._bad_key(k) is not None), None)
            raise store.translate(exc, bad) from exc

    def delete(self, key: bytes) -> None:
        try:
            self._delete(key)
        except lmdb.Error as exc:
            self._recover(exc, key)
            self._delete(key)
        if self._log is not None:
            self._log.append((_DELETE, key, None, None))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        try:
            _delete_range(self._txn, start, stop)
        except lmdb.Error as exc:
            self._recover(exc, None)
            _delete_range(self._txn, start, stop)
        if self._log is not None:
            self._log.append((_RANGE, start, stop, None))

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._store._owned_scan(self._txn, start, stop, reverse, limit, False)

    def __enter__(self) -> WriteView:
        store = self._store
        shared = store._shared
        if shared.writer == threading.get_ident():
            outer = shared.joint
            if outer is None or outer._store is store:
                raise StoreError(f"a transaction on {store.url} is already open in this thread")
            # another database of this environment: join its transaction
            self._joined = _JoinedTransaction(store, outer)
            return self._joined
        store._shared.wlock.acquire()
        try:
            free = store._headroom()
            self._begin()
        except BaseException:
            store._shared.wlock.release()
            raise
        shared.writer, shared.joint = threading.get_ident(), self
        if free >= FAST_HEADROOM:
            txn = self._txn
            self.fast_get, self.fast_put = txn.get, txn.put
            self.fast_scan = partial(_cursor_scan, txn)  # its errors raw
        else:
            self._log = []
            self.fast_get = self.fast_put = self.fast_scan = None
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        joined = self._joined
        if joined is not None:  # the joined transaction commits or aborts it all
            self._joined = None
            if exc_type is not None:
                joined._outer._failed = True
            return
        store = self._store
        store._shared.writer = store._shared.joint = None
        try:
            if exc_type is not None or self._failed:
                self._txn.abort()
                if exc_type is None:
                    raise StoreError(
                        f"a transaction on another database joined to this transaction on {store.url} "
                        "raised, so the joint transaction was discarded (nothing of it was written)"
                    )
                return
            for _attempt in range(_RETRIES):
                try:
                    self._txn.commit()
                    return
                except lmdb.Error as error:
                    self._recover(error, None)  # a full map at commit: grow, replay, commit again
            raise StoreError(f"the commit to {store.url} kept finding the map full ({_RETRIES} attempts)")
        finally:
            store._shared.wlock.release()


class _JoinedTransaction(TxnKeys, WriteView):
    """A store's database inside the write transaction of another database of the
    same environment (``outer``): reads see the joint transaction, writes go into it
    (logged, grown and replayed by it) and commit or abort with it. Fast paths (a
    cursor of the database) only where the outer transaction has them: one with a
    replay log may replace its LMDB transaction when the map grows."""

    __slots__ = ("_db", "_outer", "_store", "fast_get", "fast_put", "fast_scan")

    def __init__(self, store: LMDBStore, outer: _LMDBTransaction) -> None:
        self._store = store
        self._outer = outer
        self._db = store._db
        self.fast_get = self.fast_put = self.fast_scan = None
        if outer.fast_put is not None:  # no replay log: its LMDB transaction stays for good
            txn = outer._txn
            cursor = txn.cursor(db=self._db)  # get/put of the database with no db= keyword
            self.fast_get, self.fast_put = cursor.get, cursor.put
            self.fast_scan = partial(_cursor_scan, txn, db=self._db)  # its errors raw

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._store.translate(exc, key)

    def _keys_txn(self) -> tuple[Any, Any]:
        return self._outer._txn, self._db

    def get(self, key: bytes) -> bytes | None:
        try:
            return self._outer._txn.get(key, db=self._db)  # type: ignore[no-any-return]
        except lmdb.Error as exc:
            raise self._store.translate(exc, key) from exc

    def put(self, key: bytes, value: bytes) -> None:
        self._store._check(key)
        self._outer._apply(_PUT, key, value, self._db)

    def delete(self, key: bytes) -> None:
        self._outer._apply(_DELETE, key, None, self._db)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._outer._apply(_RANGE, start, stop, self._db)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._store._owned_scan(self._outer._txn, start, stop, reverse, limit, False, self._db)


def _count_keys(txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> list[int]:
    """``[n]``, the number of keys of ``[start, stop)`` in ``txn`` (for
    :meth:`LMDBStore._page`): keys read without values by one cursor in pages of
    64, then four times more up to 4096, each cut at ``stop`` by one bisection, so
    no Python code runs per key."""
    keys = cursor_keys(txn, start, None, False, None)
    total, size = 0, 64
    while True:
        page = list(islice(keys, size))
        if stop is not None and page and page[-1] >= stop:
            return [total + bisect_left(page, stop)]
        total += len(page)
        if len(page) < size:
            return [total]
        size = min(size * 4, 4096)
