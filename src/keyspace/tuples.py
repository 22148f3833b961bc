"""Ordered typed tuples, byte-identical to the FoundationDB tuple layer.

``pack(t)`` turns a tuple of values into bytes whose lexicographic order is the
order of the tuples (element by element, shorter first); ``unpack(b)`` is its
inverse; ``range(t)`` is the half-open byte range of every longer tuple that starts
with ``t``. The bytes are those of ``fdb.tuple`` for these element types:

=================  =========  ====================================================
type               code       encoding
=================  =========  ====================================================
``None``           ``00``     ``00`` (inside a nested tuple: ``00 ff``)
``bytes``          ``01``     ``01 | v with 00 -> 00 ff | 00``
``str``            ``02``     ``02 | utf8(v) with 00 -> 00 ff | 00``
``tuple``          ``05``     ``05 | elements | 00``
``int``            ``0b-1d``  ``14`` for 0; ``14±n | n big-endian bytes`` for
                              1–8 bytes (negatives in one's complement);
                              ``1d | n | bytes`` and ``0b | n^ff | bytes`` for
                              9–255 bytes
``float``          ``21``     IEEE double, big-endian; all bits flipped when
                              negative, else only the sign bit
``bool``           ``26/27``  ``False`` / ``True``
``SingleFloat``    ``20``     IEEE single, big-endian, flipped as doubles are
``uuid.UUID``      ``30``     the 16 bytes in network order
``Versionstamp``   ``33``     10-byte transaction version, u16be user version
=================  =========  ====================================================

Cross-type order follows the codes: None < bytes < str < tuple < int <
SingleFloat < float < bool < UUID < Versionstamp. Floats (single and double)
order as negative NaNs < -inf < … < -0.0 < 0.0 < … < +inf < positive NaNs.
Subclasses (``IntEnum``, named tuples, UUID subclasses) encode as their base
type. A single-precision float another client wrote unpacks as a
:class:`SingleFloat` and packs back to the same 4 bytes (NaN payloads included),
so the key it is part of can be found again; a versionstamp as a
:class:`Versionstamp`. ``unpack`` rejects the reserved codes.

Errors: ``pack`` of anything but a tuple, and of an element of an unsupported type,
raises :class:`~keyspace.errors.InvalidKey` (a ``TypeError``) naming the type and
the value; of an incomplete :class:`Versionstamp`,
:class:`~keyspace.errors.IncompleteVersionstamp` (an ``InvalidKey``) naming it; an
int needing more than 255 bytes and a ``str`` that is not valid Unicode (lone
surrogates; the message names the str and the index of the first one) raise
:class:`~keyspace.errors.InvalidName`; tuples nested more than :data:`MAX_NESTING`
levels deep raise :class:`~keyspace.errors.InvalidKey`. A subclass (of str, bytes,
int, float, UUID or tuple) is read with its base type's
own methods, so none of its own (``encode``, ``__iter__``, ``__len__``, …) runs.
``unpack`` raises only :class:`~keyspace.errors.DecodeError` on malformed input, with
``offset`` set to the position of the element that could not be decoded, and on
input that opens more than :data:`MAX_NESTING` nested tuples inside one another
(``offset``: the ``05`` one level too deep); an argument that is not bytes, or a
``prefix_len`` that is not an int of 0 or more, raises
:class:`~keyspace.errors.InvalidArgument`.

Cost: linear in the encoded size. Packing uses an optional C encoder
(``keyspace._tuples_accel``, built at install time when a C compiler is
available; about 20 times faster than ``fdb.tuple`` on typical keys) for tuples
of exactly None, bytes, str, bool, ints of at most 8 bytes, floats and such
tuples, and the pure-Python encoder for everything else and for every error.
That one tests str, bytes and small ints inline and finds other types with one
dict lookup on ``type(x)``; the byte work is C (``bytes.replace``, ``str.encode``,
``int.to_bytes``, ``struct``); on typical keys it runs about 3 times faster than
``fdb.tuple``. Tuples nested two levels and deeper are walked with an explicit
stack, never by recursion. Unpacking uses an optional C decoder from the same
module (about 10 times faster than ``fdb.tuple`` on typical keys) for well-formed
top-level tuples of the common types, and the pure-Python decoder for everything
else and for every error. The pure-Python decoder splits the
input at ``00`` once and takes one slice (and one UTF-8 decode) per str/bytes
element (about 2 times faster than ``fdb.tuple``); inputs that do not fit that
shape go through an exact decoder using ``bytes.find``. No per-byte Python loops.
"""

