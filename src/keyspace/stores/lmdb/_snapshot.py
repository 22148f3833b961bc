"""The read view of an LMDB store: a snapshot, one read transaction held open.

:class:`LMDBSnapshot` is what :meth:`LMDBStore.snapshot` gives (and, unowned, what
:meth:`LMDBStore.join` gives for another database's snapshot); while it is open,
growing the map in this process waits for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import KeyspaceError
from .._base import ReadView, Releasable
from .._translated import GetSlot, translated
from ._keys import TxnReads
from ._records import getter

if TYPE_CHECKING:
    from ._parts import LMDBStoreParts

__all__ = ["LMDBSnapshot"]


class LMDBSnapshot(GetSlot, TxnReads, Releasable, ReadView):
    """A read transaction: the store as it was when the snapshot began. With
    ``owned=False`` it reads the store's database through another store's snapshot
    of the same environment (:meth:`LMDBStore.join`) and ends with that one. Of
    the unnamed database, its reads leave out LMDB's records of named databases
    (its get is then a Python function around the engine's get). Its ``get`` is
    the engine's, :func:`~keyspace.stores.translated` (one C call more)."""

    __slots__ = ("_db", "_open", "_opener", "_store", "_txn")
    _fixed_state = True  # a read transaction: one state for good

    def __init__(self, store: LMDBStoreParts, txn: Any, owned: bool = True, opener: int = 0) -> None:
        # positional arguments: a snapshot per request makes one of these each time
        self._store = store
        self._open = owned  # a joined snapshot's transaction is its owner's to end
        self._opener = opener  # what the store counted it as (see LMDBStore.snapshot)
        self._txn = txn
        self._db = None if owned else store._db  # owned: the transaction's default database
        # joined: a cursor of the database (its get takes no db= keyword to parse)
        get: Callable[[bytes], bytes | None] = txn.get if owned else txn.cursor(db=store._db).get
        if store._records is not None:
            get = getter(store._records, get)
        self.get = translated(get, store.translate)

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._store.translate(exc, key)

    def _keys_txn(self) -> tuple[Any, Any]:
        return self._txn, self._db

    def _held_txn(self) -> tuple[Any, Any] | None:
        return self._txn, self._db

    def release(self) -> None:
        if self._open:
            self._open = False
            self._txn.abort()
            self._store._view_closed(self._opener)

    close = release

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc is None and self._open:  # release() inline: a snapshot per request ends each time
            self._open = False
            self._txn.abort()
            self._store._view_closed(self._opener)
            return
        super().__exit__(exc_type, exc, tb)
