"""What every fact of the catalog reads: the store, the scheme, what a keyspace
has learnt so far, and the chain from a transaction's catalog to its parent's.

:class:`CatalogState` is the lowest floor of :class:`~keyspace.catalog.Catalog`:
the facts themselves sit on the floors above it (records, leaves, names), then
the writes that claim them atomically, the read guards and the structure reads;
each floor calls only the floors below it. Also here: what a read guard answers
(:data:`SETTLED`, :data:`GuardAnswer`, :data:`ReadGuard`), shared by them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Self

from .._metadata import reserved_ranges
from ..errors import AccessDenied, LayoutError, show_bytes
from ..schemes._base import Path, Scheme, component_bytes, exact_path
from ..stores._base import ReadView, Store
from ..stores._watched import WatchedReads
from ..tuples import pack, unpack


class _Settled:
    """The type of :data:`SETTLED` (one instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SETTLED"


SETTLED = _Settled()
"""What a read guard answers when the scope may be read and always will be, for
as long as the scope lives: the scope then drops the guard (its next reads call
nothing). Only facts that no write can undo settle a guard (registry and layout
records are never removed), and only for the scopes of the view they were read
in (a status read inside a transaction settles that transaction's scopes)."""

GuardAnswer = bool | _Settled
"""What a read guard answers: ``False``, ``True`` or :data:`SETTLED`."""

ReadGuard = Callable[[ReadView], GuardAnswer]
"""Called before a read of a scope's own keys with the view read: raises when the
scope may not be read, returns ``False`` when it has no own keys (a branch),
``True`` when it may be read now (ask again next time), :data:`SETTLED` when it
may be read from now on."""

_Range = tuple[bytes, bytes | None]

_Reserved = tuple[tuple[bytes, bytes], ...]


def check_leaf_depth(leaf_depth: Any) -> None:
    """Refuse a ``leaf_depth`` that is not ``None`` or an int of 0 or more
    (:class:`LayoutError`)."""
    if leaf_depth is not None and (type(leaf_depth) is not int or leaf_depth < 0):
        raise LayoutError(f"leaf_depth must be an int of 0 or more, not {show_bytes(leaf_depth)}")


class CatalogState:
    """The state of one keyspace's catalog (module docstring). A transaction
    works on a :meth:`child` whose facts merge into the parent on :meth:`commit`."""

    facts_removable: ClassVar[bool] = False
    """Whether other writers may remove a fact a read relies on (scoped-heed's
    registry entries): a read of the committed store must then check it in the
    state it reads, never in a state read before (:meth:`data_view`; the asyncio
    face reads such a scope's keys in one snapshot). This catalog's facts, once
    written, stay."""

    def __init__(
        self,
        store: Store,
        scheme: Scheme,
        *,
        recorded: bool,
        leaf_depth: int | None = None,
        parent: Self | None = None,
        watch_records: bool | None = None,
        found_empty: bool | None = None,
    ) -> None:
        self.store = store
        self.scheme = scheme
        self.url = store.url
        limit = store.capabilities.max_batch_ops
        self.batch_limit = limit if limit is not None else 1 << 62
        self._parent = parent
        self.recorded = recorded
        # called once when the committed store is first known to hold this
        # keyspace's record (:meth:`mark_recorded`); a child shares its root's list
        self._recorded_listeners: list[Callable[[], object]] = (
            [] if parent is None else parent._recorded_listeners
        )
        self.registered: dict[bytes, str] = {}
        self.layout: dict[Path, str] = {}
        self._layout_sealed = False  # a snapshot's: no leaf/branch fact of the parent's later
        self.prepared: set[Path] = set()
        self._hashed = scheme.hashed_names
        # the width of a name registry key: the hash alone, as the scheme's prefix of any path
        self._entry_size = len(scheme.prefix(())) if self._hashed else 0
        self._layered = not scheme.separates_own_keys
        check_leaf_depth(leaf_depth)
        self.leaf_depth = leaf_depth if self._layered else None
        # a scheme that records its layout does so unless one is declared (module docstring)
        self._persist = self._layered and leaf_depth is None and scheme.records_layout
        # whether this keyspace found the store empty (its first write then refuses
        # keys another program wrote since with a scheme that keeps no record)
        if found_empty is None:
            found_empty = not recorded and _may_be_empty(store)
        self.found_empty = found_empty
        # whether reads check the records while none of this keyspace's is known
        # (:meth:`_record_guard`): a scheme that records itself checks until its
        # record is seen; one that records nothing (a reader of data other programs
        # wrote, say) only when it found the store empty, where another process's
        # first write may come next (the short scan above, unless the caller knows
        # the answer: a catalog over the same store as one that asked)
        if watch_records is None:
            watch_records = recorded or scheme.metadata_key is not None or self.found_empty
        self.watch_records = watch_records
        self.owned = False
        self._loaded: set[Path] = set()
        # the common case: once recorded, no path needs anything before a write,
        # nor a check of its own before a read (no names, no leaf/branch layout)
        self._plain = not (self._hashed or self._layered)
        self.reserved: _Reserved = reserved_ranges(scheme, store.capabilities.reserved)
        # path -> (own ranges less the reserved ones, reserved ranges the scope meets);
        # facts of the scheme alone, so a transaction's catalog shares the memo
        self._ranges: dict[Path, tuple[tuple[_Range, ...], _Reserved]] = {}
        # the view of a transaction or snapshot (one state) whose records were
        # checked already (:meth:`_record_guard`)
        self._records_seen_in: ReadView | None = None
        # a snapshot's view and whether it holds no layout record (LeafRecords._unrecorded)
        self._unrecorded_in: tuple[ReadView, bool] | None = None
        # the committed store's reads that check the records in their own state
        # (:meth:`data_view`), made when first needed
        self._watched: WatchedReads | bool | None = False

    def child(self) -> Self:
        """A catalog of this one's class and facts, for a transaction or a snapshot:
        what it learns stays its own until :meth:`commit`. Cost: one copy of
        the facts and four empty containers."""
        child = object.__new__(type(self))
        facts = self.__dict__.copy()  # one copy: faster than updating the new instance's dict
        facts["_parent"] = self
        facts["registered"], facts["layout"], facts["prepared"], facts["_loaded"] = {}, {}, set(), set()
        facts["_layout_sealed"] = False  # its own facts are new: the parent's are still asked
        facts["_records_seen_in"] = facts["_unrecorded_in"] = None
        child.__dict__ = facts
        return child

    def reading(self) -> Self:
        """The catalog state of a snapshot's reads (a snapshot writes nothing): a
        :meth:`child`, so that what they learn (names, the leaf/branch layout, the
        records) stays apart from this catalog's facts, which a later state of the
        store need not share; this catalog itself where reads learn nothing
        (:meth:`_reads_learn_nothing`). Taken before the snapshot begins. Cost:
        nothing, or a child (with a copy of the leaf/branch facts known, in a
        scheme that keeps them)."""
        if self._reads_learn_nothing():
            return self
        child = self.child()
        if self._layered:
            # the leaf/branch facts known now (the snapshot begins after this, so they
            # hold in its state: records are never removed), none learned later: the
            # parent's facts of later writes would refuse, or answer, what the
            # snapshot's state says otherwise
            merged: dict[Path, str] = {}
            for state in reversed(list(self._chain())):
                merged.update(state.layout)
            child.layout = merged
            child._layout_sealed = True
        return child

    def _reads_learn_nothing(self) -> bool:
        """Whether reads neither check nor learn anything: no names, no leaf/branch
        layout (:attr:`_plain`), and this keyspace's record known or none watched
        for. It stays so: a catalog's record, once known, is for good."""
        return self._plain and (self.recorded or not self.watch_records)

    def mark_recorded(self) -> None:
        """Note that this state's store holds this keyspace's record, for good
        (records are never removed). On the keyspace's own catalog (no parent),
        the first time, each listener of :meth:`when_recorded` is called: what
        was made while the record was watched for (a scope reading the store
        through :class:`~keyspace.stores._watched.WatchedReads`) may be made
        again without the watch."""
        if self.recorded:
            return
        self.recorded = True
        if self._parent is None:
            listeners = self._recorded_listeners
            for listener in listeners:
                listener()
            listeners.clear()  # each is called once; none is held longer

    def when_recorded(self, listener: Callable[[], object]) -> None:
        """Call ``listener()`` once this keyspace's record is known to be in the
        committed store (:meth:`mark_recorded`); at once where it is known now."""
        if self.recorded and self._parent is None:
            listener()
            return
        self._recorded_listeners.append(listener)

    def commit(self) -> None:
        parent = self._parent
        if parent is None:
            return
        if self.recorded:
            parent.mark_recorded()
        parent.owned = parent.owned or self.owned
        parent.registered.update(self.registered)
        parent.layout.update(self.layout)
        parent.prepared.update(self.prepared)

    def _chain(self) -> Iterator[Self]:
        state: Self | None = self
        while state is not None:
            yield state
            state = state._parent

    def _same(self, path: Path) -> Path:
        """``path`` in the form facts are kept in: in the byte schemes ``"a"`` and
        ``b"a"`` are one scope, so components are kept as bytes; in the tuple
        scheme a path of other components than ``str`` and ``bytes`` is kept as
        the exact values its encoding reads back as (a str or int subclass, whose
        ``__hash__`` and ``__eq__`` may be anything, as the str or int it is
        stored as), so that every fact is kept under a path that hashes and
        compares as the scope it names."""
        if self.scheme.typed_keys:
            return path if exact_path(path) else unpack(pack((path,)))[0]
        return tuple(component_bytes(c) for c in path)


def _first(view: ReadView, lo: bytes, hi: bytes | None) -> tuple[bytes, bytes] | None:
    return next(iter(view.scan(lo, hi, limit=1)), None)


def _may_be_empty(store: ReadView) -> bool:
    """Whether ``store`` may hold no key: one short scan, or True where the reader
    may not scan the whole store (an etcd user granted some scopes), which keeps
    the record checks on."""
    try:
        return _first(store, b"", None) is None
    except AccessDenied:
        return True