from __future__ import annotations

import builtins
import struct
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from ._tuple_types import SingleFloat, Versionstamp, _single, _versionstamp
from .errors import (
    DecodeError,
    IncompleteVersionstamp,
    InvalidArgument,
    InvalidKey,
    InvalidName,
    bytes_argument,
    show_bytes,
)

__all__ = ["MAX_NESTING", "SingleFloat", "Versionstamp", "pack", "range", "unpack"]

MAX_NESTING = 128
"""The most tuples ``pack`` nests inside one another within the packed tuple, and
the most nested-tuple openers (``05``) ``unpack`` accepts open at once: ``(1,)``
nests 0 levels, ``((1,),)`` 1, ``(((),),)`` 2. Deeper input is refused by name
(:class:`~keyspace.errors.InvalidKey` from ``pack``,
:class:`~keyspace.errors.DecodeError` from ``unpack``), identically with and
without the C module, which is built with the same limit.

Why a limit: without one, the depth of a key would be bounded only by the
interpreter's recursion limit or the C stack, so a tuple nested 100,000 deep, or
stored bytes opening 100,000 of them, would end in a bare ``RecursionError`` or a
crashed process, here or in whatever then compares, hashes or prints the value.
Why 128: far more than any key needs (a tuple-scheme key nests its path one level,
and a composite key rarely more than two or three), and below every bound of the
FoundationDB tuple layer, which has no limit of its own (the format and its
bindings set none; a 10,000-byte FoundationDB key holds at most 5,000 levels),
so that what ``pack`` writes every binding reads: ``fdb.tuple`` recurses, and at
Python's default recursion limit packs a little over 300 levels and unpacks
nearly 1,000. Checking costs one comparison per nested tuple, nothing on flat
tuples."""

_Encoder = Callable[[Any], bytes]

_pack_d = struct.Struct(">d").pack
_unpack_d = struct.Struct(">d").unpack
_unpack_Q = struct.Struct(">Q").unpack
_pack_Q = struct.Struct(">Q").pack
_pack_code_Q = struct.Struct(">BQ").pack
_pack_code_H = struct.Struct(">BH").pack
_pack_code_I = struct.Struct(">BI").pack
_STR = (b"\x02", b"\x00")
_BYTES = (b"\x01", b"\x00")
_INT1 = tuple(bytes((0x15, i)) for i in builtins.range(0x100))

_U64_MAX = (1 << 64) - 1
_SIGN64 = 1 << 63
_U32_MAX = (1 << 32) - 1
_SIGN32 = 1 << 31
# _ONES[n] == 2**(8n) - 1: the one's-complement offset of an n-byte negative int.
_ONES = tuple((1 << (8 * n)) - 1 for n in builtins.range(9))
_UUID = uuid.UUID
_UUID_INT: Any = uuid.UUID.__dict__["int"]  # the slot that holds a UUID's value


# -- encoding -----------------------------------------------------------------------


def _enc_none(_: None) -> bytes:
    return b"\x00"


def _enc_none_nested(_: None) -> bytes:
    return b"\x00\xff"


def _enc_bytes(v: bytes) -> bytes:
    return v.replace(b"\x00", b"\x00\xff").join(_BYTES)


