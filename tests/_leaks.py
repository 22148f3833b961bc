"""Whether a call leaks, for the tests of the C modules: the memory Python has
allocated and the reference counts of given objects, before and after it runs
a few thousand times."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable

RUNS = 3000
BOUND = RUNS * 4
"""Bytes a leak-free call may still add in all (a cache entry, a grown free
list): a leak of one object per call adds at least 16 bytes a call."""


def holds_nothing(call: Callable[[], object], *inputs: object) -> bool:
    """Whether ``call()``, warmed up and then run :data:`RUNS` times, grows
    neither the memory Python has allocated by :data:`BOUND` bytes nor the
    reference count of any of ``inputs``."""
    for _ in range(200):  # warm up: caches, free lists, lazily built state
        call()
    counts = [sys.getrefcount(x) for x in inputs]
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(RUNS):
            call()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    return grown < BOUND and [sys.getrefcount(x) for x in inputs] == counts
