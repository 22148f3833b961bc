"""The directory operations on the bytes of one tree, inside one view.

:class:`TreeOps` reads and writes a tree's nodes (see :mod:`._nodes`) through a
store view it is handed: a transaction's write view for the operations that
change the tree, any read view for the others. It follows FoundationDB's
directory layer step by step (version check, walk from the root node through
the child entries, partitions handing the rest of a path to their own tree,
the allocator, the prefix-free checks), so a tree either side wrote reads the
same on the other. Every refusal is a named error raised before anything is
written; the caller runs each operation in one atomic transaction.
"""

from __future__ import annotations

import builtins
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._bytes import prefix_end
from ..errors import (
    DirectoryError,
    DirectoryExists,
    DirectoryNotFound,
    DirectoryVersion,
    LayerMismatch,
    PrefixInUse,
    StaleDirectory,
    show_bytes,
)
from ..stores._base import ReadView, WriteView, keys_in
from ..tuples import unpack
from ._allocator import allocate
from ._nodes import PARTITION, VERSION, Tree

__all__ = ["Found", "TreeOps", "check_path"]

DirPath = tuple[str, ...]
PrefixCheck = Callable[[ReadView, bytes], None]
"""Refuses a prefix that meets keys of the keyspace's own (raises)."""


def check_path(path: Any, what: str = "path") -> DirPath:
    """``path`` as a tuple of str names (a bare str is a path of one name):
    :class:`DirectoryError` for anything else."""
    if type(path) is str:
        return (path,)
    if type(path) is list:
        path = tuple(path)
    if type(path) is not tuple or any(type(name) is not str for name in path):
        raise DirectoryError(f"a directory {what} is a tuple of str names, not {show_bytes(path)}")
    for name in path:
        try:
            name.encode()
        except UnicodeEncodeError:
            raise DirectoryError(
                f"directory name {show_bytes(name)} is not valid UTF-8 (a lone surrogate)"
            ) from None
    return path


@dataclass(frozen=True)
class Found:
    """A directory found or made: its absolute ``path``, ``prefix``, ``layer``, and
    the ``tree`` whose node subspace holds its node (the check key of a handle
    is that node's layer key)."""

    path: DirPath
    prefix: bytes
    layer: bytes
    tree: Tree

    @property
    def check_key(self) -> bytes:
        return self.tree.layer_key(self.tree.node_of(self.prefix))

    def alive(self, view: ReadView) -> None:
        """Raise :class:`StaleDirectory` unless ``view`` holds this directory's
        node: its layer key, which a removal deletes and a move leaves, holding
        its layer. The one check of every operation through a handle. Cost: a
        point read."""
        if view.get(self.check_key) != self.layer:
            raise StaleDirectory(
                f"the directory opened at {show_bytes(self.path)} (prefix {show_bytes(self.prefix)}) was "
                "removed: this handle reads and writes nothing; open the path again"
            )

    @property
    def is_partition(self) -> bool:
        return self.layer == PARTITION


@dataclass
class _Node:
    """A step of a walk: ``node`` (``None``: no directory at ``path``), the
    ``path`` walked so far and the ``target`` asked for."""

    node: bytes | None
    path: DirPath
    target: DirPath
    layer: bytes = b""

    def exists(self) -> bool:
        return self.node is not None

    def in_partition(self, include_empty: bool = False) -> bool:
        return (
            self.node is not None
            and self.layer == PARTITION
            and (include_empty or len(self.target) > len(self.path))
        )

    def subpath(self) -> DirPath:
        return self.target[len(self.path) :]