def _enc_str(v: str) -> bytes:
    return v.encode().replace(b"\x00", b"\x00\xff").join(_STR)


def _enc_int(v: int) -> bytes:
    if v > 0:
        if v < _U64_MAX:
            n = (v.bit_length() + 7) >> 3
            # code byte and value in one big-endian integer: one to_bytes call
            return ((0x14 + n) << (n << 3) | v).to_bytes(n + 1, "big")
        return _enc_bigint(v)
    if v == 0:
        return b"\x14"
    if v > -_U64_MAX:
        n = ((-v).bit_length() + 7) >> 3
        return ((0x14 - n) << (n << 3) | (_ONES[n] + v)).to_bytes(n + 1, "big")
    return _enc_bigint(v)


def _enc_bigint(v: int) -> bytes:
    # |v| >= 2**64 - 1 (fdb switches at exactly this bound, so 2**64 - 1 itself
    # takes the 9-255 byte form with a length of 8).
    n = (v.bit_length() + 7) >> 3
    if n > 255:
        raise InvalidName(
            f"int {show_bytes(v)} of {n} bytes is too large for the tuple encoding (at most 255 bytes)"
        )
    if v > 0:
        return bytes((0x1D, n)) + v.to_bytes(n, "big")
    return bytes((0x0B, n ^ 0xFF)) + ((1 << (n << 3)) - 1 + v).to_bytes(n, "big")


def _enc_float(v: float) -> bytes:
    bits: int = _unpack_Q(_pack_d(v))[0]
    return _pack_code_Q(0x21, bits ^ _U64_MAX if bits & _SIGN64 else bits ^ _SIGN64)


def _enc_single(v: SingleFloat) -> bytes:
    return _pack_code_I(0x20, v._order())  # the bits flipped as doubles' are: its order


def _enc_versionstamp(v: Versionstamp) -> bytes:
    if not v.is_complete():
        raise IncompleteVersionstamp(
            f"{v!r} in a tuple to pack: an incomplete versionstamp has no bytes until a "
            "commit fills in its transaction version; give a complete one (10 bytes)"
        )
    return b"\x33" + v.to_bytes()


def _enc_bool(v: bool) -> bytes:
    return b"\x27" if v else b"\x26"


def _enc_uuid(v: uuid.UUID) -> bytes:
    """``30`` and the 16 bytes of the UUID's int, read from the slot itself (no
    property of a subclass's own runs); :class:`~keyspace.errors.InvalidKey` for
    a UUID that holds no 128-bit int (made without ``__init__``, or its slot set
    to something else)."""
    try:
        value = _UUID_INT.__get__(v, _UUID)
    except AttributeError:  # made without __init__: no value
        value = None
    if type(value) is not int or not 0 <= value < 1 << 128:
        raise InvalidKey(
            f"uuid.UUID element of type {type(v).__name__} holds {show_bytes(value)}, not a 128-bit int"
        )
    return b"\x30" + value.to_bytes(16, "big")


def _enc_tuple(v: tuple[Any, ...]) -> bytes:
    # a top-level tuple element (one level deep) of exact types
    enc = _NESTED
    return b"\x05" + b"".join([enc[type(x)](x) for x in v]) + b"\x00"


def _enc_tuple_inner(v: tuple[Any, ...]) -> bytes:
    # a tuple inside a top-level tuple element (two levels deep); one that holds
    # tuples itself (KeyError: none in _FLAT) is walked by _enc_nested
    enc = _FLAT
    try:
        return b"\x05" + b"".join([enc[type(x)](x) for x in v]) + b"\x00"
    except KeyError:
        return _enc_nested(v, 2, True)


