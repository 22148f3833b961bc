"""The write views of an LMDB store: its transaction, and a joined one.

:class:`LMDBTransaction` is one LMDB write transaction (:meth:`LMDBStore.transaction`):
with enough free map space it writes straight to LMDB through py-lmdb's callables,
otherwise it logs its writes so that a full map is grown and the transaction
replayed, unless another writer committed while the map grew and the transaction
had read (:class:`~keyspace.errors.TransactionConflict`).
:class:`JoinedTransaction` is another database of the same environment inside that
transaction (a nested ``transaction()`` in the same thread, or
:meth:`LMDBStore.join`): its writes go through the outer transaction's log and
commit or abort with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from threading import get_ident
from types import TracebackType
from typing import TYPE_CHECKING, Any

import lmdb

from ...errors import KeyspaceError, StoreClosed, StoreError, TransactionConflict
from .._base import WriteView
from .._translated import PointSlots, translated
from ._cursor import cursor_delete_range
from ._growth import RETRIES
from ._keys import TxnReads
from ._records import delete_data, getter

if TYPE_CHECKING:
    from ._parts import LMDBStoreParts

__all__ = ["JoinedTransaction", "LMDBTransaction"]

_PUT, _DELETE, _RANGE = 0, 1, 2
_Logged = tuple[int, bytes, bytes | None, Any]  # op, key, value or stop, database (None: own)


class LMDBTransaction(PointSlots, TxnReads, WriteView):
    """One LMDB write transaction; commits on a clean exit, aborts on an exception.

    When it begins with at least :data:`FAST_HEADROOM` of free map space (always,
    with the default map size) it writes straight to LMDB: ``get``, ``put`` and
    ``fast_replace`` are py-lmdb's own callables, their errors translated
    (:func:`~keyspace.stores.translated`: no Python frame per call), and
    ``read_pages`` reads its cursors' pages (:meth:`TxnReads.read_pages`); filling the
    map then raises :class:`~keyspace.errors.StoreError`. With less free space it
    logs its writes instead (one list append per write; ``get`` and ``put`` are
    Python methods), so that a full map can be grown and the transaction
    replayed on a fresh LMDB transaction.

    Growing the map needs this LMDB transaction ended, which releases LMDB's
    writer lock, so another process may commit before the new one begins. The
    replay checks that none did (the new transaction's id is the old one's): then
    the new transaction begins on the very state the old one read, and the
    replay is the same transaction. If one did and this transaction has read
    anything (a point read, a scan, a count, a seeker: what it wrote may depend
    on what it read), nothing of it is written and the write, read or commit
    that met the full map raises :class:`~keyspace.errors.TransactionConflict`,
    as does every later use of it: run the whole transaction again. A
    transaction that has only written replays its writes over the other
    writer's (they depend on nothing it read).
    """

    __slots__ = (
        "_begun",
        "_conflict",
        "_failed",
        "_get",
        "_joined",
        "_log",
        "_logged",
        "_put",
        "_read",
        "_store",
        "_txn",
    )

    def __init__(self, store: LMDBStoreParts) -> None:
        self._store = store
        self._txn: Any = None
        self._log: list[_Logged] | None = None
        self._logged = 0  # bytes of keys and values in the log
        self._read = False  # read anything yet (only asked with a replay log)
        self._begun = 0  # the id of the LMDB transaction the log was written in
        self._conflict: TransactionConflict | None = None
        self._joined: JoinedTransaction | None = None  # set when it joins another's transaction
        self._failed = False  # a joined block raised: abort at the end
        self.get = self._logged_get
        self.put = self._logged_put

    @property
    def fast_replace(self) -> Callable[[bytes, bytes], bytes | None] | None:  # type: ignore[override]
        # a cursor's replace: the transaction's own makes a cursor at every call
        if self._txn is None or self._log is not None:
            return None
        return translated(self._txn.cursor().replace, self._store.translate)

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._store.translate(exc, key)

    def _keys_txn(self) -> tuple[Any, Any]:
        if self._conflict is not None:
            raise self._conflicted()
        self._read = True
        return self._txn, None

    def _replays(self) -> bool:
        return self._log is not None

    def _held_txn(self) -> tuple[Any, Any] | None:
        if self._log is not None:  # it may go on in a new LMDB transaction
            return None
        if self._conflict is not None:
            raise self._conflicted()
        self._read = True
        return self._txn, None

    def _begin(self) -> None:
        store = self._store
        env = store._env
        try:
            txn = (env if env is not None else store._live()).begin(write=True, db=store._db)
        except lmdb.MapResizedError:
            txn = self._begin_resized()
        except lmdb.Error as exc:
            raise store.translate(exc) from exc
        self._txn = txn
        records = store._records  # the unnamed database: reads leave its records out
        self._get = txn.get if records is None else getter(records, txn.get)
        self._put = txn.put

    def _begin_resized(self) -> Any:
        """The LMDB write transaction, begun after adopting the size another process
        gave the map (we hold ``_wlock``), as often as it grows meanwhile."""
        store = self._store
        for _attempt in range(RETRIES):
            store._resize(0)
            try:
                return store._live().begin(write=True, db=store._db)
            except lmdb.MapResizedError:
                continue
            except lmdb.Error as exc:
                raise store.translate(exc) from exc
        raise StoreError(f"the map of {store.url} kept growing under this transaction ({RETRIES} tries)")

    def _recover(self, exc: lmdb.Error, key: bytes | None, again: Callable[[], object], pending: int) -> None:
        """Handle a failed write: with a replay log, a full map is grown (to hold
        the log and the ``pending`` bytes of the failed write), the log replayed
        on a new LMDB transaction and the write made ``again`` there, growing
        more while the map is still too small; anything else is raised translated
        (the transaction stays usable for reads). Between the two transactions
        another process may commit: see :meth:`_unchanged`."""
        if self._log is None or not isinstance(exc, lmdb.MapFullError):
            raise self._store.translate(exc, key) from exc
        store = self._store
        for _attempt in range(RETRIES):
            self._txn.abort()
            store._grow(self._logged + pending)
            self._begin()
            self._unchanged()
            try:
                self._replay(self._log)
                again()
                return
            except lmdb.MapFullError:
                continue
            except lmdb.Error as error:
                raise store.translate(error, key) from error
        raise StoreError(f"the map of {store.url} stayed full while growing ({RETRIES} attempts)")

    def _unchanged(self) -> None:
        """After the map grew between two LMDB transactions: go on only if no
        other writer committed meanwhile (the new transaction's id is the one
        the log was written in), or if this transaction has read nothing;
        otherwise end it with :class:`~keyspace.errors.TransactionConflict`."""
        now = int(self._txn.id())
        if now != self._begun and self._read:
            self._txn.abort()
            self._conflict = TransactionConflict(
                f"another writer committed to {self._store.url} while this transaction grew the map "
                f"(LMDB transaction {self._begun} became {now}), and this transaction had read from "
                "the store: its writes may rest on values that changed, so nothing of it was written; "
                "running the whole transaction again is safe"
            )
            raise self._conflicted()
        self._begun = now

    def _conflicted(self) -> TransactionConflict:
        """The conflict that ended this transaction (a new error each time it is
        raised, the same message)."""
        assert self._conflict is not None
        return TransactionConflict(str(self._conflict))

    def _replay(self, log: list[_Logged]) -> None:
        txn = self._txn
        for op, key, value, db in log:
            self._run(txn, op, key, value, db)

    def _run(self, txn: Any, op: int, key: bytes, value: bytes | None, db: Any) -> None:
        if op == _PUT:
            txn.put(key, value, db=db)
        elif op == _DELETE:
            delete_data(self._store._records_in(db), txn, key, db)
        else:  # the unnamed database keeps LMDB's records of named ones
            cursor_delete_range(txn, key, value, db, self._store._records_in(db))

    def _apply(self, op: int, key: bytes, value: bytes | None, db: Any) -> None:
        """One write to database ``db`` of this transaction's environment, made for a
        joined store: logged, grown and replayed like this transaction's own."""
        if self._conflict is not None:
            raise self._conflicted()
        try:
            self._run(self._txn, op, key, value, db)
        except lmdb.Error as exc:
            size = len(key) + (0 if op == _RANGE or value is None else len(value))
            self._recover(
                exc, None if op == _RANGE else key, lambda: self._run(self._txn, op, key, value, db), size
            )
        if self._log is not None:
            self._logs(op, key, value, db)

    def _logs(self, op: int, key: bytes, value: bytes | None, db: Any) -> None:
        """Log a write made (the transaction has a replay log)."""
        self._log.append((op, key, value, db))  # type: ignore[union-attr]
        self._logged += len(key) + (0 if op == _RANGE or value is None else len(value))

    def _logged_get(self, key: bytes) -> bytes | None:
        self._read = True
        try:
            return self._get(key)
        except lmdb.Error as exc:
            if self._conflict is not None:
                raise self._conflicted() from None
            raise self._store.translate(exc, key) from exc

    def _logged_put(self, key: bytes, value: bytes) -> None:
        try:
            self._put(key, value)
        except lmdb.Error as exc:
            if self._conflict is not None:
                raise self._conflicted() from None
            self._recover(exc, key, lambda: self._put(key, value), len(key) + len(value))
        if self._log is not None:
            self._logs(_PUT, key, value, None)

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """One ``cursor.putmulti`` (a loop of :meth:`put` with a replay log). Every
        key is checked first, so a bad one leaves none of the pairs written."""
        pairs = items if isinstance(items, list | tuple) else list(items)
        self._store._check_all(pairs)
        if self._log is not None:
            return super().put_many(pairs)
        try:
            self._txn.cursor().putmulti(pairs)
            return len(pairs)
        except lmdb.Error as exc:
            store = self._store
            bad = next((k for k, _ in pairs if store._bad_key(k) is not None), None)
            raise store.translate(exc, bad) from exc

    def replace_many(self, keys: list[bytes], values: list[bytes]) -> list[bytes | None]:
        """Every key checked first (a bad one leaves none of the pairs written),
        then one ``cursor.replace`` per pair, looped in C: a new key costs one
        B-tree descent, as a put does. With a replay log: the values read, then
        :meth:`put_many` (logged)."""
        store = self._store
        store._check_all(keys)
        if self._log is not None:
            return super().replace_many(keys, values)
        try:
            return list(map(self._txn.cursor().replace, keys, values))
        except lmdb.Error as exc:
            if self._conflict is not None:
                raise self._conflicted() from None
            raise store.translate(exc) from exc

    def _delete(self, key: bytes) -> None:
        delete_data(self._store._records, self._txn, key)

    def delete(self, key: bytes) -> None:
        self._store._check(key)  # LMDB itself takes a key over its limit as absent
        try:
            self._delete(key)
        except lmdb.Error as exc:
            if self._conflict is not None:
                raise self._conflicted() from None
            self._recover(exc, key, lambda: self._delete(key), len(key))
        if self._log is not None:
            self._logs(_DELETE, key, None, None)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        if self._conflict is not None:
            raise self._conflicted()
        try:
            cursor_delete_range(self._txn, start, stop, None, self._store._records)
        except lmdb.Error as exc:
            records = self._store._records
            self._recover(
                exc, None, lambda: cursor_delete_range(self._txn, start, stop, None, records), len(start)
            )
        if self._log is not None:
            self._logs(_RANGE, start, stop, None)

    def __enter__(self) -> WriteView:
        store = self._store
        shared = store._shared
        me = get_ident()
        if shared.writer == me:
            outer = shared.joint
            if outer is None or outer._store is store:
                raise StoreError(f"a transaction on {store.url} is already open in this thread")
            # another database of this environment: join its transaction
            self._joined = JoinedTransaction(store, outer)
            return self._joined
        wlock = shared.wlock
        wlock.acquire()
        try:
            roomy = store._roomy()
            self._begin()
        except BaseException:
            wlock.release()
            raise
        shared.writer, shared.joint = me, self
        if roomy:
            translate = store.translate
            self.get = translated(self._get, translate)
            self.put = translated(self._put, translate)
        else:
            self._log = []
            self._begun = int(self._txn.id())  # what a replay checks nothing has changed since
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        joined = self._joined
        ended = self._store._txn_ended
        # get and put after the block: the ended transaction's error; calls that hold
        # the store, not a view (a view's own methods would keep it in a reference cycle)
        self.get = self.put = ended
        if joined is not None:  # the joined transaction commits or aborts it all
            self._joined = None
            joined.get = joined.put = ended
            if exc_type is not None:
                joined._outer._failed = True
            return
        store = self._store
        store._shared.writer = store._shared.joint = None
        try:
            if store._env is None and exc_type is None:  # closed in the block, by this thread
                with contextlib.suppress(lmdb.Error):  # ended with its environment already
                    self._txn.abort()  # the environment may live on, for another store of its path
                raise StoreClosed(
                    f"the store {store.url} was closed inside this transaction; nothing of it was written"
                )
            if exc_type is not None or self._failed or self._conflict is not None:
                self._txn.abort()
                if exc_type is None and self._conflict is not None:
                    raise self._conflicted()
                if exc_type is None:
                    raise StoreError(
                        f"a transaction on another database joined to this transaction on {store.url} "
                        "raised, so the joint transaction was discarded (nothing of it was written)"
                    )
                return
            try:
                self._txn.commit()
            except lmdb.Error as error:  # a full map at commit: grow, replay, commit again
                self._recover(error, None, lambda: self._txn.commit(), 0)
        finally:
            store._shared.wlock.release()


