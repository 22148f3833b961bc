"""``RocksDBStore``: an ordered byte store in one RocksDB directory, via rocksdict.

URL: ``rocksdb:///path/to/dir`` (created if missing). Always raw mode (plain
bytewise keys; rocksdict's default mode changes the comparator for good).

- ``delete_range`` is RocksDB's native range tombstone, atomic.
- ``transaction()`` is the generic overlay transaction over a snapshot, committed
  as one atomic write batch.
- Lower scan bounds are checked here: rocksdict's ``set_iterate_lower_bound`` sets
  the upper bound.
- rocksdict's ``Snapshot`` iterators ignore the snapshot, so a snapshot here is one
  RocksDB iterator (which pins an implicit snapshot when created); every read of
  the snapshot seeks that iterator.
- ``close()`` ends this store's live scans and snapshots: RocksDB keeps its
  directory locked while any iterator lives.

One process, one handle: a second opener gets :class:`~keyspace.errors.StoreError`.
"""

from __future__ import annotations

import contextlib
import json
import os
import weakref
from collections import deque
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from itertools import takewhile
from typing import Any

from rocksdict import (
    AccessType,
    BlockBasedOptions,
    Cache,
    Options,
    Rdict,
    ReadOptions,
    WriteBatch,
    WriteOptions,
)

from ..errors import KeyspaceError, StoreClosed, StoreError, show_bytes
from ._base import (
    BatchedWrites,
    Capabilities,
    ReadView,
    Releasable,
    Seeker,
    Store,
    limited,
    pages_by_range,
    pages_of,
)
from ._overlay import OverlayTransaction, Range, TransactionGate
from ._paths import check_directory, engine_words

__all__ = ["RocksDBStore"]


class _IteratorSeeker(Seeker):
    """A :class:`Seeker` on one RocksDB iterator: each seek is one ``seek``."""

    __slots__ = ("__weakref__", "_it", "_stop", "_translate")

    def __init__(
        self, it: Any, stop: bytes | None, translate: Callable[[BaseException], KeyspaceError]
    ) -> None:
        self._it = it
        self._stop = stop
        self._translate = translate

    def seek(self, start: bytes) -> bytes | None:
        it = self._it
        if it is None:
            raise StoreClosed("this seeker has been released (or its store closed)")
        try:
            it.seek(start)
            if not it.valid():
                return None
            key: bytes = it.key()
        except Exception as exc:
            raise self._translate(exc) from exc
        stop = self._stop
        return key if stop is None or key < stop else None

    def release(self) -> None:
        self._it = None


class _LiveScan(Iterator[Any]):
    """A running scan of the store: ``close()`` (the store closing) drops its
    RocksDB iterator, and its next step then raises
    :class:`~keyspace.errors.StoreClosed` rather than ending as if complete."""

    __slots__ = ("__weakref__", "_ended", "_items", "_kept", "_url")

    def __init__(self, url: str, items: Generator[Any, None, None], kept: object = None) -> None:
        self._url = url
        self._items = items
        self._ended = False
        self._kept = kept  # what the engine's iterator points into (its read options)

    def __iter__(self) -> _LiveScan:
        return self

    def __next__(self) -> Any:
        if self._ended:
            raise StoreClosed(f"the store {self._url} was closed while this scan ran")
        return next(self._items)

    def close(self) -> None:
        self._ended = True
        # a scan running in another thread cannot be closed from here ("generator
        # already executing"): its next step raises StoreClosed instead
        with contextlib.suppress(ValueError):
            self._items.close()


_CONFIG = "rocksdict-config.json"
"""The file rocksdict writes into a store's directory at every open, read-only
ones included; RocksDB itself never reads it."""


def _rocksdict_config(path: str) -> tuple[bytes, int, int] | None:
    """The bytes and times of the store's rocksdict configuration file, or None."""
    name = os.path.join(path, _CONFIG)
    try:
        with open(name, "rb") as file:
            info = os.fstat(file.fileno())
            return file.read(), info.st_atime_ns, info.st_mtime_ns
    except OSError:
        return None


def _put_back_rocksdict_config(path: str, kept: tuple[bytes, int, int] | None) -> None:
    """Undo rocksdict's write of its configuration file by a read-only open: remove
    the file where there was none, else give it back its bytes and times, so a
    read-only open leaves the store's directory as it found it."""
    name = os.path.join(path, _CONFIG)
    try:
        if kept is None:
            os.unlink(name)
            return
        data, atime, mtime = kept
        if _rocksdict_config(path) != kept:
            with open(name, "wb") as file:
                file.write(data)
            os.utime(name, ns=(atime, mtime))
    except OSError:
        pass  # a read-only directory: rocksdict could not write it either


