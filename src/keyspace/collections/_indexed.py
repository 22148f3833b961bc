"""``IndexedMap``: a ``Map`` whose secondary indexes change in the same atomic
batch as its records."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..codecs import Codec, writes_json
from ..errors import InvalidArgument, UniqueViolation, show_bytes
from ..scope import Scope
from ._base import owns_transaction
from ._bounds import prefix_scan
from ._keys import KeySpec, SpecLike
from ._layouts import Layout, Namespace
from ._map import Map, _Ranged
from ._namespaces import check_distinct

__all__ = ["Index", "IndexView", "IndexedMap", "MultiIndex", "UniqueIndex"]


class Index:
    """An index definition: ``fn(value)`` gives the index key of a record, of
    spec ``key``, kept in namespace ``namespace``. ``fn`` may be ``None`` for an
    index that is only read (decoding stored state)."""

    unique = False
    kind = "index"

    def __init__(self, fn: Callable[[Any], Any] | None, namespace: str | bytes, *, key: SpecLike) -> None:
        self.fn = fn
        self.namespace = namespace
        self.spec = KeySpec(key)

    def index_key(self, value: Any) -> tuple[Any, ...]:
        """The checked flat elements of the index key of a record value."""
        if self.fn is None:
            raise InvalidArgument(f"index {self.namespace!r} has no index function; it can only be read")
        return self.spec.elements(self.fn(value))


def _checked_indexes(indexes: Any) -> dict[str, Index]:
    """``indexes`` as a dict of names to :class:`Index` objects (``None``: none);
    :class:`InvalidArgument` naming what is not."""
    if indexes is None:
        return {}
    if not isinstance(indexes, Mapping):
        raise InvalidArgument(f"indexes= is a mapping of names to indexes, not {show_bytes(indexes)}")
    checked = dict(indexes)
    for name, index in checked.items():
        if not isinstance(index, Index):
            raise InvalidArgument(
                f"index {show_bytes(name)} is {show_bytes(index)}, not a UniqueIndex or MultiIndex"
            )
    return checked


class UniqueIndex(Index):
    """At most one record per index key. Its namespace maps the index key to a
    reference to the record (under the CosmWasm layout, cw-storage-plus's JSON
    ``{"pk": base64, "value": record}``; a record whose value codec does not
    declare ``writes_json`` (:class:`~keyspace.codecs.Codec`) is embedded as a
    base64 JSON string). Saving a record whose index key another
    record holds raises :class:`~keyspace.errors.UniqueViolation` and writes
    nothing."""

    unique = True
    kind = "unique_index"


class MultiIndex(Index):
    """Any number of records per index key. Its namespace holds the keys
    ``(*index key, *record key)`` (under the CosmWasm layout the record key is the
    raw ``joined_key`` and the value the JSON length of it, as cw-storage-plus
    writes them)."""

    kind = "multi_index"


class IndexedMap(Map):
    """A :class:`Map` with secondary indexes, named by ``indexes``.

    ``save``, ``update`` and ``remove`` read the old record, then write the
    record and move its index entries (removing the old ones, writing the new
    ones) in one atomic batch: the caller's transaction under :meth:`using`, else one of their own.
    Unique indexes are checked before anything is written. ``clear`` removes the
    records and every index entry (cw-storage-plus's own ``clear`` leaves the
    indexes behind). ``index(name)`` reads an index: ``load``/``items``/
    ``prefix``, yielding ``(record key, record value)``.

    Cost of ``save``/``update``/``remove``: one point read of the record, one point read per
    unique index whose key changes, and one batch of ``1 + 2 × indexes`` writes
    at most.
    """

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        *,
        key: SpecLike,
        value: str | Codec | None = None,
        indexes: Mapping[str, Index] | None = None,
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, namespace, key=key, value=value, layout=layout)
        self.indexes: dict[str, Index] = _checked_indexes(indexes)
        self._idx_ns: dict[str, Namespace] = {}
        for name, idx in self.indexes.items():
            spec = idx.spec if idx.unique else idx.spec + self.spec
            self._idx_ns[name] = self.layout.namespace(idx.namespace, spec)
        check_distinct(f"IndexedMap {namespace!r}", self._roles())

    def _roles(self) -> list[tuple[str, Any]]:
        return [
            *super()._roles(),
            *((f"index {name!r}", idx.namespace) for name, idx in self.indexes.items()),
        ]

    def index(self, name: str) -> IndexView:
        """The read view of index ``name``."""
        try:
            idx = self.indexes[name]
        except KeyError:
            raise KeyError(f"no index {name!r}; this map has {', '.join(self.indexes) or 'none'}") from None
        return IndexView(self, idx, self._idx_ns[name])

    @owns_transaction
    def save(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key`` and move its index entries, atomically.
        :class:`UniqueViolation` (nothing written) when a unique index key of
        ``value`` belongs to another record."""
        elements = self.spec.elements(key)
        raw = self.codec.encode(value)
        new_keys = self._index_keys(value)
        with self._atomic() as base:
            self._write(base, key, elements, raw, new_keys)

    @owns_transaction
    def update(self, key: Any, fn: Callable[[Any], Any]) -> Any:
        """Store and return ``fn(current value or None)`` at ``key``, moving its
        index entries as :meth:`save` does, in one atomic batch.
        :class:`UniqueViolation` (nothing written) when a unique index key of the
        new value belongs to another record."""
        elements = self.spec.elements(key)
        with self._atomic() as base:
            new, raw = self._updated(fn, self._ns.scope(base).get(self._ns.key(elements)))
            new_keys = self._index_keys(new)
            self._write(base, key, elements, raw, new_keys)
        return new

    @owns_transaction
    def remove(self, key: Any) -> None:
        """Remove the record at ``key`` and its index entries, atomically (no error
        when it is absent)."""
        elements = self.spec.elements(key)
        with self._atomic() as base:
            self._write(base, key, elements, None, {})

    @owns_transaction
    def __delitem__(self, key: Any) -> None:
        elements = self.spec.elements(key)
        with self._atomic() as base:
            if not self._write(base, key, elements, None, {}):
                raise KeyError(key)

    def _index_keys(self, value: Any) -> dict[str, tuple[Any, ...]]:
        """The checked index key of ``value`` in each index, by index name."""
        return {name: idx.index_key(value) for name, idx in self.indexes.items()}

    def _write(
        self,
        base: Scope,
        key: Any,
        elements: tuple[Any, ...],
        raw: bytes | None,
        new_keys: dict[str, tuple[Any, ...]],
    ) -> bool:
        """Put (``raw``) or delete (``None``) one record with its index entries in
        ``base``'s transaction; return whether a record was there before."""
        records = self._ns.scope(base)
        stored = self._ns.key(elements)
        old_raw = records.get(stored)
        if raw is None and old_raw is None:
            return False
        old = None if old_raw is None else self.codec.decode(old_raw)
        pk = self._ns.relative(elements)
        layout = self.layout
        deletes: list[tuple[Scope, Any]] = []
        puts: list[tuple[Scope, Any, bytes]] = []
        for name, idx in self.indexes.items():
            ns = self._idx_ns[name]
            scope = ns.scope(base)
            old_ik = None if old is None else idx.index_key(old)
            new_ik = new_keys.get(name)
            if idx.unique:
                if new_ik is not None:
                    entry = scope.get(ns.key(new_ik))
                    if entry is not None and layout.unique_pk(entry) != pk:
                        raise UniqueViolation(
                            f"unique index {name!r} (namespace {idx.namespace!r}) already maps "
                            f"{show_bytes(idx.spec.key_of(new_ik))} to another record; saving key "
                            f"{show_bytes(key)} would break it (nothing written)"
                        )
                    puts.append((scope, ns.key(new_ik), layout.unique_entry(pk, self._entry_value(raw))))
                if old_ik is not None and old_ik != new_ik:
                    deletes.append((scope, ns.key(old_ik)))
            else:
                if old_ik is not None and old_ik != new_ik:
                    deletes.append((scope, ns.key((*old_ik, *elements))))
                if new_ik is not None and new_ik != old_ik:
                    puts.append((scope, ns.key((*new_ik, *elements)), layout.multi_entry(pk)))
        # Every key is encoded and sized before the first write: a record or index
        # key the scope refuses (KeyTooLarge, InvalidKey) then writes nothing, even
        # in a caller's transaction that goes on after the error.
        if raw is not None:
            records.check_key(stored)
        for scope, k, _ in puts:
            scope.check_key(k)
        for scope, k in deletes:
            scope.check_key(k)
        for scope, k in deletes:
            scope.discard(k)
        for scope, k, v in puts:
            scope[k] = v
        if raw is None:
            records.discard(stored)
        else:
            records[stored] = raw
        return old_raw is not None

    def _entry_value(self, raw: bytes | None) -> bytes:
        """The record's value as a unique index entry embeds it: its bytes as they
        are when the value codec declares ``writes_json`` (its JSON, as in
        cw-storage-plus's ``UniqueRef``), else its bytes as a base64 JSON string,
        so that the entry stays JSON. The codec's declaration decides, not its
        class (see :class:`~keyspace.codecs.Codec`)."""
        if raw is None or writes_json(self.codec):
            return raw or b""
        return b'"' + base64.b64encode(raw) + b'"'

    def _namespaces(self) -> tuple[Namespace, ...]:
        return (self._ns, *self._idx_ns.values())

    def _drop(self, base: Scope, elements: tuple[Any, ...]) -> None:
        self._write(base, self.spec.key_of(elements), elements, None, {})


