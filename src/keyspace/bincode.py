"""bincode 1.x codecs (the serde format Rust's ``bincode::serialize`` writes).

These are the default options of ``bincode::serialize``/``deserialize`` in bincode
1.3, which heed's ``SerdeBincode`` (and so scoped-heed) uses: integers fixed width
little-endian, ``bool`` one byte ``00``/``01``, ``String`` and ``Vec<u8>`` a
``u64le`` length then the bytes, ``Option<T>`` ``00`` or ``01`` then ``T``,
``Vec<T>`` a ``u64le`` count then the elements, tuples and structs the fields one
after another with nothing between them.

Each codec is a :class:`~keyspace.codecs.Codec` (``encode(obj) -> bytes``,
``decode(raw) -> obj``), so it serves as a scope's key or value codec; composite
codecs take the codecs of their parts::

    from keyspace import bincode
    PAIR = bincode.Tuple(bincode.STRING, bincode.U64)      # Rust (String, u64)
    USER = bincode.Struct(("name", bincode.STRING), ("age", bincode.U8))
    USER.encode({"name": "ann", "age": 7}) == b"\\x03" + b"\\0" * 7 + b"ann\\x07"

An object of the wrong type or out of range raises
:class:`~keyspace.errors.InvalidKey` naming it and the limit, and so does one whose
own methods, which the composite codecs call (``len`` and iteration of a
sequence, a mapping's ``in`` and ``[]``, ``!=`` for the unit value), raise:
the message names the object and the error. Bytes that are not an encoding
(short, trailing bytes, a bad ``bool``/``Option`` tag, invalid UTF-8) raise
:class:`~keyspace.errors.DecodeError` naming the offset; ``decode`` of an object
that is not bytes-like raises :class:`~keyspace.errors.InvalidArgument`.

Cost: one ``struct`` call per integer, one slice per string; ``encode`` joins the
parts once.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from ._bytes import buffer_bytes
from .errors import DecodeError, InvalidKey, KeyspaceError, bytes_argument, show_bytes, show_error

__all__ = [
    "BOOL",
    "BYTES",
    "F32",
    "F64",
    "I8",
    "I16",
    "I32",
    "I64",
    "STRING",
    "U8",
    "U16",
    "U32",
    "U64",
    "UNIT",
    "ZERO_SIZED_MOST",
    "BincodeCodec",
    "Option",
    "Seq",
    "Struct",
    "Tuple",
]

_LEN = struct.Struct("<Q")


class BincodeCodec:
    """Base of the bincode codecs: :meth:`write` appends an object's encoding to a
    list of parts, :meth:`read` decodes one object at an offset. ``encode`` and
    ``decode`` (the :class:`~keyspace.codecs.Codec` protocol) are built on them;
    ``decode`` refuses trailing bytes."""

    name = "bincode"
    fixed_size: int | None = None
    """Size of every encoding, when it is fixed (ints, bool, fixed tuples of them)."""
    least_size: int = 1
    """The fewest bytes one encoding takes (a ``Vec`` or ``String``: its 8-byte
    length): a stored count of elements is checked against the bytes left."""
    holds_zero_sized: bool = False
    """Whether a value may hold a sequence of elements of size 0 (``Vec<()>``),
    whose elements :data:`ZERO_SIZED_MOST` bounds in one value."""

    def write(self, obj: Any, out: list[bytes]) -> None:
        raise NotImplementedError

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        raise NotImplementedError

    def encode(self, obj: Any) -> bytes:
        """The encoding of ``obj``; :class:`InvalidKey` for an object this codec
        does not take, naming it, also where the object's own methods raise (the
        message names their error)."""
        out: list[bytes] = []
        try:
            if self.holds_zero_sized:
                _counting_zero_sized(self.write, obj, out)
            else:
                self.write(obj, out)
        except (KeyspaceError, MemoryError):
            raise
        except Exception as exc:  # raised by a method of the object (or of an element of it)
            raise InvalidKey(
                f"{show_bytes(obj)} cannot be encoded as bincode {self.name}: its own code raised "
                f"{show_error(exc)}"
            ) from None
        return b"".join(out)

    def decode(self, raw: bytes) -> Any:
        """The object ``raw`` encodes; :class:`DecodeError` for bytes that are not
        one encoding, :class:`InvalidArgument` for an argument that is not
        bytes-like (its bytes are read through the buffer protocol)."""
        if type(raw) is not bytes:
            raw = bytes_argument(raw, f"bincode {self.name} decode() argument")
        if self.holds_zero_sized:
            obj, end = _counting_zero_sized(self.read, raw, 0)
        else:
            obj, end = self.read(raw, 0)
        if end != len(raw):
            raise DecodeError(
                f"{len(raw) - end} trailing bytes after a bincode {self.name} in {show_bytes(raw)}", end
            )
        return obj

    def __repr__(self) -> str:
        return f"bincode.{self.name}"


def _need(raw: bytes, offset: int, size: int, what: str) -> None:
    if len(raw) - offset < size:
        raise DecodeError(
            f"bincode {what} needs {size} bytes at offset {offset} but {show_bytes(raw)} has "
            f"{max(len(raw) - offset, 0)} left",
            offset,
        )


class _Int(BincodeCodec):
    def __init__(self, name: str, fmt: str, lo: int, hi: int) -> None:
        self.name = name
        self._struct = struct.Struct("<" + fmt)
        self.fixed_size = self.least_size = self._struct.size
        self._lo, self._hi = lo, hi
        self.fixed_int = (self.fixed_size, lo < 0)
        """``(size, signed)``: an int within the range is encoded as its ``size``-byte
        little-endian two's complement, nothing else is (a C layout packs it itself)."""

    def write(self, obj: Any, out: list[bytes]) -> None:
        if type(obj) is not int:
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; bincode {self.name} takes int"
            )
        if not self._lo <= obj <= self._hi:
            raise InvalidKey(
                f"int {show_bytes(obj)} is outside the range of {self.name}, [{self._lo}, {self._hi}]"
            )
        out.append(self._struct.pack(obj))

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        size = self._struct.size
        _need(raw, offset, size, self.name)
        return self._struct.unpack_from(raw, offset)[0], offset + size

    def encode(self, obj: Any) -> bytes:
        if type(obj) is int and self._lo <= obj <= self._hi:
            return self._struct.pack(obj)
        return super().encode(obj)  # raises the named error

    def decode(self, raw: bytes) -> Any:
        if type(raw) is bytes and len(raw) == self._struct.size:
            return self._struct.unpack(raw)[0]
        return super().decode(raw)