_TOP: dict[type, _Encoder] = {
    type(None): _enc_none,
    bytes: _enc_bytes,
    str: _enc_str,
    int: _enc_int,
    float: _enc_float,
    bool: _enc_bool,
    uuid.UUID: _enc_uuid,
    tuple: _enc_tuple,
    SingleFloat: _enc_single,
    Versionstamp: _enc_versionstamp,
}
# Elements inside nested tuples; _FLAT without tuples, for _enc_tuple_inner.
_NESTED: dict[type, _Encoder] = {**_TOP, type(None): _enc_none_nested, tuple: _enc_tuple_inner}
_FLAT: dict[type, _Encoder] = {k: f for k, f in _NESTED.items() if k is not tuple}


def _enc_any(v: Any, nested: bool) -> bytes:
    """Encode one element of any supported type, subclasses included (slow path),
    and name every element it refuses (see :func:`pack`).

    The type is found from ``type(v)`` (``issubclass``, never ``isinstance``,
    which asks the value its ``__class__``), and a subclass is read through its
    base type's methods, so no method of the value's own runs: a str subclass
    whose ``encode``, a bytes subclass whose ``replace``, an int subclass whose
    comparisons or a tuple subclass whose ``__iter__`` raises (or lies) is
    encoded as its base value."""
    if v is None:
        return b"\x00\xff" if nested else b"\x00"
    kind = type(v)
    if issubclass(kind, bytes):
        return bytes.replace(v, b"\x00", b"\x00\xff").join(_BYTES)
    if issubclass(kind, str):
        try:
            raw = str.encode(v)
        except UnicodeEncodeError as exc:
            raise _not_utf8(str.__str__(v), exc) from None
        return raw.replace(b"\x00", b"\x00\xff").join(_STR)
    if kind is bool:
        return _enc_bool(v)
    if issubclass(kind, int):
        return _enc_int(int.__int__(v))
    if issubclass(kind, float):
        return _enc_float(float.__float__(v))
    if issubclass(kind, uuid.UUID):
        return _enc_uuid(v)
    if issubclass(kind, tuple):
        # a top-level element: _enc_nested takes the tuples inside it on its stack
        return _enc_nested(v, 1, False)
    if kind is SingleFloat:
        return _enc_single(v)
    if kind is Versionstamp:
        return _enc_versionstamp(v)
    raise InvalidKey(
        f"unsupported type {kind.__name__} in a tuple: {show_bytes(v)}; "
        "supported are None, bytes, str, int, float, bool, uuid.UUID, tuple, "
        "SingleFloat and Versionstamp"
    )


def _not_utf8(text: str, exc: UnicodeEncodeError) -> InvalidName:
    """The error for ``text``, a str with no UTF-8 form (a lone surrogate), whose
    encoding raised ``exc``: it names the str (cut short) and the index in it of
    the first character UTF-8 cannot hold."""
    return InvalidName(
        f"str {show_bytes(text)} cannot be encoded as UTF-8: {exc.reason} at index {exc.start}"
    )


def _enc_nested(v: tuple[Any, ...], depth: int, exact: bool) -> bytes:
    """``05 | elements | 00`` for ``v``, a tuple lying ``depth`` levels deep in the
    packed tuple, with every tuple inside it.

    Walks the nested tuples with an explicit stack, never recursing. ``exact``:
    elements of exact types only, found by one dict lookup; anything else, and a
    tuple more than :data:`MAX_NESTING` levels deep, raises ``KeyError``, which
    hands the whole packed tuple to the general encoder (:func:`_enc_any`, with
    ``exact`` false), which encodes subclasses too and raises
    :class:`~keyspace.errors.InvalidKey` naming the top-level element at the first
    tuple too deep, before encoding anything below it. Cost: linear in the output,
    one list entry per open tuple.
    """
    enc = _NESTED
    out = [b"\x05"]
    ap = out.append
    outer: list[Iterator[Any]] = []  # the unfinished tuples around ``items``
    items: Iterator[Any] = tuple.__iter__(v)  # a tuple subclass's own __iter__ does not run
    while True:
        for x in items:
            if type(x) is tuple or issubclass(type(x), tuple):
                if depth + len(outer) >= MAX_NESTING:  # x lies depth + len(outer) + 1 deep
                    if exact:
                        raise KeyError(tuple)
                    raise InvalidKey(
                        f"tuple element {show_bytes(v)}: tuples nest deeper than the limit, "
                        f"{MAX_NESTING} levels"
                    )
                outer.append(items)
                items = tuple.__iter__(x)
                ap(b"\x05")
                break
            ap(enc[type(x)](x) if exact else _enc_any(x, True))
        else:
            ap(b"\x00")
            if not outer:
                return b"".join(out)
            items = outer.pop()