class IndexView(_Ranged):
    """Reads through one index of an :class:`IndexedMap`. Ranges run over the
    index keys (for a multi index, ``(*index key, *record key)``) and yield
    ``(record key, record value)``; ``prefix(p)`` fixes leading index elements
    (a whole index key of a multi index leaves the record key to range over)."""

    def __init__(self, owner: IndexedMap, index: Index, ns: Namespace, prefix: tuple[Any, ...] = ()) -> None:
        self._owner = owner
        self.index = index
        self._ns = ns
        self.codec = owner.codec
        self._fix(ns.spec, prefix)

    def _scope(self) -> Scope:
        return self._ns.scope(self._owner._base)

    def prefix(self, prefix: Any) -> IndexView:
        """The entries whose leading index elements are ``prefix``."""
        return IndexView(self._owner, self.index, self._ns, self._ns.spec.prefix_elements(prefix))

    sub_prefix = prefix

    def _record_of(self, entry_key: Any, entry: bytes) -> tuple[tuple[Any, ...], bytes]:
        """``(record key elements, record's stored bytes)`` of one index entry
        (``entry_key``: its scope key, not read for a unique index);
        :class:`KeyError` when the record is gone. Cost: one point read."""
        owner = self._owner
        if self.index.unique:
            pk = owner._ns.from_relative(owner.layout.unique_pk(entry))
        else:
            pk = self._ns.elements(entry_key)[len(self.index.spec) :]
        raw = owner._scope().get(owner._ns.key(pk))
        if raw is None:
            raise KeyError(owner.spec.key_of(pk))
        return pk, raw

    def _record(self, entry_key: Any, entry: bytes) -> tuple[Any, Any]:
        """``(record key, record value)`` of one index entry."""
        pk, raw = self._record_of(entry_key, entry)
        return self._owner.spec.key_of(pk), self._owner.codec.decode(raw)

    def items(
        self,
        start: Any = None,
        stop: Any = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(record key, record value)`` in index order. Cost: one range
        scan of the index plus one point read per record."""
        it, _ = self._raw(start, stop, include_start, include_stop, reverse, limit)
        for k, v in it:
            yield self._record(k, v)

    def _record_raw(self, entry_key: Any, entry: bytes) -> tuple[bytes, bytes]:
        """``(record key as its relative bytes, record's stored bytes)`` of one
        index entry; :class:`KeyError` when the record is gone."""
        pk, raw = self._record_of(entry_key, entry)
        return self._owner._ns.relative(pk), raw

    def range_raw(
        self,
        start: Any = None,
        stop: Any = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Like :meth:`items`, undecoded: ``(record key as the bytes an index
        refers to it by, record's stored bytes)`` (cw-storage-plus's index
        ``range_raw``: the record's value, never the index entry's own bytes,
        which for a multi index are the length of the record key). Cost: one
        range scan of the index plus one point read per record."""
        it, _ = self._raw(start, stop, include_start, include_stop, reverse, limit)
        for k, v in it:
            yield self._record_raw(k, v)

    def prefix_range(
        self, min: Any = None, max: Any = None, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(record key, record value)`` of the index entries whose leading
        index elements lie between the prefix bounds ``min`` and ``max``
        (:class:`~keyspace.collections.PrefixBound`), in index order (descending
        when ``reverse``), at most ``limit``: the records, as :meth:`items` gives
        them (cw-storage-plus's ``prefix_range``, without its decoding of the
        index entry as the record, PR #125). Cost: one range scan of the index
        plus one point read per record."""
        for k, v in prefix_scan(self._ns, self._scope(), min, max, reverse, limit, *self._span()):
            yield self._record(k, v)

    def prefix_range_raw(
        self, min: Any = None, max: Any = None, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        """Like :meth:`prefix_range`, undecoded as :meth:`range_raw` is."""
        for k, v in prefix_scan(self._ns, self._scope(), min, max, reverse, limit, *self._span()):
            yield self._record_raw(k, v)

    def load(self, index_key: Any) -> tuple[Any, Any]:
        """``(record key, record value)`` of the record with this unique index key;
        :class:`KeyError` when there is none."""
        if not self.index.unique:
            raise InvalidArgument(f"index {self.index.namespace!r} is a multi index: use prefix(key).items()")
        entry = self._scope().get(self._ns.key(self.index.spec.elements(index_key)))
        if entry is None:
            raise KeyError(index_key)
        return self._record(None, entry)

    def may_load(self, index_key: Any) -> tuple[Any, Any] | None:
        """Like :meth:`load`, ``None`` when there is no such record."""
        try:
            return self.load(index_key)
        except KeyError:
            return None
