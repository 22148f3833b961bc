"""Directory handles: a :class:`Directory` is a scope over its allocated prefix.

A directory's keys are ``prefix + pack((k,))`` (a tuple key ``(a, b)``:
``prefix + pack((a, b))``), FoundationDB's ``DirectorySubspace.pack``: the tuple
scheme's key transform over the directory's own prefix, so a :class:`Directory`
is a :class:`~keyspace.scope.Scope` (every mapping method, range word and
codec) compiled over a one-path scheme whose prefix is the allocated one.

Each handle has its own catalog (:class:`_DirectoryCatalog`), whose one fact is
that the handle's directory still exists: its node's layer key holds the layer
the handle was opened with. Removal deletes that key with the directory's
keys, and a move leaves it (the node keeps its prefix), so a handle of a moved
directory keeps working and one of a removed directory raises
:class:`~keyspace.errors.StaleDirectory`. The fact is checked where the
operation reads or writes: outside a transaction every write and delete runs
in one transaction of the store with the check (on LMDB a point put is
``put_if``, the node read in the put's own write transaction, bound as the
handle's route of ``[]=``), every read reads the check key in the state it reads
(:class:`~keyspace.stores._checked.CheckedReads`); inside
a transaction or snapshot once per handle, the transaction's own removals
being checked again before it commits (no key may be left under a prefix it
removed).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from .._bytes import prefix_end
from .._space import Space
from ..catalog import SETTLED, Catalog, GuardAnswer, ReadGuard
from ..codecs import Codec, resolve_codec
from ..errors import DirectoryError, StaleDirectory, show_bytes
from ..schemes._base import Key, Path, remember
from ..schemes._layouts import TUPLE, Layout, LayoutCache
from ..schemes.tuple_scheme import TupleScheme, _key_of
from ..scope import Scope
from ..stores._base import ReadView, Store, WriteView
from ..stores._checked import CheckedReads
from ..tuples import unpack
from ._layer import DirPath, Found, check_path

__all__ = ["Directory", "DirectoryPartition", "make_handle"]


class _ContentScheme(TupleScheme):
    """The tuple scheme's keys over one directory's prefix: ``prefix + pack(key)``
    for the one path of the directory (its keys only, no child scopes, no
    records of its own)."""

    name = "directory"

    def __init__(self, prefix: bytes, path: DirPath) -> None:
        super().__init__(prefix)
        self._path = path

    def prefix(self, path: Path) -> bytes:
        return self._raw_prefix

    def validate_path(self, path: Path) -> None:
        return None

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        return Layout(self, path, kind=TUPLE, accelerate=accelerate)

    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        rp = self._raw_prefix
        if type(stored) is not bytes or not stored.startswith(rp):
            raise DirectoryError(
                f"stored key {show_bytes(stored)} is not under the directory prefix {show_bytes(rp)}"
            )
        return self._path, _key_of(unpack(stored, len(rp)))

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        return self._raw_prefix, self._raw_prefix + b"\xff"

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        return self.own_range(path)

    def footprint(self) -> tuple[tuple[bytes, bytes | None], ...]:
        return ((self._raw_prefix, prefix_end(self._raw_prefix)),)

    @property
    def metadata_key(self) -> bytes | None:
        return None

    def params(self) -> dict[str, Any]:
        return {"prefix": self._raw_prefix.hex()}


class _DirectoryCatalog(Catalog):
    """The catalog of one directory handle (module docstring): the check key and
    the layer it must hold; ``found`` and ``owner`` (the directories facade that
    made the handle) ride along to the children a transaction makes."""

    facts_removable = True

    def __init__(self, store: Store, found: Found, owner: DirectoryOwner) -> None:
        scheme = _ContentScheme(found.prefix, found.path)
        super().__init__(store, scheme, recorded=True, watch_records=False, found_empty=False)
        self._plain = False
        self.found = found
        self.owner = owner
        self.check_key = found.check_key
        self.expected = found.layer

    def alive(self, view: ReadView) -> None:
        """Raise :class:`StaleDirectory` unless ``view`` holds the directory's node
        (:meth:`Found.alive`)."""
        self.found.alive(view)

    def guard(self, path: Path) -> ReadGuard | None:
        """Nothing for the committed store's handle where its reads check the node
        themselves (:meth:`data_view`) and its writes and deletes in their own
        transaction (:meth:`first_write`); before the reads of a transaction's or
        snapshot's handle, the node once (it does not change under them but by
        the transaction's own removal, which its end checks)."""
        store = self.store
        checked = store.capabilities.snapshots  # its reads go through CheckedReads
        if checked and self._parent is None:
            return None

        def read_check(view: ReadView) -> GuardAnswer:
            if view is store:
                if not checked:
                    self.alive(view)
                return True  # not SETTLED: deletes check again in their own batch
            self.alive(view)
            return SETTLED

        return read_check

    def data_view(self, path: Path, view: ReadView, data: ReadView, tag: bytes) -> ReadView:
        store = self.store
        if view is not store or not store.capabilities.snapshots or not isinstance(data, Store):
            return data

        def recheck(snap: ReadView) -> bool:
            self.alive(snap)
            return True

        return CheckedReads(store, data, tag, self.check_key, self.expected, recheck, self.stale)

    def checked_put(self, data: ReadView) -> Callable[[bytes, bytes], object] | None:
        """The put of the committed store's view (:meth:`data_view`) that checks
        the node in its own write transaction, where the engine offers one."""
        return data.checked_put if isinstance(data, CheckedReads) else None

    def stale(self) -> StaleDirectory:
        """The error of a write whose check of the node failed in its own write
        transaction (nothing written): :meth:`alive` raises it where the node is
        gone; one whose node is back since (removed and made anew at the same
        prefix) is refused all the same."""
        self.alive(self.store)
        return StaleDirectory(f"the directory at {show_bytes(self.found.path)} changed while it was written")

    def _path_guard(self, path: Path) -> ReadGuard | None:
        def check(view: ReadView) -> GuardAnswer:
            self.alive(view)
            return True

        return check

    def write_ready(self, path: Path) -> bool:
        """Ready only inside a transaction that checked the node already."""
        return self._parent is not None and path in self.prepared

    def first_write(
        self,
        view: WriteView,
        path: Path,
        apply: Callable[[WriteView], None],
        ops: Any = (),
    ) -> None:
        """The node check and ``apply`` in one atomic batch: the caller's
        transaction, else one transaction of the store (where the store writes
        ``ops``, what ``apply`` writes, under a check of its own, that one
        write: LMDB's ``write_if``)."""
        store = self.store
        if view is not store:
            self.alive(view)
            apply(view)
            self.prepared.add(path)
            return
        write_if = getattr(store, "write_if", None)
        if ops and write_if is not None:
            if not write_if(self.check_key, self.expected, ops):
                raise self.stale()
            return

        def body(tx: WriteView) -> None:
            self.alive(tx)
            apply(tx)

        self._atomically(body)

    def destructive(
        self,
        view: WriteView,
        apply: Callable[[WriteView], None],
        single: bool = False,
        path: Path | None = None,
        own: bool = True,
    ) -> None:
        self.first_write(view, () if path is None else path, apply)

    def children(self, view: ReadView, path: Path) -> list[Any]:
        self.alive(view)
        return []

    def decoder(
        self, view: ReadView, path: Path, later: ReadView | None = None
    ) -> Callable[[bytes], tuple[Path, Key]]:
        """The base decoder, after the node check of ``view``: a removed directory's
        ``subtree()`` and ``watch()`` raise :class:`StaleDirectory`, never reading
        or watching a prefix no directory owns (one point read)."""
        self.alive(view)
        return super().decoder(view, path, later)

    def subtree_ranges(self, view: ReadView, path: Path) -> list[tuple[bytes, bytes | None]]:
        return [self.scheme.own_range(path)]