class JoinedTransaction(PointSlots, TxnReads, WriteView):
    """A store's database inside the write transaction of another database of the
    same environment (``outer``): reads see the joint transaction, writes go into it
    (logged, grown and replayed by it) and commit or abort with it. Fast paths (a
    cursor of the database) only where the outer transaction has them: one with a
    replay log may replace its LMDB transaction when the map grows."""

    __slots__ = (
        "_db",
        "_outer",
        "_store",
    )

    def __init__(self, store: LMDBStoreParts, outer: LMDBTransaction) -> None:
        self._store = store
        self._outer = outer
        self._db = store._db
        self.get = self._logged_get
        self.put = self._logged_put
        if outer._log is None:  # no replay log: its LMDB transaction stays for good
            txn, records = outer._txn, store._records
            cursor = txn.cursor(db=self._db)  # get/put of the database with no db= keyword
            translate = store.translate
            self.get = translated(cursor.get if records is None else getter(records, cursor.get), translate)
            self.put = translated(cursor.put, translate)

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._store.translate(exc, key)

    def _keys_txn(self) -> tuple[Any, Any]:
        return self._outer._keys_txn()[0], self._db

    def _replays(self) -> bool:
        return self._outer._log is not None

    def _logged_get(self, key: bytes) -> bytes | None:
        outer = self._outer
        outer._read = True
        try:
            value: bytes | None = outer._txn.get(key, db=self._db)
            records = self._store._records
            if value is not None and records is not None and records.is_record(key, value):
                return None  # a named database's record: no data
            return value
        except lmdb.Error as exc:
            if outer._conflict is not None:
                raise outer._conflicted() from None
            raise self._store.translate(exc, key) from exc

    def _logged_put(self, key: bytes, value: bytes) -> None:
        self._store._check(key)
        self._outer._apply(_PUT, key, value, self._db)

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """Every key checked first, so a bad one leaves none of the pairs written
        (as :meth:`LMDBTransaction.put_many`); then each pair into the outer
        transaction, which logs, grows and replays it."""
        pairs = items if isinstance(items, list | tuple) else list(items)
        self._store._check_all(pairs)
        apply, db = self._outer._apply, self._db
        for key, value in pairs:
            apply(_PUT, key, value, db)
        return len(pairs)

    def delete(self, key: bytes) -> None:
        self._store._check(key)
        self._outer._apply(_DELETE, key, None, self._db)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._outer._apply(_RANGE, start, stop, self._db)
