"""The store contract: one small interface over ordered byte stores.

Stores see only bytes and half-open byte ranges ``[start, stop)``; ``stop=None``
means "to the end of the keyspace". They know nothing about scopes or schemes.

Adapter methods receive bytes and half-open ranges, already validated by the layers
above, except for size limits, which only the adapter knows and checks.

Rules every adapter follows (the conformance suite in :mod:`keyspace.testing` checks
them):

- ``scan`` is half-open ``[start, stop)``, ascending or (``reverse``) descending;
  ``limit=0`` yields nothing; ``stop <= start`` yields nothing.
- A key over ``capabilities.max_key_size`` is refused by every write (``put``,
  ``delete``, ``write``, a transaction's writes) with
  :class:`~keyspace.errors.KeyTooLarge` naming the size and the limit; reading it
  finds nothing. With ``empty_keys=False`` every operation on ``b""`` raises
  :class:`~keyspace.errors.InvalidName`.
- ``write(ops)`` checks the whole batch before writing anything; a failure leaves
  the store unchanged.
- Engine errors become :class:`~keyspace.errors.StoreError` (the engine's exception
  chained), at one translation point per adapter; any use after ``close()`` (or of a
  snapshot or transaction after its block) raises
  :class:`~keyspace.errors.StoreClosed`.
- That includes the iterators a snapshot or transaction gave out during its block
  (``scan``, the pages of ``read_pages``, a seeker): once the
  block has ended, each raises :class:`~keyspace.errors.StoreClosed` (saying the snapshot or transaction has
  ended) at its next read of the engine, never reading the store as it is after
  the block. Items it had already read into a page may still be handed out (a scan
  that reads pages checks once per page, see :func:`checked_pages`); a seeker reads
  nothing ahead, so its next ``seek`` raises.
- Writing to a store while one of its scans runs is allowed; whether the scan sees
  those writes is not specified (scans of a snapshot or transaction are consistent).

One read route: ``read_pages(ranges, reverse, limit, keys_only, cut)`` gives the
items of several ranges as pages (lists; a read of items with no limit may
stream, see :meth:`ReadView.read_pages`), its errors translated, the keys
without the first ``cut`` bytes all of them share (a scope's prefix); the default
reads ``scan``, and an engine overrides it with its fastest route (LevelDB leaves
the prefix out in the engine). The layers above read every scan through it.

Point operations at the engine's speed: a view may make its ``get``, ``put``
(and ``fast_replace``) the engine's own C call wrapped by
:func:`~keyspace.stores.translated` (a C callable that raises the view's
translation of an engine error: one vectorcall more than the engine call, no
Python frame), set on the instance. The layers above call the contract's
methods and never meet an engine error.

Checked reads (optional): a store may offer ``checked_reads(check, check_key,
expected)``, its point reads, scan pages and counts each made in one engine
transaction that also reads ``check_key`` of ``check`` (another store of the
same engine) and raises :class:`~keyspace.stores._checked.CheckFailed` where it
does not hold ``expected`` (LMDB; see :mod:`keyspace.stores._checked`, which
reads one snapshot where a store offers none).

Structure reads (every view has them; the defaults here are built on ``scan``, and
engines override them where they can do better):

- keys alone: ``read_pages(ranges, reverse, limit, keys_only=True)``, which
  engines give without reading or copying values; :func:`keys_in` reads the
  keys of one range through it;
- ``count(start, stop, without)``: how many keys ``[start, stop)`` holds;
- ``seeker(stop)``: a :class:`Seeker`, whose ``seek(start)`` gives the first key in
  ``[start, stop)``. A skip scan (the children of a scope: one seek per child) runs
  on one seeker: one cursor and one read transaction where the engine has them,
  instead of one scan call per seek.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial, wraps
from itertools import chain, islice, repeat, takewhile
from operator import gt, itemgetter, le
from typing import Any, TypeVar

from .._closing import Closing
from ..errors import (
    InvalidArgument,
    InvalidName,
    KeyspaceError,
    KeyTooLarge,
    StoreClosed,
    StoreError,
    WatchUnsupported,
    show_bytes,
)
from ._cut import cut_keys
from ._events import StoreWatch
from ._take import take_until, take_until_py

__all__ = [
    "BatchedWrites",
    "Capabilities",
    "Op",
    "ReadView",
    "Releasable",
    "ScanSeeker",
    "Seeker",
    "Store",
    "WriteView",
    "as_ops",
    "byte_after",
    "check_scan_limit",
    "checked_pages",
    "count_lacking",
    "cut_pages",
    "cut_ranges",
    "key_pages_of",
    "keys_in",
    "limited",
    "page_list",
    "pages_by_range",
    "pages_in_turn",
    "pages_of",
    "settled",
    "translated_pages",
]

_T = TypeVar("_T")
_V = TypeVar("_V")

Op = tuple[bytes, bytes | None]
"""One operation of an atomic batch: ``(key, value)`` puts, ``(key, None)`` deletes."""


@dataclass(frozen=True)
class Capabilities:
    """What an engine offers; the conformance suite and the layers above read it.

    ``max_key_size``: largest key in bytes (``None``: no practical limit).
    ``empty_keys``: whether ``b""`` is a valid key.
    ``atomic_batch``: ``write(ops)`` applies all operations or none.
    ``native_delete_range``: ``delete_range`` is one engine operation, not a scan.
    ``snapshots``: ``snapshot()`` gives a consistent read view.
    ``persistent``: data survives ``close()`` and reopening by URL.
    ``multi_process``: several processes may open the same store at once.
    ``max_batch_ops``: most operations one atomic batch may hold (``None``: no limit).
    ``max_value_size``: largest value in bytes (``None``: no practical limit).
    ``serialized_transactions``: an open ``transaction()`` excludes every other writer
    until it ends (LMDB, SQLite); writing through the store itself from the thread
    that holds the transaction raises :class:`~keyspace.errors.StoreError` instead of
    deadlocking. (One exception: an LMDB transaction that must release the writer
    lock to grow a small map; if another process commits meanwhile and the
    transaction has read, it raises :class:`~keyspace.errors.TransactionConflict`,
    nothing written.) When ``False``, a transaction reads the snapshot taken when it
    began plus its own writes, the store stays writable meanwhile, and the commit
    applies the transaction's writes over whatever is there (last writer wins, key by
    key) — unless ``guarded_reads``.
    ``guarded_reads``: (with ``serialized_transactions=False``) a transaction whose
    commit finds that a key or range it read was changed by another writer since
    it began writes nothing and raises a :class:`~keyspace.errors.StoreError`
    (etcd's ``TransactionConflict``); blind writes still win key by key.
    ``shared_in_process``: opening the store again in the same process shares the
    open engine (LMDB: one environment per path per process) instead of failing.
    """

    max_key_size: int | None
    empty_keys: bool = True
    atomic_batch: bool = True
    native_delete_range: bool = False
    snapshots: bool = True
    persistent: bool = True
    multi_process: bool = False
    max_batch_ops: int | None = None
    max_value_size: int | None = None
    serialized_transactions: bool = False
    guarded_reads: bool = False
    shared_in_process: bool = False
    watch: str | None = None
    """``"native"``: :meth:`Store.watch` reports every change, whoever made it
    (etcd; the memory store, whose every write goes through the one object);
    ``None``: the engine cannot report changes and ``watch`` raises
    :class:`~keyspace.errors.WatchUnsupported`."""
    access_control: bool = False
    """The server enforces per-user key permissions (etcd roles): the store offers
    ``access()``, ``etcd_range``, ``etcd_key`` and ``probe_key`` for
    :mod:`keyspace.access`."""
    reserved: tuple[tuple[bytes, bytes], ...] = ()
    """Key ranges ``[lo, hi)`` the store keeps for its own use, where no scope's key
    may be stored (etcd's revision probe key, which every user that access grants
    reaches may read: a key of one scope stored there would be read by all)."""
    key_tag: int = 0
    """Bytes in front of every key the store hands out that its engine does not
    store (a union of databases tells their keys apart by a tag): a key takes
    its length less these in the engine, as ``keyspace inspect`` counts it."""


def check_scan_limit(limit: Any) -> None:
    """Refuse a scan ``limit`` that is neither ``None`` (no limit) nor an int of 0
    or more with :class:`~keyspace.errors.InvalidArgument` naming it: a negative
    one (abstract-level's ``-1`` for "no limit") would read nothing, silently."""
    if limit is not None and (type(limit) is not int or limit < 0):
        raise InvalidArgument(f"limit must be 0 or more (None for no limit), not {show_bytes(limit)}")


def limit_checked(cls: type) -> None:
    """Make the ``scan`` of ``cls`` (its own or a base's, a mixin
    outside the contract's classes included) check their ``limit``
    (:func:`check_scan_limit`) when called, before the engine is asked: every
    adapter, view and wrapper of the store contract refuses a negative limit the
    same way (``__init_subclass__`` of :class:`ReadView` and of the asyncio
    views calls this). Cost: one Python frame and a comparison per call (a
    method whose parameters are not the contract's: its arguments packed too)."""
    for name in ("scan",):
        method = getattr(cls, name, None)
        if (
            method is None
            or getattr(method, "__isabstractmethod__", False)
            or hasattr(method, "_checks_limit")
        ):
            continue
        wrapped = wraps(method)(_limit_checking(method))
        wrapped._checks_limit = True  # type: ignore[attr-defined]
        setattr(cls, name, wrapped)


_SCAN_PARAMETERS = ("self", "start", "stop", "reverse", "limit")
_PACKED = 0x04 | 0x08  # CO_VARARGS | CO_VARKEYWORDS


def _limit_checking(method: Any) -> Callable[..., Any]:
    """``method`` behind :func:`check_scan_limit` of its ``limit``: with the
    contract's own parameters (``start``, ``stop``, keyword-only ``reverse`` and
    ``limit``, their defaults the contract's) where ``method`` has exactly those,
    so a call packs no arguments; else with ``*args, **kwargs``."""
    code = getattr(method, "__code__", None)
    if (
        code is not None
        and code.co_argcount == 3
        and code.co_kwonlyargcount == 2
        and not code.co_flags & _PACKED
        and code.co_varnames[:5] == _SCAN_PARAMETERS
        and method.__defaults__ == (b"", None)
        and method.__kwdefaults__ == {"reverse": False, "limit": None}
    ):

        def checked(
            self: Any,
            start: bytes = b"",
            stop: bytes | None = None,
            *,
            reverse: bool = False,
            limit: Any = None,
        ) -> Any:
            if limit is not None and (type(limit) is not int or limit < 0):
                check_scan_limit(limit)
            return method(self, start, stop, reverse=reverse, limit=limit)

        return checked

    def checked_packed(self: Any, *args: Any, **kwargs: Any) -> Any:
        limit = kwargs.get("limit")
        if limit is not None:
            check_scan_limit(limit)
        return method(self, *args, **kwargs)

    return checked_packed


def page_list(page: Iterable[_T]) -> list[_T]:
    """A page of :meth:`ReadView.read_pages` as a list: the page itself where it is
    one, else its items read now (a page a view streams). Cost: one type test
    for a list.

    >>> page_list(iter([(b"a", b"1")]))
    [(b'a', b'1')]
    """
    return page if type(page) is list else list(page)


def limited(items: Iterator[_T], limit: int | None) -> Iterator[_T]:
    """At most ``limit`` of ``items``, cut in C (``islice``): all of them for ``None``
    or a limit past ``sys.maxsize`` (which ``islice`` refuses), none for a
    negative one."""
    if limit is None or limit > sys.maxsize:
        return items
    return islice(items, max(limit, 0))


class ReadView(ABC):
    """Reads: the store itself, a snapshot, or a transaction. Every ``scan``
    refuses a negative ``limit`` (:func:`limit_checked`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        limit_checked(cls)

    def narrow(self, prefix: bytes) -> tuple[ReadView, int] | None:
        """``(inner, cut)`` when every key of this view that starts with ``prefix``
        is the key of ``inner`` without its first ``cut`` bytes (``cut <= len(prefix)``),
        ``inner`` being a view of the same state (the same snapshot or transaction;
        of the same store, writable when this view is) whose own fast paths then
        serve those keys; ``None`` (this default) when no such view exists. A
        :class:`~keyspace.stores._union.PrefixUnion` answers for its tags. Asked
        once per scope made. Cost: a prefix comparison per part."""
        return None

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """The keyspace error for an engine error (``key``: the key of the call, if
        any): the adapter's one translation point, which its own translating
        calls (:func:`~keyspace.stores.translated`) and the stores' helpers that
        read its engine (:func:`pages_by_range`, checked and watched reads)
        use. The layers above never call it: every method of the contract
        raises keyspace errors."""
        return StoreError(f"engine error: {exc}")

    @abstractmethod
    def get(self, key: bytes) -> bytes | None:
        """Return the value stored at ``key``, or ``None``. Cost: one point read."""

    @abstractmethod
    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Yield ``(key, value)`` for keys in ``[start, stop)`` in byte order
        (descending when ``reverse``), at most ``limit`` of them.

        Cost: one seek, then O(1) per item."""

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The items of each ``[start, stop)`` of ``ranges`` in turn, in the order
        given (each read descending with ``reverse``), at most ``limit`` in all,
        as non-empty lists; with ``keys_only`` every value is ``b""`` (values
        are not read). A read of items (not ``keys_only``) with no ``limit``
        may instead give pages its engine streams: iterators of the items,
        possibly empty, each read once and in order before the next page is
        asked for (:func:`page_list` makes any page a list). Where an engine
        makes a new object per item (plyvel), a list of a thousand items costs
        about a tenth of a scan's time more than items read one at a time,
        whose memory is used again at once. ``cut``: every range lies under one prefix of ``cut``
        bytes (the caller's promise: each start begins with it, each stop begins
        with it or is at or past its end, or is ``None``), and every key is
        given without it. Errors are this view's own (translated), and the
        pages of a snapshot or transaction end with it as its scans do. The one
        read route of the layers above: scans, short scans and counts of
        scopes.

        This default reads :meth:`scan` of each range, each given what is left
        of ``limit``, in the pages of :func:`pages_of` (keys only: the values
        read, and dropped), cut by :func:`cut_pages`; an engine overrides it where it reads faster
        (one cursor for several ranges, the lists it reads anyway, one
        statement for a short read, keys the engine gives without the prefix,
        keys read without their values). Every keys-only read of the layers
        above is this one (:func:`keys_in`). Cost: one scan per range and one
        list per page (two with ``cut``)."""
        read = _pages_of_scans(self, ranges, reverse, limit, keys_only)
        return cut_pages(read, cut) if cut else read

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """How many keys ``[start, stop)`` holds (0 when ``stop <= start``). With
        ``without=(byte, at)``, only the keys that hold no byte ``byte`` (0-255)
        from their index ``at`` on: a count of the keys of a range that one byte
        tells from the rest (a scope's own keys among its children's); a bad
        ``without`` raises :class:`~keyspace.errors.InvalidArgument`. This
        default counts (or tests) the keys of :func:`keys_in` in chunks, one C
        call a chunk (or a key), no Python code per key; engines that count
        natively (SQLite, etcd, memory) or filter while counting (SQLite: one
        query; LMDB: keys read without values) do. Cost: O(keys of the range)
        here."""
        if without is not None:
            byte, at = byte_after(*without)
            if stop is not None and stop <= start:
                return 0
            return count_lacking(keys_in(self, start, stop), byte, at)
        keys = self.read_pages([(start, stop)], False, None, True)  # keys-only pages are lists
        return sum(map(len, keys))  # type: ignore[arg-type]

    def seeker(self, stop: bytes | None = None) -> Seeker:
        """A :class:`Seeker` over the keys below ``stop`` (``None``: to the end);
        release it (or use it as a context manager) when done. This default seeks
        with one keys-only :meth:`read_pages` of one key per seek; engines seek one cursor of
        one read transaction instead (the seeker then reads one state of the
        store)."""
        return ScanSeeker(self, stop)


class DelegatedReads(ReadView):
    """A view whose reads are another view's: :meth:`get`, :meth:`scan`,
    :meth:`read_pages`, :meth:`count` and :meth:`seeker` call the same method of
    :meth:`_reads` with the same arguments (a read-only wrapper, a client's reader,
    the views of an asyncio plan). Cost: one call more per read."""

    @abstractmethod
    def _reads(self) -> ReadView:
        """The view that serves this one's reads (it may raise when there is none)."""

    def get(self, key: bytes) -> bytes | None:
        return self._reads().get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._reads().scan(start, stop, reverse=reverse, limit=limit)

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        return self._reads().read_pages(ranges, reverse, limit, keys_only, cut)

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        return self._reads().count(start, stop, without)

    def seeker(self, stop: bytes | None = None) -> Seeker:
        return self._reads().seeker(stop)


class PagedReads(ReadView):
    """A view whose :meth:`scan` and :meth:`read_pages` are the items (or keys) of
    its :meth:`_pages`, one list per page (a view whose engine reads in pages:
    the checked and watched reads). Cost: the pages' reads, chained."""

    @abstractmethod
    def _pages(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        cut: int = 0,
    ) -> Iterator[list[Any]]:
        """The items (``keys``: the keys) of ``[start, stop)`` in order, at most
        ``limit`` in all, as lists; items: each key without its first ``cut``
        bytes (the prefix every key of the range shares)."""

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return chain.from_iterable(self._pages(start, stop, reverse, limit))

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The pages of :meth:`_pages` themselves, their keys cut as they are read
        (:func:`pages_by_range`)."""
        key_pages = partial(self._pages, keys=True) if keys_only else None
        return pages_by_range(self, self._pages, ranges, reverse, limit, keys_only, cut, key_pages, True)


class Releasable(Closing):
    """A view that ends with :meth:`release` (:meth:`close` is the same); as a
    context manager it ends on exit."""

    __slots__ = ()

    def release(self) -> None:
        """End the view. Idempotent."""
        raise NotImplementedError

    def close(self) -> None:
        """:meth:`release`."""
        self.release()


class Seeker(Releasable):
    """A skip scan: :meth:`seek` jumps to the first key at or after a key, in any
    order of calls, below the seeker's ``stop``. Ends with :meth:`release`; using
    it afterwards raises :class:`~keyspace.errors.StoreClosed`."""

    __slots__ = ()

    def seek(self, start: bytes) -> bytes | None:
        """The first key in ``[start, stop)``, or ``None`` when there is none.
        Cost: one seek of the engine."""
        raise NotImplementedError


class ScanSeeker(Seeker):
    """The default :class:`Seeker`: each seek is a one-key :func:`keys_in` of the
    view (so on a store, each seek reads the store as it is then)."""

    __slots__ = ("_open", "_stop", "_view")

    def __init__(self, view: ReadView, stop: bytes | None) -> None:
        self._view = view
        self._stop = stop
        self._open = True

    def seek(self, start: bytes) -> bytes | None:
        if not self._open:
            raise StoreClosed("this seeker has been released")
        stop = self._stop
        if stop is not None and stop <= start:
            return None
        return next(keys_in(self._view, start, stop, limit=1), None)

    def release(self) -> None:
        self._open = False


_first = itemgetter(0)
_COUNT_CHUNK = 4096


def byte_after(byte: int, at: int) -> tuple[int, int]:
    """``without=(byte, at)`` of a ``count`` call, checked: :class:`InvalidArgument`
    for a ``byte`` that is not an int of 0-255 or an ``at`` that is not an int
    of 0 or more."""
    if type(byte) is not int or not 0 <= byte <= 255 or type(at) is not int or at < 0:
        raise InvalidArgument(
            f"count(without=({byte!r}, {at!r})): its byte must be an int of 0-255 and its index an int >= 0"
        )
    return byte, at


def count_lacking(keys: Iterable[bytes], byte: int, at: int) -> int:
    """How many of ``keys`` hold no byte ``byte`` from their index ``at`` on, read
    :data:`_COUNT_CHUNK` at a time; each key tested by one ``bytes.find`` called
    from C (``map``), no Python code per key. :class:`InvalidArgument` for a
    ``byte`` or ``at`` :func:`byte_after` refuses."""
    sought = bytes((byte_after(byte, at)[0],))
    keys = iter(keys)
    find = bytes.find
    total = 0
    while chunk := list(islice(keys, _COUNT_CHUNK)):
        total += list(map(find, chunk, repeat(sought), repeat(at))).count(-1)
    return total


class WriteView(ReadView):
    """Reads and writes: the store itself or a transaction."""

    fast_replace: Callable[[bytes, bytes], bytes | None] | None = None
    """:meth:`put` that returns the key's value before it (``None``: absent), the
    read and the write one engine call (LMDB's ``replace``: one B-tree descent
    for a new key), its errors the view's as :meth:`put`'s; ``None``: not offered
    (:meth:`get`, then :meth:`put`)."""

    def replace_many(self, keys: list[bytes], values: list[bytes]) -> list[bytes | None]:
        """:meth:`put_many` of ``zip(keys, values)`` (distinct keys; two lists, so
        that a caller holding a dict makes no pair objects) that returns each
        key's value before it (``None``: absent), in order. This default reads
        them all (:meth:`get` looped in C), then puts
        them; engines with a read-and-write call override it (LMDB: one
        ``replace`` per pair, looped in C)."""
        old = list(map(self.get, keys))
        self.put_many(list(zip(keys, values, strict=True)))
        return old

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """Put every ``(key, value)`` in order (a later pair on the same key wins);
        return how many pairs were read. Keys are checked as by :meth:`put`.

        In a transaction the pairs belong to it. On a store this is a bulk load,
        not promised atomic (etcd splits it); use :meth:`Store.write` for an atomic
        batch. Engines override it with their fastest batch path; the default is a
        loop of :meth:`put`."""
        put = self.put
        count = 0
        for key, value in items:
            put(key, value)
            count += 1
        return count

    @abstractmethod
    def put(self, key: bytes, value: bytes) -> None:
        """Store ``value`` at ``key``, replacing any previous value."""

    @abstractmethod
    def delete(self, key: bytes) -> None:
        """Remove ``key``; removing a missing key is not an error."""

    @abstractmethod
    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        """Remove every key in ``[start, stop)``. Native where the engine has it
        (``capabilities.native_delete_range``), else a scan and an atomic batch."""


class Store(Closing, WriteView):
    """An ordered byte store. Use as a context manager or call :meth:`close`.

    Outside a transaction every operation is atomic on its own. ``write(ops)``
    applies a batch atomically; ``transaction()`` gives consistent reads that see
    their own writes and commits atomically on a clean exit (discards on error);
    ``snapshot()`` gives a read-only consistent view.
    """

    capabilities: Capabilities
    url: str

    @abstractmethod
    def write(self, ops: Iterable[Op]) -> None:
        """Apply puts ``(key, value)`` and deletes ``(key, None)`` atomically, in
        order (a later op on the same key wins)."""

    def key_refusal(self, key: bytes) -> KeyspaceError:
        """The error this store gives for ``key``, a key it cannot store (over
        ``capabilities.max_key_size``, or empty where it takes none), naming the
        key and the limit as the engine counts them. Cost: nothing until called."""
        limit = self.capabilities.max_key_size
        if limit is not None and len(key) > limit:
            return KeyTooLarge(
                f"key of {len(key)} bytes is over the limit of {limit} bytes of {self.url}: {show_bytes(key)}"
            )
        return InvalidName(f"{self.url} cannot store the empty key b''")

    def check_batch(self, ops: Sequence[Op]) -> None:
        """Raise what :meth:`write` of ``ops`` would raise for the batch as a whole
        (:class:`~keyspace.errors.TransactionTooLarge` over the engine's size
        limit), writing nothing; by default nothing (no limit but
        ``capabilities.max_batch_ops``)."""

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """By default one atomic batch: :meth:`write` of the pairs."""
        batch = list(items)
        self.write(batch)
        return len(batch)

    @abstractmethod
    def transaction(self) -> AbstractContextManager[WriteView]:
        """A read-write transaction: commits when the block exits normally,
        discards everything when it raises."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[ReadView]:
        """A read-only view of the store as it was when the block was entered."""

    @abstractmethod
    def close(self) -> None:
        """Release the engine. Further use raises :class:`StoreClosed`. Idempotent."""

    def watch(
        self, ranges: Sequence[tuple[bytes, bytes | None]], *, start_revision: int | None = None
    ) -> StoreWatch:
        """A stream of the changes to keys in ``ranges`` (see :mod:`._events`).
        Engines whose ``capabilities.watch`` is ``None`` raise
        :class:`~keyspace.errors.WatchUnsupported` (this default)."""
        raise WatchUnsupported(
            f"{type(self).__name__} cannot watch for changes (capabilities.watch is None): "
            "its engine does not report writes; open the keyspace with changes=True (keyspace.open(url, "
            "changes=True): a change log written inside every write, which watches read), or use an etcd "
            "store to watch a scope"
        )


class BatchedWrites:
    """For adapters whose range deletes and batches are one atomic write of
    ``_apply(ranges, deletes, keys, values)``: the ranges deleted first, then the
    keys ``deletes``, then ``values[i]`` stored at ``keys[i]`` in order (a key of
    ``deletes`` is not among ``keys``), so an adapter can hand the pairs to its
    engine in one C loop with no tuple per pair."""

    __slots__ = ()

    def _apply(
        self,
        ranges: list[tuple[bytes, bytes | None]],
        deletes: list[bytes],
        keys: Collection[bytes],
        values: Collection[bytes],
    ) -> None:
        raise NotImplementedError

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._apply([(start, stop)], [], (), ())

    def write(self, ops: Iterable[Op]) -> None:
        deletes, puts = settled(ops)
        self._apply([], deletes, puts.keys(), puts.values())


def settled(ops: Iterable[Op]) -> tuple[list[bytes], dict[bytes, bytes]]:
    """The effect of ``ops`` applied in order: the keys whose last op deletes
    them, and the dict of the others' last values. Cost: one dict build, and one
    pass more when the batch deletes."""
    last = dict(ops)
    if None not in last.values():
        return [], last  # type: ignore[return-value]  # no None value: checked
    deletes = [k for k, v in last.items() if v is None]
    return deletes, {k: v for k, v in last.items() if v is not None}


def as_ops(deletes: list[bytes], puts: dict[bytes, bytes]) -> list[Op]:
    """``deletes`` and ``puts`` as one list of ops, ``(key, None)`` for a delete."""
    ops: list[Op] = [(k, None) for k in deletes]
    ops.extend(puts.items())
    return ops


PAGE_FIRST = 16
"""Items in the first page of :func:`pages_of` (then four times more each page)."""
PAGE_MOST = 1024
"""Most items in one page of :func:`pages_of`."""


def _take_chain(items: Iterator[_T], bound: bytes | None, size: int, descending: bool) -> list[_T]:
    """:func:`~keyspace.stores._take.take_until` with ``itertools`` alone (its
    route without the C module, and every page with no bound): ``(bound,) >
    (k, v)`` is ``k < bound``, so with a bound the items are ``(key, value)``
    pairs."""
    if bound is not None:
        items = takewhile(partial(le if descending else gt, (bound,)), items)
    return list(islice(items, max(size, 0)))


def pages_of(
    items: Iterator[_T],
    bound: bytes | None = None,
    descending: bool = False,
    limit: int | None = None,
    check: Callable[[], object] | None = None,
    translate: Callable[[BaseException], KeyspaceError] | None = None,
    cut: int = 0,
    is_record: Callable[[bytes, bytes], bool] | None = None,
    record_size: int = -1,
) -> Generator[list[_T], None, None]:
    """At most ``limit`` of ``items`` (an engine's iterator) as non-empty lists of
    :data:`PAGE_FIRST` items, then four times more each time up to
    :data:`PAGE_MOST`, ending before the first item past ``bound`` (``None``: at
    the end of ``items``; then they are ``(key, value)`` pairs, see
    :func:`~keyspace.stores._take.take_until`: ascending, a key ``>= bound``,
    ``descending``, a key ``< bound``), calling ``check()`` before each page is
    read. ``cut``, ``is_record`` and ``record_size`` as ``take_until`` takes
    them: each key without its first ``cut`` bytes, an engine's own entries
    left out as they are read. ``translate``: every error of the
    reads that is not already a :class:`~keyspace.errors.KeyspaceError` is
    raised as ``translate(exc)``, the engine's chained (as
    :func:`translated_pages`, with no generator more). Cost per item: the
    engine's step and, with a bound and the C module, one ``memcmp``; per page,
    one call (and one of ``check``). It reads up to one page ahead
    of its caller; ``chain.from_iterable`` of it gives the items again."""
    take: Callable[..., list[_T]] = _take_chain if bound is None or take_until is None else take_until
    take_with: Callable[..., list[_T]] | None = None  # with the options, passed one by one (no tuple a page)
    if cut or is_record is not None:
        take_with = take_until_py if take_until is None else take_until
    left = limit
    size = PAGE_FIRST
    try:
        while left is None or left > 0:
            want = size if left is None else min(size, left)
            if check is not None:
                check()
            if take_with is None:
                page = take(items, bound, want, descending)
            else:
                page = take_with(items, bound, want, descending, cut, is_record, record_size)
            if page:
                yield page
            if len(page) < want:
                return
            if left is not None:
                left -= len(page)
            size = min(size * 4, PAGE_MOST)
    except KeyspaceError:
        raise
    except Exception as exc:
        if translate is None:
            raise
        raise translate(exc) from exc


def checked_pages(items: Iterator[_T], check: Callable[[], object]) -> Iterator[list[_T]]:
    """The items of ``items`` as the pages of :func:`pages_of`, calling ``check()``
    before each page is read: how the views of a snapshot or transaction whose
    engine iterates item by item (LevelDB; the pending writes of an overlay
    transaction) make their scans end with the block (``check`` raises
    :class:`~keyspace.errors.StoreClosed` once it has ended), so nothing is read
    after the end and a page already read may still be handed out. Cost: one call
    of ``check`` and one list per page, no Python code per item."""
    return pages_of(items, check=check)


def _with_empty_values(keys: list[bytes]) -> list[tuple[bytes, bytes]]:
    """A keys-only page: ``(key, b"")`` for each of ``keys`` (one C loop)."""
    return list(zip(keys, repeat(b"")))


def _paired_pages(
    key_pages: Callable[[bytes, bytes | None, bool, int | None], Iterable[list[bytes]]],
    start: bytes,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
) -> Iterable[list[tuple[bytes, bytes]]]:
    """The pages of ``key_pages`` of one range, each made a keys-only page."""
    return map(_with_empty_values, key_pages(start, stop, reverse, limit))


def key_pages_of(keys: Iterable[bytes]) -> Iterator[list[tuple[bytes, bytes]]]:
    """The keys-only pages (``(key, b"")`` each, in the pages of
    :func:`pages_of`) of ``keys``, an engine's keys of one range: how a view
    reads ``read_pages(..., keys_only=True)`` from an iterator of keys. Cost: no
    Python code per key."""
    return pages_of(zip(keys, repeat(b"")))


def keys_in(
    view: ReadView,
    start: bytes = b"",
    stop: bytes | None = None,
    *,
    reverse: bool = False,
    limit: int | None = None,
) -> Iterator[bytes]:
    """The keys of ``view`` in ``[start, stop)`` in byte order (descending with
    ``reverse``), at most ``limit``: the keys of its keys-only
    :meth:`~ReadView.read_pages` of the range (values unread where the engine
    can), the one keys-only read of the layers above. A negative ``limit`` is
    refused (:func:`check_scan_limit`).

    >>> from keyspace.stores import MemoryStore
    >>> store = MemoryStore()
    >>> store.write([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    >>> list(keys_in(store, b"b")), list(keys_in(store, reverse=True, limit=2))
    ([b'b', b'c'], [b'c', b'b'])

    Cost: the read's pages, one C call a page and no Python code per key."""
    if limit is not None:
        check_scan_limit(limit)
    pages = view.read_pages([(start, stop)], reverse, limit, True)
    return chain.from_iterable(map(_keys_of_page, pages))


_keys_of_page = partial(map, _first)
"""The keys of one page, as an iterator (in C)."""


def _pages_of_scans(
    view: ReadView,
    ranges: Sequence[tuple[bytes, bytes | None]],
    reverse: bool,
    limit: int | None,
    keys_only: bool,
) -> Iterator[list[tuple[bytes, bytes]]]:
    """:meth:`ReadView.read_pages` read through the view's ``scan``, one range
    after the other (``keys_only``: each value read, and dropped)."""

    def pages(start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> Iterator[list[Any]]:
        items = view.scan(start, stop, reverse=reverse, limit=limit)
        return key_pages_of(map(_first, items)) if keys_only else pages_of(items)

    return pages_in_turn(pages, ranges, reverse, limit)


def pages_in_turn(
    pages: Callable[[bytes, bytes | None, bool, int | None], Iterable[list[_T]]],
    ranges: Sequence[tuple[bytes, bytes | None]],
    reverse: bool,
    limit: int | None,
) -> Iterator[list[_T]]:
    """The pages ``pages(start, stop, reverse, left)`` gives for each range of
    ``ranges`` in turn, each asked for what is left of ``limit``: how a view
    whose engine reads one range at a time gives ``read_pages`` of several.
    Cost: one call of ``pages`` per range read."""
    left = limit
    for start, stop in ranges:
        if left is not None and left <= 0:
            return
        for page in pages(start, stop, reverse, left):
            if left is not None:
                left -= len(page)
            yield page


def pages_by_range(
    view: ReadView,
    pages: Callable[..., Iterable[list[Any]]],
    ranges: Sequence[tuple[bytes, bytes | None]],
    reverse: bool,
    limit: int | None,
    keys_only: bool,
    cut: int = 0,
    key_pages: Callable[[bytes, bytes | None, bool, int | None], Iterable[list[bytes]]] | None = None,
    cuts: bool = False,
) -> Iterable[list[tuple[bytes, bytes]]]:
    """:meth:`ReadView.read_pages` of ``view``, whose engine reads one range at a
    time: ``pages(start, stop, reverse, limit)`` gives the engine's pages of one
    range (its errors raw, or the view's own), read one range after the other
    (:func:`pages_in_turn`) and translated by ``view.translate``, their keys
    cut by :func:`cut_pages`. A read of one range of at most :data:`PAGE_MOST`
    items is read now and given as a list of its pages (no generator between
    the engine and the caller of a short read); the others are translated as
    they are read. Keys only: ``key_pages(start, stop, reverse, limit)``, the
    engine's pages of the keys alone (values unread), each made a page of
    ``(key, b"")`` in C; without it, the default (the values read, and dropped).
    ``cuts``: ``pages`` takes ``cut`` (a keyword) and gives the keys without
    their first ``cut`` bytes itself, as it reads them (no page cut again)."""
    read: Iterable[list[tuple[bytes, bytes]]]
    if keys_only:
        if key_pages is None:
            read = _pages_of_scans(view, ranges, reverse, limit, True)
            return cut_pages(read, cut) if cut else read
        pages = partial(_paired_pages, key_pages)
    by_pages = cuts and not keys_only and cut > 0  # ``pages`` cuts the keys as it reads them
    try:
        if len(ranges) != 1:
            each = partial(pages, cut=cut) if by_pages else pages
            read = translated_pages(pages_in_turn(each, ranges, reverse, limit), view.translate)
        else:
            start, stop = ranges[0]
            made = (
                pages(start, stop, reverse, limit, cut=cut)
                if by_pages
                else pages(start, stop, reverse, limit)
            )
            short = limit is not None and limit <= PAGE_MOST
            read = list(made) if short else translated_pages(made, view.translate)
    except KeyspaceError:
        raise
    except Exception as exc:
        raise view.translate(exc) from exc
    return cut_pages(read, cut) if cut and not by_pages else read


def cut_pages(pages: Iterable[list[tuple[bytes, _V]]], cut: int) -> Iterable[list[tuple[bytes, _V]]]:
    """``pages`` with the first ``cut`` bytes of every key dropped (``cut=0``:
    ``pages`` themselves): how a view whose engine gives whole keys serves
    ``read_pages(..., cut=n)``. A list of pages stays a list (read now); other
    pages are cut as they are read. Cost: per page one C call, per item a new
    key and pair.

    >>> list(cut_pages([[(b"p/a", b"1")], [(b"p/b", b"2")]], 2))
    [[(b'a', b'1')], [(b'b', b'2')]]
    """
    if not cut:
        return pages
    if type(pages) is list:
        return [cut_keys(page, cut) for page in pages]
    return map(cut_keys, pages, repeat(cut))


def cut_ranges(
    ranges: Sequence[tuple[bytes, bytes | None]], cut: int
) -> tuple[bytes, list[tuple[bytes, bytes | None]]]:
    """``(prefix, ranges')``: the ``cut``-byte prefix every range of ``ranges``
    lies under and each range as a view holding the keys under it without it
    holds them (a stop at or past the prefix's end is ``None``): how an engine
    that leaves a prefix out of its keys (LevelDB's ``prefixed_db``) reads
    ``read_pages(..., cut=n)``. Raises :class:`ValueError` for ranges that do
    not lie under one prefix of ``cut`` bytes. Cost: one comparison per range.

    >>> cut_ranges([(b"p/a", b"p/c"), (b"p/x", b"p0")], 2)
    (b'p/', [(b'a', b'c'), (b'x', None)])
    """
    prefix = ranges[0][0][:cut] if ranges else b""
    out: list[tuple[bytes, bytes | None]] = []
    for start, stop in ranges:
        if len(prefix) != cut or not start.startswith(prefix):
            raise ValueError(f"the range starting at {start!r} does not lie under one {cut}-byte prefix")
        out.append((start[cut:], stop[cut:] if stop is not None and stop.startswith(prefix) else None))
    return prefix, out


def translated_pages(
    pages: Iterable[list[_T]], translate: Callable[[BaseException], KeyspaceError]
) -> Iterator[list[_T]]:
    """``pages`` (an engine's pages, read lazily) with every error that is not
    already a :class:`~keyspace.errors.KeyspaceError` raised as
    ``translate(exc)``, the engine's error chained: how a view whose pages come
    from the engine's raw iterators gives them out translated. Cost: one
    generator step per page, nothing per item."""
    try:
        yield from pages
    except KeyspaceError:
        raise
    except Exception as exc:
        raise translate(exc) from exc