def pack(t: tuple[Any, ...]) -> bytes:
    """Encode the tuple ``t``; byte-identical to ``fdb.tuple.pack(t)``.

    Raises :class:`~keyspace.errors.InvalidKey` (a ``TypeError``) when ``t`` is not
    a tuple or holds an unsupported type,
    :class:`~keyspace.errors.InvalidName` for a str with lone surrogates (naming
    the str and the index of the first) or an int over 255 bytes,
    :class:`~keyspace.errors.InvalidKey` (naming the element, cut short, and the
    limit) when tuples nest more than :data:`MAX_NESTING` levels deep in ``t``;
    wherever the offending element lies (after a subclass, inside nested
    tuples). Cost: linear in the output size, no
    recursion however deeply ``t`` nests. With the optional C module, a tuple of
    None, bytes, str, bools, ints of at most 8 bytes, floats and such tuples nested
    up to :data:`MAX_NESTING` deep (exact types) is encoded in one C call; anything
    else (subclasses, UUIDs, bigger ints, invalid str, deeper nesting, errors) goes
    through the pure-Python encoder, so results and errors do not depend on
    whether it was built.
    """
    if _accel_pack is not None:
        got = _accel_pack(t)
        if got is not None:
            return got
    return _pack_py(t)


def _pack_py(t: tuple[Any, ...]) -> bytes:
    """The pure-Python :func:`pack`: same results and errors."""
    if type(t) is not tuple:
        if not issubclass(type(t), tuple):
            raise InvalidKey(f"pack() takes a tuple, not {type(t).__name__}: {show_bytes(t)}")
        t = tuple.__getitem__(t, slice(None))  # its elements, with none of its own methods run
    if len(t) > 32:
        # bytes += bytes copies: join keeps long tuples linear
        return b"".join([_pack_py((x,)) for x in t])
    out = b""
    try:
        for x in t:
            kind = type(x)
            if kind is str:
                # f-string + one encode; values with NUL take the escaping path
                out += (
                    x.encode().replace(b"\x00", b"\x00\xff").join(_STR)
                    if "\x00" in x
                    else f"\x02{x}\x00".encode()
                )
            elif kind is bytes:
                out += x.replace(b"\x00", b"\x00\xff").join(_BYTES)
            elif kind is int and 0 < x < 0x10000:
                out += _INT1[x] if x < 0x100 else _pack_code_H(0x16, x)
            else:
                out += _TOP[kind](x)
    except (KeyError, UnicodeEncodeError):
        # a subclass or an unsupported type somewhere, or a str with no UTF-8 form
        # (whose error above would name the framed text or a nested str at another
        # index): the general encoder decides, and names each refusal itself
        return b"".join([_enc_any(x, False) for x in t])
    return out


def range(t: tuple[Any, ...]) -> tuple[bytes, bytes]:
    """Return ``(pack(t) + b"\\x00", pack(t) + b"\\xff")``, the half-open range of
    every tuple that starts with the elements of ``t`` and is longer than ``t``
    (``pack(t)`` itself is excluded, as in ``fdb.tuple.range``)."""
    p = pack(t)
    return p + b"\x00", p + b"\xff"


# -- decoding -----------------------------------------------------------------------


