"""The catalog: the facts that keep a keyspace's scopes apart, checked on every path.

A :class:`Catalog` belongs to one keyspace (one store, one scheme); every scope
holds it. It knows

- the **scheme record** (``_metadata``): a keyspace that has not seen its record
  reads and writes it inside the atomic batch of its first write, together with
  the records of the keyspaces whose footprint could overlap its own (raw-prefixed
  tuple keyspaces, listed in the footprint registry), so two keyspaces racing on
  a fresh store, or one opened before the other wrote, never mix their keys;
- the **name registry** of a scheme that stores names as hashes
  (:attr:`~Scheme.hashed_names`: ScopeHash), ``u32le(hash) -> name`` at the key
  that is the hash alone (4 bytes): a name whose hash another name holds raises
  :class:`HashCollision` on every access (reads too), and an entry whose name
  does not hash to its key is a :class:`DecodeError`, never trusted;
- the **leaf/branch layout** of schemes that cannot tell a scope's own keys from
  its children's (``separates_own_keys`` False: ``LengthPrefixed``, ``Naive``): a
  scope holds keys or child scopes, not both (:class:`LayoutError`), recorded in
  the store where the scheme declares :attr:`~Scheme.records_layout`;
- what the engine can store (``check_storable``).

What a scope calls, and what it costs:

- :meth:`ranges` once when the scope is made: its own ranges less the ranges
  where the keyspace keeps its records (:meth:`reserved_in`, refused to every
  key of the scope), memoised per path;
- :meth:`guard` once when the scope is made: ``None`` when reads need no check
  (every scheme but ScopeHash names and the layered schemes), else a function
  called before each read of own keys until it answers :data:`SETTLED` (a
  ScopeHash name registered as its own, a LengthPrefixed leaf: facts no later
  write can change), after which the scope drops it and reads cost nothing
  extra;
- :meth:`write_ready` / :meth:`first_write`: a path's first write runs the checks
  and records in one atomic transaction with the data (inside the caller's
  transaction when there is one); after it, writes cost nothing extra;
- :meth:`children`, :meth:`subtree_ranges`, :meth:`decoder` for structure.

State learnt inside a transaction is kept only when it commits (:meth:`child`,
:meth:`commit`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, NoReturn, Self

from . import _metadata
from ._accounting import accounting_recorded_but_off
from ._bytes import prefix_end
from ._metadata import LAYOUT_START, LAYOUT_STOP, reserved_ranges
from ._retry import run_atomically
from .errors import (
    AccessDenied,
    DecodeError,
    HashCollision,
    KeyspaceError,
    LayoutError,
    ReservedKey,
    SchemeMismatch,
    TransactionConflict,
    TransactionTooLarge,
    show_bytes,
)
from .schemes._base import Key, Path, Scheme, component_bytes, exact_path, remember
from .schemes.length_prefixed import to_length_prefixed_nested
from .stores._base import ReadView, Store, WriteView
from .stores._key_sizes import bad_key
from .stores._watched import WatchedReads, watched
from .tuples import pack, unpack

__all__ = ["LAYOUT_START", "LAYOUT_STOP", "SETTLED", "Catalog", "GuardAnswer", "ReadGuard"]

_LEAF, _BRANCH, _FREE = "leaf", "branch", "free"
_LAYOUT_KEY_LIMIT = 2 + 0xFFFF
_HIDDEN_OPS = 3
"""Most records a first write adds: scheme record, footprint entry, name entry."""
_LOCKS: weakref.WeakKeyDictionary[Store, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def _store_lock(store: Store) -> threading.Lock:
    """The lock that orders first writes through one store object."""
    with _LOCKS_LOCK:
        lock = _LOCKS.get(store)
        if lock is None:
            lock = _LOCKS[store] = threading.Lock()
        return lock


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
_RANGES_MEMO = 4096
"""Paths whose own and reserved ranges a catalog keeps (oldest dropped first)."""


def check_leaf_depth(leaf_depth: Any) -> None:
    """Refuse a ``leaf_depth`` that is not ``None`` or an int of 0 or more
    (:class:`LayoutError`)."""
    if leaf_depth is not None and (type(leaf_depth) is not int or leaf_depth < 0):
        raise LayoutError(f"leaf_depth must be an int of 0 or more, not {show_bytes(leaf_depth)}")


class Catalog:
    """The safety facts of one keyspace (module docstring). A transaction works on
    a :meth:`child` whose facts merge into the parent on :meth:`commit`."""

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
        parent: Catalog | None = None,
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
        # the committed store's reads that check the records in their own state
        # (:meth:`data_view`), made when first needed
        self._watched: WatchedReads | bool | None = False

    # -- transactions -------------------------------------------------------------

    def child(self) -> Self:
        """A catalog of this one's class and facts, for a transaction or a snapshot:
        what it learns stays its own until :meth:`commit`. Cost: one copy of
        the facts and four empty containers."""
        child = object.__new__(type(self))
        facts = self.__dict__.copy()  # one copy: faster than updating the new instance's dict
        facts["_parent"] = self
        facts["registered"], facts["layout"], facts["prepared"], facts["_loaded"] = {}, {}, set(), set()
        facts["_layout_sealed"] = False  # its own facts are new: the parent's are still asked
        facts["_records_seen_in"] = None
        child.__dict__ = facts
        return child

    def reading(self) -> Catalog:
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

    def commit(self) -> None:
        parent = self._parent
        if parent is None:
            return
        parent.recorded = parent.recorded or self.recorded
        parent.owned = parent.owned or self.owned
        parent.registered.update(self.registered)
        parent.layout.update(self.layout)
        parent.prepared.update(self.prepared)

    def _chain(self) -> Iterator[Catalog]:
        state: Catalog | None = self
        while state is not None:
            yield state
            state = state._parent

    def _registered(self, key: bytes) -> str | None:
        for state in self._chain():
            name = state.registered.get(key)
            if name is not None:
                return name
        return None

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

    def _layout_of(self, path: Path) -> str | None:
        path = self._same(path)
        for state in self._chain():
            kind = state.layout.get(path)
            if kind is not None or state._layout_sealed:
                return kind
        return None

    def is_branch(self, path: Path) -> bool:
        """Whether ``path`` is known to hold child scopes, so that it has no own keys:
        in a scheme that cannot tell a scope's own keys from its children's, every
        stored key under its prefix is a child's."""
        return self._layout_of(path) == _BRANCH

    # -- the leaf/branch layout (separates_own_keys False: LengthPrefixed, Naive) ----------

    def _status(self, view: ReadView, path: Path) -> str:
        """``leaf``, ``branch`` or ``free`` (no scope at or above ``path`` holds keys,
        none below it does: nothing is stored there) for a scheme that cannot tell
        own keys from children's; :class:`LayoutError` when an ancestor is a leaf
        or when nothing says what ``path`` is. Known from the declared
        ``leaf_depth``, else from the layout this keyspace wrote or loaded (one
        point read per ancestor and one short scan, once per path).

        Read from the committed store, these are several reads, between which
        another writer's first write may commit (its layout record with its keys):
        keys seen with no record to account for them, or a store seen empty then
        holding keys, would be refused as a layout changed outside keyspace. So a
        refusal of the committed store is read once more from one snapshot of it
        (records are never removed), and stands only if that consistent state
        refuses it too. Cost: nothing more when no error is raised."""
        try:
            return self._status_in(view, path)
        except LayoutError:
            store = self.store
            if view is not store or not store.capabilities.snapshots:
                raise
        with store.snapshot() as snapshot:
            return self._status_in(snapshot, path)

    def _status_in(self, view: ReadView, path: Path) -> str:
        """:meth:`_status` read from ``view`` as it answers, one read at a time."""
        same = self._same(path)
        depth = self.leaf_depth
        if depth is not None:
            if len(same) == depth:
                if self.scheme.records_layout and same not in self._loaded:
                    self._check_declared(view, same, path)
                return _LEAF
            if len(same) < depth:
                return _BRANCH
            raise LayoutError(
                f"scope {show_bytes(path)} is below the declared leaf depth {depth}: its keys are keys of "
                "the scope "
                f"{show_bytes(path[:depth])}, which this scheme cannot tell apart from those of its children"
            )
        if self._persist and same not in self._loaded:
            self._load(view, same)
        for cut in range(len(same)):
            if self._layout_of(same[:cut]) == _LEAF:
                raise LayoutError(
                    f"scope {show_bytes(path[:cut])} holds keys, so it cannot hold the child scope "
                    f"{show_bytes(path)}: this "
                    "scheme cannot tell a scope's own keys from its children's keys"
                )
        kind = self._layout_of(same)
        if kind is not None:
            return kind
        if self._owns(view):
            if self._persist:  # every leaf is recorded with its first key
                for lo, hi in _less_reserved((self.scheme.subtree_range(path),), self.reserved)[0]:
                    found = _first(view, lo, hi)
                    if found is not None:
                        raise LayoutError(
                            f"scope {show_bytes(path)} has no recorded layout, yet the store holds keys "
                            "under it "
                            f"({show_bytes(found[0])} …): the layout records were changed outside "
                            "keyspace, so whose keys these are is not known"
                        )
            return _FREE
        raise LayoutError(
            f"which scopes of {self.url} hold keys is not known: {self.scheme.name} keys do not record where "
            f"a scope's name ends, and the store holds keys written without a recorded layout; open it with "
            "leaf_depth=N (the depth of the scopes that hold keys) to read or change scope "
            f"{show_bytes(path)}"
        )

    def _check_declared(self, view: ReadView, same: Path, path: Path) -> None:
        """Refuse a scope that the declared ``leaf_depth`` makes a leaf where the
        layout another keyspace recorded in the store says otherwise (an ancestor
        holds keys, or scopes below it do): its keys would be that scope's keys,
        or its own range would hold theirs. Checked once per path."""
        for cut in range(len(same)):
            if view.get(_layout_key(same[:cut])) is not None:
                raise LayoutError(
                    f"the store records scope {show_bytes(path[:cut])} as holding keys, so scope "
                    f"{show_bytes(path)} below it "
                    f"cannot hold keys: the declared leaf depth {self.leaf_depth} does not match the "
                    "layout recorded in the store (open it without leaf_depth)"
                )
        start = _layout_key(same)
        for key, _ in view.scan(start, prefix_end(start), limit=2):
            if key != start:
                raise LayoutError(
                    f"the store records scopes below scope {show_bytes(path)} as holding keys, so it cannot "
                    "hold keys "
                    f"too: the declared leaf depth {self.leaf_depth} does not match the layout recorded in "
                    "the store (open it without leaf_depth)"
                )
        self._loaded.add(same)

    def _owns(self, view: ReadView) -> bool:
        """Whether every key of the store was written under a layout this keyspace
        knows: the store holds a recorded layout, or holds nothing at all. Only a
        recorded layout is kept as known (records are never removed): an empty
        store is asked again, as another process may since have written keys
        without a layout. A keyspace that records no layout has nothing to read
        again, and keeps what it found at its first look."""
        if self.owned:
            return True
        if self._persist:
            if _first(view, LAYOUT_START, LAYOUT_STOP) is not None:
                self.owned = True
                return True
            return _first(view, b"", None) is None
        self.owned = _first(view, b"", None) is None
        return self.owned

    def _load(self, view: ReadView, same: Path) -> None:
        """Learn from the recorded layout whether ``same`` or an ancestor is a leaf,
        or whether a leaf lies below it. Only what is found is kept (records are
        never removed): a path with nothing recorded is read again next time, so
        a leaf another keyspace records later under it or above it is seen."""
        for cut in range(len(same)):
            ancestor = same[:cut]
            if self._layout_of(ancestor) is None and view.get(_layout_key(ancestor)) is not None:
                self.layout[ancestor] = _LEAF
        start = _layout_key(same)
        for key, _ in view.scan(start, prefix_end(start), limit=2):
            if key == start:
                self.layout[same] = _LEAF
            else:
                self.layout[same] = _BRANCH
                break
        if same in self.layout:
            self._loaded.add(same)

    # -- reads ----------------------------------------------------------------------

    def own_ranges(self, path: Path) -> tuple[_Range, ...]:
        """The ranges a scope at ``path`` reads as its own keys: the scheme's, less
        the :attr:`reserved` ranges where they lie inside them (the root of a scheme
        whose root keys are any bytes: LengthPrefixed, Sublevel, Naive)."""
        return self.ranges(path)[0]

    def reserved_in(self, path: Path) -> _Reserved:
        """The :attr:`reserved` ranges that meet the scheme's own ranges of ``path``:
        a key of that scope whose stored key lies in one of them is refused
        (:meth:`refusing`). Empty for almost every scope (nothing to check)."""
        return self.ranges(path)[1]

    def ranges(
        self, path: Path, own: tuple[_Range, ...] | None = None
    ) -> tuple[tuple[_Range, ...], _Reserved]:
        """``(own ranges less the reserved ones, reserved ranges that met them)`` of
        ``path`` (``own``: the scheme's own ranges of it, when known). Cost: one
        dictionary lookup for a path seen before (str and bytes paths are kept:
        in the tuple scheme ``(1,)`` and ``(True,)`` are equal keys but other paths)."""
        memo = self._ranges
        try:
            got = memo.get(path)
        except MemoryError:
            raise
        except Exception:  # unhashable, or a component's __hash__/__eq__ raises: none kept
            got = None
        if got is not None and exact_path(path):  # not an equal path of other types
            return got
        if own is None:
            own = self.scheme.own_ranges(path)
        got = _less_reserved(own, self.reserved)
        if exact_path(path):
            remember(memo, path, got, _RANGES_MEMO)  # safe when threads fill it at once
        return got

    def refusing(
        self, path: Path, stored: Callable[[Any], bytes], reserved: _Reserved
    ) -> Callable[[Any], bytes]:
        """``stored`` (a scope's key -> stored key) that raises :class:`ReservedKey`
        for a key whose stored key lies in one of ``reserved`` (from
        :meth:`reserved_in`), before anything is read or written. A C transform
        checks in C (``with_reserved``); any other function is wrapped. Cost: one
        comparison per reserved range (the scopes that meet none do not call it)."""
        refuse = self._refuse

        def refused(key: Any, out: bytes, lo: bytes, hi: bytes) -> None:
            refuse(path, key, out, lo, hi)

        with_reserved = getattr(stored, "with_reserved", None)
        if with_reserved is not None:
            return with_reserved(reserved, refused)  # type: ignore[no-any-return]

        def checked(key: Any) -> bytes:
            out = stored(key)
            for lo, hi in reserved:
                if lo <= out < hi:
                    refuse(path, key, out, lo, hi)
            return out

        return checked

    def _refuse(self, path: Path, key: Key, stored: bytes, lo: bytes, hi: bytes) -> NoReturn:
        raise ReservedKey(
            f"key {show_bytes(key)} of scope {show_bytes(path)} would be stored as {show_bytes(stored)}, in "
            "the range "
            f"[{show_bytes(lo)}, {show_bytes(hi)}) that {self.url} reserves for the records keeping its "
            "keyspaces apart, or for the store's own use (etcd's revision probe key); a key of this "
            "scope may be stored anywhere but there"
        )

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
            capped = store.capabilities.max_batch_ops is not None  # the committed records are read then
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

    def _records_hold(self, view: ReadView) -> None:
        """The records check of :class:`WatchedReads`: ``view`` is the committed
        store in one state; finding this keyspace's own record there settles it."""
        if self._check_records(view) is not None and self._features_kept(view):
            self.recorded = True

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
        one_state = store.capabilities.max_batch_ops is None  # else the committed records are read

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
            self.recorded = True
        return SETTLED

    def _committed(self, check: ReadGuard, path: Path | None = None) -> ReadGuard:
        """``check`` reading the committed records where a transaction's first write
        commits them in their own batch (an engine that caps batches, see
        :meth:`first_write`): read inside the transaction, they would be changed by
        that batch and fail the transaction. Registry and layout records are never
        removed, so the committed ones say at least what the transaction's would.

        The read it hides (``path``'s scope holds no key yet: a ScopeHash name no
        one registered, a LengthPrefixed path with nothing recorded) is still made
        in the view, one key of the scope's subtree, so that a transaction on an
        engine that guards its reads (etcd) commits only if no key came there
        meanwhile: two transactions that each read the other's new scope as empty
        cannot both commit. A key found there (written since the records were
        read) is :class:`TransactionConflict`: run the transaction again."""
        if self.store.capabilities.max_batch_ops is None:
            return check
        store = self.store
        if path is None or not store.capabilities.guarded_reads:
            return lambda view: check(store)
        lo, hi = self.scheme.subtree_range(path)

        def guarded(view: ReadView) -> GuardAnswer:
            answer = check(store)
            if not answer and view is not store and next(iter(view.scan(lo, hi, limit=1)), None) is not None:
                raise TransactionConflict(
                    f"scope {show_bytes(path)} holds keys in this transaction's reads of {self.url} "
                    "that its records did not show when it was read: another writer made it meanwhile; "
                    "nothing was written, run the transaction again"
                )
            return answer

        return guarded

    def _layout_guard(self, path: Path) -> ReadGuard:
        """A leaf stays a leaf and a branch a branch (layout records are never
        removed), so once either is known the guard costs one comparison."""
        known: list[GuardAnswer] = []
        probe = self.scheme.prefix(path) or b"\x00"

        def check(view: ReadView) -> GuardAnswer:
            if known:
                if known[0] is False:
                    view.get(probe)  # answered without the store: a closed view raises as every read does
                return known[0]
            status = self._status(view, path)
            if status == _BRANCH:
                view.get(probe)  # a declared layout reads nothing: as above
            # committed (or declared) it cannot change; learnt inside a transaction it
            # cannot change while that transaction lasts, and a guard serves the
            # scope of one view (a transaction's scopes die with it). A free path
            # (nothing recorded) is asked again: a write may make it either.
            if status != _FREE and (
                self.leaf_depth is not None or view is self.store or self._parent is not None
            ):
                answer: GuardAnswer = SETTLED if status == _LEAF else False
                known.append(answer)
                return answer
            # a free path of a recorded layout holds no key (_status checks it): read
            # nothing rather than what a writer may put under its prefix meanwhile
            return status == _LEAF or (status == _FREE and not self._persist)

        return check

    def _hash_guard(self, path: Path) -> ReadGuard:
        scheme = self.scheme
        key = scheme.prefix(path)
        name = str.__str__(path[0])  # the name as stored: a str subclass's own __eq__ does not run
        if key == scheme.prefix(()):
            raise HashCollision(
                f"scope name {show_bytes(name)} has the same xxh32 hash {show_bytes(key)} as the default "
                "scope, which reserves it; choose another name"
            )

        registries = [state.registered for state in self._chain()]  # as _registered walks them

        def check(view: ReadView) -> GuardAnswer:
            for registered in registries:
                known = registered.get(key)
                if known is not None:
                    if known == name:
                        return SETTLED
                    break
            raw = view.get(key)
            if raw is None and self.recorded and _first(view, key, prefix_end(key)) is not None:
                # every name of a recorded keyspace is registered with its first key;
                # the committed store answers the two reads apart, so the keys may be
                # a first write's that committed between them, with its entry: an
                # entry is never removed, so a read after the keys' shows it
                raw = view.get(key)
                if raw is None:
                    raise HashCollision(
                        f"scope name {show_bytes(name)}: the store holds keys under its xxh32 hash "
                        f"{show_bytes(key)} but no name registry entry says whose they are (the "
                        "registry was changed outside keyspace); this scope cannot be used"
                    )
            if raw is None:
                # no name holds the hash yet, so a recorded keyspace has no key there:
                # read nothing rather than what a same-hash name may write meanwhile
                # (asked again at the next read); data another program wrote is read
                return not self.recorded
            other = self._registry_name(key, raw)
            if other != name:
                raise HashCollision(
                    f"scope name {show_bytes(name)} has the same xxh32 hash {show_bytes(key)} as "
                    f"{show_bytes(other)}, which "
                    "is registered in this store; its keys are that scope's, so this one cannot be used"
                )
            if view is self.store:  # committed: the entry stays (drop never removes it)
                self.registered[key] = name
            # the name owns its hash in this view for good: no entry is ever removed
            # or replaced, so the scope of this view may stop asking
            return SETTLED

        return check

    def _registry_name(self, key: bytes, raw: bytes) -> str:
        """The name of a name registry entry, checked: it must be UTF-8 text whose
        hash (the scheme's prefix of its path) is ``key``; anything else is a
        :class:`DecodeError`."""
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            name = None
        if name is None or not name or _hash_key(self.scheme, name) != key:
            raise DecodeError(
                f"the {self.scheme.name} registry entry at {show_bytes(key)} holds {show_bytes(raw)}, which "
                "is not a name with that hash: the registry is corrupt, so the scopes under that hash cannot "
                "be told apart",
                0,
            )
        return name

    # -- writes ---------------------------------------------------------------------

    def write_ready(self, path: Path) -> bool:
        """True when a write to ``path`` needs no check first (it was prepared by an
        earlier write through this keyspace). Cost: a flag, or a set lookup."""
        if not self.recorded:
            return False
        if self._plain:
            return True
        same = self._same(path)
        return any(same in state.prepared for state in self._chain())

    def first_write(
        self,
        view: WriteView,
        path: Path,
        apply: Callable[[WriteView], None],
        ops: Sequence[tuple[bytes, bytes | None]] = (),
    ) -> None:
        """Run the first write of ``path``: the checks and records it depends on
        (scheme record, footprint, registry entry, layout) and ``apply``, the write
        itself, in ONE atomic batch: ``view`` when it is a transaction's, else a
        transaction of the store. Nothing is recorded when anything raises.
        ``ops``: the operations ``apply`` writes, as the store holds them (none
        given: one operation).

        Where the engine caps the operations of one batch (etcd: 128) and the
        hidden records would push a batch that fits over the cap, the checks and
        records commit first, in their own atomic batch, then the write (a batch
        over the cap on its own, or one the store refuses whole, as
        :meth:`Store.check_batch` finds, is refused before anything is written).
        The same where the batch with the records would be over the engine's
        request size (etcd: 1.5 MiB) and the write alone is not: a value that a
        later write may store is not refused because it is the scope's first.
        Inside a
        transaction on such an engine the records always commit first, so that
        they never count against the transaction's own operations; they stay if
        the transaction then fails (they say only what this keyspace is)."""
        limit = self.store.capabilities.max_batch_ops
        if view is not self.store:  # inside the caller's transaction
            if limit is None:
                self._before_write(view, path)
            else:  # the transaction's own operations may fill the cap: records go first
                self._atomically(lambda tx: self._before_write(tx, path))
            apply(view)
            return
        count = len(ops) or 1
        split = limit is not None and count + _HIDDEN_OPS > limit
        if split and limit is not None and count > limit:
            raise TransactionTooLarge(
                f"a batch of {count} operations is over the limit of {limit} per atomic batch of {self.url}"
            )
        if split:  # the records commit apart: nothing may refuse the write after them
            self.store.check_batch(ops)
        state = self.child()

        def attempt(tx: WriteView) -> None:
            nonlocal state
            state = self.child()
            state._before_write(tx, path)
            if not split:
                apply(tx)

        try:
            self._atomically(attempt)
        except TransactionTooLarge:
            if split or limit is None:
                raise
            # too many bytes with the records (nothing was written): they commit
            # apart, unless the write alone is refused too
            self.store.check_batch(ops)
            split = True
            self._atomically(attempt)
        state.commit()
        if split:
            apply(view)

    def destructive(
        self,
        view: WriteView,
        apply: Callable[[WriteView], None],
        single: bool = False,
        path: Path | None = None,
        own: bool = True,
    ) -> None:
        """Run ``apply``, a delete, after checking that no record in the store says
        these keys belong to another keyspace: free once this keyspace has seen its
        record; before that, the check and the delete are one atomic batch. Inside
        a transaction on an engine that caps its batches, the records are checked
        and claimed first in their own batch, as :meth:`first_write` does there: a
        check read inside the transaction would be changed by the records a later
        first write of the same transaction commits, or by another keyspace's first
        write, and fail the whole transaction; its own batch is run again instead.
        A scheme that refuses writes refuses deletes too
        (:meth:`Scheme.refuse_change`): its scopes' ranges hold other scopes' keys.

        A delete is one write even where it is several range deletes (the
        ScopeHash root's subtree, one range per name; a Sublevel scope's two own
        ranges; a scope whose range the records split): outside a transaction it
        runs in one transaction of the store, so that a crash or a fault part-way
        leaves all of it or none. Where the engine caps its transactions (etcd: 128
        operations and 128 compares) and the delete does not fit in one, it runs
        range by range, each range deleted whole. A ``single`` delete (one point or
        range delete of the store) needs no transaction around it.

        ``path``: a scope whose read guard has not settled (a LengthPrefixed path
        with no layout yet, a ScopeHash name not registered yet). Its guard is asked
        again inside the delete's own atomic batch, so that a scope another writer
        made meanwhile (a child leaf; a name of the same hash) never loses its keys
        to this delete: a delete of the ``own`` keys does nothing where the path is
        now a branch, and every delete raises where the path may not be touched
        (:class:`HashCollision`, :class:`LayoutError`)."""
        self.scheme.refuse_change("delete")
        check = None if path is None else self._path_guard(path)
        if check is not None:
            if view is not self.store:  # the caller's transaction
                check = self._committed(check)
            apply = _guarded(check, apply, own)
            single = False
        if self.recorded:
            store = self.store
            if view is not store or single:
                apply(view)
            elif check is None and store.capabilities.max_batch_ops is None:
                run_atomically(store.transaction, apply, f"a delete in the keyspace at {self.url}")
            else:  # a guard to ask inside the delete, or an engine that caps its batches
                try:
                    self._atomically(apply)
                except TransactionTooLarge:  # nothing written: the engine took no part of it
                    apply(view)
            return
        if view is not self.store:
            if self.store.capabilities.max_batch_ops is None:
                self._check_records(view)
            else:
                self._atomically(self._claim_record)
            apply(view)
            return

        def attempt(tx: WriteView) -> None:
            self._check_records(tx)
            apply(tx)

        self._atomically(attempt)

    def _path_guard(self, path: Path) -> ReadGuard | None:
        """The check of ``path`` itself, reading the view it is given: the ScopeHash
        name registry (:meth:`_hash_guard`) or the leaf/branch layout
        (:meth:`_layout_guard`); ``None`` where the scheme needs none. A scope's
        read guard (:meth:`guard`) and an unsettled scope's delete
        (:meth:`destructive`) ask it."""
        if self._hashed and path:
            return self._hash_guard(path)
        if self._layered:
            self.scheme.validate_path(path)
            return self._layout_guard(path)
        return None

    def _atomically(self, body: Callable[[WriteView], None]) -> None:
        """Run ``body`` in a transaction of the store that no other first write can
        interleave with, run again (:func:`~keyspace._retry.run_atomically`, at
        most :data:`~keyspace._retry.ATTEMPTS` times) when it
        raises :class:`TransactionConflict`, having written nothing, so that it
        reads what the other writer wrote: on an engine that guards the keys a
        transaction read (etcd), one that lost the race to another writer; on
        LMDB, whose transactions (as SQLite's) otherwise exclude each other, one
        that released the engine's writer lock to grow a small map while another
        process committed. On the one-process engines whose transactions do
        neither, first writes through the same store object take one lock."""
        store = self.store
        caps = store.capabilities
        if not caps.serialized_transactions and not caps.guarded_reads:
            with _store_lock(store), store.transaction() as tx:
                body(tx)
            return
        run_atomically(store.transaction, body, f"an atomic step of the keyspace at {self.url}")

    def check_storable(self, keys: Iterable[Any]) -> None:
        """Refuse, before a scope's first write, a stored key (of ``keys``: keys, or
        pairs whose first item is the key) the engine cannot store: over its
        ``max_key_size``, or empty where it takes no empty key (the first such key
        is named). Cost: one pass over the keys' sizes
        (:func:`~keyspace.stores._key_sizes.bad_key`)."""
        store = self.store
        caps = store.capabilities
        limit = caps.max_key_size
        if limit is None and caps.empty_keys:
            return  # the engine stores every key
        key = bad_key(keys if type(keys) is list else list(keys), limit, caps.empty_keys)
        if key is not None:
            raise store.key_refusal(key)

    def _before_write(self, view: WriteView, path: Path) -> None:
        scheme = self.scheme
        scheme.encode(path, b"")  # Naive refuses here unless allow_collisions=True
        if not self.recorded:  # first: another keyspace's keys are a SchemeMismatch
            self._claim_record(view)
        if self._layered:
            self._claim_leaf(view, path)
        if self._hashed:
            self._register(view, path)
        self.prepared.add(self._same(path))

    def _claim_record(self, view: WriteView) -> None:
        """Inside the write: read the records this keyspace depends on (a compare on
        etcd) and write its own when there is none."""
        if self._check_records(view) is None:
            if self.found_empty and self.scheme.metadata_key is not None:
                self._refuse_unrecorded_keys(view)
            _metadata.write(view, self.scheme)
        if not self._features_kept(view):
            raise SchemeMismatch(
                f"the store at {self.url!r} keeps accounting since another keyspace turned it on after this "
                "one opened the store; this keyspace does not count its writes, so they are refused and "
                "nothing was written: open the store again (every opener then keeps the counts)"
            )
        self.recorded = True

    def _features_kept(self, view: ReadView) -> bool:
        """Whether this keyspace runs accounting where ``view`` records it on (a
        keyspace opened before another turned it on does not). Cost: a point
        read, made only until the keyspace has seen its record."""
        return not accounting_recorded_but_off(view, self.store, self.scheme, self.url)

    def _refuse_unrecorded_keys(self, view: ReadView) -> None:
        """Inside the first write of a keyspace that found the store empty and
        keeps a record: :class:`SchemeMismatch` when the store now holds keys that
        no record accounts for (outside the records and the footprints of the
        keyspaces recorded): a program writing a scheme that keeps no record, such
        as Sublevel, wrote first, and its scopes would take this keyspace's keys
        for their own. Cost: the reads of the records and one short scan per gap
        between the recorded footprints."""
        spans = [*_metadata.recorded_footprints(view, self.url), *self.reserved]
        for lo, hi in _gaps(spans):
            found = _first(view, lo, hi)
            if found is not None:
                raise SchemeMismatch(
                    f"the store at {self.url!r} was empty when this keyspace opened it and now holds "
                    f"keys with no scheme record ({show_bytes(found[0])} …), written by another program "
                    f"or keyspace meanwhile; refusing to mix {self.scheme!r} keys with them"
                )

    def _check_records(self, view: ReadView) -> Scheme | None:
        """This keyspace's record in ``view`` (``None``: there is none). Raises
        :class:`SchemeMismatch` when it names another scheme or when another
        keyspace whose keys would overlap this one's is recorded."""
        scheme = self.scheme
        found = _metadata.read(view, scheme, self.url)
        if found is not None:
            _metadata.check(found, scheme, self.url)
        other = _metadata.overlapping(view, scheme, self.url)
        if other is not None:
            raise SchemeMismatch(
                f"the store at {self.url!r} holds the keyspace {show_bytes(other)}, whose keys would overlap "
                f"those of {scheme!r}; refusing to change it"
            )
        if found is None and _metadata.directories_overlap(view, scheme):
            raise SchemeMismatch(
                f"the store at {self.url!r} holds directories whose nodes or prefixes would overlap the keys "
                f"of {scheme!r}; refusing to change it"
            )
        return found

    def _claim_leaf(self, view: WriteView, path: Path) -> None:
        """Make ``path`` a leaf, inside the write: refused when it holds child scopes
        or an ancestor holds keys. Where the keyspace records the layout, a new
        leaf gets its record in the same batch (the root's is ``LAYOUT_START``
        itself, a range the root scope then leaves out of its own keys)."""
        status = self._status(view, path)
        path = self._same(path)
        if status == _BRANCH:
            raise LayoutError(
                f"scope {show_bytes(path)} holds child scopes, so it cannot hold keys too: this scheme "
                "cannot tell "
                "a scope's own keys from its children's keys (a scope holds keys or child scopes, not both)"
            )
        # a declared leaf depth records nothing, except in a store whose layout is
        # recorded: there its leaves are recorded too, so that the keyspaces that
        # go by the records see them
        declared = (
            self.leaf_depth is not None
            and self.scheme.records_layout
            and _first(view, LAYOUT_START, LAYOUT_STOP) is not None
            and view.get(_layout_key(path)) is None
        )
        if (status == _FREE and self._persist) or declared:
            key = _layout_key(path)
            if len(key) >= _LAYOUT_KEY_LIMIT:
                raise LayoutError(
                    f"scope path {show_bytes(path)} is too long for its layout record ({len(key)} bytes, "
                    "the limit is "
                    f"{_LAYOUT_KEY_LIMIT - 1})"
                )
            view.put(key, b"leaf")
        self.layout[path] = _LEAF
        for depth in range(len(path)):
            self.layout[path[:depth]] = _BRANCH

    def _register(self, view: WriteView, path: Path) -> None:
        if not path:
            return
        scheme = self.scheme
        key = scheme.prefix(path)  # u32le(hash): the registry entry of that hash
        name = str.__str__(path[0])  # the name as stored (a str subclass's own methods do not run)
        if self._registered(key) == name:
            return
        self._hash_guard(path)(view)  # HashCollision for a taken hash
        if view.get(key) is None:
            view.put(key, name.encode())
        self.registered[key] = name

    # -- structure ----------------------------------------------------------------------

    def children(self, view: ReadView, path: Path) -> list[Any]:
        """Direct children of ``path`` holding data: a skip scan on one seeker of
        ``view`` (one cursor and one read transaction where the engine has them),
        one seek per child and per own range."""
        self._structure_check(view)
        scheme = self.scheme
        lo, hi = scheme.subtree_range(path)
        if (self._hashed and path) or (self._layered and self._status(view, path) == _LEAF):
            # no children by the layout alone; the store is still read, so that a
            # closed one raises StoreClosed here as on every other read
            next(iter(view.scan_keys(lo, hi, limit=1)), None)
            return []
        if self._hashed:
            return self._hash_children(view)
        own = scheme.own_ranges(path) if scheme.separates_own_keys else ()
        exact = scheme.own_range_is_exact()
        plen = len(scheme.prefix(path))
        step, is_own = scheme.child_step(path), scheme.is_own_remainder
        reserved = _less_reserved(((lo, hi),), self.reserved)[1]  # almost always none
        # past the last own range (the tuple scheme's lies before every child) a
        # key is never an own key
        own_stop = max((b"" if hi is None else hi for _, hi in own), default=b"") if own else b""
        open_end = any(hi is None for _, hi in own)
        out: list[Any] = []
        cursor: bytes | None = lo
        with view.seeker(hi) as seeker:
            seek = seeker.seek
            while cursor is not None:
                k = seek(cursor)
                if k is None:
                    break
                if reserved:
                    skip = _reserved_end(reserved, k)
                    if skip is not None:  # the keyspace's records, never a child
                        cursor = skip
                        continue
                if own and (open_end or k < own_stop):
                    if exact:  # an own range holds own keys only: past its end
                        found, own_end = _own_end(own, k)
                        if found:
                            cursor = own_end
                            continue
                    elif is_own(k[plen:]) and _own_end(own, k)[0]:  # the key itself, checked first
                        cursor = k + b"\x00"
                        continue
                got = step(k)
                if got is None:  # not a key of a child: the next key
                    cursor = k + b"\x00"
                    continue
                child, nxt = got
                out.append(child)
                cursor = nxt if nxt is not None and nxt > k else (None if nxt is None else k + b"\x00")
        return out

    def _hash_registry(self, view: ReadView) -> Iterator[tuple[bytes, str]]:
        """``(registry key, name)`` of every name registered in a hashed-name store,
        except the default scope's: a skip scan on one seeker, one seek per hash
        block (registry key, then the block's keys are skipped) and one point read
        per registry entry. Raises :class:`DecodeError` for an entry whose name
        does not hash to its key."""
        default_key = self.scheme.prefix(())
        size = self._entry_size
        cursor: bytes | None = b""
        with view.seeker() as seeker:
            while cursor is not None:
                k = seeker.seek(cursor)
                if k is None:
                    break
                if len(k) < size:  # reserved keys (metadata) sort outside every hash block
                    cursor = k + b"\x00"
                    continue
                if len(k) == size and k != default_key:
                    v = view.get(k)
                    if v is not None:
                        yield k, self._registry_name(k, v)
                cursor = prefix_end(k[:size])

    def _hash_children(self, view: ReadView) -> list[str]:
        scheme = self.scheme
        names = [name for _, name in self._hash_registry(view)]
        out: list[str] = []
        with view.seeker() as seeker:
            for name in names:
                lo, hi = scheme.own_range((name,))
                k = seeker.seek(lo)
                if k is not None and (hi is None or k < hi):
                    out.append(name)
        return out

    def subtree_ranges(self, view: ReadView, path: Path) -> list[tuple[bytes, bytes | None]]:
        """The ranges holding ``path`` and every scope below it, in ascending order.
        One range, except for the root of hashed names (ScopeHash), whose named scopes lie beside it
        in hash order: their ranges come from the (checked) registry."""
        self._structure_check(view)
        scheme = self.scheme
        if self._hashed and not path:
            ranges = [scheme.own_range(())] + [scheme.own_range((n,)) for _, n in self._hash_registry(view)]
            return sorted(ranges)
        if self._layered:
            self._status(view, path)  # LayoutError below a leaf, or when nothing is known
        lo, hi = scheme.subtree_range(path)
        return list(_less_reserved(((lo, hi),), self.reserved)[0])

    def subtree_watch(
        self, view: ReadView, path: Path, later: ReadView
    ) -> tuple[list[tuple[bytes, bytes | None]], Callable[[bytes], tuple[Path, Key] | None]]:
        """The ranges a watch of ``path`` and every scope below it asks the store for,
        and the decoder of their keys (``None``: a key outside the subtree), names
        read from ``later`` (the store: a watch sees committed writes). As
        :meth:`subtree_ranges` and :meth:`decoder`, except at the root of hashed
        names (ScopeHash): its named scopes lie beside it, each in the block of its
        hash, and a name registered after the watch starts has a block no range
        known then covers; the watch takes the whole store, and its decoder passes
        over the keyspace's records (registry entries, the scheme record: shorter
        than a scope's key) and the keys of blocks no name holds."""
        decode = self.decoder(view, path, later)
        if not (self._hashed and not path):
            return self.subtree_ranges(view, path), decode
        size = self._entry_size
        shortest = len(self.scheme.encode((), b""))  # a scope key: hash, length, key
        default_key = self.scheme.prefix(())

        def decode_named(stored: bytes) -> tuple[Path, Key] | None:
            if len(stored) < shortest:
                return None
            block = stored[:size]
            if block != default_key and self._registered(block) is None and later.get(block) is None:
                return None
            return decode(stored)

        return [(b"", None)], decode_named

    def decoder(
        self, view: ReadView, path: Path, later: ReadView | None = None
    ) -> Callable[[bytes], tuple[Path, Key]]:
        """A function from a stored key below ``path`` to ``(path, key)``. In a
        scheme that records its leaves, a key below no leaf known to it reads the
        recorded leaves once more, from ``later`` (default: ``view``), before it
        raises :class:`LayoutError`: a long-lived decoder (a watch's) meets keys of
        leaves made since."""
        scheme = self.scheme
        if self._hashed:
            return self._hash_decoder(view if later is None else later)
        if scheme.separates_own_keys:
            return scheme.decode
        depth = self.leaf_depth
        if depth is not None:
            return lambda stored: scheme.decode(stored, depth)
        same = self._same(path)
        self._status(view, path)  # LayoutError when nothing is known

        def leaf_prefixes(view: ReadView) -> list[tuple[Path, bytes]]:
            if self._persist:  # every recorded leaf below path
                start = _layout_key(same)
                for key, _ in view.scan(start, prefix_end(start)):
                    self.layout[_split_lp(key[len(LAYOUT_START) :])] = _LEAF
            leaves = sorted(
                (p for p in self._all_layout() if self._layout_of(p) == _LEAF and p[: len(path)] == same),
                key=len,
                reverse=True,
            )
            return [(leaf, scheme.prefix(leaf)) for leaf in leaves]

        prefixes = leaf_prefixes(view)

        def decode(stored: bytes) -> tuple[Path, Key]:
            nonlocal prefixes
            for again in (False, True):
                if again:  # a leaf recorded since the decoder was made (a watch's)
                    if not self._persist:
                        break
                    prefixes = leaf_prefixes(view if later is None else later)
                for leaf, prefix in prefixes:
                    if stored.startswith(prefix):
                        return leaf, scheme.decode_key(stored[len(prefix) :])
            raise LayoutError(
                f"cannot tell which scope the stored key {show_bytes(stored)} belongs to: "
                f"{scheme.name} keys do not record their depth; open the leaf scope that holds it"
            )

        return decode

    def store_decoder(self, view: ReadView) -> Callable[[bytes], tuple[Path, Key]] | None:
        """How a reader of the whole store (the command line's ``inspect`` and
        ``migrate``) decodes a stored key where the scheme does not record a
        key's depth but the store records its layout (a LengthPrefixed keyspace's
        leaves, of any depths): by the recorded leaves (:meth:`decoder`; a key
        under none raises :class:`DecodeError`). ``None`` where nothing is
        recorded, or a declared ``leaf_depth`` that every recorded leaf has: the
        reader decodes at its depth. A declared depth the records contradict
        raises :class:`LayoutError`, as a scope of such a path does. Cost: one
        scan of the layout records."""
        if not (self._layered and self.scheme.records_layout):
            return None
        leaves = [_split_lp(key[len(LAYOUT_START) :]) for key, _ in view.scan(LAYOUT_START, LAYOUT_STOP)]
        if not leaves:
            return None
        depth = self.leaf_depth
        if depth is not None:
            other = next((leaf for leaf in leaves if len(leaf) != depth), None)
            if other is None:
                return None
            raise LayoutError(
                f"the store records scope {show_bytes(other)} as holding keys, at depth {len(other)}: the "
                f"declared leaf depth {depth} does not match the layout recorded in the store (give no "
                "depth: the recorded layout is read)"
            )
        decode = self.decoder(view, ())

        def checked(stored: bytes) -> tuple[Path, Key]:
            try:
                return decode(stored)
            except LayoutError:
                raise DecodeError(
                    f"{show_bytes(stored)} lies under no scope the store records as holding keys", 0
                ) from None

        return checked

    def _hash_decoder(self, view: ReadView) -> Callable[[bytes], tuple[Path, Key]]:
        scheme = self.scheme
        default_key = scheme.prefix(())

        def decode(stored: bytes) -> tuple[Path, Key]:
            _, key = scheme.decode(stored)
            block = stored[: self._entry_size]
            if block == default_key:
                return (), key
            name = self._registered(block)
            if name is None:
                raw = view.get(block)
                if raw is None:
                    raise DecodeError(f"no registered scope name for hash {show_bytes(block)}", 0)
                name = self._registry_name(block, raw)
            return (name,), key

        return decode

    def _all_layout(self) -> set[Path]:
        paths: set[Path] = set()
        for state in self._chain():
            paths.update(state.layout)
        return paths