def _unsigned(bits: int, fmt: str) -> _Int:
    return _Int(f"u{bits}", fmt, 0, (1 << bits) - 1)


def _signed(bits: int, fmt: str) -> _Int:
    return _Int(f"i{bits}", fmt, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


U8, U16, U32, U64 = _unsigned(8, "B"), _unsigned(16, "H"), _unsigned(32, "I"), _unsigned(64, "Q")
I8, I16, I32, I64 = _signed(8, "b"), _signed(16, "h"), _signed(32, "i"), _signed(64, "q")


class _Float(BincodeCodec):
    def __init__(self, name: str, fmt: str) -> None:
        self.name = name
        self._struct = struct.Struct("<" + fmt)
        self.fixed_size = self.least_size = self._struct.size

    def write(self, obj: Any, out: list[bytes]) -> None:
        if type(obj) is not float and type(obj) is not int:
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; bincode {self.name} takes float"
            )
        try:
            out.append(self._struct.pack(obj))
        except (OverflowError, struct.error):
            raise InvalidKey(f"number {show_bytes(obj)} is outside the range of {self.name}") from None

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        size = self._struct.size
        _need(raw, offset, size, self.name)
        return self._struct.unpack_from(raw, offset)[0], offset + size


F32, F64 = _Float("f32", "f"), _Float("f64", "d")


