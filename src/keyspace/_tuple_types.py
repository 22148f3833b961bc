"""The tuple-layer element types Python has no type of its own for:
:class:`SingleFloat` (type code ``20``) and :class:`Versionstamp` (code ``33``).

Both are immutable value types, exported by :mod:`keyspace.tuples`. Equality,
hashing and ordering are those of their encodings, as in the FoundationDB
bindings: two values are equal exactly when they pack to the same bytes, and
order as their packed bytes do. Every method is O(1).
"""

from __future__ import annotations

import math
import struct
from typing import Any, NoReturn, final

from .errors import InvalidArgument, show_bytes

__all__ = ["SingleFloat", "Versionstamp"]

_pack_f = struct.Struct(">f").pack
_unpack_f = struct.Struct(">f").unpack
_pack_I = struct.Struct(">I").pack
_unpack_I = struct.Struct(">I").unpack
_SIGN32 = 1 << 31
_U32_MAX = (1 << 32) - 1


def _immutable(self: object, name: str, *_: Any) -> NoReturn:
    raise AttributeError(f"{type(self).__name__} is immutable: cannot set or delete {name!r}")


@final
class SingleFloat:
    """A single-precision (32-bit IEEE 754) float element of a tuple: packs as type
    code ``20`` (4 bytes), where a Python ``float`` packs as a double (``21``), so
    a key another FoundationDB client wrote with a single float packs back to the
    same bytes. :func:`keyspace.tuples.unpack` returns this type for code ``20``.

    ``SingleFloat(x)`` rounds the ``float`` or ``int`` ``x`` to the nearest single
    (values beyond its range become ±inf, as a C cast does);
    ``SingleFloat.from_bits(n)`` takes the 32-bit pattern itself, so NaN payloads
    and signalling NaNs are kept bit for bit. ``value`` (and ``float(s)``) is the
    number as a Python float, ``bits`` the pattern.

    Equal and hashed by the bit pattern, as the FoundationDB bindings compare
    them: ``SingleFloat(0.0) != SingleFloat(-0.0)``, and a NaN equals a NaN of the
    same pattern. Never equal to a ``float`` (they are different keys). Ordered as
    the tuple encoding orders them: negative NaNs < -inf < … < -0.0 < 0.0 < … <
    +inf < positive NaNs; compared only with other ``SingleFloat`` values.
    """

    __slots__ = ("_bits",)
    _bits: int

    def __init__(self, value: float | int | SingleFloat) -> None:
        kind = type(value)
        if kind is SingleFloat:
            bits = value._bits  # type: ignore[union-attr]
        elif kind is bool or not issubclass(kind, (float, int)):
            raise InvalidArgument(
                f"SingleFloat() takes a float or an int, not {kind.__name__}: {show_bytes(value)}"
            )
        else:
            negative = False
            try:
                if issubclass(kind, float):
                    number = float.__float__(value)  # type: ignore[arg-type]
                else:
                    whole = int.__int__(value)  # type: ignore[arg-type]
                    negative = whole < 0
                    number = float(whole)
                negative = number < 0
                bits = _unpack_I(_pack_f(number))[0]
            except OverflowError:  # beyond the largest single: rounds to ±inf
                bits = 0xFF800000 if negative else 0x7F800000
        object.__setattr__(self, "_bits", bits)

    @classmethod
    def from_bits(cls, bits: int) -> SingleFloat:
        """The single whose IEEE 754 bit pattern is ``bits`` (0 to ``2**32 - 1``),
        kept exactly (NaN payloads, signalling NaNs); :class:`InvalidArgument`
        for anything else."""
        if type(bits) is not int or not 0 <= bits <= _U32_MAX:
            raise InvalidArgument(
                f"SingleFloat.from_bits() takes an int from 0 to 2**32 - 1, not {show_bytes(bits)}"
            )
        return _single(bits)

    @property
    def bits(self) -> int:
        """The IEEE 754 single-precision bit pattern, an int below ``2**32``."""
        return self._bits

    @property
    def value(self) -> float:
        """The number as a Python float (exact: every single is a double)."""
        number: float = _unpack_f(_pack_I(self._bits))[0]
        return number

    def __float__(self) -> float:
        return self.value

    def _order(self) -> int:
        bits = self._bits
        return bits ^ _U32_MAX if bits & _SIGN32 else bits ^ _SIGN32

    def __eq__(self, other: object) -> bool:
        if type(other) is not SingleFloat:
            return NotImplemented
        return self._bits == other._bits

    def __hash__(self) -> int:
        return hash((SingleFloat, self._bits))

    def __lt__(self, other: SingleFloat) -> bool:
        if type(other) is not SingleFloat:
            return NotImplemented
        return self._order() < other._order()

    def __le__(self, other: SingleFloat) -> bool:
        if type(other) is not SingleFloat:
            return NotImplemented
        return self._order() <= other._order()

    def __gt__(self, other: SingleFloat) -> bool:
        if type(other) is not SingleFloat:
            return NotImplemented
        return self._order() > other._order()

    def __ge__(self, other: SingleFloat) -> bool:
        if type(other) is not SingleFloat:
            return NotImplemented
        return self._order() >= other._order()

    def __repr__(self) -> str:
        number = self.value
        if math.isnan(number) or _unpack_I(_pack_f(number))[0] != self._bits:
            return f"SingleFloat.from_bits(0x{self._bits:08x})"
        return f"SingleFloat({number!r})"

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return (_single, (self._bits,))

    __setattr__ = _immutable
    __delattr__ = _immutable