def _hash_key(scheme: Scheme, name: str) -> bytes | None:
    """The registry key of ``name`` in a scheme with :attr:`~Scheme.hashed_names`
    (its prefix: the hash alone), ``None`` for a name the scheme refuses."""
    try:
        return scheme.prefix((name,))
    except KeyspaceError:
        return None


def _less_reserved(
    ranges: tuple[_Range, ...], reserved: tuple[tuple[bytes, bytes], ...]
) -> tuple[tuple[_Range, ...], tuple[tuple[bytes, bytes], ...]]:
    """``ranges`` (ascending, disjoint) less ``reserved`` (ascending, disjoint, each
    with an end), and the reserved ranges that met them."""
    out: list[_Range] = []
    met: list[tuple[bytes, bytes]] = []
    for lo, hi in ranges:
        for r_lo, r_hi in reserved:
            if hi is not None and lo >= hi:
                break
            if r_hi <= lo or (hi is not None and r_lo >= hi):
                continue  # apart
            if (r_lo, r_hi) not in met:
                met.append((r_lo, r_hi))
            if lo < r_lo:
                out.append((lo, r_lo))
            lo = r_hi
        if hi is None or lo < hi:
            out.append((lo, hi))
    return tuple(out), tuple(met)


def _reserved_end(reserved: tuple[tuple[bytes, bytes], ...], key: bytes) -> bytes | None:
    """The end of the reserved range holding ``key``, ``None`` when none does."""
    for lo, hi in reserved:
        if lo <= key and (hi is None or key < hi):
            return hi
    return None