def _fail(b: bytes, offset: int, what: str) -> DecodeError:
    return DecodeError(f"invalid tuple encoding at offset {offset}: {what} (in {show_bytes(b)})", offset)


def _escaped_end(b: bytes, zero: int, n: int) -> int:
    """Return the terminator of a bytes/str element whose first ``00`` at ``zero``
    is an escape (followed by ``ff``): the next ``00`` not followed by ``ff``."""
    while True:
        zero = b.find(b"\x00", zero + 2)
        if zero < 0 or zero + 1 >= n or b[zero + 1] != 0xFF:
            return zero


def _load_accel() -> Any:
    """The C module built with the package (``keyspace._tuples_accel``), or None when
    it was not built (no C compiler at install time) or was built with another
    :data:`MAX_NESTING` (a stale build), so that both paths refuse the same input."""
    try:
        from . import _tuples_accel
    except ImportError:
        return None
    if getattr(_tuples_accel, "MAX_NESTING", None) != MAX_NESTING:
        return None  # built from other sources: its nesting limit is not this module's
    return _tuples_accel


_accel = _load_accel()
_accel_unpack: Callable[[bytes, int], tuple[Any, ...] | None] | None = (
    None if _accel is None else _accel.unpack
)
_accel_pack: Callable[[tuple[Any, ...]], bytes | None] | None = None if _accel is None else _accel.pack


def unpack(b: bytes, prefix_len: int = 0) -> tuple[Any, ...]:
    """Decode the tuple encoded in ``b[prefix_len:]``; the inverse of :func:`pack`.

    Also accepts what ``fdb.tuple.pack`` writes for these types and non-minimal
    integer encodings; single-precision floats (code ``20``) are returned as
    :class:`SingleFloat`, versionstamps (``33``) as :class:`Versionstamp`.
    Raises :class:`~keyspace.errors.DecodeError` (``offset`` counted from the start
    of ``b``) for anything else, and for tuples nested more than
    :data:`MAX_NESTING` levels deep (the message names the limit, ``offset`` is the
    ``05`` that opens the level too many); never another exception, whatever the
    bytes. A ``b`` that is not bytes-like, or a ``prefix_len`` that is not an
    int of 0 or more, raises :class:`~keyspace.errors.InvalidArgument` (a
    ``TypeError`` and a ``ValueError``).

    Cost: linear in ``len(b)``, no recursion in Python however deeply the input
    nests. With the optional C decoder (built at install time when a C compiler is
    present), a top-level tuple of None, bytes, str, ints of at most 8 bytes, bools,
    doubles and such tuples nested up to :data:`MAX_NESTING` deep is decoded in one
    C pass, about ten times faster than ``fdb.tuple``; anything else, and every
    error, goes through the pure-Python decoder, so results and errors do not
    depend on whether the C decoder was built.
    """
    if _accel_unpack is not None:
        got = _accel_unpack(b, prefix_len)
        if got is not None:
            return got
    return _unpack_py(b, prefix_len)


