"""What a scope checks before it reads its own keys, and through which view it
reads them.

:meth:`ReadGuards.guard` is asked once when a scope is made: ``None`` when
reads need no check (every scheme but ScopeHash names and the layered
schemes), else a function called before each read of own keys until it
answers :data:`~keyspace.catalog.state.SETTLED`, after which the scope drops
it. While a keyspace has seen no record of its own, its guards check the
records first (:meth:`ReadGuards._record_guard`), or the committed store's
reads check them once per commit (:meth:`ReadGuards.data_view`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..schemes._base import Path
from ..stores._base import ReadView
from ..stores._watched import WatchedReads, watched
from .atomic import AtomicWrites
from .state import SETTLED, GuardAnswer, ReadGuard


class ReadGuards(AtomicWrites):
    """The read guards and data views of one keyspace's scopes (module docstring)."""

    def guard(self, path: Path) -> ReadGuard | None:
        """What a scope at ``path`` runs before each read of its own keys (see
        :data:`ReadGuard`), or ``None`` when nothing needs checking. Called once
        when the scope is made; costs one hash of the name at most.

        While the keyspace has seen no record of its own (opened on a store that
        was empty, and not written since), the guard also checks the records
        first: another process may since have made its first write, and its keys
        may lie in this scope's ranges (:meth:`_record_guard`). A scheme that
        records nothing checks so only when it found the store empty: reading a
        store of data other programs wrote costs nothing more."""
        if self._reads_learn_nothing():
            return None  # the common case, asked once per scope made: nothing to check
        inner = self._path_guard(path)
        if inner is not None:
            inner = self._committed(inner, path)
        if self.recorded or not self.watch_records:
            return inner
        return self._record_guard(inner)

    def _record_guard(self, inner: ReadGuard | None) -> ReadGuard:
        """``inner`` (or nothing) behind the check an unrecorded keyspace's first
        write makes: :class:`SchemeMismatch` when the store now records another
        keyspace whose keys would overlap this one's. Settles once this
        keyspace's own record is seen (records are never removed; a scheme that
        records nothing checks at every read until this keyspace writes). Cost,
        until then: the reads of :meth:`_check_records` (a few point reads and
        two short scans)."""
        check_records = self._committed(self._check_records_answer)
        store = self.store
        one_state = not self._records_apart  # else the committed records are read

        def check(view: ReadView) -> GuardAnswer:
            if view is store:
                # the committed store: its scopes' reads check the records themselves
                # where the engine can (:meth:`data_view`), so the guard settles with
                # the path's own guard (a layout, a name), asked after the records
                # as before (checked once per state of the store)
                watched = self._watched_reads()
                if watched is not None and not self.recorded:
                    watched.hold()
                mine = self.recorded or watched is not None or check_records(view) is SETTLED
            elif one_state and view is self._records_seen_in:
                mine = True  # a transaction's or snapshot's records: checked in it once
            else:
                mine = self.recorded or check_records(view) is SETTLED
                if one_state and self._parent is not None:
                    self._records_seen_in = view
            if inner is None:
                return SETTLED if mine else True
            answer = inner(view)
            return True if answer is SETTLED and not mine else answer

        return check

    def _check_records_answer(self, view: ReadView) -> GuardAnswer:
        """:meth:`_check_records` as a guard: :data:`SETTLED` when ``view`` holds
        this keyspace's own record (kept as known when ``view`` is the committed
        store), ``True`` when it holds none."""
        if self._check_records(view) is None:
            return True
        if view is self.store and self._features_kept(view):
            self.mark_recorded()
        return SETTLED

    def data_view(self, path: Path, view: ReadView, data: ReadView, tag: bytes) -> ReadView:
        """The view a scope at ``path``, made on ``view``, reads its own keys through
        (and writes them through outside a transaction): ``data``, the part of
        ``view`` that holds them without their first ``len(tag)`` bytes. A catalog
        whose facts other writers may remove (scoped-heed's registry) gives the
        committed store's scopes a view that checks them in the state each read
        reads (:class:`~keyspace.stores._checked.CheckedReads`). This one, while
        it watches for records (:meth:`_record_guard`), gives the committed
        store's scopes, where the engine can, reads that check the records in
        their own read transaction once per commit of the store
        (:class:`~keyspace.stores._watched.WatchedReads`). Called once per scope
        made."""
        if view is self.store and data is view and not tag:
            reads = self._watched_reads()
            if reads is not None:
                return reads
        return data

    def checked_put(self, data: ReadView) -> Callable[[bytes, bytes], object] | None:
        """A put of one key through ``data`` (a view :meth:`data_view` gave) that
        checks this catalog's fact inside its own atomic write, so that a
        scope's ``[]=`` need not take the general first-write route; ``None``
        (this default) where the catalog offers none. Its errors are the
        view's. Asked once per scope bound."""
        return None

    def _watched_reads(self) -> WatchedReads | None:
        """The committed store's :class:`WatchedReads` where the records are
        watched and the engine offers them (one per keyspace, so that the check
        runs once per commit for all its scopes), else ``None``."""
        if self.recorded or not self.watch_records or self._reads_learn_nothing():
            return None
        made = self._watched
        if made is False:
            root = self
            while root._parent is not None:
                root = root._parent
            if root is not self:
                return root._watched_reads()
            store = self.store
            capped = self._records_apart  # the committed records are read then
            made = None if capped else watched(store, self._records_hold)
            self._watched = made
        return made if isinstance(made, WatchedReads) else None

    def _structure_check(self, view: ReadView) -> None:
        """Before a read of the committed store that does not go through a
        scope's :class:`WatchedReads` (children, a subtree): the records check
        the scope's read guard made before such a read, left to this catalog
        where those reads check it for the scope's own keys (the guard settles
        at once there). Cost: nothing unless records are watched so."""
        if view is self.store and self._watched_reads() is not None:
            self._check_records_answer(view)