class _Bool(BincodeCodec):
    name = "bool"
    fixed_size = least_size = 1

    def write(self, obj: Any, out: list[bytes]) -> None:
        if type(obj) is not bool:
            raise InvalidKey(f"{show_bytes(obj)} has type {type(obj).__name__}; bincode bool takes bool")
        out.append(b"\x01" if obj else b"\x00")

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        _need(raw, offset, 1, "bool")
        tag = raw[offset]
        if tag > 1:
            raise DecodeError(f"bincode bool is 00 or 01, found {tag:02x} at offset {offset}", offset)
        return tag == 1, offset + 1


BOOL = _Bool()


class _Unit(BincodeCodec):
    """Rust's ``()``: no bytes. Encodes ``()`` (or ``None``), decodes as ``()``, as
    :class:`Tuple` of no fields does, so ``Option<()>`` keeps ``Some(())`` (``01``)
    apart from ``None`` (``00``)."""

    name = "unit"
    fixed_size = least_size = 0

    def write(self, obj: Any, out: list[bytes]) -> None:
        if obj is not None and obj != ():
            raise InvalidKey(f"{show_bytes(obj)} is not the unit value; bincode unit takes None or ()")

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        return (), offset


UNIT = _Unit()


def _read_len(raw: bytes, offset: int, what: str) -> tuple[int, int]:
    _need(raw, offset, 8, f"{what} length")
    return _LEN.unpack_from(raw, offset)[0], offset + 8


class _Bytes(BincodeCodec):
    """``Vec<u8>`` (and ``&[u8]``, ``serde_bytes``): ``u64le(len) bytes``."""

    name = "bytes"
    least_size = 8

    def write(self, obj: Any, out: list[bytes]) -> None:
        data = obj if type(obj) is bytes else None
        if data is None and issubclass(type(obj), bytes | bytearray | memoryview):
            data = buffer_bytes(obj)
        if data is None:
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; bincode bytes (Vec<u8>) takes bytes"
            )
        out.append(_LEN.pack(len(data)))
        out.append(data)

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        length, offset = _read_len(raw, offset, "bytes")
        _need(raw, offset, length, "bytes body")
        return raw[offset : offset + length], offset + length


BYTES = _Bytes()


def _encode_string(obj: Any) -> bytes:
    """``STRING.encode`` in Python: one frame for an exact ASCII str, else the
    codec's ``write`` (which names what it refuses)."""
    if type(obj) is str and obj.isascii():
        return _LEN.pack(len(obj)) + obj.encode()
    return BincodeCodec.encode(STRING, obj)


def _decode_string(raw: bytes) -> Any:
    """``STRING.decode`` in Python: one frame for the common value (exactly its
    length field and valid UTF-8), else the codec's ``read`` (which names the
    fault)."""
    if type(raw) is bytes and len(raw) >= 8 and _LEN.unpack_from(raw)[0] == len(raw) - 8:
        try:
            return raw[8:].decode()
        except UnicodeDecodeError:
            pass  # read() names the fault
    return BincodeCodec.decode(STRING, raw)


class Option(BincodeCodec):
    """``Option<T>``: ``None`` is ``00``, ``Some(x)`` is ``01`` then ``T``."""

    def __init__(self, inner: BincodeCodec) -> None:
        self.inner = inner
        self.name = f"Option<{inner.name}>"
        self.holds_zero_sized = inner.holds_zero_sized

    def write(self, obj: Any, out: list[bytes]) -> None:
        if obj is None:
            out.append(b"\x00")
        else:
            out.append(b"\x01")
            self.inner.write(obj, out)

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        _need(raw, offset, 1, "Option tag")
        tag = raw[offset]
        if tag == 0:
            return None, offset + 1
        if tag != 1:
            raise DecodeError(f"bincode Option tag is 00 or 01, found {tag:02x} at offset {offset}", offset)
        return self.inner.read(raw, offset + 1)


