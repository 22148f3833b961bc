"""Reads of an LMDB store, each in a read transaction whose state a caller's check
has seen (the engine's side of :class:`~keyspace.stores._watched.WatchedReads`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import lmdb

from ...errors import StoreClosed
from .._base import ReadView, byte_after
from ._cursor import SHORT_SCAN_MOST, cursor_take
from ._records import RECORD_SIZE, checked_read
from ._snapshot import LMDBSnapshot

if TYPE_CHECKING:
    from ._parts import LMDBStoreParts

__all__ = ["LMDBWatchedReads"]


class LMDBWatchedReads:
    """The reads of ``store`` (made by :meth:`LMDBStore.watched_reads`), each in a
    read transaction on which ``check`` (given a view of that transaction) has
    run: once per state of the environment, told apart by LMDB's transaction id
    (two read transactions of one id read one state, and every commit moves it).
    ``check`` raises to refuse the read.

    Cost: a point read is the store's own (one read transaction, one B-tree
    lookup) plus one id comparison; ``check`` once per commit of the
    environment that a read comes after."""

    __slots__ = ("_check", "_state", "_store", "get")

    def __init__(self, store: LMDBStoreParts, check: Callable[[ReadView], object]) -> None:
        self._store = store
        self._check = check
        self._state: int | None = None  # the id of the last state the check ran in
        self.get: Callable[[bytes], bytes | None] = checked_read(store._point_read, self._hold, self.get_py)
        """:meth:`get_py`, in one C call where the store has its point read in C."""

    def _hold(self, txn: Any) -> bool:
        """Run the check in ``txn`` unless it ran in that state already (``True``:
        the check raises to refuse the read)."""
        state = txn.id()
        if state != self._state:
            self._check(LMDBSnapshot(self._store, txn, True, 0))  # a view only: ``txn`` is ended by its owner
            self._state = state
        return True

    def hold(self) -> None:
        """Run the check in the store's current state unless it ran there already
        (one short read transaction: the check, then a count of the keys below
        ``00``, one seek)."""
        self._store._count(b"", b"\x00", self._hold)  # the check, then one seek

    def _fresh(self) -> Any:
        """A read transaction of the store that the check has seen (the caller
        aborts it), or ``None`` where the one-transaction route is closed: the map
        is growing, or LMDB refuses a transaction or the check's reads (the map
        grew under them), and the caller's general route says what went wrong
        or reads again. Cost: ``env.begin()`` and an id comparison."""
        store = self._store
        env = store._env
        if env is None or store._shared.resizing:
            return None
        try:
            txn = env.begin(db=store._db) if store.db_name else env.begin()
        except lmdb.Error:
            return None
        return self._seen(txn)

    def _seen(self, txn: Any) -> Any:
        """``txn``, once the check has seen its state (run now where it has not), or
        ``None`` with ``txn`` aborted where LMDB or the check's reads refuse it
        (see :meth:`_fresh`)."""
        try:
            if txn.id() != self._state:
                self._hold(txn)
        except (lmdb.Error, StoreClosed):
            txn.abort()
            return None
        except BaseException:
            txn.abort()
            raise
        return txn

    def get_py(self, key: bytes) -> bytes | None:
        """The value of ``key`` read in a transaction the check has seen; the
        reference of the C read (:attr:`get`), and its route where the check
        refuses or py-lmdb raises."""
        store = self._store
        env = store._env
        txn: Any = None
        if env is None or store.db_name or store._shared.resizing:
            txn = self._fresh()
        else:  # :meth:`_fresh` of the unnamed database in this frame: a point read is one frame
            try:
                txn = env.begin()
            except lmdb.Error:
                pass  # the snapshot route below says what went wrong, or reads again
            else:
                if txn.id() != self._state:
                    txn = self._seen(txn)
        if txn is not None:
            try:
                value: bytes | None = txn.get(key)
                records = store._records  # the unnamed database: a database's record is no data
                if (
                    value is None
                    or records is None
                    or len(value) != RECORD_SIZE
                    or not records.is_record(key, value)
                ):
                    return value
                return None
            except (lmdb.Error, StoreClosed):
                pass  # the snapshot route waits for a growth and reads again
            finally:
                txn.abort()
        with store.snapshot() as snap:
            self._check(snap)
            return snap.get(key)

    def pages(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        cut: int = 0,
    ) -> Iterator[list[Any]]:
        """The pages of the store's scan (``keys``: of its keys-only scan; items:
        each key without its first ``cut`` bytes), each read in a transaction the
        check has seen; a scan of at most ``SHORT_SCAN_MOST`` items, one page
        read in one frame (as the store's ``read_pages`` reads it)."""
        store = self._store
        store._live()
        txn = self._fresh() if not keys and limit is not None and 0 < limit <= SHORT_SCAN_MOST else None
        if txn is not None and limit is not None:  # a short scan: one page in one read transaction
            try:
                page = cursor_take(txn, None, start, stop, limit, reverse, cut, store._is_record, RECORD_SIZE)
                return iter((page,) if page else ())
            except (lmdb.Error, StoreClosed):
                pass  # the map grew under the reads: the paged route reads again
            finally:
                txn.abort()
        return store._pages(start, stop, reverse, limit, keys, self._hold, cut)

    def count(self, start: bytes, stop: bytes | None, without: tuple[int, int] | None = None) -> int:
        """The store's :meth:`~LMDBStore.count`, in a transaction the check has seen."""
        return self._store._count(start, stop, self._hold, None if without is None else byte_after(*without))
