"""Space: what every scope of one keyspace shares.

A :class:`~keyspace.Scope` holds its keyspace's :class:`Space`, never the
keyspace itself: the store, the :class:`~keyspace.catalog.Catalog` (the facts
that keep scopes apart, consulted on every path that touches data), the cache
of compiled layouts, and the atomic steps a scope opens on its own (a one-step
transaction for a read then a write, a snapshot for a count of several reads).
The keyspace makes one space when it opens and hands it to every scope, so
making a scope costs no lookup through the keyspace, and this module imports
nothing above the schemes and stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType
from typing import Generic, TypeVar

from .catalog import Catalog
from .schemes._layouts import LayoutCache
from .stores._base import ReadView, Store

__all__ = ["Space", "SpaceSnapshot"]

Owner = TypeVar("Owner", covariant=True)
"""The type of a space's owner (this module needs to know nothing of it)."""


class Space(Generic[Owner]):
    """The store, catalog and layout cache the scopes of one keyspace share.

    ``owner`` is the object the scopes answer for :attr:`Scope.keyspace` (the
    :class:`~keyspace.Keyspace` that made the space), of the type parameter
    ``Owner`` (a scope takes a space whose owner offers what
    :class:`~keyspace.scope.KeyspaceLike` describes); the space and the scopes
    never call it. ``layouts`` may be replaced (a cache compiling pure-Python
    layouts, for one). ``committed`` is the store that reads made at any time
    go to (a watch decoding an event that comes later): ``store`` itself, but
    for an async keyspace's plan store, which reads only inside operations."""

    __slots__ = ("catalog", "committed", "layouts", "owner", "store")

    def __init__(self, store: Store, catalog: Catalog, layouts: LayoutCache, owner: Owner) -> None:
        self.store = store
        self.committed = store
        self.catalog = catalog
        self.layouts = layouts
        self.owner = owner

    @contextmanager
    def transaction(self) -> Iterator[tuple[ReadView, Catalog]]:
        """One atomic transaction of the store: ``(view, state)``, the view its
        reads and writes go through and the catalog state they record into
        (committed into the keyspace's catalog only when the store's transaction
        commits). Discarded when the block raises."""
        state = self.catalog.child()
        with self.store.transaction() as view:
            yield view, state
        state.commit()

    def snapshot(self) -> SpaceSnapshot:
        """A read-only consistent view of the store: ``with space.snapshot() as
        (view, state)``, ``state`` the catalog state its reads record into
        (:meth:`Catalog.reading`). Cost: the store's snapshot, and a catalog child
        where reads learn facts."""
        return SpaceSnapshot(self.store, self.catalog)


class SpaceSnapshot:
    """The block of :meth:`Space.snapshot`: a plain context manager rather than a
    generator one, since a snapshot per request is a path programs take (a
    generator's frame costs more than the LMDB read transaction itself). Its
    exit ends the store's snapshot once; an exit without a snapshot begun (its
    entry failed, or it ended already) does nothing."""

    __slots__ = ("_block", "_catalog", "_store")

    def __init__(self, store: Store, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog
        self._block: AbstractContextManager[ReadView] | None = None

    def __enter__(self) -> tuple[ReadView, Catalog]:
        return self._begin()

    def _begin(self) -> tuple[ReadView, Catalog]:
        """Begin the store's snapshot: its view and the catalog state of its reads,
        taken first, so that every fact it holds holds in the snapshot's state."""
        state = self._catalog.reading()
        block = self._store.snapshot()
        view = block.__enter__()
        self._block = block
        return view, state

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        block = self._block
        if block is None:
            return None
        self._block = None
        return block.__exit__(exc_type, exc, tb)
