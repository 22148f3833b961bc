"""The high-contention allocator of FoundationDB's directory layer: short
prefixes, each handed out once.

Counters ``counters + pack((start,))`` (an i64 little-endian count) say how many
prefixes the window ``[start, start + size)`` gave; ``recent + pack((n,))`` marks
the integers the current window gave. A window is 64 integers wide while its
start is below 255, 1024 below 65535, else 8192; once half of it is given, the
next window begins where it ends and the marks of the earlier ones are dropped.
A candidate is drawn at random within the window until one is not marked, and
the prefix is ``content + pack((candidate,))`` (``15 01`` for 1, ``15 2a`` for
42, ``16 01 00`` for 256).

Here the allocation runs inside one transaction of the keyspace's store, which
the engines make exclusive (LMDB's write lock, SQLite's ``BEGIN IMMEDIATE``, a
lock per store object for the one-process engines) or retry on conflict (etcd),
so two allocations never read the same counters: the draw stays random within
the window, as FoundationDB's, only to keep the prefixes written the same kind.
Cost: a reverse seek, two point reads and two writes, and a point read and a
write per candidate drawn (expected under two while the window is half empty).
"""

from __future__ import annotations

import random
import struct

from ..stores._base import WriteView, keys_in
from ..tuples import pack
from ._nodes import Tree

__all__ = ["allocate", "window_size"]

_COUNT = struct.Struct("<q")
_DRAWS = 4096
"""Random draws before the window is walked in order (never reached while the
window is less than half given, as the counter guarantees)."""


def window_size(start: int) -> int:
    """The width of the window that begins at ``start``."""
    if start < 255:
        return 64
    if start < 65535:
        return 1024
    return 8192


def allocate(view: WriteView, tree: Tree, rng: random.Random) -> bytes:
    """A prefix of ``tree``'s content subspace no earlier allocation gave, with the
    counters and marks updated in ``view`` (a write view of one transaction)."""
    lo, hi = tree.counters + b"\x00", tree.counters + b"\xff"
    last = next(keys_in(view, lo, hi, reverse=True, limit=1), None)
    start = 0 if last is None else tree.counter_start(last)
    advanced = False
    while True:
        if advanced:
            view.delete_range(tree.counters, tree.counter_key(start))
            view.delete_range(tree.recent, tree.recent_key(start))
        key = tree.counter_key(start)
        raw = view.get(key)
        count = (0 if raw is None else _COUNT.unpack(raw.ljust(8, b"\x00")[:8])[0]) + 1
        view.put(key, _COUNT.pack(count))
        window = window_size(start)
        if count * 2 < window:
            break
        start += window
        advanced = True
    for _ in range(_DRAWS):
        candidate = rng.randrange(start, start + window)
        mark = tree.recent_key(candidate)
        taken = view.get(mark) is not None
        view.put(mark, b"")
        if not taken:
            return tree.content + pack((candidate,))
    for candidate in range(start, start + window):  # pragma: no cover - see _DRAWS
        mark = tree.recent_key(candidate)
        if view.get(mark) is None:
            view.put(mark, b"")
            return tree.content + pack((candidate,))
    raise AssertionError("a window less than half given has a free candidate")  # pragma: no cover
