"""The leaf/branch layout of schemes that cannot tell a scope's own keys from its
children's (``separates_own_keys`` False: ``LengthPrefixed``, ``Naive``).

A scope holds keys or child scopes, not both (:class:`LayoutError`). Where the
scheme declares :attr:`~keyspace.schemes.Scheme.records_layout` and no
``leaf_depth`` is given, each leaf is recorded in the store with its first key,
at ``LAYOUT_START`` then the path length-prefixed (:func:`_layout_key`);
records are never removed, so a fact once read holds for good.
"""

from __future__ import annotations

from .._bytes import prefix_end
from .._metadata import LAYOUT_START, LAYOUT_STOP
from ..errors import LayoutError, show_bytes
from ..schemes._base import Path
from ..schemes.length_prefixed import to_length_prefixed_nested
from ..stores._base import ReadView, WriteView
from .records import SchemeRecords, _less_reserved
from .state import SETTLED, GuardAnswer, ReadGuard, _first

_LEAF, _BRANCH, _FREE = "leaf", "branch", "free"

_LAYOUT_KEY_LIMIT = 2 + 0xFFFF


class LeafRecords(SchemeRecords):
    """The leaf/branch facts of one keyspace (module docstring): read from the
    store once per path, claimed inside a path's first write."""

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

    def _all_layout(self) -> set[Path]:
        paths: set[Path] = set()
        for state in self._chain():
            paths.update(state.layout)
        return paths

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
                if self.scheme.records_layout and same not in self._loaded and not self._unrecorded(view):
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
            "leaf_depth=N (the depth of the scopes that hold keys; the command's --depth N) to read or "
            f"change scope {show_bytes(path)}"
        )

    def _unrecorded(self, view: ReadView) -> bool:
        """Whether ``view``, a snapshot's, holds no layout record at all, so that no
        declared leaf can contradict one (a store other programs wrote, say). Its
        state cannot change, so this is read once per snapshot (one short scan)
        instead of :meth:`_check_declared`'s reads per path; never for another
        view, which a writer may give records later. Cost: one comparison
        after the first."""
        if not self._layout_sealed or view is self.store:
            return False
        seen = self._unrecorded_in
        if seen is None or seen[0] is not view:
            seen = self._unrecorded_in = (view, _first(view, LAYOUT_START, LAYOUT_STOP) is None)
        return seen[1]

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
        knows: the store holds a recorded layout, or no key outside the
        keyspaces' records (a feature record, a change log's: written by a
        watch or a feed made before the first write, they hold no scope's key).
        Only a recorded layout is kept as known (records are never removed): an
        empty store is asked again, as another process may since have written
        keys without a layout. A keyspace that records no layout has nothing to
        read again, and keeps what it found at its first look."""
        if self.owned:
            return True
        if self._persist:
            if _first(view, LAYOUT_START, LAYOUT_STOP) is not None:
                self.owned = True
                return True
            return self._holds_no_key(view)
        self.owned = self._holds_no_key(view)
        return self.owned

    def _holds_no_key(self, view: ReadView) -> bool:
        """Whether ``view`` holds no key outside the reserved ranges. Cost: a seek
        per range between them (a few)."""
        return all(
            _first(view, lo, hi) is None for lo, hi in _less_reserved(((b"", None),), self.reserved)[0]
        )

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
