"""Reads of an LMDB store made only where another database of its environment
holds the expected bytes at a key, in the same read transaction (the engine's
side of :class:`~keyspace.stores._checked.CheckedReads`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import lmdb

from .._base import byte_after
from .._checked import CheckFailed
from ._records import RECORD_SIZE, checked_read

if TYPE_CHECKING:
    from ._parts import LMDBStoreParts

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

    __slots__ = ("_check_db", "_check_key", "_expected", "_state", "_store", "get", "otherwise")

    def __init__(self, store: LMDBStoreParts, check_db: Any, check_key: bytes, expected: bytes) -> None:
        self._store = store
        self._check_db = check_db
        self._check_key = check_key
        self._expected = expected
        self._state: int | None = None  # the id of the last state the check held in
        # set by the caller: where the check fails, get answers otherwise(key) (the
        # caller's snapshot route) instead of raising, so it can be the view's get
        self.otherwise: Callable[[bytes], bytes | None] | None = None
        self.get: Callable[[bytes], bytes | None] = checked_read(store._point_read, self._holds, self.get_py)
        """:meth:`get_py`, in one C call where the store has its point read in C."""

    def _holds(self, txn: Any) -> bool:
        """Whether the check holds in ``txn`` (remembered for its state where it does)."""
        if txn.get(self._check_key, db=self._check_db) != self._expected:
            return False
        self._state = txn.id()
        return True

    def _hold(self, txn: Any) -> None:
        """Raise :class:`CheckFailed` unless the check holds in ``txn``."""
        if txn.id() != self._state and not self._holds(txn):
            raise CheckFailed

    def get_py(self, key: bytes) -> bytes | None:
        """The value of ``key`` read in a transaction where the check holds;
        where it does not, or the engine cannot answer, ``otherwise(key)`` where
        it is set, else :class:`CheckFailed`. The reference of the C read
        (:attr:`get`), and its route where the check fails or py-lmdb raises."""
        store = self._store
        env = store._env
        if env is not None and not store._shared.resizing:
            try:
                txn = env.begin(db=store._db) if store.db_name else env.begin()
            except lmdb.Error:
                pass  # the caller's snapshot says what went wrong
            else:
                try:
                    if txn.id() == self._state or self._holds(txn):
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
                except lmdb.Error:
                    pass
                finally:
                    txn.abort()
        otherwise = self.otherwise
        if otherwise is None:
            raise CheckFailed
        return otherwise(key)

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
        each key without its first ``cut`` bytes), each read where the check
        holds; :class:`CheckFailed` before a page read where it does not (the
        pages before it stand: each was read in a state where it held)."""
        store = self._store
        store._live()
        return store._pages(start, stop, reverse, limit, keys, self._hold, cut)

    def count(self, start: bytes, stop: bytes | None, without: tuple[int, int] | None = None) -> int:
        """The store's :meth:`~LMDBStore.count`, in a transaction where the check holds."""
        return self._store._count(start, stop, self._hold, None if without is None else byte_after(*without))
