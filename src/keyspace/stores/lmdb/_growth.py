"""The LMDB map of a store: its growth, and the transactions that live through it.

The map is a reservation of address space that doubles when it fills. Growing it
(``set_mapsize``) needs no write transaction open in this process and ends every
read transaction of the environment, so :class:`MapGrowth` (a base of
:class:`~keyspace.stores.lmdb.LMDBStore`) keeps, with the environment's shared
state (:mod:`._env`): the growth itself, waiting (at most
:data:`GROWTH_WAIT` seconds) for the snapshots of other threads; the adoption of a
map another process grew (``MDB_MAP_RESIZED``); the count of open snapshots; and
the LMDB transactions that retry across both (a read, a one-shot write that grows
a full map and runs again, the free space a ``transaction()`` begins with).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from time import monotonic
from typing import TYPE_CHECKING, Any

import lmdb

from ...errors import KeyspaceError, StoreClosed, StoreError

if TYPE_CHECKING:
    from ._env import SharedEnv

__all__ = ["FAST_HEADROOM", "GROWTH_WAIT", "MAP_WRITE_RATE", "RETRIES", "MapGrowth", "room_for"]

FAST_HEADROOM = 1 << 30
"""Free map space (bytes) a ``transaction()`` needs when it begins to write without
a replay log (always the case with the default map size)."""

MAP_WRITE_RATE = 256 << 30
"""An upper bound of the bytes per second by which all the writers of one
environment together can take up its map: 256 GiB/s, far above what LMDB
writes on any machine (one writer at a time, every page it writes copied in
memory). How long a measured free space is trusted follows from it
(:meth:`MapGrowth._roomy`)."""

GROWTH_WAIT = 10.0
"""Seconds growing the map waits for other threads' snapshots to end before it
ends them."""

RETRIES = 64
"""Attempts of a read whose map grew (in this process or another) meanwhile."""


def room_for(pending: int, page: int) -> int:
    """Map bytes to leave free for a write of ``pending`` bytes of keys and values
    on pages of ``page`` bytes: twice the data (a value over a page takes whole
    overflow pages, and a written page is copied, not changed in place) and 64
    pages for the B-tree pages the write copies and the free-page list."""
    return 2 * pending + 64 * page


class MapGrowth:
    """The map growth and retrying transactions of an LMDB store (a base class of
    :class:`~keyspace.stores.lmdb.LMDBStore`, which sets the attributes below)."""

    url: str
    db_name: str
    _env: Any
    _db: Any
    _shared: SharedEnv
    _grown: int
    _page_size = 0
    """LMDB's page size in the environment (read at the first :meth:`_headroom`)."""

    if TYPE_CHECKING:

        def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError: ...

    def _live(self) -> Any:
        env = self._env
        if env is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return env

    def _grow(self, pending: int = 0) -> None:
        """Double the map, and again until it holds its pages in use and room for
        ``pending`` more bytes of data (a write that found it full: its keys and
        values), so that one large value needs one growth, not one a doubling.
        Call holding ``_wlock`` with no write transaction open."""
        env = self._live()
        try:
            size = int(env.info()["map_size"])
            need = self._used(env) + room_for(pending, int(env.stat()["psize"]))
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        size *= 2
        while size < need:
            size *= 2
        self._resize(size)
        self._grown += 1

    @staticmethod
    def _used(env: Any) -> int:
        """Bytes of the map in use: its pages up to the last one written."""
        return (int(env.info()["last_pgno"]) + 1) * int(env.stat()["psize"])

    def _resize(self, size: int) -> None:
        """``set_mapsize(size)`` (0: adopt the size another process gave the map),
        once the snapshots of other threads have ended (at most
        :data:`GROWTH_WAIT` seconds; a snapshot still open then is ended, and its next
        use raises :class:`~keyspace.errors.StoreClosed`). New snapshots and reads
        wait meanwhile. Call holding ``_wlock`` with no write transaction open."""
        env = self._live()
        shared = self._shared
        views, me = shared.views, threading.get_ident()
        with shared.cond:
            shared.resizing = True
            try:
                shared.cond.wait_for(lambda: views.count(me) == len(views), timeout=GROWTH_WAIT)
                env.set_mapsize(size)
            except lmdb.Error as exc:
                raise self.translate(exc) from exc
            finally:
                shared.resizing = False
                shared.cond.notify_all()

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

    def _view_opened(self) -> int:
        """Count a snapshot opening, once no growth is under way (bounded wait),
        and return what :meth:`_view_closed` takes to count it ending (the
        opening thread, whose own snapshots a growth it makes does not wait for).
        Cost: one ``list.append`` and one attribute test; no lock, unless a growth
        is under way. The count is made before ``resizing`` is read, and a growth
        sets ``resizing`` before it reads the count, so one of them sees the
        other: a growth never begins under a snapshot it did not count."""
        shared = self._shared
        me = threading.get_ident()
        shared.views.append(me)
        if shared.resizing:
            self._view_waits(me)
        return me

    def _view_waits(self, me: int) -> None:
        """A snapshot of thread ``me``, counted while a growth was under way: it
        steps back (the growth does not wait for it) until the growth ends."""
        shared = self._shared
        for _ in range(RETRIES):
            self._view_closed(me)
            self._settled()
            shared.views.append(me)
            if not shared.resizing:
                return
        self._view_closed(me)
        raise StoreError(f"the map of {self.url} kept growing while a snapshot began ({RETRIES} attempts)")

    def _view_closed(self, opener: int) -> None:
        """Count a snapshot ending (``opener``: what :meth:`_view_opened`
        returned); a growth waiting for snapshots to end is woken."""
        shared = self._shared
        shared.views.remove(opener)
        if shared.resizing:
            with shared.cond:
                shared.cond.notify_all()

    def _open_db(self, name: str, *, create: bool) -> Any:
        """The handle of database ``name`` (``""``: the unnamed one). Opening one
        begins an LMDB transaction, so a map another process grew since this
        environment was mapped is adopted first and the open retried; creating
        one writes its record, so a full map is grown first and the open retried
        (the open writes nothing it read: running it again is the same open)."""
        for _ in range(RETRIES):
            try:
                return self._shared.open_db(name, create=create, url=self.url)
            except lmdb.MapResizedError:
                self._adopt()
            except lmdb.MapFullError as exc:
                if self._shared.writer == threading.get_ident():
                    raise StoreError(
                        f"creating database {name!r} of {self.url} found the map full, and it cannot "
                        "grow while this thread's transaction is open; create the database before "
                        "the transaction begins"
                    ) from exc
                with self._shared.wlock:
                    self._grow()
            except lmdb.Error as exc:
                raise self.translate(exc) from exc
        raise StoreError(f"the map of {self.url} kept growing while it was opened ({RETRIES} attempts)")

    def _read_begin(self, attempts: int = RETRIES) -> Any:
        """A read transaction; a map another process grew is adopted first (at
        most ``attempts`` times). Cost: ``env.begin()`` and two attribute tests,
        unless the map is growing."""
        if self._shared.resizing:
            self._settled()
        env = self._env
        if env is None:
            env = self._live()  # raises StoreClosed
        try:
            # py-lmdb parses keyword arguments slowly (about 160 ns): the unnamed
            # database is begin()'s default
            return env.begin(db=self._db) if self.db_name else env.begin()
        except lmdb.MapResizedError:
            if attempts <= 1:
                raise StoreError(
                    f"the map of {self.url} kept growing under this read ({RETRIES} attempts)"
                ) from None
            self._adopt()
            return self._read_begin(attempts - 1)
        except lmdb.Error as exc:
            raise self.translate(exc) from exc

    def _roomy(self) -> bool:
        """Whether a write transaction beginning now has at least
        :data:`FAST_HEADROOM` bytes of the map free, the map doubled first when
        more than half of it is used (:meth:`_headroom`). LMDB is asked only
        when its last answer may be out of date: an answer that left ``m``
        bytes to spare before either limit holds for ``m /`` :data:`MAP_WRITE_RATE`
        seconds, since no writer of the environment can take up the map faster
        (about two seconds with the default map of 1 TiB; at once on a small
        map). A map another process grew only has more room. Call holding
        ``_wlock`` with no write transaction of this store open. Cost: a clock
        read and two attribute reads, else :meth:`_headroom`'s."""
        shared = self._shared
        if shared.roomy_for == FAST_HEADROOM and monotonic() < shared.roomy_until:
            return True
        return self._headroom() >= FAST_HEADROOM

    def _headroom(self) -> int:
        """Free bytes in the map, after doubling it when more than half is used;
        when they exceed :data:`FAST_HEADROOM`, how long that answer holds is
        kept for :meth:`_roomy`. Call with no write transaction of this store
        open. Cost: one ``env.info()``, the page size read once per store."""
        env = self._live()
        shared = self._shared
        try:
            page = self._page_size
            if not page:
                page = self._page_size = int(env.stat()["psize"])
            for _attempt in range(RETRIES):
                info = env.info()
                size = int(info["map_size"])
                used = (int(info["last_pgno"]) + 1) * page
                if used <= size // 2:
                    spare = min(size - used - FAST_HEADROOM, size // 2 - used)
                    shared.roomy_for = FAST_HEADROOM
                    shared.roomy_until = monotonic() + spare / MAP_WRITE_RATE if spare > 0 else 0.0
                    return size - used
                self._grow()
        except lmdb.Error as exc:
            raise self.translate(exc) from exc
        raise StoreError(f"the map of {self.url} could not be grown to twice its use ({RETRIES} attempts)")

    def _write(self, body: Callable[[Any], None], pending: Callable[[], int] | None = None) -> None:
        """Run ``body(txn)`` in one write transaction; a full map grows (to hold at
        least ``pending()`` more bytes, the keys and values ``body`` writes, asked
        only then) and the body runs again on a new transaction. ``body`` writes what it was given and
        reads nothing, so running it again after another writer committed (the
        map grows with LMDB's writer lock released) is the same write."""
        env = self._live()
        if self._shared.writer == threading.get_ident():
            raise StoreError(
                f"a transaction on {self.url} is open in this thread; write through it "
                "(writing through the store would wait for it forever)"
            )
        with self._shared.wlock:
            for _attempt in range(RETRIES):
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
                    self._grow(0 if pending is None else pending())
                except lmdb.Error as exc:
                    txn.abort()
                    raise self.translate(exc) from exc
                except BaseException:
                    txn.abort()
                    raise
            raise StoreError(f"a write to {self.url} kept finding the map full or resized ({RETRIES} tries)")