def _check_raw_mode(kept: tuple[bytes, int, int] | None, url: str) -> None:
    """Refuse, before RocksDB opens it, a store that rocksdict wrote in its default
    mode (``raw_mode`` false in its configuration file): its keys carry
    rocksdict's type tags and its own comparator, and an open in raw mode would
    rewrite that file and the store's options, so that its program could no
    longer open it."""
    if kept is None:
        return
    try:
        raw_mode = json.loads(kept[0]).get("raw_mode")
    except (ValueError, AttributeError, RecursionError):
        raw_mode = None
    if raw_mode is not True:
        raise StoreError(
            f"{url} is not a keyspace store: its {_CONFIG} says raw_mode={show_bytes(raw_mode)} (a store "
            "of rocksdict's default mode, whose keys carry Python type tags; keyspace opens raw-mode "
            "stores only); it was left unchanged"
        )


class RocksDBStore(BatchedWrites, Store):
    """An ordered byte store in a RocksDB directory (rocksdict, raw mode).

    Costs: a point operation is one RocksDB call; a scan is one C-level iterator
    (O(1) per item); ``delete_range`` is O(1) (one tombstone).
    """

    capabilities = Capabilities(
        max_key_size=None,
        empty_keys=True,
        atomic_batch=True,
        native_delete_range=True,
        snapshots=True,
        persistent=True,
        multi_process=False,
        serialized_transactions=False,
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        sync: bool = False,
        create_if_missing: bool = True,
        cache_size: int = 32 << 20,
        readonly: bool = False,
    ) -> None:
        """``sync=True`` fsyncs the write-ahead log at every write; ``cache_size`` is the
        block cache in bytes; ``readonly`` opens with RocksDB's read-only access (a
        directory that is not a RocksDB store is refused before RocksDB touches it)."""
        self._path = os.path.abspath(os.fspath(path))
        self.url = f"rocksdb://{self._path}"
        self._db: Any = None
        self._opened = False
        self._gate = TransactionGate(self.url)
        self._views: weakref.WeakSet[Any] = weakref.WeakSet()  # live scans and snapshots
        check_directory(
            self._path,
            self.url,
            "RocksDB",
            ("CURRENT", "IDENTITY"),
            create=create_if_missing and not readonly,
        )
        options = Options(raw_mode=True)
        options.create_if_missing(create_if_missing and not readonly)
        table = BlockBasedOptions()
        table.set_block_cache(Cache(cache_size))
        options.set_block_based_table_factory(table)
        kept = _rocksdict_config(self._path)
        _check_raw_mode(kept, self.url)
        try:
            access = AccessType.read_only() if readonly else AccessType.read_write()
            self._db = Rdict(self._path, options, access_type=access)
        except Exception as exc:  # rocksdict raises plain Exception for engine errors
            _put_back_rocksdict_config(self._path, kept)  # a refused open leaves no trace
            raise self.translate(exc) from exc
        if readonly:
            _put_back_rocksdict_config(self._path, kept)
        if sync:
            write = WriteOptions()
            write.sync = True
            self._db.set_write_options(write)
        self._opened = True

    # -- error translation: the one place ------------------------------------

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """Translate a rocksdict exception into a keyspace error (one of keyspace's
        own, such as the :class:`StoreClosed` of a closed store, as it is). The
        engine's words are looked for in its message with the store's path taken
        out: a path such as ``/srv/blockchain`` is no lock error."""
        if isinstance(exc, KeyspaceError):
            return exc
        text = str(exc)
        words = engine_words(text, self._path)
        if "No space left" in words:
            return StoreError(
                f"the disk holding {self.url} is full (no space left on device; nothing of the failed "
                f"write was applied, and RocksDB refuses further writes of this open store: free some "
                f"space, then close and reopen it): {text}"
            )
        if "Corruption" in words:
            return StoreError(f"{self.url} is a corrupt RocksDB store: {text}")
        if "Permission denied" in words:
            return StoreError(f"cannot open {self.url}: permission denied: {text}")
        if "lock" in words.lower():
            return StoreError(
                f"{self.url} is already open: RocksDB allows one process (and one open "
                f"handle) per directory: {text}"
            )
        if (self._opened and self._db is None) or "closed" in words.lower():
            return StoreClosed(f"the store {self.url} is closed")
        return StoreError(f"RocksDB failed on {self.url}: {text}")

    def _live(self) -> Any:
        db = self._db
        if db is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return db

    def _track(self, items: Generator[Any, None, None], kept: object = None) -> _LiveScan:
        scan = _LiveScan(self.url, items, kept)
        self._views.add(scan)
        return scan

    def _walk(
        self, start: bytes, stop: bytes | None, reverse: bool, keys: bool
    ) -> tuple[Iterator[Any], bytes | None, ReadOptions]:
        """``(items, bound, options)``: a rocksdict iterator of the items (``keys``:
        keys, values unread) of ``[start, stop)`` in the order asked for, bounded
        above by RocksDB itself, the lower bound of a reverse walk, which the
        caller checks (``None``: none to check), and the read options holding the
        upper bound, which the caller keeps as long as the iterator: rocksdict's
        iterator points into them, and once they are freed it reads past ``stop``
        or ends before it."""
        read = ReadOptions()
        if stop is not None:
            read.set_iterate_upper_bound(stop)
        walk = self._live().keys if keys else self._live().items
        if reverse:
            # seek_for_prev(stop) under the upper bound lands on the last key < stop
            return walk(backwards=True, from_key=stop, read_opt=read), start or None, read
        return walk(from_key=start, read_opt=read), None, read

    def _scan(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, keys: bool = False
    ) -> Generator[Any, None, None]:
        """Items (``keys``: keys, values unread) of ``[start, stop)``."""
        try:
            items, bound, _options = self._walk(start, stop, reverse, keys)  # kept while it runs
            if bound is not None:
                items = takewhile((bound if keys else (bound,)).__le__, items)  # k >= start, checked here
            items = limited(items, limit)
            yield from items
        except KeyspaceError:
            raise
        except Exception as exc:
            raise self.translate(exc) from exc

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The items of :meth:`scan` as the pages of one rocksdict iterator per
        range that :func:`~keyspace.stores._base.pages_of` reads (no Python code
        per item), tracked as a scan is, so ``close()`` drops its iterator and
        its next page raises :class:`~keyspace.errors.StoreClosed`; keys only:
        rocksdict's ``keys`` (values unread), in the same pages."""
        self._live()
        return pages_by_range(
            self, self._range_pages, ranges, reverse, limit, keys_only, cut, self._range_key_pages
        )

    def _range_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        """The pages of one rocksdict iterator of ``[start, stop)``, tracked;
        errors raw."""
        items, bound, options = self._walk(start, stop, reverse, False)
        return self._track(pages_of(items, bound, reverse, limit), options)

    def _range_key_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[bytes]]:
        """The keys of ``[start, stop)`` (values unread) in pages, tracked."""
        return self._track(pages_of(self._scan(start, stop, reverse, limit, keys=True)))

    # -- the Store contract --------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        try:
            return self._live().get(key)  # type: ignore[no-any-return]
        except Exception as exc:
            raise self.translate(exc) from exc

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        self._live()
        return self._track(self._scan(start, stop, reverse, limit))

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One RocksDB iterator (an implicit snapshot) moved by ``seek``; closing the
        store ends it."""
        try:
            seeker = _IteratorSeeker(self._live().iter(), stop, self.translate)
        except Exception as exc:
            raise self.translate(exc) from exc
        self._views.add(seeker)
        return seeker

    def put(self, key: bytes, value: bytes) -> None:
        try:
            self._live().put(key, value)
        except Exception as exc:
            raise self.translate(exc) from exc

    def delete(self, key: bytes) -> None:
        try:
            self._live().delete(key)
        except Exception as exc:
            raise self.translate(exc) from exc

    def _apply(
        self, ranges: list[Range], deletes: list[bytes], keys: Collection[bytes], values: Collection[bytes]
    ) -> None:
        """Delete the ranges, then the keys ``deletes``, then store the pairs in
        order, in one atomic write batch (the pairs in one C loop)."""
        db = self._live()
        try:
            batch = WriteBatch(raw_mode=True)
            for start, stop in ranges:
                if stop is None:
                    # A tombstone needs an end: the last key, deleted on its own.
                    last = next(iter(db.keys(backwards=True)), None)
                    if last is None or last < start:
                        continue
                    batch.delete_range(start, last)
                    batch.delete(last)
                elif start < stop:
                    batch.delete_range(start, stop)
            for key in deletes:
                batch.delete(key)
            deque(map(batch.put, keys, values), 0)
            db.write(batch)
        except Exception as exc:
            raise self.translate(exc) from exc

    def snapshot(self) -> _RocksDBSnapshot:
        return self._snapshot("snapshot")

    def _snapshot(self, kind: str) -> _RocksDBSnapshot:
        """A RocksDB iterator as a snapshot, for a user who knows it as ``kind``
        ("snapshot", or the "transaction" it underlies); kept among the views the
        store ends when it closes."""
        try:
            view = _RocksDBSnapshot(self, self._live().iter(), kind)
        except KeyspaceError:
            raise
        except Exception as exc:
            raise self.translate(exc) from exc
        self._views.add(view)
        return view

    def transaction(self) -> OverlayTransaction:
        """An overlay transaction over a snapshot, committed as one write batch;
        transactions of this store run one at a time (the next waits for this one)."""
        return self._gate.begin(self._snapshot_and_release, self._apply)

    def _snapshot_and_release(self) -> tuple[_RocksDBSnapshot, Callable[[], None]]:
        snap = self._snapshot("transaction")
        return snap, snap.release

    def close(self) -> None:
        db, self._db = self._db, None
        if db is None:
            return
        for view in list(self._views):
            view.close()  # drops the rocksdict iterator that would keep the lock
        self._views = weakref.WeakSet()
        try:
            db.close()
        except Exception as exc:  # it is closed all the same: the lock is released
            # After a failed write (a full disk) RocksDB reports that error again here.
            raise StoreError(
                f"closing {self.url}: RocksDB reports an earlier failed write ({exc}); the store is "
                "closed, and every write that returned before the failure is kept"
            ) from exc

    def __repr__(self) -> str:
        return f"RocksDBStore({self._path!r})"


class _RocksDBSnapshot(Releasable, ReadView):
    """One RocksDB iterator, which sees the store as it was when it was created
    (``kind``: what it is to its user, "snapshot" or "transaction", for the error
    once it has ended).

    Reads seek it; scans share it and re-seek after their last key when another
    read moved it meanwhile. Every step of a scan checks that the view is still
    open (its loop runs Python code per item anyway): once it has ended, a scan
    begun before raises :class:`~keyspace.errors.StoreClosed` at its next item.
    Costs: ``get`` is one seek; scans O(1) per item in Python-level steps.
    """

    __slots__ = ("_it", "_kind", "_store", "_user")

    def __init__(self, store: RocksDBStore, it: Any, kind: str = "snapshot") -> None:
        self._store = store
        self._it: Any = it
        self._kind = kind
        self._user: object = None  # the scan that positioned the iterator last

    def _live(self) -> Any:
        it = self._it
        if it is None:
            if self._store._db is None:
                raise StoreClosed(f"the store {self._store.url} is closed")
            raise StoreClosed(f"this {self._kind} of {self._store.url} has ended")
        return it

    def get(self, key: bytes) -> bytes | None:
        it = self._live()
        self._user = None
        try:
            it.seek(key)
            if it.valid() and it.key() == key:
                return it.value()  # type: ignore[no-any-return]
        except Exception as exc:
            raise self._store.translate(exc) from exc
        return None

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        self._live()
        items = self._steps(start, stop, reverse)
        return limited(items, limit)

    def _position(self, it: Any, key: bytes | None, reverse: bool, after: bool) -> None:
        """Seek to the first key >= ``key`` (forward) or the last key < ``key``
        (reverse); with ``after``, past ``key`` itself."""
        if not reverse:
            it.seek(key)
            if after and it.valid() and it.key() == key:
                it.next()
        elif key is None:
            it.seek_to_last()
        else:
            it.seek_for_prev(key)
            if it.valid() and it.key() == key:
                it.prev()

    def _steps(self, start: bytes, stop: bytes | None, reverse: bool) -> Iterator[tuple[bytes, bytes]]:
        me = object()
        try:
            it = self._live()
            self._position(it, stop if reverse else start, reverse, False)
            self._user = me
            while it.valid():
                key = it.key()
                if (key < start) if reverse else (stop is not None and key >= stop):
                    return
                yield key, it.value()
                it = self._live()
                if self._user is not me:  # someone else moved the iterator
                    self._position(it, key, reverse, True)
                    self._user = me
                elif reverse:
                    it.prev()
                else:
                    it.next()
        except KeyspaceError:
            raise
        except Exception as exc:
            raise self._store.translate(exc) from exc

    def release(self) -> None:
        """End the snapshot. Idempotent."""
        self._it = None
