"""LMDB's records of named databases in the unnamed database, told apart from data
by the engine itself, and the reads of the unnamed database that leave them out.

LMDB keeps each named database as one record of the unnamed database: its key is
the database's name, its value the database's descriptor (``MDB_db``,
:data:`RECORD_SIZE` bytes), and its node carries the ``F_SUBDATA`` flag, which
py-lmdb does not expose. Such a record is never data, and data is never one: LMDB
refuses to write or delete it as data. A key is a record exactly when LMDB opens
it as a database (``open_db(key, create=False)`` in a read transaction succeeds;
a plain key is ``MDB_INCOMPATIBLE``, a missing one ``MDB_NOTFOUND``), which is how
LMDB's own ``mdb_dump -a`` tells them. Two facts of LMDB's format decide most keys
without asking: a record's value is a descriptor (exactly :data:`RECORD_SIZE`
bytes), and its key holds no NUL byte (LMDB reads a database name up to its first
NUL, so a name never holds one; asked, ``open_db`` would open the database named
by the key's part before the NUL).

:class:`Records` (one per environment and process, held by its shared
environment) asks and remembers the answers; :func:`drop_items`,
:func:`filtered` and :func:`getter` are the reads of the
unnamed database with its records left out, which every read route of its store
and views goes through.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain, islice, repeat
from typing import Any

import lmdb

from ...errors import StoreClosed
from .._base import limited
from .._take import may_be_record, take_until

__all__ = [
    "RECORD_SIZE",
    "Records",
    "checked_read",
    "delete_data",
    "drop_items",
    "filtered",
    "getter",
    "getter_py",
    "name_candidates",
    "name_candidates_py",
    "point_read",
    "records_in",
]

RECORD_SIZE = 8 + 5 * struct.calcsize("P")
"""The bytes of LMDB's descriptor of a database (``MDB_db``: a 32-bit pad, 16-bit
flags and depth, five ``size_t`` counts and the root page): the value of every
record of a named database, 48 on 64-bit builds."""


def records_in(records: Records | None, start: bytes, stop: bytes | None) -> Records | None:
    r"""``records`` for a read of ``[start, stop)``, or ``None`` where its bounds
    alone say it holds no record: ``start`` holds a NUL byte and ``stop`` is at
    most the successor of ``start``'s bytes before it (``A 01`` for ``start = A
    00 …``), so every key of the range starts with ``A 00``, and a database's
    name holds no NUL. Every scope of the tuple and AsciiHex schemes, and every
    LengthPrefixed one of short names, reads such ranges: its reads and range
    deletes then test no item. Cost: one ``find``, one slice and one comparison.

    >>> records_in(None, b"a", b"b") is None
    True
    >>> records_in("R", b"t\x00a", b"t\x00\xff"), records_in("R", b"t\x00a", b"t\x02")
    (None, 'R')
    """
    if records is None or stop is None:
        return records
    at = start.find(0)
    if at >= 0 and stop <= start[:at] + b"\x01":
        return None
    return records


_ANSWERS_MOST = 4096
"""Answers remembered per environment; past it they are all forgotten at once."""

_CHUNK = 256
"""Items an iterator of the unnamed database reads ahead to look for records at once."""

_CLEAR_MOST = 256
"""Ranges remembered per environment as holding no record; past it all are forgotten at once."""


def name_candidates_py(items: list[Any], size: int) -> list[int]:
    """The indices of ``items`` (``(key, value)`` pairs or keys) that may be
    database records: a pair whose value has ``size`` bytes and whose key holds
    no NUL byte, or a key holding no NUL byte. The reference of the C
    ``name_candidates`` (one ``memchr`` an item).

    >>> name_candidates_py([(b"a", b"x" * 48), (b"a\\x00", b"x" * 48), (b"b", b"x"), b"c", b"c\\x00"], 48)
    [0, 3]
    """
    return [index for index, item in enumerate(items) if may_be_record(item, size)]


name_candidates: Callable[[list[Any], int], list[int]]
RecordGetter: Any
PointRead: Any
try:
    from .._pairs_accel import PointRead, RecordGetter, name_candidates
except ImportError:  # pragma: no cover - the optional C module is not built
    name_candidates = name_candidates_py
    RecordGetter = PointRead = None


class Records:
    """Which keys of one environment's unnamed database are records of named
    databases, as LMDB says (see the module docstring).

    An answer is asked of LMDB and remembered for the value the key held when
    asked: the same value gives the same answer, another value is asked again.
    A record's value is its database's descriptor, which every commit to that
    database changes, so a database that another process drops, and data of its
    name written there since (of :data:`RECORD_SIZE` bytes), is seen at once.

    Cost: nothing for a key that holds a NUL byte or a value of another size; a
    dict lookup and a comparison of the value for a key asked before about that
    value (a record: once per commit to its database that a read comes after);
    else one read transaction and one
    ``open_db`` (about 1 to 7 µs, measured), under the lock that serialises the
    process's ``open_db`` calls (LMDB allows one transaction at a time to open
    databases). The environment is opened with one database slot more than
    ``max_dbs`` asks, which only these questions use, so they work whatever
    ``max_dbs`` is and however many databases are open."""

    __slots__ = ("_answers", "_clear", "_env", "_lock")

    def __init__(self, env: Any, lock: threading.RLock) -> None:
        self._env = env
        self._lock = lock
        self._answers: dict[bytes, tuple[bool, bytes]] = {}  # key: (answer, the value asked about)
        # (start, stop): the id of a state in which that range held no record
        self._clear: dict[tuple[bytes, bytes | None], int] = {}

    def clear_in(self, state: int, start: bytes, stop: bytes | None) -> bool:
        """Whether ``[start, stop)`` was read in state ``state`` (the id of a read
        transaction: two of one id read one state of the environment) and held no
        record then, so holds none in every read transaction of that id. Cost:
        one dict lookup."""
        return self._clear.get((start, stop)) == state

    def note_clear(self, state: int, start: bytes, stop: bytes | None) -> None:
        """Remember that ``[start, stop)`` holds no record in state ``state`` (the id
        of the read transaction that read all of it): :meth:`clear_in`."""
        clear = self._clear
        if len(clear) >= _CLEAR_MOST:
            clear.clear()
        clear[(start, stop)] = state

    def is_record(self, key: bytes, value: bytes) -> bool:
        """Whether ``key``, holding ``value`` in the unnamed database, is LMDB's
        record of a named database. Raises py-lmdb's errors (the caller
        translates them)."""
        if len(value) != RECORD_SIZE or 0 in key:
            return False
        known = self._answers.get(key)
        if known is not None and known[1] == value:
            return known[0]
        answer = self._ask(key)
        answers = self._answers
        if len(answers) >= _ANSWERS_MOST:
            answers.clear()
        answers[key] = (answer, bytes(value))
        return answer

    def _ask(self, key: bytes) -> bool:
        env = self._env
        with self._lock:
            txn = env.begin()
            try:
                env.open_db(key, txn=txn, create=False)
            except (lmdb.IncompatibleError, lmdb.NotFoundError):
                return False
            finally:
                txn.abort()  # a database it opened closes with it: no slot stays taken
            return True

    def forget(self) -> None:
        """Forget every answer: this process has created or dropped a database."""
        self._answers.clear()
        self._clear.clear()


def delete_data(records: Records | None, txn: Any, key: bytes, db: Any = None) -> bool:
    """Delete ``key`` of database ``db`` of ``txn`` (default: the transaction's) as
    ``txn.delete`` does, except that a record of a named database (``records``
    given: the unnamed database) is no data: deleting it is deleting nothing
    (``False``), where LMDB refuses it and spoils the transaction. Cost: a point
    read more before deleting a key that holds no NUL byte."""
    if records is not None and 0 not in key:
        value = txn.get(key, db=db)
        if value is not None and len(value) == RECORD_SIZE and records.is_record(key, value):
            return False
    return bool(txn.delete(key, db=db))


def drop_items(records: Records, page: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``page`` without the records among its items. Cost: one C pass over the
    page (:func:`name_candidates`), then :meth:`Records.is_record` of the
    candidates; the page itself when there is none."""
    found = name_candidates(page, RECORD_SIZE)
    if not found:
        return page
    is_record = records.is_record
    gone = {i for i in found if is_record(*page[i])}
    if not gone:
        return page
    return [item for i, item in enumerate(page) if i not in gone]


def filtered(records: Records, items: Iterator[Any], limit: int | None) -> Iterator[Any]:
    """At most ``limit`` of ``items`` (an engine iterator of pairs over the unnamed
    database) without the records among them, read ahead :data:`_CHUNK` at a
    time (the first chunk: ``limit`` items where fewer): one C pass a chunk, no
    Python code per item."""
    first = _CHUNK if limit is None else max(1, min(limit, _CHUNK))  # a short scan reads little ahead
    chunks: Iterator[list[Any]]
    if take_until is not None and first == _CHUNK:  # each chunk read in C, no frame
        chunks = iter(partial(take_until, items, None, _CHUNK, False), [])
    else:
        sizes = chain((first,), repeat(_CHUNK))
        chunks = iter(lambda: list(islice(items, next(sizes))), [])
    return limited(chain.from_iterable(map(partial(drop_items, records), chunks)), limit)


def getter_py(records: Records, get: Callable[[bytes], bytes | None]) -> Callable[[bytes], bytes | None]:
    """``get`` (a point read of the unnamed database, errors raw) that finds no
    record: a key that is one reads as absent. The reference of :func:`getter`:
    one Python frame and a length comparison more than ``get``."""
    is_record = records.is_record

    def fast_get(key: bytes) -> bytes | None:
        value = get(key)
        if value is not None and len(value) == RECORD_SIZE and 0 not in key and is_record(key, value):
            return None
        return value

    return fast_get


def getter(records: Records, get: Callable[[bytes], bytes | None]) -> Callable[[bytes], bytes | None]:
    """:func:`getter_py`, made by the C ``RecordGetter`` where the optional module
    is built: one C call around ``get`` and a size comparison (LMDB is asked, in
    Python, only about a value of a record's size under a key holding no NUL)."""
    if RecordGetter is None:
        return getter_py(records, get)
    return RecordGetter(get, records.is_record, RECORD_SIZE)  # type: ignore[no-any-return]


def point_read(
    begin: Callable[[], Any], shared: Any, records: Records | None, slow: Callable[[bytes], bytes | None]
) -> Any:
    """The C ``PointRead`` of a database where the optional module is built, else
    ``None``: one C call that reads ``shared.resizing``, begins a read
    transaction with ``begin`` (of the database), gets the key, aborts, and
    leaves a database's record out where ``records`` is given (the unnamed
    database: :meth:`Records.is_record`); ``slow(key)`` where the map is being
    resized, the read is closed (its ``close()``), or py-lmdb raises (or a
    check, :class:`~keyspace.errors.StoreClosed`). Its reference is
    :meth:`keyspace.stores.lmdb.LMDBStore.get`, which a store uses where this
    is ``None``. Cost: no Python frame (about 100 ns less than the method's)."""
    if PointRead is None:
        return None
    is_record = None if records is None else records.is_record
    return PointRead(begin, shared, is_record, RECORD_SIZE, slow, (lmdb.Error, StoreClosed))


def checked_read(
    point: Any, check: Callable[[Any], bool], reference: Callable[[bytes], bytes | None]
) -> Callable[[bytes], bytes | None]:
    """A store's point read made only where ``check(txn)`` holds: ``point``'s
    :meth:`PointRead.checked` (one C call, the check asked once per state of
    the environment) where the store has its point read in C, else
    ``reference``, the Python method that is its reference and its route where
    the check fails or py-lmdb raises."""
    return reference if point is None else point.checked(check, reference)
