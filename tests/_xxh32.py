"""Names with a chosen xxh32 (seed 0): the ScopeHash collisions the tests need.

XXH32 of a 12-byte input is three rounds ``h = rotl(h + w * P3, 17) * P4`` over
little-endian words, then an avalanche of xor-shifts and multiplications by odd
constants; every step is invertible modulo 2**32. So for any target hash and any
first 8 bytes, the last word is solved for; a few random heads give one whose
solved word is printable ASCII. Cost: microseconds per name.
"""

from __future__ import annotations

import random

from xxhash import xxh32_intdigest

__all__ = ["colliding_name"]

_M = 0xFFFFFFFF
_P2, _P3, _P4, _P5 = 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1
_LETTERS = b"abcdefghijklmnopqrstuvwxyz"


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M


def _rotr(x: int, r: int) -> int:
    return ((x >> r) | (x << (32 - r))) & _M


def _inverse(a: int) -> int:
    return pow(a, -1, 1 << 32)


def _unavalanche(h: int) -> int:
    h ^= h >> 16
    h = h * _inverse(_P3) & _M
    h ^= (h >> 13) ^ (h >> 26)
    h = h * _inverse(_P2) & _M
    h ^= (h >> 15) ^ (h >> 30)
    return h


def colliding_name(name: str, seed: int = 0) -> str:
    """A 12-character ASCII name other than ``name`` with the same xxh32 (seed 0)
    as the UTF-8 bytes of ``name``. Deterministic for a given ``seed``; at most
    10,000 tries (each succeeds with probability about 2%)."""
    target = xxh32_intdigest(name.encode())
    rng = random.Random(seed)
    x = _rotr(_unavalanche(target) * _inverse(_P4) & _M, 17)
    for _ in range(10_000):
        head = bytes(rng.choice(_LETTERS) for _ in range(8))
        h = (_P5 + 12) & _M
        for i in (0, 4):
            h = _rotl((h + int.from_bytes(head[i : i + 4], "little") * _P3) & _M, 17) * _P4 & _M
        tail = ((x - h) * _inverse(_P3) & _M).to_bytes(4, "little")
        if all(0x21 <= b < 0x7F for b in tail):
            found = (head + tail).decode()
            if found != name and xxh32_intdigest(found.encode()) == target:
                return found
    raise AssertionError(f"no name colliding with {name!r} in 10,000 tries")
