"""Hashed scope names, the layout of scoped-heed's bytes databases.

A stored key is ``u32le(xxh32(name, seed 0)) u64le(len key) key``: a 4-byte hash of
the UTF-8 scope name, the key's length as 8 little-endian bytes, then the key. This is
scoped-heed's ``ScopedBytesCodec`` (bincode's layout of ``(u32, Vec<u8>)``), so
scoped-heed's named scopes can be read and written in place.

Scopes are one level of non-empty ``str`` names. The default scope ``()`` is stored
under the hash of the empty name, which no named scope may use (scoped-heed keeps
it in a separate database instead). Two names can share a 32-bit hash; the scheme
cannot see that, so the scope layer keeps a registry, hash → name, under
:func:`registry_key` (the scheme declares :attr:`~Scheme.hashed_names`) and raises
:class:`HashCollision` for a second name with a taken hash (the hash of ``""`` is
taken by the default scope).

Scope ranges are exact. scoped-heed's own range ``[h, h + 1)`` compares
little-endian hashes as if they were big-endian, so it reaches into other scopes
(and is inverted when the low byte of ``h`` is ``ff``); here a scope's range is
``[h4 + u64le(0), prefix_end(h4))`` with ``h4 = u32le(h)``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from xxhash import xxh32_intdigest

from .._bytes import prefix_end
from ..errors import DecodeError, InvalidName, show_bytes
from ._base import (
    Component,
    Key,
    Path,
    Property,
    Scheme,
    checked_path,
    component_bytes,
    decode_arguments,
    key_bytes,
)
from ._layouts import U64LEN, Layout

__all__ = ["DEFAULT_SCOPE_HASH", "ScopeHash", "hash_name", "registry_key"]

_HEAD = struct.Struct("<IQ")
_HASH = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")
_HEAD_SIZE = _HEAD.size
_ZERO_LENGTH = _LENGTH.pack(0)
_MAX_HASH = 0xFFFFFFFF

# Every stored key of a scope is at least 12 bytes and every registry key is 4, so
# a key shorter than 4 bytes is outside every scope range and is no registry key.
_METADATA_KEY = b"ks\xff"


def hash_name(name: str) -> int:
    """Return the 32-bit XXH32 (seed 0) of the UTF-8 bytes of ``name``, as
    scoped-heed computes a scope's hash. ``hash_name("")`` is the default scope's.

    Raises :class:`InvalidName` for a str that is not valid UTF-8 text.
    """
    return xxh32_intdigest(component_bytes(name))


DEFAULT_SCOPE_HASH = hash_name("")
"""Hash under which the default (root) scope ``()`` stores its keys."""


def registry_key(name_or_hash: str | int) -> bytes:
    """Return ``u32le(hash)``, the 4-byte key below a scope's range where the scope
    layer records which name owns that hash. Takes a name or a hash."""
    if isinstance(name_or_hash, int):
        if not 0 <= name_or_hash <= _MAX_HASH:
            raise InvalidName(f"scope hash {name_or_hash!r} is outside the 32-bit range 0..{_MAX_HASH}")
        return _HASH.pack(name_or_hash)
    return _HASH.pack(hash_name(name_or_hash))


class ScopeHash(Scheme):
    """scoped-heed's bytes layout: ``u32le(xxh32(name)) u64le(len key) key``.

    * A path is ``()`` (the default scope) or ``(name,)`` with a non-empty ``str``
      name (:class:`InvalidName` for bytes names, the empty name, or deeper paths:
      :attr:`max_depth` is 1). Keys are any bytes.
    * Keys of a scope are **not** in byte order: the length comes first, so ``b"b"``
      sorts before ``b"aa"`` and a 256-byte key before a 1-byte key.
    * Declared properties: none. Not 1 (names are non-empty text), not 2 (names
      with equal 32-bit hashes share stored keys, e.g. ``"scope72590"`` and
      ``"scope159129"``; the scope layer's registry refuses the second one), not 3
      (length first), not 4 (hash order), not 5 (one level), not 6 (the name needs
      the registry: :meth:`decode` returns the hash).
    * :meth:`own_range` is exact; the 4-byte :func:`registry_key` sits just below it.
    * :attr:`metadata_key` is 3 bytes, shorter than any scope key or registry key.

    Cost: ``encode`` is one XXH32 of the name (C), one ``struct.pack`` and one concat.
    """

    name: ClassVar[str] = "scopehash"
    properties: ClassVar[frozenset[Property]] = frozenset()
    max_depth: ClassVar[int | None] = 1
    hashed_names: ClassVar[bool] = True

    @staticmethod
    def hash_name(name: str) -> int:
        """See :func:`hash_name`."""
        return hash_name(name)

    @staticmethod
    def registry_key(name_or_hash: str | int) -> bytes:
        """See :func:`registry_key`."""
        return registry_key(name_or_hash)

    def _hash(self, path: Path) -> int:
        path = checked_path(path)
        if not path:
            return DEFAULT_SCOPE_HASH
        if len(path) > 1:
            raise InvalidName(
                f"scope path {show_bytes(path)} has {len(path)} levels; the scopehash scheme allows at most 1"
            )
        return xxh32_intdigest(_scope_name(path[0]))

    def scope_hash(self, path: Path) -> int:
        """The 32-bit hash that the keys of scope ``path`` start with."""
        return self._hash(path)

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` unless ``path`` is ``()`` or ``(non-empty str,)``."""
        self._hash(path)

    def prefix(self, path: Path) -> bytes:
        """Return ``u32le(hash)``."""
        return _HASH.pack(self._hash(path))

    def encode_key(self, key: Key) -> bytes:
        """Return ``u64le(len key) key``."""
        raw = key_bytes(key)
        return _LENGTH.pack(len(raw)) + raw

    def decode_key(self, raw: bytes) -> Key:
        """Inverse of :meth:`encode_key`; :class:`DecodeError` if the length field
        does not match."""
        if len(raw) < _LENGTH.size:
            raise DecodeError(f"key part {show_bytes(raw)} is shorter than its 8-byte length field", 0)
        (length,) = _LENGTH.unpack_from(raw)
        if length != len(raw) - _LENGTH.size:
            raise DecodeError(
                f"key part {show_bytes(raw)} declares {length} key bytes but holds {len(raw) - _LENGTH.size}",
                0,
            )
        return raw[_LENGTH.size :]

    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Return ``((hash,), key)``, or ``((), key)`` for the default scope: the int
        hash stands for the name, which only the registry knows.

        ``depth``, when given, must match. Raises :class:`DecodeError` for input
        shorter than 12 bytes or whose length field does not match its length.
        """
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        if len(stored) < _HEAD_SIZE:
            raise DecodeError(
                f"stored key {show_bytes(stored)} is {len(stored)} bytes; scopehash keys are at least "
                f"{_HEAD_SIZE} (4-byte hash, 8-byte length)",
                len(stored),
            )
        scope_hash, length = _HEAD.unpack_from(stored)
        if length != len(stored) - _HEAD_SIZE:
            raise DecodeError(
                f"stored key {show_bytes(stored)} declares {length} key bytes at offset 4 but holds "
                f"{len(stored) - _HEAD_SIZE}",
                4,
            )
        path: Path = () if scope_hash == DEFAULT_SCOPE_HASH else (scope_hash,)
        if depth is not None and depth != len(path):
            raise DecodeError(
                f"stored key {show_bytes(stored)} is in a scope of depth {len(path)}, not {show_bytes(depth)}"
            )
        return path, stored[_HEAD_SIZE:]

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """``[u32le(h) + u64le(0), prefix_end(u32le(h)))``: exactly the scope's keys,
        never the registry key ``u32le(h)`` nor another scope's keys."""
        head = _HASH.pack(self._hash(path))
        return head + _ZERO_LENGTH, prefix_end(head)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Same as :meth:`own_range`. Scopes do not nest, and that includes the
        default scope: named scopes are its siblings in the byte order, each under
        its own hash with registry keys between them, so they are found through the
        registry, never by a range of the default scope."""
        return self.own_range(path)

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``u64len`` transform: ``u64le(len key) key`` after the hash."""
        return Layout(self, path, kind=U64LEN, accelerate=accelerate)

    @property
    def metadata_key(self) -> bytes | None:
        return _METADATA_KEY

    def params(self) -> Mapping[str, Any]:
        return {}


def _scope_name(component: Component) -> bytes:
    if not issubclass(type(component), str):
        raise InvalidName(
            f"scope name {show_bytes(component)} has type {type(component).__name__}; "
            "the scopehash scheme takes non-empty str names"
        )
    if not str.__len__(component):
        raise InvalidName(
            "the empty scope name is reserved for the default scope in the scopehash scheme; use the path ()"
        )
    return component_bytes(component)
