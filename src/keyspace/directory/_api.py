"""``ks.directories`` and ``tx.directories``: the directory tree of a keyspace.

:class:`Directories` runs each operation of :class:`~._layer.TreeOps` on the
keyspace's store: outside a transaction every operation that changes the tree
is one atomic transaction of the store (which the engines make exclusive, or
retry on conflict: see ``Catalog._atomically``), and every read reads one
snapshot; inside ``ks.transaction()`` the operations read and write through
the transaction, so a ``create_or_open`` of a path the same transaction made
finds it. The first change of the tree records the scheme (as a scope's first
write does) and that directories are in use (:data:`~keyspace._metadata.DIRECTORY_RECORD`),
in the same batch.
"""

from __future__ import annotations

import builtins
import copy
import random
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from .. import _metadata
from .._bytes import prefix_end
from ..catalog import Catalog
from ..codecs import Codec
from ..errors import (
    DirectoryError,
    DirectoryNotFound,
    InvalidArgument,
    PrefixInUse,
    SchemeMismatch,
    StaleDirectory,
    show_bytes,
)
from ..schemes._base import Scheme
from ..stores._base import ReadView, Store, WriteView, keys_in
from ._directory import Directory, DirectoryPartition, make_handle
from ._layer import Found, TreeOps, check_path
from ._nodes import Tree

__all__ = ["Directories"]

T = TypeVar("T")
Handle = Directory | DirectoryPartition


class DirectoryKeyspace(Protocol):
    """What the directories ask of their keyspace (a :class:`~keyspace.Keyspace`,
    which sits above this package and makes them): its store, scheme, catalog,
    URL and own directories, read and never replaced."""

    @property
    def url(self) -> str: ...
    @property
    def store(self) -> Store: ...
    @property
    def scheme(self) -> Scheme: ...
    @property
    def catalog(self) -> Catalog: ...
    @property
    def directories(self) -> Directories: ...


