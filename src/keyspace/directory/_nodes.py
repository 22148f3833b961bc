"""The bytes of a directory tree: FoundationDB's directory layer, with its defaults.

A tree has a *node subspace* (``fe`` for the root tree) and a *content subspace*
(empty for the root tree: allocated prefixes sit at the top of the store). A
directory whose contents live under prefix ``p`` has its node at
``N(p) = node_subspace + pack((p,))``; under it::

    N(p) + pack((b"layer",))     the directory's layer (b"" for none)
    N(p) + pack((0, name))       child ``name`` -> the child's prefix

The tree's root node is ``N(node_subspace)``; it holds the children of the root
and ``pack((b"version",))`` (three little-endian u32: 1, 0, 0) and the
allocator's counters ``pack((b"hca", 0, start))`` (a little-endian i64 count)
and recent prefixes ``pack((b"hca", 1, candidate))``. A partition (layer
``b"partition"``) with prefix ``p`` is a tree of its own whose node subspace is
``p + fe`` and whose content subspace is ``p``.

Pure functions of bytes; nothing here reads a store.
"""

from __future__ import annotations

import struct

from .._bytes import prefix_end
from ..tuples import pack, unpack

__all__ = ["PARTITION", "SUBDIRS", "VERSION", "Tree"]

SUBDIRS = 0
"""The tuple element under a node that holds its children."""
VERSION = (1, 0, 0)
"""The directory layer version this module writes and reads."""
PARTITION = b"partition"
"""The layer of a partition: a directory holding a tree of its own."""
_VERSION = struct.Struct("<III")


class Tree:
    """The key layout of one directory tree: ``node`` the node subspace's prefix,
    ``content`` the content subspace's (the root tree: ``fe`` and ``b""``; a
    partition of prefix ``p``: ``p + fe`` and ``p``). Immutable; cheap to make."""

    __slots__ = ("content", "counters", "node", "recent", "root", "version_key")

    def __init__(self, node: bytes = b"\xfe", content: bytes = b"") -> None:
        self.node = node
        self.content = content
        self.root = self.node_of(node)
        self.version_key = self.root + pack((b"version",))
        hca = self.root + pack((b"hca",))
        self.counters = hca + pack((0,))
        self.recent = hca + pack((1,))

    @classmethod
    def partition(cls, prefix: bytes) -> Tree:
        """The tree inside the partition whose prefix is ``prefix``."""
        return cls(prefix + b"\xfe", prefix)

    def node_of(self, prefix: bytes) -> bytes:
        """``N(prefix)``: where the node of the directory of ``prefix`` keeps its keys."""
        return self.node + pack((prefix,))

    def prefix_of(self, node: bytes) -> bytes:
        """The inverse of :meth:`node_of`."""
        return unpack(node, len(self.node))[0]  # type: ignore[no-any-return]

    @staticmethod
    def layer_key(node: bytes) -> bytes:
        return node + pack((b"layer",))

    @staticmethod
    def child_key(node: bytes, name: str) -> bytes:
        return node + pack((SUBDIRS, name))

    @staticmethod
    def children_range(node: bytes) -> tuple[bytes, bytes]:
        """The range of a node's child entries (``pack((0,)) + 00 .. ff``: every name)."""
        start = node + pack((SUBDIRS,))
        return start + b"\x00", start + b"\xff"

    @staticmethod
    def child_name(node: bytes, key: bytes) -> str:
        """The name of the child entry ``key`` of ``node``."""
        return unpack(key, len(node))[1]  # type: ignore[no-any-return]

    def node_range(self, node: bytes) -> tuple[bytes, bytes | None]:
        """Every key of a node: ``[node, prefix_end(node))``."""
        return node, prefix_end(node)

    def counter_key(self, start: int) -> bytes:
        return self.counters + pack((start,))

    def recent_key(self, candidate: int) -> bytes:
        return self.recent + pack((candidate,))

    def counter_start(self, key: bytes) -> int:
        return unpack(key, len(self.counters))[0]  # type: ignore[no-any-return]

    @staticmethod
    def version_bytes(version: tuple[int, int, int] = VERSION) -> bytes:
        return _VERSION.pack(*version)

    @staticmethod
    def version_of(raw: bytes) -> tuple[int, int, int]:
        """The version stored as ``raw`` (12 bytes); ValueError otherwise."""
        got: tuple[int, int, int] = _VERSION.unpack(raw)
        return got