def _unpack_py(b: bytes, prefix_len: int = 0) -> tuple[Any, ...]:
    """The pure-Python :func:`unpack`: same results and errors.

    Cost: top-level tuples of str, bytes, int, bool and None without ``00`` inside
    their values take one ``split`` and one step per element (about twice as fast
    as ``fdb.tuple``); anything else (escaped ``00``, nested tuples, floats,
    UUIDs, malformed input) one ``find`` or fixed-size read per element.
    """
    if type(b) is not bytes:
        b = bytes_argument(b, "unpack() argument")
    if type(prefix_len) is not int and issubclass(type(prefix_len), int):
        prefix_len = int.__int__(prefix_len)  # an int subclass (a bool) as its value
    if type(prefix_len) is not int or prefix_len < 0:
        raise InvalidArgument(
            f"unpack() prefix_len must be an int of 0 or more (the bytes to skip), "
            f"not {show_bytes(prefix_len)}"
        )
    # Fast path. Split at every 00: each 00 then ends a piece, and is either the
    # terminator of the str/bytes element opened in that piece or a top-level None.
    # Pieces hold whole elements only if no value contains a 00 byte; whenever
    # that does not hold (a piece starting with ff is an escape, an int that
    # runs past its piece holds a 00 byte) or anything else is unusual, the exact
    # decoder below starts over and reports errors with their offsets.
    pieces = (b[prefix_len:] if prefix_len else b).split(b"\x00")
    tail = pieces.pop()
    out: list[Any] = []
    ap = out.append
    try:
        for p in pieces:
            if not p:
                ap(None)
                continue
            code = p[0]
            if code == 0x02:
                ap(p[1:].decode())
                continue
            if code == 0x01:
                ap(p[1:])
                continue
            # fixed-size elements, then None (the 00) or a str/bytes to the end
            off = 0
            m = len(p)
            while True:
                if code == 0x15 and off + 2 <= m:
                    ap(p[off + 1])
                    off += 2
                elif code == 0x16 and off + 3 <= m:
                    ap(p[off + 1] << 8 | p[off + 2])
                    off += 3
                elif 0x14 < code <= 0x1C:
                    end = off + code - 0x13
                    if end > m:
                        return _unpack_exact(b, prefix_len)
                    ap(int.from_bytes(p[off + 1 : end], "big"))
                    off = end
                elif code == 0x14:
                    ap(0)
                    off += 1
                elif 0x0C <= code < 0x14:
                    end = off + 0x15 - code
                    if end > m:
                        return _unpack_exact(b, prefix_len)
                    ap(int.from_bytes(p[off + 1 : end], "big") - _ONES[0x14 - code])
                    off = end
                elif code == 0x26 or code == 0x27:
                    ap(code == 0x27)
                    off += 1
                else:
                    return _unpack_exact(b, prefix_len)
                if off == m:
                    ap(None)
                    break
                code = p[off]
                if code == 0x02:
                    ap(p[off + 1 :].decode())
                    break
                if code == 0x01:
                    ap(p[off + 1 :])
                    break
        if tail and not _fixed_tail(tail, ap):
            return _unpack_exact(b, prefix_len)
    except UnicodeDecodeError:
        return _unpack_exact(b, prefix_len)
    return tuple(out)


def _fixed_tail(p: bytes, ap: Callable[[Any], None]) -> bool:
    """Decode the last piece of the fast path of :func:`_unpack_py` (no 00 follows it):
    ints and bools only. False when the exact decoder must take over."""
    off = 0
    m = len(p)
    while off < m:
        code = p[off]
        if 0x14 < code <= 0x1C:
            end = off + code - 0x13
            if end > m:
                return False
            ap(int.from_bytes(p[off + 1 : end], "big"))
            off = end
        elif code == 0x14:
            ap(0)
            off += 1
        elif 0x0C <= code < 0x14:
            end = off + 0x15 - code
            if end > m:
                return False
            ap(int.from_bytes(p[off + 1 : end], "big") - _ONES[0x14 - code])
            off = end
        elif code == 0x26 or code == 0x27:
            ap(code == 0x27)
            off += 1
        else:
            return False
    return True