class _TreeOperations:
    """The directory operations of a handle, taking paths relative to the path
    it was opened at, run on the directories :meth:`_dirs` gives (which check
    first that the handle's directory was not removed)."""

    __slots__ = ()

    def _dirs(self) -> DirectoryOwner:
        raise NotImplementedError

    def _at(self) -> DirPath:
        """The path the handle was opened at."""
        raise NotImplementedError

    def _sub(self, path: Any) -> Any:
        return self._at() + check_path(path)

    def create_or_open(self, path: Any, layer: bytes = b"") -> Directory | DirectoryPartition:
        return self._dirs().create_or_open(self._sub(path), layer)

    def open(self, path: Any, layer: bytes | None = None) -> Directory | DirectoryPartition:
        return self._dirs().open(self._sub(path), layer)

    def create(
        self, path: Any, layer: bytes = b"", prefix: bytes | None = None
    ) -> Directory | DirectoryPartition:
        return self._dirs().create(self._sub(path), layer, prefix)

    def exists(self, path: Any = ()) -> bool:
        return self._dirs().exists(self._sub(path))

    def list(self, path: Any = ()) -> builtins.list[str]:
        return self._dirs().list(self._sub(path))

    def move(self, old_path: Any, new_path: Any) -> Directory | DirectoryPartition:
        return self._dirs().move(self._sub(old_path), self._sub(new_path))

    def move_to(self, new_path: Any) -> Directory | DirectoryPartition:
        """Move this directory to the absolute path ``new_path``."""
        return self._dirs().move(self._at(), new_path)

    def remove(self, path: Any = ()) -> None:
        self._dirs().remove(self._sub(path))

    def remove_if_exists(self, path: Any = ()) -> bool:
        return self._dirs().remove_if_exists(self._sub(path))