ZERO_SIZED_MOST = 1 << 20
"""The most elements of size 0 (``Vec<()>``) one value holds, in all its sequences
together: they take no bytes, so the stored counts alone would bound nothing
(``Vec<Vec<()>>`` would otherwise make 2**20 elements of every 8 bytes)."""


class _ZeroSizedLeft(threading.local):
    """How many more elements of size 0 the value being encoded or decoded in this
    thread may hold; ``None`` outside :func:`_counting_zero_sized`."""

    left: int | None = None


_ZERO_SIZED = _ZeroSizedLeft()


def _counting_zero_sized(call: Any, *args: Any) -> Any:
    """``call(*args)``, a write or read of a whole value, with the elements of size
    0 of all its sequences counted against :data:`ZERO_SIZED_MOST` (each
    sequence counts them, :func:`_spend_zero_sized`)."""
    outer = _ZERO_SIZED.left
    _ZERO_SIZED.left = ZERO_SIZED_MOST
    try:
        return call(*args)
    finally:
        _ZERO_SIZED.left = outer


def _over_zero_sized(count: int) -> str | None:
    """Count ``count`` elements of size 0 against the value's allowance; when they
    are more than it has left, count nothing and return what the refusal says of
    the limit. A sequence read or written on its own (its ``read``/``write``
    called directly) has the whole of :data:`ZERO_SIZED_MOST`."""
    left = _ZERO_SIZED.left
    if left is not None and count <= left:
        _ZERO_SIZED.left = left - count
        return None
    if left is None and count <= ZERO_SIZED_MOST:
        return None
    held = "" if left is None or left == ZERO_SIZED_MOST else f" ({left} left after its other sequences)"
    return f"one value holds at most {ZERO_SIZED_MOST} elements of size 0, in all its sequences{held}"


class Seq(BincodeCodec):
    """``Vec<T>`` of any other ``T`` (a list): ``u64le(count)`` then the elements."""

    least_size = 8

    def __init__(self, inner: BincodeCodec) -> None:
        self.inner = inner
        self.name = f"Vec<{inner.name}>"
        self.holds_zero_sized = inner.least_size == 0 or inner.holds_zero_sized

    def write(self, obj: Any, out: list[bytes]) -> None:
        if isinstance(obj, str | bytes | bytearray | Mapping) or not isinstance(obj, Sequence):
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; bincode {self.name} takes a list"
            )
        over = _over_zero_sized(len(obj)) if self.inner.least_size == 0 else None
        if over is not None:
            raise InvalidKey(f"a bincode {self.name} of {len(obj)} elements of size 0 is too many: {over}")
        out.append(_LEN.pack(len(obj)))
        for item in obj:
            self.inner.write(item, out)

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        count, offset = _read_len(raw, offset, self.name)
        # every element takes its least size unless that is 0: bound the count
        least = self.inner.least_size
        if least and count > (len(raw) - offset) // least:
            raise DecodeError(
                f"bincode {self.name} declares {count} elements at offset {offset - 8} but only "
                f"{len(raw) - offset} bytes follow",
                offset - 8,
            )
        over = None if least else _over_zero_sized(count)  # eight bytes could ask for 2**64 elements
        if over is not None:
            raise DecodeError(
                f"bincode {self.name} declares {count} elements of size 0 at offset {offset - 8}: {over}",
                offset - 8,
            )
        items = []
        for _ in range(count):
            item, offset = self.inner.read(raw, offset)
            items.append(item)
        return items, offset


