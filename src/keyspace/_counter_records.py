"""Accounting's counter records updated in place: the read, add, check and write
of each record a commit touches (:meth:`keyspace._accounting.Accounting._update`).

A record is six little-endian int64 (``keys, bytes, subtree_keys,
subtree_bytes, quota_keys, quota_bytes``; a quota of -1: none). :func:`bump`
adds each row's deltas to the record at its key, read with ``get`` and written
with ``put`` (``delete`` where it becomes all zero with no quota), and answers
what the caller raises: ``None`` when every row was written; ``("keys" |
"bytes", index, limit, size)`` for the first row whose increase takes its
subtree past its quota (``check``); ``("unreadable", index)`` for a record that
is not 48 bytes. The engine's own errors pass through raw. The rows before the
one answered are written: the caller discards the commit.

``bump`` is the C function of ``keyspace._counter_records_accel`` where it is
built, else :func:`python_bump`, which gives the same results. Cost per row:
the engine's get and put and, in C, no Python frame.

>>> records = {}
>>> python_bump(records.get, records.__setitem__, records.pop, [((), b"r", 1, 5, 1, 5)], True)
>>> import struct; struct.unpack("<6q", records[b"r"])
(1, 5, 1, 5, -1, -1)
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["NONE", "RECORD", "bump", "python_bump"]

RECORD = struct.Struct("<6q")
NONE = -1
"""A quota field that holds no quota."""

Row = tuple[Any, bytes, int, int, int, int]
"""``(path, record key, own_keys, own_bytes, subtree_keys, subtree_bytes)`` deltas."""


def python_bump(
    get: Callable[[bytes], bytes | None],
    put: Callable[[bytes, bytes], object],
    delete: Callable[[bytes], object],
    rows: Sequence[Row],
    check: bool,
) -> tuple[Any, ...] | None:
    """The reference of :data:`bump` (module docstring)."""
    unpack_record, pack_record = RECORD.unpack, RECORD.pack
    for index, (_path, key, a, b, c, d) in enumerate(rows):
        raw = get(key)
        if raw is None:
            own_keys = own_bytes = sub_keys = sub_bytes = 0
            max_keys = max_bytes = NONE
        elif len(raw) == RECORD.size:
            own_keys, own_bytes, sub_keys, sub_bytes, max_keys, max_bytes = unpack_record(raw)
        else:
            return ("unreadable", index)
        own_keys += a
        own_bytes += b
        sub_keys += c
        sub_bytes += d
        if check:
            if max_keys != NONE and c > 0 and sub_keys > max_keys:
                return ("keys", index, max_keys, sub_keys)
            if max_bytes != NONE and d > 0 and sub_bytes > max_bytes:
                return ("bytes", index, max_bytes, sub_bytes)
        if own_keys or own_bytes or sub_keys or sub_bytes or max_keys != NONE or max_bytes != NONE:
            put(key, pack_record(own_keys, own_bytes, sub_keys, sub_bytes, max_keys, max_bytes))
        else:
            delete(key)
    return None


bump: Callable[..., tuple[Any, ...] | None] = python_bump
with contextlib.suppress(ImportError):  # no C compiler at install: the Python function, same results
    from ._counter_records_accel import bump