class Directories:
    """The directory tree of a keyspace (``ks.directories``), or of one of its
    transactions (``tx.directories``). Paths are tuples of str names (a bare str
    is a path of one name). Every refusal is a
    :class:`~keyspace.errors.DirectoryError` raised before anything changes.

    ``manual``: whether :meth:`create` takes a ``prefix`` (``keyspace.open(...,
    directory_manual_prefixes=True)``); ``rng`` draws the allocator's candidates.
    """

    def __init__(
        self,
        keyspace: DirectoryKeyspace,
        view: ReadView | None = None,
        state: Catalog | None = None,
        *,
        manual: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        self._keyspace = keyspace
        self._view = view
        self._state = keyspace.catalog if state is None else state
        self.manual = manual
        self.rng = rng if rng is not None else random.Random()
        self._recorded = False
        self._alive: Callable[[ReadView], None] | None = None
        self.removed: list[tuple[bytes, bytes, tuple[str, ...]]] = []
        # the catalogs and spaces of directories made (see make_handle): the
        # keyspace's own directories keep them for every transaction's
        self.made: dict[Any, Any] = {}

    def _bound(self, view: ReadView, state: Catalog) -> Directories:
        """These directories as a handle bound to ``view`` sees them."""
        store = self._keyspace.store
        if (self._view is None and view is store) or view is self._view:
            return self
        if view is store:
            return self._keyspace.directories
        bound = Directories(self._keyspace, view, None, manual=self.manual, rng=self.rng)
        return bound

    def _checked(self, alive: Callable[[ReadView], None]) -> Directories:
        """These directories (sharing their memo and the removals they record),
        running ``alive`` on the view of each operation before it: a handle's
        check that its directory was not removed (:meth:`Found.alive`)."""
        checked = copy.copy(self)
        checked._alive = alive
        return checked

    def _ops(self) -> TreeOps:
        return TreeOps(Tree(), manual=self.manual, check_prefix=self._check_prefix, rng=self.rng)

    # -- running ------------------------------------------------------------------

    def _check_scheme(self) -> None:
        scheme = self._keyspace.scheme
        met = _metadata.first_meeting(scheme.footprint(), _metadata.DIRECTORY_FOOTPRINT)
        if met is not None:
            d_lo, d_hi = met[1]
            raise SchemeMismatch(
                f"directories keep their nodes and prefixes in {show_bytes(d_lo)}..{show_bytes(d_hi)}, "
                f"where keys of {scheme!r} may be: open the store with a tuple scheme to use directories"
            )

    def _claim(self, view: WriteView, state: Catalog) -> None:
        """The records the first change of the tree writes, inside its batch."""
        if not state.recorded:
            state._claim_record(view)
        if self._recorded and self._view is None:
            return
        if view.get(_metadata.DIRECTORY_RECORD) is None:
            url = self._keyspace.url
            met = _metadata.first_meeting(
                _metadata.recorded_footprints(view, url), _metadata.DIRECTORY_FOOTPRINT
            )
            if met is not None:
                lo, hi = met[0]
                raise SchemeMismatch(
                    f"the store at {url!r} holds a keyspace whose keys lie in "
                    f"{show_bytes(lo)}..{show_bytes(hi)}, where directories keep their nodes and prefixes"
                )
            view.put(_metadata.DIRECTORY_RECORD, _metadata.directory_record())

    def _write(self, body: Callable[[WriteView], T]) -> T:
        self._check_scheme()
        view = self._view
        if view is not None:
            if not isinstance(view, WriteView):
                raise DirectoryError("a snapshot's directories are read-only")
            if self._alive is not None:
                self._alive(view)
            self._claim(view, self._state)
            return body(view)
        catalog = self._state
        out: list[T] = []
        states: list[Catalog] = []

        def attempt(tx: WriteView) -> None:
            out.clear()
            states.clear()
            state = catalog.child()
            states.append(state)
            if self._alive is not None:
                self._alive(tx)
            self._claim(tx, state)
            out.append(body(tx))

        catalog._atomically(attempt)
        states[0].commit()
        self._recorded = True
        return out[0]

    def _read(self, body: Callable[[ReadView], T]) -> T:
        self._check_scheme()  # another scheme's keys may lie where the nodes would
        alive = self._alive
        if alive is not None:
            unchecked = body

            def body(view: ReadView) -> T:
                alive(view)
                return unchecked(view)

        view = self._view
        if view is not None:
            return body(view)
        store = self._keyspace.store
        if store.capabilities.snapshots:
            with store.snapshot() as snap:
                return body(snap)
        return body(store)

    def _check_prefix(self, view: ReadView, prefix: bytes) -> None:
        """Refuse a manual prefix that meets the keyspace's records or scopes, or
        another keyspace's recorded footprint."""
        spans = [
            *self._state.reserved,
            *self._keyspace.scheme.footprint(),
            # not the directories' own (their nodes and prefixes: FoundationDB's check)
            *_metadata.recorded_footprints(view, self._keyspace.url, directories=False),
        ]
        met = _metadata.first_meeting(spans, [(prefix, prefix_end(prefix))])
        if met is not None:
            lo, hi = met[0]
            raise PrefixInUse(
                f"the prefix {show_bytes(prefix)} meets {show_bytes(lo)}..{show_bytes(hi)}, where the "
                "keyspace keeps its scopes' keys or its records"
            )

    def _handle(
        self, found: Found, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> Handle:
        return make_handle(found, self, self._keyspace, self._view, key, value)

    # -- the operations ----------------------------------------------------------

    def create_or_open(
        self,
        path: Any,
        layer: bytes = b"",
        *,
        key: str | Codec | None = None,
        value: str | Codec | None = None,
    ) -> Handle:
        """The directory at ``path``, created (with its missing parents) when there
        is none. :class:`LayerMismatch` when ``layer`` is given and the existing
        directory has another. Cost: outside a transaction, an existing directory
        is found in one snapshot (two point reads per name), with no write
        transaction; a creation runs in one write transaction, which looks again
        (another writer may have made it meanwhile) and adds the allocator's
        reads and writes and two writes per directory made."""
        path = check_path(path)
        _check_layer(layer)
        if self._view is None and path:
            try:
                found = self._read(lambda v: self._ops().open(v, path, layer or None))
            except DirectoryNotFound:
                pass
            else:
                return self._handle(found, key, value)
        return self._handle(self._write(lambda v: self._ops().create_or_open(v, path, layer)), key, value)

    def directory(
        self, path: Any, *, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> Directory:
        """:meth:`create_or_open` for a directory that holds keys: a partition
        there raises :class:`DirectoryError` (it holds none; open it with
        :meth:`open`)."""
        made = self.create_or_open(path, key=key, value=value)
        if not isinstance(made, Directory):
            raise DirectoryError(f"{show_bytes(made.path)} is a partition: it holds no keys of its own")
        return made

    def open(
        self,
        path: Any,
        layer: bytes | None = None,
        *,
        key: str | Codec | None = None,
        value: str | Codec | None = None,
    ) -> Handle:
        """The existing directory at ``path``: :class:`DirectoryNotFound` when
        there is none, :class:`LayerMismatch` when ``layer`` is given and not its
        own. Writes nothing. Cost: two point reads per name."""
        path = check_path(path)
        if layer is not None:
            _check_layer(layer)
        return self._handle(self._read(lambda v: self._ops().open(v, path, layer)), key, value)

    def create(
        self,
        path: Any,
        layer: bytes = b"",
        prefix: bytes | None = None,
        *,
        key: str | Codec | None = None,
        value: str | Codec | None = None,
    ) -> Handle:
        """A new directory at ``path`` (its missing parents created):
        :class:`DirectoryExists` when there is one. ``prefix``: the directory's
        prefix instead of an allocated one, only where manual prefixes are
        allowed; :class:`PrefixInUse` when it meets another directory's, the
        nodes, or the keyspace's own keys."""
        path = check_path(path)
        _check_layer(layer)
        if prefix is not None and type(prefix) is not bytes:
            raise DirectoryError(f"a directory prefix is bytes, not {show_bytes(prefix)}")
        found = self._write(lambda v: self._ops().create_or_open(v, path, layer, prefix, allow_open=False))
        return self._handle(found, key, value)

    def exists(self, path: Any = ()) -> bool:
        """Whether a directory is at ``path`` (the root always is)."""
        path = check_path(path)
        return self._read(lambda v: self._ops().exists(v, path))

    def list(self, path: Any = ()) -> builtins.list[str]:
        """The names of the subdirectories of ``path``, in name order:
        :class:`DirectoryNotFound` when there is no directory there. Cost: one
        scan of its child entries."""
        path = check_path(path)
        return self._read(lambda v: self._ops().list(v, path))

    def walk(
        self, path: Any = (), *, depth: int | None = None
    ) -> builtins.list[tuple[tuple[str, ...], bytes, bytes]]:
        """``(path, prefix, layer)`` of every directory below ``path``, parents
        first, in name order (partitions walked into), read in one snapshot;
        ``depth``: only those at most that many levels below ``path`` (1: its
        subdirectories), an int of at least 1 (else :class:`InvalidArgument`).
        Cost: a scan of the children of each directory walked and a few point
        reads per directory, and no handle made."""
        path = check_path(path)
        if depth is not None and (type(depth) is not int or depth < 1):
            raise InvalidArgument(f"walk depth is an int of at least 1 or None, not {show_bytes(depth)}")
        found = self._read(lambda v: self._ops().walk(v, path, depth))
        return [(f.path, f.prefix, f.layer) for f in found]

    def move(self, old_path: Any, new_path: Any) -> Handle:
        """Move the directory at ``old_path`` to ``new_path``: its keys and
        subdirectories keep their prefixes (one child entry written, one
        deleted, whatever it holds), and handles of it keep working.
        :class:`DirectoryError` for a destination inside the source,
        :class:`DirectoryExists` for an existing destination,
        :class:`DirectoryNotFound` for a missing source or destination parent."""
        old, new = check_path(old_path), check_path(new_path, "destination path")
        return self._handle(self._write(lambda v: self._ops().move(v, old, new)))

    def remove(self, path: Any) -> None:
        """Remove the directory at ``path``, its keys and every subdirectory:
        :class:`DirectoryNotFound` when there is none. Handles of them raise
        :class:`StaleDirectory` from then on. Cost: one range delete per
        directory removed and a scan of each one's children."""
        self._remove(check_path(path), True)

    def remove_if_exists(self, path: Any) -> bool:
        """As :meth:`remove`; ``False`` (nothing done) where there is no directory."""
        return self._remove(check_path(path), False)

    def _remove(self, path: tuple[str, ...], must: bool) -> bool:
        def body(view: WriteView) -> bool:
            ops = self._ops()
            doomed: list[Found] = []
            if self._view is not None and ops.exists(view, path) and path:
                doomed = [ops.open(view, path, None), *ops.walk(view, path)]
            done = ops.remove(view, path, must)
            self.removed += [(f.check_key, f.prefix, f.path) for f in doomed]
            return done

        return self._write(body)

    def check_removed(self, view: ReadView) -> None:
        """Before a transaction commits: :class:`StaleDirectory` when a key was
        written, after the transaction removed a directory, under its prefix
        through a handle of it (the transaction then commits nothing)."""
        for check_key, prefix, path in self.removed:
            if view.get(check_key) is not None:
                continue  # the prefix belongs to a directory again
            if next(keys_in(view, prefix, prefix_end(prefix), limit=1), None) is not None:
                raise StaleDirectory(
                    f"a key was written under {show_bytes(prefix)}, the prefix of the directory "
                    f"{show_bytes(path)} this transaction removed, through a handle of it"
                )

    def __repr__(self) -> str:
        return f"<Directories of {self._keyspace!r}>"


def _check_layer(layer: Any) -> None:
    if type(layer) is not bytes:
        raise DirectoryError(f"a directory layer is bytes, not {show_bytes(layer)}")
