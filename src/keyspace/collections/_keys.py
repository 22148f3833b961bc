"""Typed key elements and composite key shapes of the collections.

A key element type is one of ``"str"`` (alias ``"addr"``), ``"bytes"``,
``"bytesN"`` (exactly N bytes: Rust's ``[u8; N]``), ``"u8"``–``"u128"``,
``"i8"``–``"i128"`` and ``"timestamp"`` (nanoseconds, a u64), or a Rust name of
cw-storage-plus's (``"Addr"``, ``"String"``, ``"Vec<u8>"``, ``"Timestamp"``,
``"Uint64"``, ``"Uint128"``, ``"Int64"``, ``"Int128"``). A key *spec* is one type name (keys
are bare values) or a tuple of specs (keys are tuples of that shape; nested tuples
are flattened, as cw-storage-plus flattens ``((a, b), c)`` into three elements).

Each element type checks a Python value (:class:`~keyspace.errors.InvalidKey` for
a wrong type or an int out of range) and converts it to and from the bytes
cw-storage-plus stores for it: text and bytes raw, unsigned ints big-endian,
signed ints big-endian with the top bit flipped (so that byte order is numeric
order) or, with ``legacy_signed=True``, plain two's complement as cw-storage-plus
wrote them before v0.11. Under the tuple layout the checked values themselves are
tuple-layer elements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

from .._bytes import buffer_bytes
from ..errors import DecodeError, InvalidKey, show_bytes
from ..tuples import MAX_NESTING

__all__ = ["KEY_TYPES", "KeySpec", "KeyType", "SpecLike", "key_type"]

SpecLike = Union[str, "KeyType", "KeySpec", Sequence[Any]]
"""A key spec as given: a type name, a :class:`KeyType`, or a sequence of specs."""


class KeyType:
    """One key element type: ``check`` a value, ``to_bytes``/``from_bytes`` in
    cw-storage-plus's element encoding. Immutable."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, value: Any) -> Any:
        """Return ``value`` if it is a valid element of this type, else raise
        :class:`InvalidKey`."""
        raise NotImplementedError

    def to_bytes(self, value: Any) -> bytes:
        """The cw-storage-plus bytes of a checked element."""
        raise NotImplementedError

    def checked_bytes(self, value: Any) -> bytes:
        """``to_bytes(check(value))``: the bytes of a valid element, else
        :class:`InvalidKey` (a type may take a shorter route to the same)."""
        return self.to_bytes(self.check(value))

    def from_bytes(self, raw: bytes) -> Any:
        """The element stored as ``raw``; :class:`DecodeError` when ``raw`` is not
        a valid encoding."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"key_type({self.name!r})"


class _Text(KeyType):
    __slots__ = ()

    def check(self, value: Any) -> Any:
        if type(value) is not str:
            raise InvalidKey(
                f"key element {show_bytes(value)} has type {type(value).__name__}; {self.name} takes str"
            )
        return value

    def checked_bytes(self, value: Any) -> bytes:
        if type(value) is str:
            try:
                return value.encode()
            except UnicodeEncodeError:
                pass  # to_bytes says why
        return self.to_bytes(self.check(value))

    def to_bytes(self, value: Any) -> bytes:
        try:
            return bytes(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise InvalidKey(f"key element {value!r} is not valid UTF-8 text: {exc.reason}") from None

    def from_bytes(self, raw: bytes) -> Any:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"{self.name} key element {show_bytes(raw)} is not UTF-8: {exc.reason} at offset {exc.start}",
                exc.start,
            ) from None


class _Bytes(KeyType):
    __slots__ = ()

    def check(self, value: Any) -> Any:
        if type(value) is bytes:
            return value
        if isinstance(value, (bytearray, memoryview)):
            raw = buffer_bytes(value)  # a released view holds none
            if raw is not None:
                return raw
        raise InvalidKey(
            f"key element {show_bytes(value)} has type {type(value).__name__}; bytes takes bytes"
        )

    def checked_bytes(self, value: Any) -> bytes:
        return value if type(value) is bytes else self.to_bytes(self.check(value))

    def to_bytes(self, value: Any) -> bytes:
        return bytes(value)

    def from_bytes(self, raw: bytes) -> Any:
        return bytes(raw)


class _Int(KeyType):
    __slots__ = ("flip", "hi", "lo", "signed", "size")

    def __init__(self, name: str, bits: int, signed: bool, flip: bool) -> None:
        super().__init__(name)
        self.size = bits // 8
        self.signed = signed
        self.flip = flip
        self.lo = -(1 << (bits - 1)) if signed else 0
        self.hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def check(self, value: Any) -> Any:
        if type(value) is not int:
            if isinstance(value, int) and not isinstance(value, bool):
                return self.check(int.__int__(value))  # its value: a subclass's __int__ does not run
            raise InvalidKey(
                f"key element {show_bytes(value)} has type {type(value).__name__}; {self.name} takes int"
            )
        if not self.lo <= value <= self.hi:
            raise InvalidKey(
                f"key element {value} is outside the range of {self.name}: [{self.lo}, {self.hi}]"
            )
        return value

    def to_bytes(self, value: Any) -> bytes:
        if self.signed and self.flip:
            return bytes((value - self.lo).to_bytes(self.size, "big"))
        return int(value).to_bytes(self.size, "big", signed=self.signed)

    def from_bytes(self, raw: bytes) -> Any:
        if len(raw) != self.size:
            raise DecodeError(
                f"a {self.name} key element is {self.size} bytes, got {len(raw)}: {show_bytes(raw)}", 0
            )
        if self.signed and self.flip:
            return int.from_bytes(raw, "big") + self.lo
        return int.from_bytes(raw, "big", signed=self.signed)


class _FixedBytes(_Bytes):
    """``[u8; N]``: bytes of exactly ``size`` bytes, stored raw."""

    __slots__ = ("size",)

    def __init__(self, name: str, size: int) -> None:
        super().__init__(name)
        self.size = size

    def check(self, value: Any) -> Any:
        raw = super().check(value)
        if len(raw) != self.size:
            raise InvalidKey(
                f"key element {show_bytes(raw)} has {len(raw)} bytes; {self.name} takes {self.size}"
            )
        return raw

    def checked_bytes(self, value: Any) -> bytes:
        return self.to_bytes(self.check(value))

    def from_bytes(self, raw: bytes) -> Any:
        if len(raw) != self.size:
            raise DecodeError(
                f"a {self.name} key element is {self.size} bytes, got {len(raw)}: {show_bytes(raw)}", 0
            )
        return bytes(raw)


_CW_NAMES = {
    "Addr": "addr",
    "String": "str",
    "Vec<u8>": "bytes",
    "Timestamp": "timestamp",
    "Uint64": "u64",
    "Uint128": "u128",
    "Int64": "i64",
    "Int128": "i128",
}
"""cw-storage-plus's key types by their Rust names: ``Addr``, ``String``,
``Vec<u8>``, cosmwasm-std's ``Timestamp`` (its nanoseconds as a u64, the bytes
cw-storage-plus's ``TimestampKey`` stored), ``Uint64``/``Uint128`` (as
``u64``/``u128``) and ``Int64``/``Int128`` (as ``i64``/``i128``, sign-flipped)."""

_MAX_FIXED = 65535


def _build() -> tuple[dict[str, KeyType], dict[str, KeyType]]:
    text, raw = _Text("str"), _Bytes("bytes")
    current: dict[str, KeyType] = {"str": text, "addr": _Text("addr"), "string": text, "bytes": raw}
    legacy = dict(current)
    for bits in (8, 16, 32, 64, 128):
        current[f"u{bits}"] = legacy[f"u{bits}"] = _Int(f"u{bits}", bits, False, False)
        current[f"i{bits}"] = _Int(f"i{bits}", bits, True, True)
        legacy[f"i{bits}"] = _Int(f"i{bits}", bits, True, False)
    return current, legacy


_TIMESTAMP = _Int("timestamp", 64, False, False)


def _fixed(name: Any) -> KeyType | None:
    """``bytesN`` (or Rust's ``[u8; N]``), N from 1 to 65535: fixed-size bytes."""
    if type(name) is not str:
        return None
    digits = name[5:] if name.startswith("bytes") else None
    if name.startswith("[u8;") and name.endswith("]"):
        digits = name[4:-1].strip()
    if digits and digits.isdigit() and digits.isascii() and 0 < int(digits) <= _MAX_FIXED:
        return _FixedBytes(f"bytes{int(digits)}", int(digits))
    return None


KEY_TYPES, _LEGACY = _build()
"""Every element type by name (signed ints with the current sign-flip rule)."""


def key_type(name: str | KeyType, *, legacy_signed: bool = False) -> KeyType:
    """The element type called ``name``. ``legacy_signed=True`` gives signed ints in
    plain two's complement (cw-storage-plus before v0.11) instead of the sign-flip
    rule. Raises :class:`InvalidKey` (a ``ValueError``) for an unknown name."""
    if isinstance(name, KeyType):
        return name
    table = _LEGACY if legacy_signed else KEY_TYPES
    try:
        return table[name]
    except (KeyError, TypeError):
        pass  # an unhashable name is no type either
    # further names, resolved here so that KEY_TYPES keeps one entry per element rule
    alias = _CW_NAMES.get(name, name) if type(name) is str else None
    if alias == "timestamp":
        return _TIMESTAMP
    if alias is not None and alias in table:
        return table[alias]
    fixed = _fixed(name)
    if fixed is not None:
        return fixed
    raise InvalidKey(
        f"unknown key element type {name!r}; known: {', '.join(sorted(KEY_TYPES))}, timestamp, "
        f"bytesN for N fixed bytes, and {', '.join(_CW_NAMES)}"
    )


class KeySpec:
    """The shape of a collection's keys: element types, flattened, plus how a
    Python key maps onto them. ``KeySpec("addr")`` takes bare values;
    ``KeySpec(("addr", "u64"))`` takes 2-tuples. ``elements(key)`` checks and
    flattens a key; ``key_of(elements)`` builds the key back. Cost: O(elements)."""

    __slots__ = ("_shape", "bare", "types")

    def __init__(self, spec: SpecLike, *, legacy_signed: bool = False) -> None:
        if isinstance(spec, KeySpec):
            spec = spec._shape
        self._shape: Any = self._normalise(spec, legacy_signed)
        self.bare = not isinstance(self._shape, tuple)
        types: list[KeyType] = []
        self._flatten_types(self._shape, types)
        self.types: tuple[KeyType, ...] = tuple(types)

    @classmethod
    def _normalise(cls, spec: Any, legacy: bool) -> Any:
        if isinstance(spec, (str, KeyType)):
            return key_type(spec, legacy_signed=legacy)
        if isinstance(spec, Sequence):
            if not spec:
                raise InvalidKey("a key spec needs at least one element type")
            return tuple(cls._normalise(s, legacy) for s in spec)
        raise InvalidKey(f"{spec!r} is not a key spec: give a type name or a tuple of them")

    @classmethod
    def _flatten_types(cls, shape: Any, out: list[KeyType]) -> None:
        if isinstance(shape, tuple):
            for s in shape:
                cls._flatten_types(s, out)
        else:
            out.append(shape)

    def __len__(self) -> int:
        return len(self.types)

    def __add__(self, other: KeySpec) -> KeySpec:
        """The spec of keys made of this spec's elements followed by ``other``'s."""
        left = self._shape if isinstance(self._shape, tuple) else (self._shape,)
        right = other._shape if isinstance(other._shape, tuple) else (other._shape,)
        return KeySpec((*left, *right))

    def __repr__(self) -> str:
        return f"KeySpec({tuple(t.name for t in self.types)!r})"

    def elements(self, key: Any) -> tuple[Any, ...]:
        """The checked, flattened elements of ``key``; :class:`InvalidKey` when it
        does not have this spec's shape or an element is invalid."""
        out: list[Any] = []
        self._flatten(self._shape, key, out)
        return tuple(out)

    def _flatten(self, shape: Any, key: Any, out: list[Any]) -> None:
        if isinstance(shape, tuple):
            items = _items(key) if isinstance(key, (tuple, list)) else None
            if items is None or len(items) != len(shape):
                raise InvalidKey(
                    f"key {show_bytes(key)} does not have the shape of {self!r}: "
                    f"expected a tuple of {len(shape)} elements"
                )
            for s, k in zip(shape, items, strict=True):
                self._flatten(s, k, out)
        else:
            out.append(shape.check(key))

    def prefix_elements(self, prefix: Any) -> tuple[Any, ...]:
        """The checked leading elements given as a prefix: a bare value is one
        element, a tuple (possibly nested) its flattened elements. There must be
        fewer than ``len(self)`` of them."""
        flat: list[Any] = []
        _flatten_value(prefix, flat)
        if len(flat) >= len(self.types):
            raise InvalidKey(
                f"prefix {show_bytes(prefix)} has {len(flat)} elements; keys of {self!r} have "
                f"{len(self.types)}, so a prefix takes at most {len(self.types) - 1}"
            )
        return tuple(t.check(v) for t, v in zip(self.types, flat, strict=False))

    def suffix(self, skip: int) -> KeySpec:
        """The spec of what is left of a key after its first ``skip`` elements
        (cw-storage-plus's ``Suffix``): where ``skip`` ends a group of the
        key's top-level shape the rest keeps its groups (a prefix ``(a, b)`` of
        ``((a, b), (c, d), e)`` leaves keys ``((c, d), e)``), else the rest is
        flat. ``skip`` is less than ``len(self)``."""
        rest = self.types[skip:]
        if isinstance(self._shape, tuple):
            taken = 0
            for j, group in enumerate(self._shape):
                if taken == skip:
                    left = self._shape[j:]
                    return KeySpec(left[0] if len(left) == 1 else left)
                taken += len(KeySpec(group))
        return KeySpec(rest[0] if len(rest) == 1 else rest)

    def key_of(self, elements: Sequence[Any]) -> Any:
        """The key (bare value or tuple of this spec's shape) of flat ``elements``."""
        it = iter(elements)
        return self._build(self._shape, it)

    def _build(self, shape: Any, it: Any) -> Any:
        if isinstance(shape, tuple):
            return tuple(self._build(s, it) for s in shape)
        return next(it)

    def to_bytes(self, elements: Sequence[Any]) -> list[bytes]:
        """cw-storage-plus's ``key()``: the bytes of each element."""
        return [t.to_bytes(v) for t, v in zip(self.types, elements, strict=False)]


def _flatten_value(value: Any, out: list[Any]) -> None:
    """Append the elements of ``value`` (a bare value, or tuples of them nested)
    to ``out``, walking the tuples with a stack, never recursing; tuples nested
    more than :data:`~keyspace.tuples.MAX_NESTING` deep raise
    :class:`InvalidKey` naming the limit."""
    stack = [iter((value,))]
    while stack:
        for item in stack[-1]:
            if isinstance(item, tuple):
                if len(stack) > MAX_NESTING:
                    raise InvalidKey(
                        f"prefix {show_bytes(value)}: tuples nest deeper than the limit, {MAX_NESTING} levels"
                    )
                stack.append(iter(_items(item)))
                break
            out.append(item)
        else:
            stack.pop()


def _items(sequence: tuple[Any, ...] | list[Any]) -> tuple[Any, ...]:
    """The items a tuple or list holds, read with the base type's iterator: a
    subclass's own ``__len__``/``__iter__`` does not run."""
    return tuple(tuple.__iter__(sequence) if isinstance(sequence, tuple) else list.__iter__(sequence))
