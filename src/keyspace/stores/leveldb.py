"""``LevelDBStore``: an ordered byte store in one LevelDB directory, via plyvel.

URL: ``leveldb:///path/to/dir`` (created if missing). LevelDB has no transactions
and no range delete: ``transaction()`` is the generic overlay transaction over a
LevelDB snapshot, committed as one atomic write batch; ``delete_range`` scans the
range and deletes its keys in one atomic write batch. A snapshot's (and so a
transaction's) scans read pages of plyvel's iterator and check before each page
that the snapshot is still open: read on after its block, a scan raises
:class:`~keyspace.errors.StoreClosed`.

One process, one handle: LevelDB locks the directory, so a second opener (in this
process or another) gets :class:`~keyspace.errors.StoreError`.

Every call into plyvel goes through the store's :class:`~keyspace.stores._gate.Gate`:
plyvel releases the GIL inside LevelDB, and closing its handle under a call another
thread is making would crash the process, so :meth:`LevelDBStore.close` refuses new
calls, waits for the calls in flight and only then closes the handle.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import suppress
from functools import partial
from itertools import chain, takewhile
from typing import Any

import plyvel

from ..errors import KeyspaceError, StoreClosed, StoreError
from ._base import (
    BatchedWrites,
    Capabilities,
    ReadView,
    Releasable,
    Seeker,
    Store,
    checked_pages,
    cut_ranges,
    limited,
    pages_by_range,
    pages_of,
)
from ._gate import Gate, close_when_idle
from ._overlay import OverlayTransaction, Range, TransactionGate
from ._paths import check_directory, engine_words
from ._translated import GetSlot, PointSlots, ended_call

__all__ = ["LevelDBStore"]


class LevelDBStore(PointSlots, BatchedWrites, Store):
    """An ordered byte store in a LevelDB directory (plyvel).

    ``LevelDBStore(path, sync=False, create_if_missing=True, cache_size=8 MiB,
    readonly=False)``: ``sync=True`` fsyncs every write; ``cache_size`` is LevelDB's
    block cache in bytes. LevelDB has no read-only mode: with ``readonly`` (or
    ``create_if_missing=False``) a directory that is not a LevelDB store is refused
    before LevelDB touches it, and :func:`~keyspace.stores.open_store` refuses the
    writes; LevelDB itself still rewrites its own log and manifest files when it opens.
    Costs: a point operation is one LevelDB call; ``delete_range`` is O(keys in range).
    ``get``/``put`` are plyvel's own bound ``get``/``put`` (translated) and
    ``read_pages`` reads a plyvel iterator in pages, each behind the store's gate
    (no Python frame per call or item where the C gate is built).
    """

    capabilities = Capabilities(
        max_key_size=None,
        empty_keys=True,
        atomic_batch=True,
        native_delete_range=False,
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
        cache_size: int = 8 << 20,
        readonly: bool = False,
    ) -> None:
        self._path = os.path.abspath(os.fspath(path))
        self.url = f"leveldb://{self._path}"
        self._sync = sync
        self._db: Any = None
        self._opened = False
        self._gate = TransactionGate(self.url)
        self._calls = calls = Gate()
        exists = check_directory(
            self._path, self.url, "LevelDB", ("CURRENT",), create=create_if_missing and not readonly
        )
        if not exists and not os.path.isdir(self._path):
            _check_creatable(self._path, self.url)
        try:
            self._db = plyvel.DB(
                self._path, create_if_missing=create_if_missing and not readonly, lru_cache_size=cache_size
            )
        except (plyvel.Error, OSError) as exc:
            raise self.translate(exc) from exc
        self._opened = True
        db = self._db
        # the contract's get and put: plyvel's calls themselves, behind the gate,
        # translated (plyvel's put does not sync by default)
        put = partial(db.put, sync=True) if sync else db.put
        self.get = calls.guard(db.get, self.translate)
        self.put = calls.guard(put, self.translate)
        self._delete = calls.guard(partial(db.delete, sync=sync))

    # -- error translation: the one place ------------------------------------

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """Translate a plyvel exception into a keyspace error (LevelDB has no key
        limits, so ``key`` changes nothing). The engine's words are looked for in
        its message with the store's path taken out: a path such as
        ``/srv/blockchain`` is no lock error."""
        detail = exc.args[0] if exc.args else exc
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        words = engine_words(text, self._path)
        if (self._opened and self._db is None and "lock" not in words) or "closed" in words:
            return StoreClosed(f"the store {self.url} (or this snapshot) is closed")
        if "Corruption" in words or "corrupt" in words:
            return StoreError(f"{self.url} is a corrupt LevelDB store: {text}")
        if "No space left" in words:
            return StoreError(f"the disk holding {self.url} is full (no space left on device): {text}")
        if "Permission denied" in words:
            return StoreError(f"cannot open {self.url}: permission denied: {text}")
        if "lock" in words:
            return StoreError(
                f"{self.url} is already open: LevelDB allows one process (and one open "
                f"handle) per directory: {text}"
            )
        return StoreError(f"LevelDB failed on {self.url}: {text}")

    def _live(self) -> Any:
        db = self._db
        if db is None:
            raise StoreClosed(f"the store {self.url} is closed")
        return db

    def _iterate(
        self,
        source: Any,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
    ) -> Iterator[Any]:
        """A plyvel iterator of ``source`` (the DB or a snapshot) over ``[start, stop)``,
        bounded in C, of items (``keys``: of keys, values unread), its steps behind
        the gate; errors while starting are translated, while iterating raw."""
        calls = self._calls
        try:
            if reverse:
                # plyvel 1.5 yields nothing in reverse when the last key equals
                # ``start``; the lower bound is checked here instead.
                made = calls.run(source.iterator, stop=stop, reverse=True, include_value=not keys)
                items = calls.guard_iter(made)
                if start:
                    items = takewhile((start if keys else (start,)).__le__, items)  # k >= start
            else:
                made = calls.run(source.iterator, start=start, stop=stop, include_value=not keys)
                items = calls.guard_iter(made)
            items = limited(items, limit)
            return items
        except (plyvel.Error, RuntimeError) as exc:
            raise self.translate(exc) from exc

    def _scan(
        self,
        source: Any,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
    ) -> Iterator[Any]:
        items = self._iterate(source, start, stop, reverse, limit, keys)
        try:
            yield from items
        except (plyvel.Error, RuntimeError) as exc:
            raise self.translate(exc) from exc

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """A plyvel iterator per range, read in pages (:func:`pages_by_range`);
        with ``cut`` (items read forward), iterators of plyvel's ``prefixed_db``
        of the ranges' prefix, which leaves the prefix out of the keys in C
        (:func:`cut_ranges`), and with no ``limit`` too, one page streamed from
        those iterators in turn, each step behind the gate
        (``Gate.guard_chain``, errors translated): a scan of a whole scope reads
        as plyvel's own iterators do. Not in reverse: plyvel 1.5 then skips the key that
        equals the prefix (a reverse iterator skips a last key equal to its
        start, and a ``prefixed_db``'s start is its prefix)."""
        if cut and not keys_only and not reverse and ranges:
            prefix, under = cut_ranges(ranges, cut)
            try:
                part = self._calls.run(self._live().prefixed_db, prefix)
            except (plyvel.Error, RuntimeError) as exc:
                raise self.translate(exc) from exc
            if limit is None:
                made = map(partial(self._calls.run, _iterator_of, part), under)
                return (self._calls.guard_chain(made, self.translate),)
            return pages_by_range(self, partial(self._source_pages, part), under, reverse, limit, False)
        return pages_by_range(
            self, self._range_pages, ranges, reverse, limit, keys_only, cut, self._range_key_pages
        )

    def _range_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        """The pages of one plyvel iterator of ``[start, stop)`` (made now, behind
        the gate); errors while reading raw."""
        return self._source_pages(self._live(), start, stop, reverse, limit)

    def _source_pages(
        self, source: Any, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[tuple[bytes, bytes]]]:
        """The pages of one plyvel iterator of ``source`` (the DB or a
        ``prefixed_db`` of it) over ``[start, stop)``."""
        return pages_of(self._iterate(source, start, stop, reverse, limit))

    def _range_key_pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[list[bytes]]:
        """The keys of one plyvel iterator with ``include_value=False``, in pages."""
        return pages_of(self._iterate(self._live(), start, stop, reverse, limit, True))

    # -- the Store contract --------------------------------------------------

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._scan(self._live(), start, stop, reverse, limit)

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One plyvel iterator (an implicit snapshot) moved by ``seek``."""
        return self._seeker(self._live(), stop)

    def _seeker(self, source: Any, stop: bytes | None, check: Callable[[], object] | None = None) -> Seeker:
        calls = self._calls
        try:
            it = calls.run(source.iterator, stop=stop, include_value=False)
            return _IteratorSeeker(it, calls, self.translate, check)
        except (plyvel.Error, RuntimeError) as exc:
            raise self.translate(exc) from exc

    def delete(self, key: bytes) -> None:
        try:
            self._delete(key)
        except (plyvel.Error, RuntimeError) as exc:
            raise self.translate(exc) from exc

    def _apply(
        self, ranges: list[Range], deletes: list[bytes], keys: Collection[bytes], values: Collection[bytes]
    ) -> None:
        """Delete the ranges, then the keys ``deletes``, then store the pairs in
        order, in one atomic write batch; the pairs go to plyvel in one C loop."""
        try:
            self._calls.run(self._write_batch, self._live(), ranges, deletes, keys, values)
        except (plyvel.Error, RuntimeError) as exc:
            raise self.translate(exc) from exc

    def _write_batch(
        self,
        db: Any,
        ranges: list[Range],
        deletes: list[bytes],
        keys: Collection[bytes],
        values: Collection[bytes],
    ) -> None:
        batch = db.write_batch(sync=self._sync)
        for start, stop in ranges:
            for key in db.iterator(start=start, stop=stop, include_value=False):
                batch.delete(key)
        for key in deletes:
            batch.delete(key)
        deque(map(batch.put, keys, values), 0)
        batch.write()

    def snapshot(self) -> _LevelDBSnapshot:
        return self._snapshot("snapshot")

    def _snapshot(self, kind: str) -> _LevelDBSnapshot:
        """A plyvel snapshot, for a user who knows it as ``kind`` ("snapshot", or
        the "transaction" it underlies)."""
        try:
            return _LevelDBSnapshot(self, self._calls.run(self._live().snapshot), kind)
        except (plyvel.Error, RuntimeError) as exc:
            raise self.translate(exc) from exc

    def transaction(self) -> OverlayTransaction:
        """An overlay transaction over a snapshot, committed as one write batch;
        transactions of this store run one at a time (the next waits for this one)."""
        return self._gate.begin(self._snapshot_and_release, self._apply)

    def _snapshot_and_release(self) -> tuple[_LevelDBSnapshot, Callable[[], None]]:
        snap = self._snapshot("transaction")
        return snap, snap.release

    def close(self) -> None:
        """Close the store: later calls raise :class:`~keyspace.errors.StoreClosed`;
        calls other threads are making are waited for (at most
        :data:`~keyspace.stores._gate.IDLE_WAIT` seconds) before LevelDB is closed."""
        db, self._db = self._db, None
        if db is not None:
            close_when_idle(self._calls, db.close)

    def __repr__(self) -> str:
        return f"LevelDBStore({self._path!r})"


class _LevelDBSnapshot(GetSlot, Releasable, ReadView):
    """A LevelDB snapshot: the store as it was when it was taken (``kind``: what it
    is to its user, "snapshot" or "transaction", for the error once it has ended).

    Its scans read plyvel's iterator (behind the store's gate) in pages
    (:func:`~keyspace.stores._base.checked_pages`: 16 items, then four times more
    up to 1024) and check before each page that the snapshot is still open, so a
    scan begun in the block raises :class:`~keyspace.errors.StoreClosed` at its
    next page once the block has ended; ``read_pages`` gives those pages. Cost:
    one check and one list per page, no Python code per item."""

    __slots__ = ("_kind", "_snap", "_store")

    def __init__(self, store: LevelDBStore, snap: Any, kind: str = "snapshot") -> None:
        self._store = store
        self._snap = snap
        self._kind = kind
        self.get = store._calls.guard(snap.get, self.translate)

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """The store's translation; once the snapshot has ended (a ``get`` on
        its closed plyvel snapshot), :class:`~keyspace.errors.StoreClosed` saying so."""
        if self._snap is None and self._store._db is not None:
            return StoreClosed(f"this {self._kind} of {self._store.url} has ended")
        return self._store.translate(exc, key)

    def _live(self) -> Any:
        if self._store._db is None:
            raise StoreClosed(f"the store {self._store.url} is closed")
        snap = self._snap
        if snap is None:
            raise StoreClosed(f"this {self._kind} of {self._store.url} has ended")
        return snap

    def _pages(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None, keys: bool = False
    ) -> Iterator[list[Any]]:
        """The items (``keys``: the keys) of ``[start, stop)`` in checked pages; the
        iterator is made now, its errors while reading raw."""
        items = self._store._iterate(self._live(), start, stop, reverse, limit, keys)
        return checked_pages(items, self._live)

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The checked pages of :meth:`_pages` (:func:`pages_by_range`)."""
        return pages_by_range(
            self, self._pages, ranges, reverse, limit, keys_only, cut, partial(self._pages, keys=True)
        )

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        pages = self._pages(start, stop, reverse, limit)
        return chain.from_iterable(_translated(pages, self._store.translate))

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """One plyvel iterator of the snapshot moved by ``seek``; a seek after the
        snapshot ended raises :class:`~keyspace.errors.StoreClosed`."""
        return self._store._seeker(self._live(), stop, self._live)

    def release(self) -> None:
        """End the snapshot. Idempotent."""
        snap, self._snap = self._snap, None
        if snap is not None:
            # a get that holds the store, not this snapshot (its translation did): a
            # later get raises the ended snapshot's StoreClosed, and no cycle is left
            self.get = ended_call(f"this {self._kind} of {self._store.url} has ended")
            _close_behind(self._store._calls, snap)