def _gaps(spans: list[tuple[bytes, bytes | None]]) -> list[tuple[bytes, bytes | None]]:
    """The byte ranges that none of ``spans`` (half-open, any order, overlapping or
    not; ``None``: to the end) covers, ascending.

    >>> _gaps([(b"b", b"c"), (b"a", b"b"), (b"x", None)])
    [(b'', b'a'), (b'c', b'x')]
    """
    gaps: list[tuple[bytes, bytes | None]] = []
    at = b""
    for lo, hi in sorted(spans, key=lambda span: span[0]):
        if lo > at:
            gaps.append((at, lo))
        if hi is None:
            return gaps
        at = max(at, hi)
    gaps.append((at, None))
    return gaps


def _guarded(check: ReadGuard, apply: Callable[[WriteView], None], own: bool) -> Callable[[WriteView], None]:
    """``apply`` after ``check`` on the same view: skipped where ``own`` and the
    check finds no own keys (a branch); the check's errors propagate."""

    def guarded(view: WriteView) -> None:
        if not check(view) and own:
            return
        apply(view)

    return guarded


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


def _layout_key(path: Path) -> bytes:
    """The record that ``path`` (bytes components) is a leaf: ``LAYOUT_START``
    then the path length-prefixed, so a path's record is a prefix of those of
    the leaves below it."""
    return LAYOUT_START + to_length_prefixed_nested(path)


def _split_lp(raw: bytes) -> Path:
    """Components of a length-prefixed path (the inverse of ``to_length_prefixed_nested``)."""
    parts: list[bytes] = []
    at = 0
    while at < len(raw):
        size = int.from_bytes(raw[at : at + 2], "big")
        parts.append(raw[at + 2 : at + 2 + size])
        at += 2 + size
    return tuple(parts)


def _own_end(own: tuple[tuple[bytes, bytes | None], ...], key: bytes) -> tuple[bool, bytes | None]:
    """Whether an own range holds ``key``, and that range's end."""
    for lo, hi in own:
        if lo <= key and (hi is None or key < hi):
            return True, hi
    return False, None
