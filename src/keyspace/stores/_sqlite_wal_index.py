"""The header of an SQLite database's WAL index, read from its ``-shm`` file: a
change detector for the database that costs no statement.

In WAL mode every commit, of any connection of any process, rewrites the
header at the start of the ``-shm`` file (the WAL index SQLite shares between
processes: a version, the count of commits ``iChange``, the WAL's last frame,
its salts and a checksum of them; 48 bytes, kept twice, the first copy written
last), and every reader takes the header from there when it begins a read
transaction. ``PRAGMA data_version`` moves exactly when the header a read
transaction begins with differs from the one the connection's previous read
transaction began with. So the header bytes read right after a statement are
equal to those read at an earlier moment only when no commit landed between
the two: the same answer as ``data_version``, without running a statement
(which, outside a transaction, takes and drops a WAL read lock: a few system
calls). A checkpoint rewrites the header too, with no change of data: a false
alarm, never a missed commit.

The format is SQLite's WAL-index format (``iVersion`` 3007000, unchanged since
WAL mode came in 3.7.0; processes of different SQLite versions share the file,
so it does not change). The header is read where SQLite itself mapped the
``-shm`` file into this process (found once in ``/proc/self/maps``; elsewhere
than Linux, or where SQLite keeps the index in heap memory, there is none):
opening the file here would not do, as closing any descriptor of a file drops
every POSIX lock this process holds on it, SQLite's included, and another
process would then take this one for gone and rebuild or truncate the index.
That mapping lasts while any connection of this process to the database is
open; a caller reads it only while its own connection is (under the lock its
``close`` takes). :func:`wal_index_header` offers the header only where the
connection reads that very file: WAL mode, normal locking, the main database
file SQLite names itself, SQLite's mapping of its ``-shm`` file from offset 0
found, holding a header that is initialised, of that version, of the
database's page size (or of none: no frame written yet), and whose two
copies agree.
"""

from __future__ import annotations

import ctypes
import sqlite3
import struct
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

__all__ = ["WalIndexHeader", "wal_index_header"]

_HEADER = 48
"""Bytes of one copy of the WAL-index header."""
_VERSION = 3007000
"""The WAL-index format version SQLite writes in the header's first field."""
_FIELDS = struct.Struct("=IIIBBH")
"""The header's first fields, in the machine's byte order: iVersion, unused,
iChange, isInit, bigEndCksum, szPage (the page size; 1 for 65,536; 0 while the
WAL holds no frame)."""
_MAPS = "/proc/self/maps"


class WalIndexHeader:
    """The first copy of the WAL-index header of one database where SQLite mapped
    it in this process: :attr:`read` gives its 48 bytes as they are now (a copy
    of memory, no system call). Read it only while a connection of this process
    to the database is open (see the module docstring)."""

    __slots__ = ("read",)

    def __init__(self, address: int) -> None:
        memory = (ctypes.c_char * _HEADER).from_address(address)
        raw: Any = type(memory).raw  # the array's bytes, as one C call (no frame)
        self.read: Callable[[], bytes] = partial(raw.__get__, memory)


def _mapped_at(path: str) -> int | None:
    """The address where this process maps ``path`` from its offset 0 (SQLite's
    mapping of a ``-shm`` file, at least two headers long), or ``None``: none,
    or more than one (another file once at that path, still mapped)."""
    if not sys.platform.startswith("linux"):
        return None
    found: list[int] = []
    try:
        with open(_MAPS, encoding="utf-8", errors="surrogateescape") as maps:
            for line in maps:
                fields = line.rstrip("\n").split(maxsplit=5)
                if len(fields) == 6 and fields[5] == path and int(fields[2], 16) == 0:
                    low, high = (int(end, 16) for end in fields[0].split("-"))
                    if fields[1].startswith("r") and high - low >= 2 * _HEADER:
                        found.append(low)
    except (OSError, ValueError):
        return None
    return found[0] if len(found) == 1 else None


def wal_index_header(conn: sqlite3.Connection) -> WalIndexHeader | None:
    """The WAL-index header ``conn`` reads its database's state from, where
    SQLite mapped its ``-shm`` file in this process, or ``None`` where it cannot
    be told to be that (not WAL mode, exclusive locking, a database in memory
    or in a temporary file, no mapping found, a header not initialised, of
    another version or page size, or whose two copies differ). Runs a few
    statements on ``conn`` (the caller holds its lock; ``conn`` outside a
    transaction); ``sqlite3.Error`` passes up."""
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the WAL and maps its index
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        return None
    if str(conn.execute("PRAGMA locking_mode").fetchone()[0]).lower() != "normal":
        return None
    files = {str(row[1]): str(row[2] or "") for row in conn.execute("PRAGMA database_list").fetchall()}
    path = files.get("main", "")
    if not path:
        return None
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    address = _mapped_at(path + "-shm")
    if address is None:
        return None
    for _ in range(3):  # a commit may be rewriting the copies: they differ meanwhile
        both = ctypes.string_at(address, 2 * _HEADER)
        first, second = both[:_HEADER], both[_HEADER:]
        if first == second:
            break
    version, _unused, _change, initialised, _big_end, size = _FIELDS.unpack_from(first)
    if (
        first != second
        or version != _VERSION
        or initialised != 1
        or (65536 if size == 1 else size) not in (0, page_size)  # 0: no frame written yet
    ):
        return None
    return WalIndexHeader(address)