def _iterator_of(source: Any, part: tuple[bytes, bytes | None]) -> Any:
    """A plyvel iterator of ``source`` over one ``(start, stop)``."""
    return source.iterator(start=part[0], stop=part[1])


def _check_creatable(path: str, url: str) -> None:
    """Refuse, as permission denied, a new store whose directory this process may
    not create: LevelDB makes the directory itself and ignores that failure, then
    reports only that its ``LOCK`` file is not found. Cost: one ``access`` call."""
    parent = os.path.dirname(path)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StoreError(
            f"cannot open {url}: permission denied: cannot create the directory {path} in {parent}"
        )


def _translated(
    pages: Iterator[list[Any]], translate: Callable[[BaseException], KeyspaceError]
) -> Iterator[list[Any]]:
    """``pages``, an error of plyvel or of the gate raised as ``translate(error)``."""
    try:
        yield from pages
    except (plyvel.Error, RuntimeError) as exc:
        raise translate(exc) from exc


class _IteratorSeeker(Seeker):
    """A :class:`Seeker` on one plyvel key iterator (bounded by ``stop`` in C);
    ``check`` (a snapshot's) is called before each seek and raises once the
    snapshot has ended."""

    __slots__ = ("_calls", "_check", "_it", "_translate")

    def __init__(
        self,
        it: Any,
        calls: Any,
        translate: Callable[[BaseException], KeyspaceError],
        check: Callable[[], object] | None = None,
    ) -> None:
        self._it = it
        self._calls = calls
        self._translate = translate
        self._check = check

    def seek(self, start: bytes) -> bytes | None:
        it = self._it
        if it is None:
            raise StoreClosed("this seeker has been released")
        if self._check is not None:
            self._check()
        try:
            return self._calls.run(_seek, it, start)  # type: ignore[no-any-return]
        except (plyvel.Error, RuntimeError) as exc:
            raise self._translate(exc) from exc

    def release(self) -> None:
        it, self._it = self._it, None
        if it is not None:
            _close_behind(self._calls, it)


def _seek(it: Any, start: bytes) -> bytes | None:
    it.seek(start)
    return next(it, None)


def _close_behind(calls: Any, handle: Any) -> None:
    """Close a plyvel snapshot or iterator through the gate; once the store is
    closed, plyvel has closed it already."""
    with suppress(RuntimeError):  # the gate refuses: the store is closed
        calls.run(handle.close)