class Tuple(BincodeCodec):
    """A Rust tuple or tuple struct of fixed arity: the fields in order, as a Python
    ``tuple``. ``Tuple(STRING, U64)`` is ``(String, u64)``."""

    def __init__(self, *fields: BincodeCodec) -> None:
        self.fields = fields
        self.name = "(" + ", ".join(f.name for f in fields) + ")"
        sizes = [f.fixed_size for f in fields]
        self.fixed_size = None if None in sizes else sum(s for s in sizes if s is not None)
        self.least_size = sum(f.least_size for f in fields)
        self.holds_zero_sized = any(f.holds_zero_sized for f in fields)

    def write(self, obj: Any, out: list[bytes]) -> None:
        if not isinstance(obj, tuple | list) or len(obj) != len(self.fields):
            raise InvalidKey(
                f"{show_bytes(obj)} is not a tuple of {len(self.fields)} fields; bincode {self.name} takes "
                "one"
            )
        for field, item in zip(self.fields, obj, strict=True):
            field.write(item, out)

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        items = []
        for field in self.fields:
            item, offset = field.read(raw, offset)
            items.append(item)
        return tuple(items), offset


class Struct(BincodeCodec):
    """A Rust struct with named fields, declared in field order as ``(name, codec)``
    pairs; objects are mappings (decoded as ``dict``). bincode writes no field
    names, so only the order matters."""

    def __init__(self, *fields: tuple[str, BincodeCodec]) -> None:
        self.fields = fields
        self.name = "{" + ", ".join(f"{n}: {c.name}" for n, c in fields) + "}"
        sizes = [c.fixed_size for _, c in fields]
        self.fixed_size = None if None in sizes else sum(s for s in sizes if s is not None)
        self.least_size = sum(c.least_size for _, c in fields)
        self.holds_zero_sized = any(c.holds_zero_sized for _, c in fields)

    def write(self, obj: Any, out: list[bytes]) -> None:
        if not isinstance(obj, Mapping):
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; bincode {self.name} takes a dict"
            )
        missing = [n for n, _ in self.fields if n not in obj]
        extra = sorted(str(k) for k in obj if k not in {n for n, _ in self.fields})
        if missing or extra:
            raise InvalidKey(
                f"{show_bytes(obj)} does not match struct {self.name}: missing fields {missing}, "
                f"unknown fields {show_bytes(extra)}"
            )
        for field_name, codec in self.fields:
            codec.write(obj[field_name], out)

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        obj: dict[str, Any] = {}
        for field_name, codec in self.fields:
            obj[field_name], offset = codec.read(raw, offset)
        return obj, offset


_Function = TypeVar("_Function", bound=Callable[[Any], Any])


def _in_c(mode: int, reference: _Function) -> _Function:
    """``reference`` served by ``keyspace._bincode_accel.LenText(mode, reference)``
    (``mode`` 1 encodes, 0 decodes) where the optional C module is built, else
    ``reference`` itself."""
    try:
        from ._bincode_accel import LenText
    except ImportError:  # pragma: no cover - the Python function then runs
        return reference
    return cast(_Function, LenText(mode, reference))


class _String(BincodeCodec):
    """``String``/``&str``: ``u64le(len) utf8``."""

    name = "string"
    least_size = 8

    def write(self, obj: Any, out: list[bytes]) -> None:
        if not issubclass(type(obj), str):
            raise InvalidKey(f"{show_bytes(obj)} has type {type(obj).__name__}; bincode String takes str")
        try:
            data = str.encode(obj, "utf-8")  # a subclass's own encode does not run
        except UnicodeEncodeError as exc:
            raise InvalidKey(
                f"{show_bytes(obj)} is not valid UTF-8 text: {exc.reason} at index {exc.start}"
            ) from None
        out.append(_LEN.pack(len(data)))
        out.append(data)

    # the codec functions take no self (there is one String codec, STRING): each
    # is the C function of keyspace._bincode_accel where it is built, with the
    # Python function below as its reference
    encode = staticmethod(_in_c(1, _encode_string))
    decode = staticmethod(_in_c(0, _decode_string))

    def read(self, raw: bytes, offset: int) -> tuple[Any, int]:
        length, start = _read_len(raw, offset, "String")
        _need(raw, start, length, "String body")
        try:
            return raw[start : start + length].decode("utf-8"), start + length
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"bincode String at offset {offset} is not UTF-8: {exc.reason} at offset {start + exc.start}",
                start + exc.start,
            ) from None


STRING = _String()
