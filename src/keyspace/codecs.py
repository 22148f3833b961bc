"""Key and value codecs: how a scope turns Python objects into bytes and back.

Keys and values are ``bytes`` by default. Built in: ``"bytes"``, ``"str"`` (UTF-8),
``"int"`` (order-preserving: 64-bit two's complement with the sign bit flipped,
big-endian, as cw-storage-plus stores signed integers) and ``"json"`` (compact,
sorted keys, UTF-8). bincode codecs (Rust's ``bincode`` 1.x, as scoped-heed and
heed store values) are in :mod:`keyspace.bincode` and resolve by Rust type name:
``"bincode:String"``, ``"bincode:Vec<u8>"``, ``"bincode:u8"`` … ``"bincode:u64"``,
``"bincode:i8"`` … ``"bincode:i64"``, ``"bincode:bool"``. Any object with ``encode(obj) -> bytes`` and
``decode(raw) -> obj`` plugs in.

A codec declares what it can do, as the layers above read it: ``writes_json``
(``True`` on the JSON codec) says that everything it encodes is JSON text, so a
collection nests a value as it is inside a JSON entry of its own; ``native_type``
(``bytes``, ``str``, ``int`` on the codecs of those names) says that it takes the
objects of a type a scheme may store as they are (see :class:`Codec`). Nothing
above this module tests for a codec's class or identity: ``StrCodec()`` made
anew stores exactly what ``"str"`` stores.

Codecs never touch a store; a bad object raises :class:`~keyspace.errors.InvalidKey`
before anything is written, naming it (cut short: :func:`~keyspace.errors.show_bytes`)
and what the codec takes, whatever the object's own methods do.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from . import bincode
from ._bytes import buffer_bytes
from .errors import DecodeError, InvalidArgument, InvalidKey, bytes_argument, show_bytes, show_error

__all__ = [
    "BYTES",
    "INT",
    "JSON",
    "STR",
    "Codec",
    "bincode",
    "native_type",
    "resolve_codec",
    "writes_json",
]


@runtime_checkable
class Codec(Protocol):
    """Anything with ``encode`` and ``decode`` is a codec.

    A codec may also declare abilities, as optional attributes of its class or of
    itself; one it leaves out has its default (so every object with ``encode``
    and ``decode`` stays a codec):

    ``writes_json`` (default ``False``)
        ``True`` declares that every result of ``encode`` is one JSON value as
        UTF-8 text. Under the CosmWasm layout an
        :class:`~keyspace.collections.IndexedMap`'s unique index entry
        (``{"pk": base64, "value": …}``) then embeds a record's bytes as they are,
        as cw-storage-plus embeds a record's JSON; without it, as a base64 JSON
        string, so that the entry stays JSON. The built-in ``"json"`` codec
        declares it. :func:`writes_json` reads it.

    ``native_type`` (default ``None``)
        ``bytes``, ``str`` or ``int`` declares that ``encode`` takes the objects of
        that type and gives their plain encoding: for ``bytes`` the bytes as they
        are, for ``str`` its UTF-8 (for ``int`` any encoding). A scope then hands
        such keys to a scheme that stores them itself as they are (bytes keys in
        every scheme; ``str`` and ``int`` keys in a scheme of typed keys, the tuple
        scheme, which stores them as typed tuple elements), calling ``encode`` only
        to refuse the wrong type, and stores ``bytes`` values as they are. The
        built-in ``"bytes"``, ``"str"`` and ``"int"`` codecs declare it.
        :func:`native_type` reads it.
    """

    name: str

    def encode(self, obj: Any) -> bytes: ...

    def decode(self, raw: bytes) -> Any: ...


class BytesCodec:
    """Keys or values that are ``bytes`` already (the default); a ``bytearray`` or
    ``memoryview`` is read through the buffer protocol (a released view raises
    :class:`InvalidKey`)."""

    name = "bytes"
    native_type = bytes

    def encode(self, obj: Any) -> bytes:
        if type(obj) is bytes:
            return obj
        if issubclass(type(obj), (bytearray, memoryview)):
            raw = buffer_bytes(obj)
            if raw is not None:
                return raw
            raise InvalidKey(f"{show_bytes(obj)} holds no bytes; this scope takes bytes (codec 'bytes')")
        raise InvalidKey(
            f"{show_bytes(obj)} has type {type(obj).__name__}; this scope takes bytes (codec 'bytes')"
        )

    def decode(self, raw: bytes) -> bytes:
        return raw


class StrCodec:
    """``str`` as UTF-8. Byte order of UTF-8 equals code point order."""

    name = "str"
    native_type = str

    def encode(self, obj: Any) -> bytes:
        if not issubclass(type(obj), str):
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; this scope takes str (codec 'str')"
            )
        try:
            return str.encode(obj, "utf-8")  # a subclass's own encode does not run
        except UnicodeEncodeError as exc:
            raise InvalidKey(
                f"{show_bytes(obj)} is not valid UTF-8 text: {exc.reason} at index {exc.start}"
            ) from None

    def decode(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"{show_bytes(raw)} is not UTF-8: {exc.reason} at offset {exc.start}", exc.start
            ) from None
        except AttributeError:  # not bytes: a bytes-like argument as its bytes, else InvalidArgument
            return self.decode(bytes_argument(raw, "the str codec's decode() argument"))


_I64 = struct.Struct(">Q")
_SIGN = 1 << 63
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


class IntCodec:
    """Signed 64-bit integers, order-preserving: ``(x + 2**63)`` as 8 bytes
    big-endian, i.e. two's complement with the sign bit flipped (cw-storage-plus's
    ``i64`` key format). ``-1`` → ``7f ff ff ff ff ff ff ff``, ``0`` → ``80 00 … 00``."""

    name = "int"
    native_type = int

    def encode(self, obj: Any) -> bytes:
        if type(obj) is not int:
            raise InvalidKey(
                f"{show_bytes(obj)} has type {type(obj).__name__}; this scope takes int (codec 'int')"
            )
        if not _I64_MIN <= obj <= _I64_MAX:
            raise InvalidKey(f"int {show_bytes(obj)} is outside the codec's range [{_I64_MIN}, {_I64_MAX}]")
        return _I64.pack(obj + _SIGN)

    def decode(self, raw: bytes) -> int:
        if type(raw) is not bytes:
            raw = bytes_argument(raw, "the int codec's decode() argument")
        if len(raw) != 8:
            raise DecodeError(f"an int key is 8 bytes, got {len(raw)}: {show_bytes(raw)}", 0)
        return int(_I64.unpack(raw)[0]) - _SIGN


class JsonCodec:
    """Any JSON value: compact, sorted keys, UTF-8. Not order-preserving for keys.

    ``JsonCodec(sort_keys=False)`` keeps object fields in the given order (as
    serde_json writes them). Decoding takes UTF-8 only (no other encoding, no
    byte-order mark), as serde_json does. Bytes that are not JSON raise
    :class:`DecodeError`, JSON nested deeper than the interpreter's recursion
    limit included (stored values are whatever their writer wrote: ``NaN`` and
    ``Infinity``, which Python's ``json`` writes, are read as floats); an object
    JSON cannot hold (a float ``nan`` or ``inf`` among them: no JSON reader but
    Python's takes what ``json.dumps`` makes of it), or nested that deep, or one
    whose own methods the encoder calls raise (a mapping's ``items``, the
    ordering of its keys), raises :class:`InvalidKey` before anything is
    written. Cost: one C encoder or decoder call. Declares ``writes_json`` (see
    :class:`Codec`)."""

    name = "json"
    writes_json = True

    def __init__(self, *, sort_keys: bool = True) -> None:
        self._encode = json.JSONEncoder(
            sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode

    def encode(self, obj: Any) -> bytes:
        try:
            return self._encode(obj).encode()
        except RecursionError:  # nested deeper than the recursion limit
            raise InvalidKey(
                f"{show_bytes(obj)} is nested deeper than the recursion limit: it cannot be encoded as JSON"
            ) from None
        except MemoryError:
            raise
        except Exception as exc:  # what the encoder or the object's own methods raised
            raise InvalidKey(f"{show_bytes(obj)} cannot be encoded as JSON: {show_error(exc)}") from None

    def decode(self, raw: bytes) -> Any:
        if type(raw) is not bytes:
            raw = bytes_argument(raw, "the json codec's decode() argument")
        try:
            text = raw.decode()
            try:  # the C scanner alone, where one value fills the text (no whitespace around)
                obj, end = _JSON_SCAN(text, 0)
                if end == len(text):
                    return obj
            except (StopIteration, ValueError):
                pass
            return _JSON_DECODE(text)  # what json.loads accepts, and its error
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise DecodeError(f"{show_bytes(raw)} is not JSON: {exc}", getattr(exc, "pos", None)) from None


_JSON_DECODER = json.JSONDecoder()
_JSON_DECODE = _JSON_DECODER.decode
"""``json.loads`` of a str, built once (``loads`` of bytes first guesses their encoding)."""
_JSON_SCAN: Callable[[str, int], tuple[Any, int]] = _JSON_DECODER.scan_once  # type: ignore[attr-defined]
"""The decoder's C scanner: ``decode`` is this and two whitespace matches."""

BYTES = BytesCodec()

STR = StrCodec()
INT = IntCodec()
JSON = JsonCodec()
_BUILT_IN: dict[str, Codec] = {c.name: c for c in (BYTES, STR, INT, JSON)}
_BINCODE: dict[str, Codec] = {
    "String": bincode.STRING,
    "Vec<u8>": bincode.BYTES,
    "bool": bincode.BOOL,
    **{c.name: c for c in (bincode.U8, bincode.U16, bincode.U32, bincode.U64)},
    **{c.name: c for c in (bincode.I8, bincode.I16, bincode.I32, bincode.I64)},
}
_BUILT_IN.update({f"bincode:{name}": codec for name, codec in _BINCODE.items()})


def writes_json(codec: object) -> bool:
    """Whether ``codec`` declares that everything it encodes is JSON text: its
    ``writes_json`` attribute is ``True`` (absent, or anything else: ``False``).
    What the codec's class is plays no part."""
    return getattr(codec, "writes_json", False) is True


def native_type(codec: object) -> type | None:
    """The type ``codec`` declares it takes as a scheme may store it (its
    ``native_type`` attribute: ``bytes``, ``str`` or ``int``; absent, or anything
    else: ``None``). What the codec's class is plays no part.

    >>> native_type(STR), native_type(StrCodec()), native_type(JSON)
    (<class 'str'>, <class 'str'>, None)
    """
    declared = getattr(codec, "native_type", None)
    return declared if declared is bytes or declared is str or declared is int else None


def resolve_codec(spec: str | Codec | None) -> Codec:
    """Return the codec for ``spec``: a built-in name (``"bincode:u64"`` and the
    other bincode names included), a codec object, or ``None``
    (bytes). Raises :class:`~keyspace.errors.InvalidArgument` (a ``ValueError``)
    for an unknown name or an object without ``encode``/``decode``."""
    if spec is None:
        return BYTES
    if isinstance(spec, str):
        try:
            return _BUILT_IN[spec]
        except KeyError:
            raise InvalidArgument(
                f"unknown codec {spec!r}; built in: {', '.join(sorted(_BUILT_IN))}"
            ) from None
    if callable(getattr(spec, "encode", None)) and callable(getattr(spec, "decode", None)):
        return spec
    raise InvalidArgument(f"{spec!r} is not a codec: it needs encode(obj) -> bytes and decode(bytes) -> obj")