class Directory(_TreeOperations, Scope):
    """A directory of the keyspace's directory tree: a :class:`~keyspace.scope.Scope`
    over its own keys (stored ``prefix + pack((k,))``), with ``path`` (the path it
    was opened at), ``layer``, ``prefix`` (its allocated prefix), and the
    directory operations of :class:`~keyspace.directory.Directories` taking
    paths relative to it (to the path it was opened at: a moved directory's
    handle keeps that path, as in FoundationDB). ``scope()`` is refused (use a
    subdirectory); ``scopes()`` is empty and ``drop()`` clears the keys (use
    :meth:`remove` to remove the directory).

    Every operation raises :class:`~keyspace.errors.StaleDirectory` once the
    directory was removed, the directory operations too (the node read first
    in their own transaction or snapshot: they make, move or remove nothing;
    see the module docstring for where the rest is checked;
    cost outside a transaction: a write is one transaction of the store with
    one point read more, a read reads the node key in the state it reads; on
    LMDB each in the put's or read's own transaction, the read's once per state
    of the store, in a tuple scope's Python calls and one or two more)."""

    __slots__ = ()

    @property
    def layer(self) -> bytes:
        return self._dir_catalog().found.layer

    def _dir_catalog(self) -> _DirectoryCatalog:
        state = self._state
        assert isinstance(state, _DirectoryCatalog)
        return state

    def _at(self) -> DirPath:
        return tuple(self.path)

    def _dirs(self) -> DirectoryOwner:
        """The directories this handle's tree operations run on, bound to its view,
        each checking its node first in the operation's own transaction or
        snapshot (a removed directory's handle makes, moves and removes nothing)."""
        catalog = self._dir_catalog()
        return catalog.owner._bound(self._view, self._state)._checked(catalog.found.alive)

    def scope(self, *more: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        raise DirectoryError(
            f"directory {show_bytes(self.path)} has no child scopes; make a subdirectory "
            f"(create_or_open({show_bytes(more)}))"
        )

    def subtree(self) -> Iterator[tuple[Path, Any, Any]]:
        """:meth:`Scope.subtree`, with the node checked in the state of the store
        it scans: outside a transaction, on a store with snapshots, both read one
        snapshot (so a removal and a new directory at the same prefix made
        meanwhile are never seen). Cost: one snapshot more than a scope's."""
        store = self._state.store
        if self._view is store and store.capabilities.snapshots:
            with self._space.snapshot() as (snap, state):
                yield from Scope.subtree(self._on(snap, state))
            return
        yield from Scope.subtree(self)

    def __repr__(self) -> str:
        return f"<Directory {self.path!r} prefix={show_bytes(self.prefix)}>"


class DirectoryPartition(_TreeOperations):
    """A partition (layer ``b"partition"``): a directory holding a tree of its own,
    whose subdirectories' prefixes all start with its prefix. It holds no keys
    itself (as in FoundationDB); it offers the directory operations relative to
    it, ``path``, ``layer`` and ``prefix``."""

    __slots__ = ("_owner", "found")

    def __init__(self, found: Found, owner: DirectoryOwner) -> None:
        self.found = found
        self._owner = owner._checked(found.alive)  # a removed partition's handle changes nothing

    path = property(lambda self: self.found.path)
    layer = property(lambda self: self.found.layer)
    prefix = property(lambda self: self.found.prefix)

    def __repr__(self) -> str:
        return f"<DirectoryPartition {self.path!r} prefix={show_bytes(self.prefix)}>"

    def _at(self) -> DirPath:
        return self.found.path

    def _dirs(self) -> DirectoryOwner:
        return self._owner

    def _no_keys(self) -> DirectoryError:
        return DirectoryError(
            f"the partition {show_bytes(self.path)} holds no keys of its own; use a subdirectory"
        )

    def __getitem__(self, key: Any) -> Any:
        raise self._no_keys()

    def __setitem__(self, key: Any, value: Any) -> None:
        raise self._no_keys()

    def __delitem__(self, key: Any) -> None:
        raise self._no_keys()


class DirectoryOwner(Protocol):
    """What a handle asks of the directories it belongs to: the tree operations
    it runs relative to its own path, the directories as bound to a view, and
    the memo of made directories (:class:`~keyspace.directory.Directories`,
    which makes the handles, offers it)."""

    made: dict[Any, Any]

    def _bound(self, view: ReadView, state: Catalog) -> DirectoryOwner: ...
    def _checked(self, alive: Callable[[ReadView], None]) -> DirectoryOwner: ...
    def create_or_open(self, path: Any, layer: bytes = b"") -> Directory | DirectoryPartition: ...
    def open(self, path: Any, layer: bytes | None = None) -> Directory | DirectoryPartition: ...
    def create(
        self, path: Any, layer: bytes = b"", prefix: bytes | None = None
    ) -> Directory | DirectoryPartition: ...
    def exists(self, path: Any = ()) -> bool: ...
    def list(self, path: Any = ()) -> builtins.list[str]: ...
    def move(self, old_path: Any, new_path: Any) -> Directory | DirectoryPartition: ...
    def remove(self, path: Any) -> None: ...
    def remove_if_exists(self, path: Any) -> bool: ...


_MADE = 4096
"""Directories whose catalog and space a keyspace keeps (the oldest dropped first)."""


def make_handle(
    found: Found,
    owner: DirectoryOwner,
    keyspace: Any,
    view: ReadView | None,
    key: str | Codec | None = None,
    value: str | Codec | None = None,
) -> Directory | DirectoryPartition:
    """The handle of ``found``: a partition's, or a :class:`Directory` on the
    committed store (``view`` None) or on a transaction's or snapshot's view,
    whose directory operations go through ``owner`` (the transaction's
    directories, which check its removals before it commits). The catalog and
    the compiled layout of a directory are made once per keyspace (up to
    :data:`_MADE` of them) and shared by its handles. Cost: a dictionary lookup
    and the scope's construction over the compiled layout; the first handle of
    a directory compiles it."""
    if found.is_partition:
        return DirectoryPartition(found, owner)
    store: Store = keyspace.store
    shared: DirectoryOwner = keyspace.directories
    memo = shared.made
    made_key = (found.path, found.prefix, found.layer, found.tree.node)
    got = memo.get(made_key)
    if got is None:
        catalog = _DirectoryCatalog(store, found, shared)
        got = (catalog, Space(store, catalog, LayoutCache(catalog.scheme, size=1), keyspace))
        remember(memo, made_key, got, _MADE)
    catalog, space = got
    kc, vc = resolve_codec(key), resolve_codec(value)
    if view is None:
        return Directory(space, store, catalog, found.path, kc, vc)
    state = catalog.child()
    state.owner = owner
    return Directory(space, view, state, found.path, kc, vc)