class TreeOps:
    """The operations of one tree: the root tree (``base=()``) or a partition's
    (``base`` its absolute path). ``manual``: whether ``create`` takes a
    ``prefix`` (never inside a partition, as in FoundationDB); ``check_prefix``
    refuses prefixes that meet the keyspace's own keys; ``rng`` draws the
    allocator's candidates."""

    def __init__(
        self,
        tree: Tree,
        base: DirPath = (),
        *,
        manual: bool = False,
        check_prefix: PrefixCheck | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.tree = tree
        self.base = base
        self.manual = manual
        self.check_prefix = check_prefix
        self.rng = rng if rng is not None else random.Random()

    def _partition(self, found: _Node) -> TreeOps:
        assert found.node is not None
        return TreeOps(
            Tree.partition(self.tree.prefix_of(found.node)),
            self.base + found.path,
            check_prefix=self.check_prefix,
            rng=self.rng,
        )

    # -- reading ---------------------------------------------------------------

    def check_version(self, view: ReadView, write: bool) -> None:
        """Refuse a tree of a newer version; with ``write``, record the version
        where none is (``view`` is then a write view)."""
        raw = view.get(self.tree.version_key)
        if raw is None:
            if write:
                assert isinstance(view, WriteView)
                view.put(self.tree.version_key, self.tree.version_bytes())
            return
        try:
            version = self.tree.version_of(raw)
        except Exception:
            raise DirectoryVersion(
                f"the directory version at {show_bytes(self.tree.version_key)} is {show_bytes(raw)}, "
                "not three little-endian u32"
            ) from None
        if version[0] > VERSION[0] or (write and version[1] > VERSION[1]):
            raise DirectoryVersion(
                f"the directory tree has version {'.'.join(map(str, version))}; this directory layer "
                f"({'.'.join(map(str, VERSION))}) {'writes' if write else 'reads'} only version "
                f"{VERSION[0]}{'.0' if write else ''}.x"
            )

    def _find(self, view: ReadView, path: DirPath) -> _Node:
        tree = self.tree
        found = _Node(tree.root, (), path)
        for i, name in enumerate(path):
            assert found.node is not None
            prefix = view.get(tree.child_key(found.node, name))
            if prefix is None:
                return _Node(None, path[: i + 1], path)
            node = tree.node_of(prefix)
            found = _Node(node, path[: i + 1], path, view.get(tree.layer_key(node)) or b"")
            if found.layer == PARTITION:
                return found
        return found

    def _found(self, node: _Node, path: DirPath | None = None) -> Found:
        assert node.node is not None
        return Found(
            self.base + (node.path if path is None else path),
            self.tree.prefix_of(node.node),
            node.layer,
            self.tree,
        )

    def exists(self, view: ReadView, path: DirPath) -> bool:
        self.check_version(view, write=False)
        node = self._find(view, path)
        if not node.exists():
            return False
        if node.in_partition():
            return self._partition(node).exists(view, node.subpath())
        return True

    def open(self, view: ReadView, path: DirPath, layer: bytes | None) -> Found:
        """The directory at ``path``: :class:`DirectoryNotFound`, or
        :class:`LayerMismatch` where ``layer`` is given and not its own."""
        self.check_version(view, write=False)
        if not path:
            raise DirectoryError("the root directory cannot be opened (it holds the directory nodes)")
        node = self._find(view, path)
        if node.in_partition():
            return self._partition(node).open(view, node.subpath(), layer)
        if not node.exists():
            raise DirectoryNotFound(f"no directory at {self._show(path)}")
        self._check_layer(node, path, layer)
        return self._found(node)

    def list(self, view: ReadView, path: DirPath) -> builtins.list[str]:
        self.check_version(view, write=False)
        node = self._find(view, path)
        if not node.exists():
            raise DirectoryNotFound(f"no directory at {self._show(path)}")
        if node.in_partition(include_empty=True):
            return self._partition(node).list(view, node.subpath())
        assert node.node is not None
        lo, hi = self.tree.children_range(node.node)
        return [self.tree.child_name(node.node, k) for k in keys_in(view, lo, hi)]

    def walk(self, view: ReadView, path: DirPath = (), depth: int | None = None) -> builtins.list[Found]:
        """Every directory below ``path`` (itself excluded), at most ``depth``
        levels below it (``None``: all), parents first, in name order; partitions
        are walked into."""
        out: builtins.list[Found] = []
        if depth is not None and depth < 1:
            return out
        for name in self.list(view, path):
            found = self.open(view, (*path, name), None)
            out.append(found)
            out += self.walk(view, (*path, name), None if depth is None else depth - 1)
        return out

    # -- writing ---------------------------------------------------------------

    def create_or_open(
        self,
        view: WriteView,
        path: DirPath,
        layer: bytes | None,
        prefix: bytes | None = None,
        allow_create: bool = True,
        allow_open: bool = True,
    ) -> Found:
        self.check_version(view, write=False)
        if prefix is not None and not self.manual:
            if self.base:
                raise DirectoryError(f"a prefix cannot be given inside a partition ({self._show(path)})")
            raise DirectoryError(
                "a prefix cannot be given unless manual prefixes are allowed "
                "(keyspace.open(..., directory_manual_prefixes=True))"
            )
        if not path:
            raise DirectoryError("the root directory cannot be opened (it holds the directory nodes)")
        node = self._find(view, path)
        if node.exists():
            if node.in_partition():
                return self._partition(node).create_or_open(
                    view, node.subpath(), layer, prefix, allow_create, allow_open
                )
            if not allow_open:
                raise DirectoryExists(f"a directory at {self._show(path)} exists already")
            self._check_layer(node, path, layer)
            return self._found(node)
        if not allow_create:
            raise DirectoryNotFound(f"no directory at {self._show(path)}")
        self.check_version(view, write=True)
        if prefix is None:
            prefix = allocate(view, self.tree, self.rng)
            if next(keys_in(view, prefix, prefix_end(prefix), limit=1), None) is not None:
                raise PrefixInUse(
                    f"the store holds keys under {show_bytes(prefix)}, the prefix the allocator drew for "
                    f"{self._show(path)}"
                )
            if not self._prefix_free(view, prefix):
                raise PrefixInUse(
                    f"a manual prefix meets {show_bytes(prefix)}, the prefix the allocator drew for "
                    f"{self._show(path)}"
                )
        else:
            if type(prefix) is not bytes:
                raise DirectoryError(f"a directory prefix is bytes, not {show_bytes(prefix)}")
            if not self._prefix_free(view, prefix):
                raise PrefixInUse(
                    f"the prefix {show_bytes(prefix)} is empty or meets another directory's prefix or the "
                    "directory nodes"
                )
            if self.check_prefix is not None:
                self.check_prefix(view, prefix)
        if len(path) > 1:
            parent = self.create_or_open(view, path[:-1], None)
            parent_node = self.tree.node_of(parent.prefix)
        else:
            parent_node = self.tree.root
        node_key = self.tree.node_of(prefix)
        view.put(self.tree.child_key(parent_node, path[-1]), prefix)
        layer = layer or b""
        view.put(self.tree.layer_key(node_key), layer)
        return Found(self.base + path, prefix, layer, self.tree)

    def move(self, view: WriteView, old: DirPath, new: DirPath) -> Found:
        self.check_version(view, write=True)
        if new[: len(old)] == old:
            raise DirectoryError(
                f"cannot move {self._show(old)} to {self._show(new)}: "
                "the destination is the directory itself or lies inside it"
            )
        old_node = self._find(view, old)
        new_node = self._find(view, new)
        if not old_node.exists():
            raise DirectoryNotFound(f"no directory at {self._show(old)} to move")
        if old_node.in_partition() or new_node.in_partition():
            if not (old_node.in_partition() and new_node.in_partition() and old_node.path == new_node.path):
                raise DirectoryError(f"cannot move {self._show(old)} to {self._show(new)}: across partitions")
            return self._partition(new_node).move(view, old_node.subpath(), new_node.subpath())
        if new_node.exists():
            raise DirectoryExists(f"cannot move {self._show(old)} to {self._show(new)}: a directory is there")
        parent = self._find(view, new[:-1])
        if not parent.exists():
            raise DirectoryNotFound(
                f"cannot move {self._show(old)} to {self._show(new)}: "
                f"no parent directory {self._show(new[:-1])}"
            )
        if parent.in_partition(include_empty=True) and new[:-1]:
            raise DirectoryError(f"cannot move {self._show(old)} to {self._show(new)}: across partitions")
        assert parent.node is not None and old_node.node is not None
        view.put(self.tree.child_key(parent.node, new[-1]), self.tree.prefix_of(old_node.node))
        self._remove_from_parent(view, old)
        return self._found(old_node, new)

    def remove(self, view: WriteView, path: DirPath, must: bool) -> bool:
        self.check_version(view, write=True)
        if not path:
            raise DirectoryError("the root directory cannot be removed")
        node = self._find(view, path)
        if not node.exists():
            if must:
                raise DirectoryNotFound(f"no directory at {self._show(path)} to remove")
            return False
        if node.in_partition():
            return self._partition(node).remove(view, node.subpath(), must)
        assert node.node is not None
        self._remove_recursive(view, node.node)
        self._remove_from_parent(view, path)
        return True

    def _remove_recursive(self, view: WriteView, node: bytes) -> None:
        tree = self.tree
        lo, hi = tree.children_range(node)
        for prefix in [v for _, v in view.scan(lo, hi)]:
            self._remove_recursive(view, tree.node_of(prefix))
        prefix = tree.prefix_of(node)
        view.delete_range(prefix, prefix_end(prefix))
        view.delete_range(*tree.node_range(node))

    def _remove_from_parent(self, view: WriteView, path: DirPath) -> None:
        parent = self._find(view, path[:-1])
        assert parent.node is not None
        view.delete(self.tree.child_key(parent.node, path[-1]))

    def _prefix_free(self, view: ReadView, prefix: bytes) -> bool:
        """FoundationDB's check: ``prefix`` is not empty, lies in no directory's
        prefix (nor in the node subspace) and holds none."""
        tree = self.tree
        if not prefix or prefix.startswith(tree.node):
            return False
        lo, hi = tree.node + b"\x00", tree.node_of(prefix) + b"\x00"
        last = next(keys_in(view, lo, hi, reverse=True, limit=1), None)
        if last is not None:
            before = unpack(last, len(tree.node))[0]
            if type(before) is bytes and prefix.startswith(before):
                return False
        end = prefix_end(prefix)
        lo = tree.node_of(prefix)
        hi2 = tree.node + b"\xff" if end is None else tree.node_of(end)
        return next(keys_in(view, lo, hi2, limit=1), None) is None

    def _check_layer(self, node: _Node, path: DirPath, layer: bytes | None) -> None:
        """:class:`LayerMismatch` where ``layer`` is given and not ``node``'s own."""
        if layer and node.layer != layer:
            raise LayerMismatch(
                f"the directory at {self._show(path)} has layer {show_bytes(node.layer)}, "
                f"not {show_bytes(layer)}"
            )

    def _show(self, path: DirPath) -> str:
        return show_bytes(self.base + path)