def _single(bits: int) -> SingleFloat:
    """A :class:`SingleFloat` of ``bits`` (an int below ``2**32``, unchecked)."""
    s = object.__new__(SingleFloat)
    object.__setattr__(s, "_bits", bits)
    return s


_INCOMPLETE = b"\xff" * 10
"""The transaction version an incomplete versionstamp is written with."""


@final
class Versionstamp:
    """A FoundationDB versionstamp, tuple type code ``33``: a 10-byte transaction
    version (the commit version, 8 bytes, and the batch order, 2 bytes, big-endian,
    as the database assigns them at commit) and a 2-byte user version that orders
    the versionstamps written in one transaction. Packs as
    ``33 | tr_version | u16be(user_version)``.

    ``Versionstamp(tr_version, user_version=0)``: ``tr_version`` is 10 bytes for a
    complete versionstamp, or None for an incomplete one, whose transaction
    version only a commit can fill in (:meth:`incomplete`); ``user_version`` an int
    from 0 to 65535. 10 ``ff`` bytes are refused as a transaction version: they
    are what an incomplete versionstamp is written with, and read back as one.
    :func:`keyspace.tuples.unpack` returns this type for code ``33`` (an
    incomplete one for 10 ``ff`` bytes, as the FoundationDB bindings do);
    :func:`keyspace.tuples.pack` packs complete ones and refuses an incomplete one
    with :class:`~keyspace.errors.IncompleteVersionstamp`. :meth:`to_bytes` gives
    the 12 bytes, an incomplete one's with its 10 ``ff`` bytes, where a commit
    would write the transaction version.

    Equal, hashed and ordered as the packed bytes: by transaction version, then
    user version; every complete versionstamp before every incomplete one.
    """

    __slots__ = ("_tr", "_user")
    _tr: bytes | None
    _user: int

    LENGTH = 12
    """Bytes of a versionstamp (after its type code)."""

    def __init__(self, tr_version: bytes | None = None, user_version: int = 0) -> None:
        if tr_version is not None:
            if not issubclass(type(tr_version), bytes):
                raise InvalidArgument(
                    "Versionstamp tr_version must be 10 bytes or None (incomplete), "
                    f"not {type(tr_version).__name__}: {show_bytes(tr_version)}"
                )
            tr_version = bytes(tr_version)
            if len(tr_version) != 10:
                raise InvalidArgument(
                    f"Versionstamp tr_version must be 10 bytes, not {len(tr_version)}: "
                    f"{show_bytes(tr_version)}"
                )
            if tr_version == _INCOMPLETE:
                raise InvalidArgument(
                    "Versionstamp tr_version of 10 ff bytes marks an incomplete versionstamp; "
                    "give None (Versionstamp.incomplete()) for one"
                )
        if type(user_version) is not int or not 0 <= user_version <= 0xFFFF:
            raise InvalidArgument(
                f"Versionstamp user_version must be an int from 0 to 65535, not {show_bytes(user_version)}"
            )
        object.__setattr__(self, "_tr", tr_version)
        object.__setattr__(self, "_user", user_version)

    @classmethod
    def incomplete(cls, user_version: int = 0) -> Versionstamp:
        """An incomplete versionstamp: its transaction version is the commit's."""
        return cls(None, user_version)

    @classmethod
    def from_bytes(cls, raw: bytes) -> Versionstamp:
        """The versionstamp of the 12 bytes ``raw`` (10 ``ff`` bytes first: an
        incomplete one); :class:`InvalidArgument` for another length."""
        if not issubclass(type(raw), bytes):
            raise InvalidArgument(
                f"Versionstamp.from_bytes() takes bytes, not {type(raw).__name__} {show_bytes(raw)}"
            )
        if len(raw) != 12:
            raise InvalidArgument(
                f"Versionstamp.from_bytes() takes 12 bytes, not {len(raw)}: {show_bytes(raw)}"
            )
        return _versionstamp(bytes(raw))

    @property
    def tr_version(self) -> bytes | None:
        """The 10-byte transaction version, or None while incomplete."""
        return self._tr

    @property
    def user_version(self) -> int:
        """The 2-byte user version, an int from 0 to 65535."""
        return self._user

    def is_complete(self) -> bool:
        """Whether the transaction version is known (a commit filled it in)."""
        return self._tr is not None

    def completed(self, tr_version: bytes) -> Versionstamp:
        """This incomplete versionstamp with the transaction version ``tr_version``
        (10 bytes); :class:`InvalidArgument` when it is complete already."""
        if self._tr is not None:
            raise InvalidArgument(f"{self!r} is complete already")
        return Versionstamp(tr_version, self._user)

    def to_bytes(self) -> bytes:
        """The 12 bytes after the type code: the transaction version (10 ``ff``
        bytes while incomplete), then the user version, big-endian."""
        return (_INCOMPLETE if self._tr is None else self._tr) + self._user.to_bytes(2, "big")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Versionstamp:
            return NotImplemented
        return self._tr == other._tr and self._user == other._user

    def __hash__(self) -> int:
        return hash((Versionstamp, self._tr, self._user))

    def __lt__(self, other: Versionstamp) -> bool:
        if type(other) is not Versionstamp:
            return NotImplemented
        return self.to_bytes() < other.to_bytes()

    def __le__(self, other: Versionstamp) -> bool:
        if type(other) is not Versionstamp:
            return NotImplemented
        return self.to_bytes() <= other.to_bytes()

    def __gt__(self, other: Versionstamp) -> bool:
        if type(other) is not Versionstamp:
            return NotImplemented
        return self.to_bytes() > other.to_bytes()

    def __ge__(self, other: Versionstamp) -> bool:
        if type(other) is not Versionstamp:
            return NotImplemented
        return self.to_bytes() >= other.to_bytes()

    def __repr__(self) -> str:
        if self._tr is None:
            return f"Versionstamp.incomplete({self._user})"
        return f"Versionstamp({self._tr!r}, {self._user})"

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return (_versionstamp, (self.to_bytes(),))

    __setattr__ = _immutable
    __delattr__ = _immutable


def _versionstamp(raw: bytes) -> Versionstamp:
    """The :class:`Versionstamp` of the 12 bytes ``raw`` (unchecked)."""
    v = object.__new__(Versionstamp)
    tr = raw[:10]
    object.__setattr__(v, "_tr", None if tr == _INCOMPLETE else tr)
    object.__setattr__(v, "_user", raw[10] << 8 | raw[11])
    return v
