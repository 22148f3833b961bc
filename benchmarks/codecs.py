"""Pure-Python encoding costs: each scheme's encode/decode against the same bytes
written by hand, and ``keyspace.tuples`` against ``fdb.tuple``."""

from __future__ import annotations

import struct
from binascii import hexlify, unhexlify
from collections.abc import Callable, Iterator
from typing import Any

from xxhash import xxh32_intdigest

from keyspace import tuples
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes.scoped_heed import ScopedHeed

from . import _data
from ._harness import Comparison, Context, Ratio, Target, Trial, workload

_Z, _ZF = b"\x00", b"\x00\xff"
_H = struct.Struct(">H").pack
_IQ = struct.Struct("<IQ").pack
_PATH = (b"tenant1", b"users")


def _loop(fn: Callable[[Any], object], items: list[Any]) -> Callable[[], Trial]:
    """A trial calling ``fn`` on each prepared item."""

    def make() -> Trial:
        def run() -> None:
            for x in items:
                fn(x)

        return Trial(run, len(items))

    return make


def _loop2(fn: Callable[[Any, Any], object], first: Any, items: list[Any]) -> Callable[[], Trial]:
    """A trial calling ``fn(first, item)`` on each prepared item."""

    def make() -> Trial:
        def run() -> None:
            for x in items:
                fn(first, x)

        return Trial(run, len(items))

    return make


# -- hand-written encodings (what a program without keyspace would write) -------------


def _tuple_enc(path: tuple[bytes, ...], key: bytes) -> bytes:
    return (
        b"\x05"
        + b"".join([b"\x01" + c.replace(_Z, _ZF) + _Z for c in path])
        + b"\x00\x01"
        + key.replace(_Z, _ZF)
        + _Z
    )


def _lp_enc(path: tuple[bytes, ...], key: bytes) -> bytes:
    return b"".join([_H(len(c)) + c for c in path]) + key


def _lp_dec(stored: bytes) -> tuple[tuple[bytes, ...], bytes]:
    out, pos = [], 0
    for _ in range(2):
        n = (stored[pos] << 8) | stored[pos + 1]
        out.append(stored[pos + 2 : pos + 2 + n])
        pos += 2 + n
    return tuple(out), stored[pos:]


def _hex_enc(path: tuple[bytes, ...], key: bytes) -> bytes:
    return b"\x00".join([*map(hexlify, path), hexlify(key)])


def _hex_dec(stored: bytes) -> tuple[tuple[bytes, ...], bytes]:
    parts = list(map(unhexlify, stored.split(b"\x00")))
    return tuple(parts[:-1]), parts[-1]


def _sub_enc(path: tuple[bytes, ...], key: bytes) -> bytes:
    return b"".join([b"!" + c + b"!" for c in path]) + key


def _sub_dec(stored: bytes) -> tuple[tuple[bytes, ...], bytes]:
    out, pos = [], 0
    while stored[pos : pos + 1] == b"!":
        end = stored.index(b"!", pos + 1)
        out.append(stored[pos + 1 : end])
        pos = end + 1
    return tuple(out), stored[pos:]


def _hash_enc(path: tuple[str, ...], key: bytes) -> bytes:
    return _IQ(xxh32_intdigest(path[0].encode()), len(key)) + key


def _heed_enc(path: tuple[str, ...], key: bytes) -> bytes:
    return b"\x01" + _IQ(xxh32_intdigest(path[0].encode()), len(key)) + key


def _naive_enc(path: tuple[bytes, ...], key: bytes) -> bytes:
    return b"".join(path) + key


def _fdb_tuple() -> Any:
    """``fdb.tuple``, the pure-Python tuple layer (importable without the C client)."""
    import fdb.tuple

    return fdb.tuple


