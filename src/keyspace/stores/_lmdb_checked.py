"""Reads of an LMDB store made only where another database of its environment
holds the expected bytes at a key, in the same read transaction (the engine's
side of :class:`~keyspace.stores._checked.CheckedReads`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import lmdb

from ._checked import CheckFailed

if TYPE_CHECKING:
    from .lmdb import LMDBStore

__all__ = ["LMDBCheckedReads"]


class LMDBCheckedReads:
    """The reads of ``store`` (made by :meth:`LMDBStore.checked_reads`), each in a
    read transaction that also reads ``check_key`` of the database ``check_db``
    of the same environment and raises :class:`CheckFailed` where it does not
    hold ``expected``. A check that held is remembered for the state it was read
    in (LMDB's transaction id: two read transactions of one id read one state),
    so reads of that state skip it. Engine trouble on a point read (the map being
    grown, an LMDB error) is :class:`CheckFailed` too: the caller's snapshot then
    says what went wrong.

    Cost: a point read is the store's own (one read transaction, one B-tree
    lookup) plus one id comparison; a scan reads pages of short read
    transactions as the store's scans do, with one id comparison a page; the
    check's own lookup once per state of the environment."""

    __slots__ = ("_check_db", "_check_key", "_expected", "_state", "_store")

    def __init__(self, store: LMDBStore, check_db: Any, check_key: bytes, expected: bytes) -> None:
        self._store = store
        self._check_db = check_db
        self._check_key = check_key
        self._expected = expected
        self._state: int | None = None  # the id of the last state the check held in

    def _hold(self, txn: Any) -> None:
        """Raise :class:`CheckFailed` unless the check holds in ``txn``."""
        state = txn.id()
        if state != self._state:
            if txn.get(self._check_key, db=self._check_db) != self._expected:
                raise CheckFailed
            self._state = state

    def get(self, key: bytes) -> bytes | None:
        store = self._store
        env = store._env
        if env is None or store._shared.resizing:
            raise CheckFailed
        try:
            txn = env.begin(db=store._db) if store.db_name else env.begin()
        except lmdb.Error:
            raise CheckFailed from None
        try:
            if txn.id() != self._state:
                self._hold(txn)
            value: bytes | None = txn.get(key)
            records = store._records  # the unnamed database: a database's record is no data
            if value is not None and records is not None and records.is_record(key, value):
                return None
            return value
        except lmdb.Error:
            raise CheckFailed from None
        finally:
            txn.abort()

    def pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, keys: bool = False
    ) -> Iterator[list[Any]]:
        """The pages of the store's scan (``keys``: of its keys-only scan), each
        read where the check holds; :class:`CheckFailed` before a page read
        where it does not (the pages before it stand: each was read in a state
        where it held)."""
        store = self._store
        store._live()
        return store._pages(start, stop, reverse, limit, keys, self._hold)

    def count(self, start: bytes, stop: bytes | None) -> int:
        """The store's :meth:`~LMDBStore.count`, in a transaction where the check holds."""
        return self._store._count(start, stop, self._hold)
