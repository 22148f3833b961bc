"""Benchmark data and the hand-written encodings the competitors use.

Keys are 16–24 random bytes (zero bytes included, so escaping is exercised), values
32 bytes, drawn from a seeded generator so every run measures the same data.
"""

from __future__ import annotations

import binascii
import random
import struct
from collections.abc import Callable

from keyspace.schemes import TupleScheme

__all__ = [
    "TENANT_SCOPES",
    "VALUE",
    "after",
    "child_end",
    "hand_stored",
    "keys",
    "scheme_keys",
    "shuffled",
    "tenant_pairs",
    "tuple_key",
    "tuple_remainder",
]

_Z, _ZF = b"\x00", b"\x00\xff"
_U64 = struct.Struct("<Q").pack
_hexlify, _unhexlify = binascii.hexlify, binascii.unhexlify

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


def scheme_keys(n: int, seed: int = 1) -> list[bytes]:
    """:func:`keys` that every scheme takes (Sublevel refuses a leading separator:
    a key beginning with ``!`` gets a ``?`` before it)."""
    return [b"?" + k if k[:1] == b"!" else k for k in keys(n, seed)]


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


def hand_stored(kind: str, prefix: bytes) -> Callable[[bytes], bytes]:
    """The stored key of a bytes key under ``prefix``, written out by hand for a
    layout's key transform ``kind``: ``tuple`` (``01 key(00 -> 00 ff) 00``),
    ``hex`` (the key in hex), ``u64len`` (its length as a little-endian u64, then
    the key) or ``raw`` (the key as it is)."""
    if kind == "tuple":
        p1 = prefix + b"\x01"
        return lambda k: p1 + k.replace(_Z, _ZF) + _Z
    if kind == "hex":
        return lambda k: prefix + _hexlify(k)
    if kind == "u64len":
        return lambda k: prefix + _U64(len(k)) + k
    return lambda k: prefix + k


def after(key: bytes) -> bytes:
    """The first byte string after every one that starts with ``key`` (``key`` is
    never all ``ff`` here)."""
    key = key.rstrip(b"\xff")
    return key[:-1] + bytes((key[-1] + 1,))


def child_end(scheme: str, at: int) -> Callable[[bytes], tuple[bytes, int] | None]:
    """For a stored key of a scope's subtree whose prefix is ``at`` bytes long,
    read by hand: the name of the child it belongs to and where the child's part
    of the key ends, or ``None`` for an own key of the scope. ``scheme``: the
    scheme's benchmark name (``sublevel``, ``asciihex``, ``tuple``, else
    ``length-prefixed``)."""
    if scheme == "sublevel":
        return lambda k: (k[at + 1 : (e := k.index(b"!", at + 1))], e + 1) if k[at : at + 1] == b"!" else None
    if scheme == "asciihex":

        def hex_child(k: bytes) -> tuple[bytes, int] | None:
            end = k.find(_Z, at)
            return (_unhexlify(k[at:end]), end + 1) if end >= 0 else None

        return hex_child
    if scheme == "tuple":

        def tuple_child(k: bytes) -> tuple[bytes, int] | None:
            if k[at] != 2:
                return None
            end = k.index(0, at + 1)
            return k[at + 1 : end], end + 1

        return tuple_child

    def length_child(k: bytes) -> tuple[bytes, int] | None:
        length = int.from_bytes(k[at : at + 2], "big")
        return k[at + 2 : at + 2 + length], at + 2 + length

    return length_child


TENANT_SCOPES = ("users", "orders", "audit")


def tenant_pairs(per: int, tenants: int = 100) -> list[tuple[bytes, bytes]]:
    """The stored pairs, written out by hand, of a tuple-scheme store of
    ``tenants`` tenants (``tenant000``, ...) each with the scopes
    :data:`TENANT_SCOPES` of ``per`` keys (the same :func:`keys` in each): what a
    program that writes those bytes without keyspace leaves in a store."""
    scheme, ks = TupleScheme(), keys(per)
    pairs: list[tuple[bytes, bytes]] = []
    for t in range(tenants):
        for name in TENANT_SCOPES:
            stored = hand_stored("tuple", scheme.layout((f"tenant{t:03d}", name)).prefix)
            pairs += [(stored(k), VALUE) for k in ks]
    return pairs
