"""Reading a whole store through a scheme, one key at a time, in one pass.

:class:`KeyReader` turns each stored key into ``(path, key)`` or tells that it is
reserved (a scheme record, a scope-name registry entry). It needs no scope objects
and no second scan: the scopehash registry entry of a scope (4 bytes) sorts before
the scope's keys, so names are known by the time their keys arrive.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .._catalog import LAYOUT_START
from ..errors import DecodeError, KeyspaceError
from ..schemes import LengthPrefixed, Naive, Scheme, ScopeHash
from ..stores import ReadView

__all__ = ["RESERVED", "Entry", "KeyReader", "NeedsMore", "Skipped", "walk"]

RESERVED = None
"""What :meth:`KeyReader.read` returns for a key that belongs to no scope."""

_REGISTRY_KEY_SIZE = 4


class NeedsMore(KeyspaceError):
    """The scheme cannot decode this store's keys without more information."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored key: its scope, its key, and the stored bytes."""

    path: tuple[Any, ...]
    key: Any
    stored: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class Skipped:
    """A stored key outside every scope: reserved (``reason`` None) or one that
    does not decode (``reason`` says why)."""

    stored: bytes
    value: bytes
    reason: str | None


class KeyReader:
    """Decodes the stored keys of one store under one scheme.

    ``depth`` is the scope depth for formats that do not record it (LengthPrefixed;
    Naive reads everything as the root scope). :meth:`read` costs one
    ``scheme.decode``; scopehash names are looked up in the registry entries seen
    so far, then with one point read on ``view`` when one is given.
    """

    def __init__(self, scheme: Scheme, depth: int | None = None, view: ReadView | None = None) -> None:
        if isinstance(scheme, LengthPrefixed) and depth is None:
            raise NeedsMore(
                "length-prefixed keys do not record how many path components they hold; "
                "pass --depth N (the scope depth of the stored keys)"
            )
        if isinstance(scheme, Naive) and depth not in (None, 0):
            raise NeedsMore("naive keys do not record where a component ends; only --depth 0 reads them")
        self.scheme = scheme
        self.depth = depth
        self._view = view
        self._metadata_key = scheme.metadata_key
        # where a LengthPrefixed keyspace records its layout (no key of a scope lies there)
        self._reserved = LAYOUT_START if isinstance(scheme, LengthPrefixed) else None
        # schemes that keep a name registry among their keys (scoped-heed) say how to read it
        self._entry = getattr(scheme, "registry_entry", None)
        self._registry_key = getattr(scheme, "registry_key", None)
        self._registry_name = getattr(scheme, "registry_name", None)
        hashed = isinstance(scheme, ScopeHash) or self._entry is not None
        self._hash_names: dict[int, str] | None = {} if hashed else None

    def read(self, stored: bytes, value: bytes) -> tuple[tuple[Any, ...], Any] | None:
        """``(path, key)`` of a stored key, or :data:`RESERVED` for the scheme
        record and scopehash registry entries. Raises :class:`DecodeError`."""
        if stored == self._metadata_key:
            return RESERVED
        if self._reserved is not None and stored.startswith(self._reserved):
            return RESERVED
        names = self._hash_names
        if names is None:
            return self.scheme.decode(stored, self.depth)
        if self._entry is not None:
            entry = self._entry(stored, value)
            if entry is not None:
                names[entry[0]] = entry[1]
                return RESERVED
        elif len(stored) == _REGISTRY_KEY_SIZE:
            scope_hash = int.from_bytes(stored, "little")
            names[scope_hash] = _registered_name(stored, value)
            return RESERVED
        path, key = self.scheme.decode(stored)
        if path:
            path = (self._hash_name(path[0]),)
        return path, key

    def _hash_name(self, scope_hash: int) -> Any:
        names = self._hash_names
        assert names is not None
        name = names.get(scope_hash)
        if name is None and self._view is not None:
            key = (
                scope_hash.to_bytes(_REGISTRY_KEY_SIZE, "little")
                if self._registry_key is None
                else self._registry_key(scope_hash)
            )
            raw = self._view.get(key)
            if raw is not None:
                read = self._registry_name
                try:
                    name = names[scope_hash] = (
                        _registered_name(key, raw) if read is None else read(raw, scope_hash)
                    )
                except DecodeError:
                    return scope_hash
        return scope_hash if name is None else name

    def unnamed(self, path: tuple[Any, ...]) -> bool:
        """True for a scopehash path whose name is not in the registry (the path
        holds the int hash instead)."""
        return self._hash_names is not None and bool(path) and isinstance(path[0], int)


def _registered_name(key: bytes, value: bytes) -> str:
    """The name of a scopehash registry entry; :class:`DecodeError` unless it is
    UTF-8 text whose hash is the entry's key (a corrupt entry is never trusted)."""
    try:
        name = value.decode("utf-8")
    except UnicodeDecodeError:
        name = ""
    if not name or ScopeHash.hash_name(name) != int.from_bytes(key, "little"):
        raise DecodeError(
            f"scopehash registry entry {key.hex()} holds {value!r}, which is not a name with that hash "
            "(a corrupt registry: its scopes cannot be told apart)",
            0,
        )
    return name


def walk(view: ReadView, reader: KeyReader) -> Iterator[Entry | Skipped]:
    """Scan the whole store once, in stored order: an :class:`Entry` per scope key,
    a :class:`Skipped` per reserved key or key that does not decode."""
    read = reader.read
    for stored, value in view.scan(b"", None):
        try:
            found = read(stored, value)
        except DecodeError as exc:
            yield Skipped(stored, value, f"not a {reader.scheme.name} key: {exc}")
            continue
        if found is RESERVED:
            yield Skipped(stored, value, None)
        else:
            yield Entry(found[0], found[1], stored, value)
