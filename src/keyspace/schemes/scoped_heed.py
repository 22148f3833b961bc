"""scoped-heed's databases as one byte space: the layout of a scoped-heed environment.

scoped-heed (0.2.x) keeps one scoped database ``NAME`` in three LMDB databases:
the default scope in ``NAME`` (or the unnamed database), the named scopes in
``NAME_scoped`` under ``u32le(xxh32(name))``, and the environment's registry
``__global_scope_metadata``, ``u32le(hash) -> bincode String``. A store that lays
them end to end under one-byte tags (:class:`~keyspace.stores._union.PrefixUnion`)
gives this scheme's byte space:

====================================  ==============================================
stored key                            database key
====================================  ==============================================
``00 k``                              default scope: ``k`` in ``NAME``
``01 u32le(h) rest``                  named scope of hash ``h``: in ``NAME_scoped``
``02 u32le(h)``                       registry entry of ``h``
====================================  ==============================================

``rest`` depends on the database kind (``api``): ``u64le(len key) key`` for the bytes
databases (``raw_bytes``, ``bytes_keys``), the key's own bincode (written by the
scope's key codec) for ``types``. Default-scope keys are stored as they are in
every kind, so the scheme is per scope: :meth:`ScopedHeed.scope_scheme` gives the
one whose :meth:`encode_key` applies to a path.

Paths are ``()`` or ``(name,)`` with a non-empty ``str`` name (bytes names are
their UTF-8 text: ``b"t"`` and ``"t"`` are one scope). Ranges are exact,
also for a hash whose low byte is ``ff`` (scoped-heed's own range end carries the
wrong way there). Declared properties: none for the bytes databases (one level,
32-bit hashes, length-first keys); order within a scope (3) for ``types``, whose keys
are stored as their codec's bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from xxhash import xxh32_intdigest

from .._bytes import buffer_bytes, prefix_end
from ..bincode import STRING
from ..errors import DecodeError, InvalidArgument, InvalidName, show_bytes
from ._base import Key, Path, Property, Scheme, checked_path, component_bytes, decode_arguments, key_bytes

if TYPE_CHECKING:
    from ._layouts import Layout

__all__ = ["APIS", "DEFAULT_TAG", "NAMED_TAG", "REGISTRY_TAG", "ScopedHeed", "ScopedHeedTypes"]

DEFAULT_TAG, NAMED_TAG, REGISTRY_TAG = b"\x00", b"\x01", b"\x02"
APIS = ("raw_bytes", "bytes_keys", "types")
_HASH = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")


class ScopedHeed(Scheme):
    """The byte space of one scoped-heed database (see the module docstring).

    ``ScopedHeed(api)`` with ``api`` one of ``"raw_bytes"``, ``"bytes_keys"``,
    ``"types"``. Declared properties: none for the bytes databases (one level,
    32-bit hashes, length-first keys); 3 for ``types`` (:class:`ScopedHeedTypes`).
    Cost: ``encode`` is one XXH32 of the name, one ``struct.pack`` and
    two concatenations.
    """

    name: ClassVar[str] = "scoped-heed"
    properties: ClassVar[frozenset[Property]] = frozenset()
    max_depth: ClassVar[int | None] = 1

    def __new__(cls, api: str = "raw_bytes", *, _framed: bool | None = None) -> ScopedHeed:
        """``ScopedHeed("types")`` is a :class:`ScopedHeedTypes` (it keeps key order)."""
        if cls is ScopedHeed and api == "types":
            cls = ScopedHeedTypes
        return super().__new__(cls)

    def __init__(self, api: str = "raw_bytes", *, _framed: bool | None = None) -> None:
        if type(api) is not str or api not in APIS:
            raise InvalidArgument(f"unknown scoped-heed api {show_bytes(api)}; known: {', '.join(APIS)}")
        self.api = api
        self.framed = api != "types" if _framed is None else _framed
        """Whether :meth:`encode_key` writes ``u64le(len key)`` before the key."""
        self._default = self if not self.framed else ScopedHeed(api, _framed=False)

    # -- paths ------------------------------------------------------------------

    @staticmethod
    def hash_name(name: str) -> int:
        """XXH32 (seed 0) of the UTF-8 name, scoped-heed's scope hash."""
        return xxh32_intdigest(component_bytes(name))

    @staticmethod
    def scope_name(component: Any) -> str:
        """The scope name of a path component: a non-empty ``str``, or bytes that
        are its UTF-8 (the same scope, as in the other byte schemes). Raises
        :class:`InvalidName` for anything else."""
        if issubclass(type(component), bytes | bytearray):
            try:
                component = (buffer_bytes(component) or b"").decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidName(
                    f"scope name {show_bytes(component)} is not UTF-8 ({exc.reason} at offset {exc.start}); "
                    "scoped-heed names scopes with text"
                ) from None
        if not issubclass(type(component), str) or not str.__len__(component):
            raise InvalidName(
                f"scope name {show_bytes(component)} is not a non-empty str; scoped-heed names scopes with "
                "non-empty text (the default scope is ())"
            )
        return str.__str__(component)

    def _hash(self, path: Path) -> int | None:
        path = checked_path(path)
        if not path:
            return None
        if len(path) > 1:
            raise InvalidName(
                f"scope path {show_bytes(path)} has {len(path)} levels; scoped-heed scopes have 1"
            )
        return xxh32_intdigest(component_bytes(self.scope_name(path[0])))

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` unless ``path`` is ``()`` or ``(name,)`` with a
        non-empty ``str`` name (or its UTF-8 bytes)."""
        self._hash(path)

    def scope_scheme(self, path: Path) -> ScopedHeed:
        """The scheme whose key encoding applies to scope ``path``: default-scope keys
        are never length-prefixed. Raises :class:`InvalidName` for a ``path`` that is
        not a tuple."""
        return self._default if not checked_path(path) else self

    def prefix(self, path: Path) -> bytes:
        h = self._hash(path)
        return DEFAULT_TAG if h is None else NAMED_TAG + _HASH.pack(h)

    @staticmethod
    def registry_key(name_or_hash: str | int) -> bytes:
        """``02 u32le(hash)``: where the registry records the name of that hash."""
        h = name_or_hash if isinstance(name_or_hash, int) else ScopedHeed.hash_name(name_or_hash)
        return REGISTRY_TAG + _HASH.pack(h)

    registry_range: ClassVar[tuple[bytes, bytes]] = (REGISTRY_TAG, b"\x03")
    """The registry's entries, all of them."""

    @staticmethod
    def registry_name(value: bytes, scope_hash: int | None = None) -> str:
        """The name a registry entry's value (bincode ``String``) holds, checked
        against the entry's hash when given: :class:`DecodeError` for a value that
        is no name, or a name that does not hash to ``scope_hash`` (a corrupt entry
        is never trusted)."""
        name = str(STRING.decode(value))
        if scope_hash is not None and (not name or xxh32_intdigest(name.encode()) != scope_hash):
            raise DecodeError(
                f"registry entry {scope_hash:#010x} holds the name {name!r}, whose hash is not that one: "
                "the registry is corrupt, so the scope under that hash cannot be named",
                0,
            )
        return name

    @staticmethod
    def registry_entry(stored: bytes, value: bytes) -> tuple[int, str] | None:
        """``(hash, name)`` when ``stored`` is a registry entry, else ``None``;
        :class:`DecodeError` for a corrupt one."""
        if stored[:1] != REGISTRY_TAG:
            return None
        if len(stored) != 5:
            raise DecodeError(f"registry key {show_bytes(stored)} is not 02 + a 4-byte hash", 1)
        scope_hash = _HASH.unpack_from(stored, 1)[0]
        return scope_hash, ScopedHeed.registry_name(value, scope_hash)

    # -- keys -------------------------------------------------------------------

    def encode_key(self, key: Key) -> bytes:
        raw = key_bytes(key)
        return _LENGTH.pack(len(raw)) + raw if self.framed else raw

    def decode_key(self, raw: bytes) -> Key:
        if not self.framed:
            return raw
        if len(raw) < 8:
            raise DecodeError(f"key part {show_bytes(raw)} is shorter than its 8-byte length field", 0)
        (length,) = _LENGTH.unpack_from(raw)
        if length != len(raw) - 8:
            raise DecodeError(
                f"key part {show_bytes(raw)} declares {length} key bytes but holds {len(raw) - 8}", 0
            )
        return raw[8:]

    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """``((), key)`` or ``((hash,), key)``: the name needs the registry."""
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        path: Path
        if stored[:1] == DEFAULT_TAG:
            path, key = (), stored[1:]
        elif stored[:1] == NAMED_TAG and len(stored) >= 5:
            path, key = (_HASH.unpack_from(stored, 1)[0],), self.decode_key(stored[5:])
        else:
            raise DecodeError(f"stored key {show_bytes(stored)} is in no scope of a scoped-heed database", 0)
        if depth is not None and depth != len(path):
            raise DecodeError(
                f"stored key {show_bytes(stored)} is in a scope of depth {len(path)}, not {show_bytes(depth)}"
            )
        return path, key

    # -- ranges -----------------------------------------------------------------

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        head = self.prefix(path)
        return head, prefix_end(head)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """The default scope's subtree is every scope (not the registry)."""
        if not checked_path(path):
            return DEFAULT_TAG, REGISTRY_TAG
        return self.own_range(path)

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``u64len`` transform (``prefix + u64le(len key) + key``) where the
        scope's keys are framed (named scopes of the bytes databases), else ``raw``
        (``prefix + key``; the default scope's keys are never framed): both served
        in C where built. The layout's scheme is :meth:`scope_scheme` of ``path``."""
        from ._layouts import RAW, U64LEN, Layout

        scheme = self.scope_scheme(path)
        return Layout(scheme, path, kind=U64LEN if scheme.framed else RAW, accelerate=accelerate)

    def params(self) -> Mapping[str, Any]:
        return {"api": self.api}


class ScopedHeedTypes(ScopedHeed):
    """:class:`ScopedHeed` of a ``types`` database: a key is stored as the bytes its
    key codec gives (bincode of ``K``), after the scope's prefix, so stored order
    within a scope is the byte order of those bytes (property 3; the bincode of an
    integer is little-endian, so integer keys themselves are not in order)."""

    properties: ClassVar[frozenset[Property]] = frozenset({Property.ORDER_WITHIN})
