"""Benchmark data and the hand-written encodings the competitors use.

Keys are 16–24 random bytes (zero bytes included, so escaping is exercised), values
32 bytes, drawn from a seeded generator so every run measures the same data.
"""

from __future__ import annotations

import random

__all__ = ["VALUE", "keys", "shuffled", "tuple_key", "tuple_remainder"]

VALUE = bytes(range(32))
"""The value stored under every key."""


def keys(n: int, seed: int = 1) -> list[bytes]:
    """``n`` distinct random keys of 16–24 bytes, in random order."""
    rng = random.Random(seed)
    out: set[bytes] = set()
    while len(out) < n:
        out.add(rng.randbytes(rng.randint(16, 24)))
    result = sorted(out)
    rng.shuffle(result)
    return result


def shuffled(items: list[bytes], seed: int = 2) -> list[bytes]:
    """A copy of ``items`` in another random order (reads in another order than writes)."""
    out = list(items)
    random.Random(seed).shuffle(out)
    return out


def tuple_key(prefix: bytes, key: bytes) -> bytes:
    """The TupleScheme stored key of a bytes ``key`` under a scope ``prefix``, written
    out by hand: ``prefix 01 key(00 -> 00 ff) 00``."""
    return prefix + b"\x01" + key.replace(b"\x00", b"\x00\xff") + b"\x00"


def tuple_remainder(stored: bytes, plen: int) -> bytes:
    """Inverse of :func:`tuple_key` given ``len(prefix)``."""
    return stored[plen + 1 : -1].replace(b"\x00\xff", b"\x00")
