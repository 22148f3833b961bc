"""``IndexedSnapshotMap``: an ``IndexedMap`` whose records keep their history by
height, as cw-storage-plus's ``IndexedSnapshotMap``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..codecs import Codec
from ..scope import Scope
from ._base import owns_transaction
from ._indexed import Index, IndexedMap
from ._keys import SpecLike
from ._layouts import Layout
from ._snapshot import _check_height, _SnapshottedMap

__all__ = ["IndexedSnapshotMap"]


class IndexedSnapshotMap(_SnapshottedMap, IndexedMap):
    """An :class:`IndexedMap` (records in ``namespace``, indexes by ``indexes``)
    whose records also keep the value they had before each height at which they
    changed, in the changelog and checkpoints maps of a
    :class:`SnapshotMap` (same namespaces, same bytes, same ``strategy``:
    ``"every_block"``, ``"never"`` or ``"selected"`` with
    :meth:`add_checkpoint`). The indexes hold the current records only, as in
    cw-storage-plus: ``index(name)`` reads them as an ``IndexedMap``'s do.

    ``save(key, value, height)``, ``update(key, fn, height)`` and
    ``remove(key, height)`` write the record, its index entries and its change
    set in one atomic batch (a :class:`~keyspace.errors.UniqueViolation` writes
    none of them); ``may_load_at_height(key, height)`` reads the record as it
    was at the start of ``height``. Cost of a write: an ``IndexedMap`` write
    plus one point read and write of the changelog (two short scans more under
    ``"selected"``).
    """

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        checkpoints: str | bytes,
        changelog: str | bytes,
        *,
        key: SpecLike,
        value: str | Codec | None = None,
        indexes: Mapping[str, Index] | None = None,
        strategy: str = "every_block",
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, namespace, key=key, value=value, indexes=indexes, layout=layout)
        self._keep_history(strategy, checkpoints, changelog)

    @owns_transaction
    def save(self, key: Any, value: Any, height: int | None = None) -> None:
        """Store ``value`` at ``key`` as of ``height``, with its index entries and
        change set, atomically."""
        elements = self.spec.elements(key)
        _check_height(height, f" with key {key!r}")
        raw = self.codec.encode(value)
        new_keys = self._index_keys(value)
        with self._atomic() as base:
            self._change_in(base, key, elements, raw, new_keys, height)

    @owns_transaction
    def remove(self, key: Any, height: int | None = None) -> None:
        """Remove ``key`` and its index entries as of ``height``, atomically."""
        elements = self.spec.elements(key)
        _check_height(height, f" with key {key!r}")
        with self._atomic() as base:
            self._change_in(base, key, elements, None, {}, height)

    @owns_transaction
    def update(self, key: Any, fn: Callable[[Any], Any], height: int | None = None) -> Any:
        """Store and return ``fn(current value or None)`` at ``key`` as of
        ``height``, with its index entries and change set, atomically."""
        elements = self.spec.elements(key)
        _check_height(height, f" with key {key!r}")
        with self._atomic() as base:
            new, raw = self._updated(fn, self._ns.scope(base).get(self._ns.key(elements)))
            new_keys = self._index_keys(new)
            self._change_in(base, key, elements, raw, new_keys, height)
        return new

    def _change_in(
        self,
        base: Scope,
        key: Any,
        elements: tuple[Any, ...],
        raw: bytes | None,
        new_keys: dict[str, tuple[Any, ...]],
        height: Any,
    ) -> None:
        """The record, its index entries and its change set, in ``base``'s
        transaction; the change set is written after the record's write, which
        refuses (writing nothing) a unique index key held by another record, and
        its key is checked before it, so that a change set's key the scope
        refuses writes nothing either."""
        record = self.history.should_record(base, elements)
        old_raw = None
        if record:
            old_raw = self._ns.scope(base).get(self._ns.key(elements))
            self.history.check_key(base, elements, height)
        self._write(base, key, elements, raw, new_keys)
        if record:
            self.history.record(base, elements, old_raw, height)
