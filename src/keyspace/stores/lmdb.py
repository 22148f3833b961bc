"""``LMDBStore``: the embedded default, on py-lmdb.

URL: ``lmdb:///path/to/dir`` (or a bare path). One LMDB environment (a directory
holding ``data.mdb`` and ``lock.mdb``), one unnamed database.

- Readers never block and are never blocked; one writer at a time across processes.
- Every write outside a transaction is one LMDB write transaction (one commit);
  ``write(ops)`` and ``delete_range`` are one transaction each.
- The map grows on demand: a full map is grown (doubled) and the write retried,
  including inside ``transaction()``, which keeps a log of its writes to replay.
  Growing ends this process's other open snapshots and scans (LMDB remaps the file);
  their next use raises :class:`~keyspace.errors.StoreClosed`.
- Keys are 1 to ``max_key_size`` bytes (511 with LMDB 0.9). Writing a longer key
  raises :class:`~keyspace.errors.KeyTooLarge`; reading one finds nothing. The
  empty key cannot be stored or read: :class:`~keyspace.errors.InvalidName`.
- One environment per path per process: opening a path this process already has
  open raises :class:`~keyspace.errors.StoreError`; share the open store instead.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from itertools import islice, takewhile
from types import TracebackType
from typing import Any

import lmdb

from ..errors import InvalidName, KeyspaceError, KeyTooLarge, StoreClosed, StoreError, show_bytes
from ._base import Capabilities, Op, ReadView, Store, WriteView

__all__ = ["LMDBStore"]

DEFAULT_MAP_SIZE = 64 << 20
"""Initial map size; it doubles whenever it fills, so this only sets the first step."""

_PUT, _DELETE, _RANGE = 0, 1, 2
_Logged = tuple[int, bytes, bytes | None]


def _cursor_scan(
    txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
) -> Iterator[tuple[bytes, bytes]]:
    """Items of ``[start, stop)`` read by one cursor; bound checks stay in C."""
    cursor = txn.cursor()
    items: Iterator[tuple[bytes, bytes]]
    if not reverse:
        if not cursor.set_range(start):
            return iter(())
        items = cursor.iternext()
        if stop is not None:
            items = takewhile((stop,).__gt__, items)  # (k, v) < (stop,)  <=>  k < stop
    else:
        found = cursor.last() if stop is None or not cursor.set_range(stop) else cursor.prev()
        if not found:
            return iter(())
        items = cursor.iterprev()
        if start:
            items = takewhile((start,).__le__, items)  # (k, v) >= (start,)  <=>  k >= start
    if limit is not None:
        items = islice(items, max(limit, 0))
    return items


def _delete_range(txn: Any, start: bytes, stop: bytes | None) -> None:
    cursor = txn.cursor()
    if not cursor.set_range(start):
        return
    delete = cursor.delete
    key = cursor.key
    while stop is None or key() < stop:
        if not delete():  # deletes and moves to the next key; False at the end
            break


class LMDBStore(Store):
    """An ordered byte store in one LMDB environment.

    ``LMDBStore(path, map_size=..., sync=True, max_readers=126)``: the directory is
    created if missing. ``sync=False`` skips the fsync at commit (a crash may lose the
    last transactions, never corrupt the store).

    Costs: ``get`` is one read transaction and one B-tree lookup; a write outside a
    transaction is one commit (an fsync with ``sync=True``); inside ``transaction()``
    puts and gets cost about what py-lmdb's own ``txn.put``/``txn.get`` cost.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        sync: bool = True,
        max_readers: int = 126,
    ) -> None:
        self._path = os.path.abspath(os.fspath(path))
        self.url = f"lmdb://{self._path}"
        self._env: Any = None
        self._grown = 0
        self._writer: int | None = None  # thread holding this store's transaction()
        try:
            self._env = lmdb.open(
                self._path, map_size=map_size, sync=sync, max_readers=max_readers, max_dbs=0
            )
        except lmdb.Error as exc:
            raise self._error(exc) from exc
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
        )

    # -- error translation: the one place ------------------------------------

    def _error(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """Translate a py-lmdb exception into a keyspace error (chain it with ``from``)."""
        if isinstance(exc, lmdb.BadValsizeError) and key is not None:
            bad = self._bad_key(key)
            if bad is not None:
                return bad
        text = str(exc)
        if self._env is None and not text.startswith("The environment"):
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

    # -- plumbing ------------------------------------------------------------

    def _live(self) -> Any:
        env = self._env
        if env is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return env

    def _grow(self) -> None:
        env = self._env
        env.set_mapsize(int(env.info()["map_size"]) * 2)
        self._grown += 1

    def _write(self, body: Callable[[Any], None]) -> None:
        """Run ``body(txn)`` in one write transaction; a full map grows and retries."""
        env = self._live()
        if self._writer == threading.get_ident():
            raise StoreError(
                f"a transaction on {self.url} is open in this thread; write through it "
                "(writing through the store would wait for it forever)"
            )
        while True:
            try:
                txn = env.begin(write=True)
            except lmdb.MapResizedError:
                env.set_mapsize(0)  # another process grew the map: adopt its size
                continue
            except lmdb.Error as exc:
                raise self._error(exc) from exc
            try:
                body(txn)
                txn.commit()
                return
            except lmdb.MapFullError:
                txn.abort()
                self._grow()
            except lmdb.Error as exc:
                txn.abort()
                raise self._error(exc) from exc
            except BaseException:
                txn.abort()
                raise

    def _owned_scan(
        self, txn: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, end: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        """Scan ``txn``, translating errors; ``end``: abort ``txn`` when done."""
        try:
            yield from _cursor_scan(txn, start, stop, reverse, limit)
        except lmdb.Error as exc:
            raise self._error(exc) from exc
        finally:
            if end:
                txn.abort()

    # -- the Store contract --------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        try:
            with self._live().begin() as txn:
                return txn.get(key)  # type: ignore[no-any-return]
        except lmdb.Error as exc:
            raise self._error(exc, key) from exc

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        try:
            txn = self._live().begin()
        except lmdb.Error as exc:
            raise self._error(exc) from exc
        return self._owned_scan(txn, start, stop, reverse, limit, True)

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
        for key, _ in batch:
            self._check(key)

        def body(txn: Any) -> None:
            put, delete = txn.put, txn.delete
            for key, value in batch:
                if value is None:
                    delete(key)
                else:
                    put(key, value)

        self._write(body)

    def snapshot(self) -> _LMDBSnapshot:
        try:
            return _LMDBSnapshot(self, self._live().begin())
        except lmdb.Error as exc:
            raise self._error(exc) from exc

    def transaction(self) -> _LMDBTransaction:
        return _LMDBTransaction(self)

    def close(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            env.close()

    def __repr__(self) -> str:
        return f"LMDBStore({self._path!r})"


class _LMDBSnapshot(ReadView):
    """A read transaction: the store as it was when the snapshot began."""

    __slots__ = ("_store", "_txn")

    def __init__(self, store: LMDBStore, txn: Any) -> None:
        self._store = store
        self._txn = txn

    def get(self, key: bytes) -> bytes | None:
        try:
            return self._txn.get(key)  # type: ignore[no-any-return]
        except lmdb.Error as exc:
            raise self._store._error(exc, key) from exc

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._store._owned_scan(self._txn, start, stop, reverse, limit, False)

    def __enter__(self) -> _LMDBSnapshot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._txn.abort()


class _LMDBTransaction(WriteView):
    """One LMDB write transaction; commits on a clean exit, aborts on an exception.

    ``get`` and ``put`` are one Python call around py-lmdb's bound ``txn.get`` /
    ``txn.put``; writes are also logged so that a full map can be grown and the
    transaction replayed on a fresh LMDB transaction instead of failing.
    """

    __slots__ = ("_delete", "_get", "_log", "_put", "_store", "_txn")

    def __init__(self, store: LMDBStore) -> None:
        self._store = store
        self._txn: Any = None
        self._log: list[_Logged] = []

    def _begin(self) -> None:
        store = self._store
        while True:
            try:
                txn = store._live().begin(write=True)
                break
            except lmdb.MapResizedError:
                store._env.set_mapsize(0)
            except lmdb.Error as exc:
                raise store._error(exc) from exc
        self._txn = txn
        self._get, self._put, self._delete = txn.get, txn.put, txn.delete

    def _recover(self, exc: lmdb.Error, key: bytes | None) -> None:
        """Handle a failed write: a full map is grown and the log replayed; anything
        else is raised translated (the transaction stays usable for reads)."""
        if not isinstance(exc, lmdb.MapFullError):
            raise self._store._error(exc, key) from exc
        while True:
            self._txn.abort()
            self._store._grow()
            self._begin()
            try:
                self._replay()
                return
            except lmdb.MapFullError:
                continue

    def _replay(self) -> None:
        txn = self._txn
        for op, key, value in self._log:
            if op == _PUT:
                txn.put(key, value)
            elif op == _DELETE:
                txn.delete(key)
            else:
                _delete_range(txn, key, value)

    def get(self, key: bytes) -> bytes | None:
        try:
            return self._get(key)  # type: ignore[no-any-return]
        except lmdb.Error as exc:
            raise self._store._error(exc, key) from exc

    def put(self, key: bytes, value: bytes) -> None:
        try:
            self._put(key, value)
        except lmdb.Error as exc:
            self._recover(exc, key)
            self._put(key, value)  # never full right after growing
        self._log.append((_PUT, key, value))

    def delete(self, key: bytes) -> None:
        try:
            self._delete(key)
        except lmdb.Error as exc:
            self._recover(exc, key)
            self._delete(key)
        self._log.append((_DELETE, key, None))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        try:
            _delete_range(self._txn, start, stop)
        except lmdb.Error as exc:
            self._recover(exc, None)
            _delete_range(self._txn, start, stop)
        self._log.append((_RANGE, start, stop))

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._store._owned_scan(self._txn, start, stop, reverse, limit, False)

    def __enter__(self) -> _LMDBTransaction:
        store = self._store
        if store._writer == threading.get_ident():
            raise StoreError(f"a transaction on {store.url} is already open in this thread")
        self._begin()
        store._writer = threading.get_ident()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        store = self._store
        store._writer = None
        if exc_type is not None:
            self._txn.abort()
            return
        while True:
            try:
                self._txn.commit()
                return
            except lmdb.Error as error:
                self._recover(error, None)  # a full map at commit: grow, replay, commit again