@workload("schemes")
def schemes(ctx: Context) -> Iterator[Comparison]:
    """``scheme.encode(path, key)`` / ``scheme.decode(stored)`` per scheme against the
    hand-written function producing the same bytes. Target: at most 1.2 (the tuple
    scheme's decode against ``fdb.tuple.unpack``: at least 3× faster)."""
    n = ctx.n(50_000, 2_000)
    keys = _data.keys(n)
    str_path = ("tenant1",)
    cases: list[tuple[str, Scheme, tuple[Any, ...], Callable[..., bytes], Callable[[bytes], Any] | None]] = [
        ("tuple", TupleScheme(), _PATH, _tuple_enc, None),
        ("length-prefixed", LengthPrefixed(), _PATH, _lp_enc, _lp_dec),
        ("asciihex", AsciiHex(), _PATH, _hex_enc, _hex_dec),
        ("sublevel", Sublevel(), _PATH, _sub_enc, _sub_dec),
        ("scopehash", ScopeHash(), str_path, _hash_enc, None),
        ("scoped-heed", ScopedHeed("raw_bytes"), str_path, _heed_enc, None),
        ("naive", Naive(allow_collisions=True), _PATH, _naive_enc, None),
    ]
    for name, scheme, path, hand_enc, hand_dec in cases:
        # Keys valid for every scheme: Sublevel keys may not start with its separator.
        ks = [k if not k.startswith(b"!") else b"?" + k for k in keys]
        for k in ks[:50]:
            assert scheme.encode(path, k) == hand_enc(path, k), name
        yield Comparison(
            "schemes",
            f"{name} encode(path, key)",
            {"keyspace": _loop2(scheme.encode, path, ks), "by hand": _loop2(hand_enc, path, ks)},
            [Ratio(f"{name} encode", "keyspace", "by hand", Target(1.2))],
        )
        stored = [scheme.encode(path, k) for k in ks]
        if name == "tuple":
            hand_dec = _fdb_tuple().unpack
            label = "fdb.tuple.unpack"
            decode_target = Target(1 / 3, text="≤ 0.333 (≥ 3× faster)")
        else:
            label = "by hand"
            decode_target = Target(1.2)
        if hand_dec is None:
            continue
        for s in stored[:50]:
            assert scheme.decode(s, 2) == hand_dec(s) or name == "tuple", name
        yield Comparison(
            "schemes",
            f"{name} decode(stored)",
            {"keyspace": _decode_loop(scheme, stored), label: _loop(hand_dec, stored)},
            [Ratio(f"{name} decode", "keyspace", label, decode_target)],
        )


def _decode_loop(scheme: Scheme, stored: list[bytes]) -> Callable[[], Trial]:
    decode = scheme.decode

    def make() -> Trial:
        def run() -> None:
            for s in stored:
                decode(s, 2)

        return Trial(run, len(stored))

    return make


_TUPLES = {
    "(str, str, bytes)": ("tenant1", "users", b"key-0001"),
    "(str, int, str)": ("tenant1", 12345, "abc"),
}


@workload("tuples")
def tuple_layer(ctx: Context) -> Iterator[Comparison]:
    """``keyspace.tuples.pack/unpack`` against ``fdb.tuple.pack/unpack`` (pure Python).
    Target: at least 3× faster, i.e. keyspace / fdb ≤ 0.333."""
    fdbt = _fdb_tuple()
    reps = ctx.n(50_000, 2_000)
    target = Target(1 / 3, text="≤ 0.333 (≥ 3× faster)")
    stored_key = TupleScheme().encode(("tenant1", "users"), b"key-0001")
    keys = [stored_key for _ in range(reps)]
    assert tuples.unpack(stored_key) == fdbt.unpack(stored_key)
    yield Comparison(
        "tuples",
        "unpack a stored key (nested path)",
        {"keyspace": _loop(tuples.unpack, keys), "fdb.tuple": _loop(fdbt.unpack, keys)},
        [Ratio("unpack stored key ((str, str), bytes)", "keyspace", "fdb.tuple", target)],
    )
    for label, t in _TUPLES.items():
        assert tuples.pack(t) == fdbt.pack(t)
        items = [tuple(t) for _ in range(reps)]
        yield Comparison(
            "tuples",
            f"pack {label}",
            {"keyspace": _loop(tuples.pack, items), "fdb.tuple": _loop(fdbt.pack, items)},
            [Ratio(f"pack {label}", "keyspace", "fdb.tuple", target)],
        )
        packed = [tuples.pack(t) for _ in range(reps)]
        assert tuples.unpack(packed[0]) == fdbt.unpack(packed[0])
        yield Comparison(
            "tuples",
            f"unpack {label}",
            {"keyspace": _loop(tuples.unpack, packed), "fdb.tuple": _loop(fdbt.unpack, packed)},
            [Ratio(f"unpack {label}", "keyspace", "fdb.tuple", target)],
        )
