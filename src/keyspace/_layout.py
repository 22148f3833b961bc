"""What a keyspace checks before a scope's first write, and how it finds children.

- The scheme must accept writes to the path (``Naive`` refuses unless asked).
- Schemes that cannot tell a scope's own keys from its children's keys
  (``LengthPrefixed``, ``Naive``) make each scope a *leaf* (holds keys) or a
  *branch* (holds child scopes); mixing raises :class:`LayoutError`. The layout is
  learnt from use, per keyspace object.
- ``ScopeHash`` keeps a persistent registry ``u32le(hash) -> name`` at the 4-byte
  key of each hash (outside every scope's key range); a second name with the same
  hash raises :class:`HashCollision`, also after reopening. The hash of the empty
  name belongs to the default (root) scope.
- Schemes with reserved space get their metadata record with the first write.

State learnt inside a transaction is kept only when it commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from . import _metadata
from ._bytes import prefix_end
from .errors import DecodeError, HashCollision, InvalidName, KeyTooLarge, LayoutError, show_bytes
from .schemes import ScopeHash
from .schemes._base import Key, Path, component_bytes
from .stores._base import ReadView, WriteView

if TYPE_CHECKING:
    from .keyspace import Keyspace

__all__ = ["WriteState"]

_LEAF, _BRANCH = "leaf", "branch"


class WriteState:
    """Per-keyspace facts learnt from writes: metadata recorded, registered hashes,
    leaf/branch layout. A transaction works on a child whose facts merge into the
    parent on commit."""

    def __init__(self, keyspace: Keyspace, *, recorded: bool, parent: WriteState | None = None) -> None:
        self._ks = keyspace
        self._parent = parent
        self.recorded = recorded
        self.registered: dict[bytes, str] = {}
        self.layout: dict[Path, str] = {}

    # -- transactions -------------------------------------------------------------

    def child(self) -> WriteState:
        return WriteState(self._ks, recorded=self.recorded, parent=self)

    def commit(self) -> None:
        parent = self._parent
        if parent is None:
            return
        parent.recorded = parent.recorded or self.recorded
        parent.registered.update(self.registered)
        parent.layout.update(self.layout)

    def _registered(self, key: bytes) -> str | None:
        state: WriteState | None = self
        while state is not None:
            name = state.registered.get(key)
            if name is not None:
                return name
            state = state._parent
        return None

    def _same(self, path: Path) -> Path:
        """``path`` in the form the layout is kept in: in the byte schemes ``"a"`` and
        ``b"a"`` are one scope, so components are kept as bytes."""
        if self._ks.scheme.typed_keys:
            return path
        return tuple(component_bytes(c) for c in path)

    def _layout_of(self, path: Path) -> str | None:
        path = self._same(path)
        state: WriteState | None = self
        while state is not None:
            kind = state.layout.get(path)
            if kind is not None:
                return kind
            state = state._parent
        return None

    def is_branch(self, path: Path) -> bool:
        """Whether ``path`` is known (from writes through this keyspace) to hold child
        scopes, so that it has no own keys: in a scheme that cannot tell a scope's
        own keys from its children's, every stored key under its prefix is a child's."""
        return self._layout_of(path) == _BRANCH

    # -- checks before the first write of a scope ----------------------------------------

    def check_storable(self, keys: Iterable[bytes]) -> None:
        """Refuse, before a scope's first write records anything (the scheme
        metadata, a ScopeHash registry entry, the leaf/branch layout), a stored key
        the engine cannot store: over its ``max_key_size``, or empty where it takes
        no empty key. The adapter would refuse it too, but only after those records
        were written."""
        store = self._ks.store
        caps = store.capabilities
        limit = caps.max_key_size
        for key in keys:
            if limit is not None and len(key) > limit:
                raise KeyTooLarge(
                    f"key of {len(key)} bytes is over the limit of {limit} bytes of {store.url}: "
                    f"{show_bytes(key)}"
                )
            if not key and not caps.empty_keys:
                raise InvalidName(f"{store.url} cannot store the empty key b''")

    def before_write(self, view: WriteView, path: Path) -> None:
        scheme = self._ks.scheme
        scheme.encode(path, b"")  # Naive refuses here unless allow_collisions=True
        if not scheme.separates_own_keys:
            self._claim_leaf(path)
        if isinstance(scheme, ScopeHash):
            self._register(view, path)
        if not self.recorded and scheme.metadata_key is not None:
            _metadata.write(view, scheme)
            self.recorded = True

    def _claim_leaf(self, path: Path) -> None:
        path = self._same(path)
        if self._layout_of(path) == _BRANCH:
            raise LayoutError(
                f"scope {path!r} holds child scopes, so it cannot hold keys too: this scheme cannot tell "
                "a scope's own keys from its children's keys (a scope holds keys or child scopes, not both)"
            )
        for depth in range(len(path)):
            ancestor = path[:depth]
            if self._layout_of(ancestor) == _LEAF:
                raise LayoutError(
                    f"scope {ancestor!r} holds keys, so it cannot hold the child scope {path!r}: this scheme "
                    "cannot tell a scope's own keys from its children's keys"
                )
        self.layout[path] = _LEAF
        for depth in range(len(path)):
            self.layout[path[:depth]] = _BRANCH

    def _register(self, view: WriteView, path: Path) -> None:
        scheme = self._ks.scheme
        key = scheme.prefix(path)  # u32le(hash): the registry entry of that hash
        name = path[0] if path else ""
        if self._registered(key) == name:
            return
        if path and key == scheme.prefix(()):
            raise HashCollision(
                f"scope name {name!r} has the same xxh32 hash {show_bytes(key)} as the default scope, "
                "which reserves it; choose another name"
            )
        existing = view.get(key)
        if existing is None:
            view.put(key, name.encode())
        elif existing != name.encode():
            other = existing.decode("utf-8", "replace")
            raise HashCollision(
                f"scope name {name!r} has the same xxh32 hash {show_bytes(key)} as {other!r}, which is "
                "registered in this store; writing it would mix the two scopes' keys"
            )
        self.registered[key] = name

    # -- structure ----------------------------------------------------------------------

    def children(self, view: ReadView, path: Path) -> list[Any]:
        """Direct children of ``path`` holding data: one seek per child."""
        scheme = self._ks.scheme
        if isinstance(scheme, ScopeHash):
            return self._hash_children(view) if not path else []
        if not scheme.separates_own_keys and self._layout_of(path) == _LEAF:
            return []
        lo, hi = scheme.subtree_range(path)
        own = scheme.own_ranges(path) if scheme.separates_own_keys else ()
        exact = scheme.own_range_is_exact()
        plen = len(scheme.prefix(path))
        depth = len(path)
        # formats that do not record the depth are decoded at the children's depth
        want_depth = None if scheme.separates_own_keys else depth + 1
        out: list[Any] = []
        cursor: bytes | None = lo
        while cursor is not None:
            item = next(iter(view.scan(cursor, hi, limit=1)), None)
            if item is None:
                break
            k = item[0]
            found, own_end = _own_end(own, k)
            if found and (exact or scheme.is_own_remainder(k[plen:])):
                cursor = own_end if exact else k + b"\x00"
                continue
            try:
                child_path, _ = scheme.decode(k, want_depth)
            except DecodeError:
                cursor = k + b"\x00"
                continue
            if len(child_path) <= depth:
                cursor = k + b"\x00"
                continue
            child = child_path[depth]
            out.append(child)
            nxt = scheme.subtree_range((*path, child))[1]
            cursor = nxt if nxt is not None and nxt > k else (None if nxt is None else k + b"\x00")
        return out

    def _hash_registry(self, view: ReadView) -> Iterator[str]:
        """Names registered in a ScopeHash store, except the default scope's: one
        seek per hash block (registry key, then the block's keys are skipped)."""
        scheme = self._ks.scheme
        default_key = scheme.prefix(())
        cursor: bytes | None = b""
        while cursor is not None:
            item = next(iter(view.scan(cursor, None, limit=1)), None)
            if item is None:
                break
            k, v = item
            if len(k) < 4:  # reserved keys (metadata) sort outside every hash block
                cursor = k + b"\x00"
                continue
            if len(k) == 4 and k != default_key:
                yield v.decode("utf-8", "replace")
            cursor = prefix_end(k[:4])

    def _hash_children(self, view: ReadView) -> list[str]:
        scheme = self._ks.scheme
        names: list[str] = []
        for name in self._hash_registry(view):
            lo, hi = scheme.own_range((name,))
            if next(iter(view.scan(lo, hi, limit=1)), None) is not None:
                names.append(name)
        return names

    def subtree_ranges(self, view: ReadView, path: Path) -> list[tuple[bytes, bytes | None]]:
        """The ranges holding ``path`` and every scope below it. One range, except
        for the ScopeHash root, whose named scopes lie beside it in hash order:
        their ranges come from the registry."""
        scheme = self._ks.scheme
        if isinstance(scheme, ScopeHash) and not path:
            names = list(self._hash_registry(view))
            return [scheme.own_range(())] + [scheme.own_range((n,)) for n in names]
        return [scheme.subtree_range(path)]

    def decoder(self, path: Path) -> Callable[[bytes], tuple[Path, Key]]:
        """A function from a stored key below ``path`` to ``(path, key)``."""
        scheme = self._ks.scheme
        if isinstance(scheme, ScopeHash):
            return self._hash_decoder()
        if scheme.separates_own_keys:
            return scheme.decode
        same = self._same(path)
        leaves = sorted(
            (p for p in self._all_layout() if self._layout_of(p) == _LEAF and p[: len(path)] == same),
            key=len,
            reverse=True,
        )
        prefixes = [(leaf, scheme.prefix(leaf)) for leaf in leaves]

        def decode(stored: bytes) -> tuple[Path, Key]:
            for leaf, prefix in prefixes:
                if stored.startswith(prefix):
                    return leaf, scheme.decode_key(stored[len(prefix) :])
            raise LayoutError(
                f"cannot tell which scope the stored key {show_bytes(stored)} belongs to: "
                f"{scheme.name} keys do not record their depth; open the leaf scope that holds it"
            )

        return decode

    def _hash_decoder(self) -> Callable[[bytes], tuple[Path, Key]]:
        scheme = self._ks.scheme
        default_key = scheme.prefix(())
        view = self._ks.store

        def decode(stored: bytes) -> tuple[Path, Key]:
            _, key = scheme.decode(stored)
            block = stored[:4]
            if block == default_key:
                return (), key
            name = self._registered(block)
            if name is None:
                raw = view.get(block)
                if raw is None:
                    raise DecodeError(f"no registered scope name for hash {show_bytes(block)}", 0)
                name = raw.decode("utf-8", "replace")
            return (name,), key

        return decode

    def _all_layout(self) -> set[Path]:
        paths: set[Path] = set()
        state: WriteState | None = self
        while state is not None:
            paths.update(state.layout)
            state = state._parent
        return paths


def _own_end(own: tuple[tuple[bytes, bytes | None], ...], key: bytes) -> tuple[bool, bytes | None]:
    """Whether an own range holds ``key``, and that range's end."""
    for lo, hi in own:
        if lo <= key and (hi is None or key < hi):
            return True, hi
    return False, None