def _unpack_exact(b: bytes, prefix_len: int) -> tuple[Any, ...]:
    """The general decoder: every type, exact errors with offsets; nested tuples on
    an explicit stack, at most :data:`MAX_NESTING` deep."""
    n = len(b)
    pos = prefix_len
    out: list[Any] = []
    # enclosing lists and the offsets of their nested-tuple codes
    stack: list[tuple[list[Any], int]] = []
    while pos < n:
        code = b[pos]
        if code == 0x02 or code == 0x01:
            start = pos + 1
            end = b.find(b"\x00", start)
            if end < 0:
                raise _fail(b, pos, "bytes/str element without its 00 terminator")
            if end + 1 < n and b[end + 1] == 0xFF:
                end = _escaped_end(b, end, n)
                if end < 0:
                    raise _fail(b, pos, "bytes/str element without its 00 terminator")
                raw = b[start:end].replace(b"\x00\xff", b"\x00")
            else:
                raw = b[start:end]
            if code == 0x02:
                try:
                    out.append(raw.decode())
                except UnicodeDecodeError as exc:
                    raise _fail(b, pos, f"str element is not valid UTF-8 ({exc.reason})") from None
            else:
                out.append(raw)
            pos = end + 1
        elif 0x14 < code <= 0x1C:
            end = pos + code - 0x13
            if end > n:
                raise _fail(b, pos, f"int element needs {code - 0x14} bytes, {n - pos - 1} left")
            out.append(int.from_bytes(b[pos + 1 : end], "big"))
            pos = end
        elif code == 0x14:
            out.append(0)
            pos += 1
        elif code == 0x05:
            if len(stack) >= MAX_NESTING:
                raise _fail(b, pos, f"tuples nest deeper than the limit, {MAX_NESTING} levels")
            stack.append((out, pos))
            out = []
            pos += 1
        elif code == 0x00:
            if not stack:
                out.append(None)
                pos += 1
            elif pos + 1 < n and b[pos + 1] == 0xFF:
                out.append(None)
                pos += 2
            else:
                parent = stack.pop()[0]
                parent.append(tuple(out))
                out = parent
                pos += 1
        elif 0x0C <= code < 0x14:
            k = 0x14 - code
            end = pos + 1 + k
            if end > n:
                raise _fail(b, pos, f"int element needs {k} bytes, {n - pos - 1} left")
            out.append(int.from_bytes(b[pos + 1 : end], "big") - _ONES[k])
            pos = end
        elif code == 0x21:
            end = pos + 9
            if end > n:
                raise _fail(b, pos, f"double element needs 8 bytes, {n - pos - 1} left")
            bits = int.from_bytes(b[pos + 1 : end], "big")
            bits = bits ^ _SIGN64 if bits & _SIGN64 else bits ^ _U64_MAX
            out.append(_unpack_d(_pack_Q(bits))[0])
            pos = end
        elif code == 0x26 or code == 0x27:
            out.append(code == 0x27)
            pos += 1
        elif code == 0x30:
            end = pos + 17
            if end > n:
                raise _fail(b, pos, f"UUID element needs 16 bytes, {n - pos - 1} left")
            out.append(_UUID(bytes=b[pos + 1 : end]))
            pos = end
        elif code == 0x1D or code == 0x0B:
            if pos + 1 >= n:
                raise _fail(b, pos, "big int element without its length byte")
            length = b[pos + 1] if code == 0x1D else b[pos + 1] ^ 0xFF
            end = pos + 2 + length
            if end > n:
                raise _fail(b, pos, f"big int element needs {length} bytes, {n - pos - 2} left")
            value = int.from_bytes(b[pos + 2 : end], "big")
            out.append(value if code == 0x1D else value - ((1 << (length << 3)) - 1))
            pos = end
        elif code == 0x20:
            end = pos + 5
            if end > n:
                raise _fail(b, pos, f"single float element needs 4 bytes, {n - pos - 1} left")
            bits = int.from_bytes(b[pos + 1 : end], "big")
            out.append(_single(bits ^ _SIGN32 if bits & _SIGN32 else bits ^ _U32_MAX))
            pos = end
        elif code == 0x33:
            end = pos + 13
            if end > n:
                raise _fail(b, pos, f"versionstamp element needs 12 bytes, {n - pos - 1} left")
            out.append(_versionstamp(b[pos + 1 : end]))
            pos = end
        else:
            raise _fail(b, pos, f"unknown type code 0x{code:02x}")
    if stack:
        raise _fail(b, stack[-1][1], "nested tuple without its 00 terminator")
    return tuple(out)
