"""Scope: the dict-like view of one namespace, where a path, a scheme and a store meet.

A :class:`Scope` is a :class:`~collections.abc.MutableMapping` over exactly the
scope's own keys — never a child scope's — in stored-key order (which is key order
for every scheme that declares property 3). Child scopes are reached with
:meth:`Scope.scope`; :meth:`Scope.scopes` lists the children that hold data,
:meth:`Scope.clear` removes own keys, :meth:`Scope.drop` removes the scope and
everything below it, :meth:`Scope.subtree` walks ``(path, key, value)`` below it.

A scope runs on its path's :class:`~keyspace.schemes._layouts.Layout`, compiled
once per path by the scheme and kept in the keyspace's
:class:`~keyspace._space.Space`, so making a scope of a known path costs a
dictionary lookup and writes nothing. A scope holds that space (store, catalog,
layouts), never the keyspace: every safety fact it consults is the catalog's. Every scheme takes the same
route: point operations build the stored key with the layout's ``stored`` (C where
the optional module is built) and call the store view's engine callables; scans,
``len``, ``clear`` and the views read the own ranges in chunks decoded by the
layout's ``decode_chunk``.
"""

from __future__ import annotations

from collections.abc import (
    Callable,
    ItemsView,
    Iterator,
    KeysView,
    MutableMapping,
    ValuesView,
)
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

from . import _bulk_writes as _bulk
from . import _scope_structure as _structure
from ._accounting import ScopeStats, accounting_of
from ._expiry import expired_own as _expired_own
from ._retry import run_atomically
from ._scan_plan import check_range_arguments as check_range_arguments
from ._scan_plan import chunks as _chunks
from ._scan_plan import pairs as _pairs
from ._scan_plan import short as _short
from ._scope_core import ScopeCore
from ._update_pairs import update_pairs
from .codecs import Codec
from .errors import AccountingUnavailable, show_bytes
from .schemes._base import Key, Path, Scheme
from .schemes._layouts import Layout
from .stores._base import ReadView

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ._watch import ScopeWatch
    from .catalog import Catalog
    from .stores._base import Store

__all__ = [
    "KeyspaceLike",
    "Scope",
    "ScopeItems",
    "ScopeKeys",
    "ScopeValues",
    "TransactionLike",
    "update_pairs",
]


class TransactionLike(Protocol):
    """What :meth:`KeyspaceLike.transaction` and :meth:`KeyspaceLike.snapshot`
    give (a :class:`~keyspace.Transaction`): scopes that read and write through it,
    its view of the store and the catalog state of that view."""

    view: ReadView
    catalog: Catalog

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path`` inside the transaction or snapshot."""
        ...


class KeyspaceLike(Protocol):
    """The type of :attr:`Scope.keyspace`: what a :class:`~keyspace.Keyspace`
    offers to the holder of one of its scopes (the object is that Keyspace).
    Described here so that this module needs no import of the keyspace module
    (which imports this one); the type checker proves at the keyspace's
    construction of its scopes that a Keyspace is one."""

    @property
    def store(self) -> Store:
        """The store the keyspace reads and writes."""
        ...

    @property
    def scheme(self) -> Scheme:
        """The keyspace's scheme."""
        ...

    @property
    def url(self) -> str:
        """The store's URL."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The facts that keep the keyspace's scopes apart."""
        ...

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path``."""
        ...

    def transaction(self) -> AbstractContextManager[TransactionLike]:
        """An atomic transaction across scopes."""
        ...

    def snapshot(self) -> AbstractContextManager[TransactionLike]:
        """A read-only consistent view."""
        ...

    def close(self) -> None:
        """Close the keyspace's store."""
        ...


_MISSING: Any = object()


_first, _second = itemgetter(0), itemgetter(1)


def _whole(
    start: Any, stop: Any, include_start: bool, include_stop: bool, reverse: bool, limit: Any, prefix: Any
) -> bool:
    """Whether range arguments ask for the whole scope in key order: ``items``,
    ``keys`` and ``values`` then return views instead of iterators."""
    return (
        start is None
        and stop is None
        and prefix is None
        and limit is None
        and not reverse
        and include_start
        and not include_stop
    )


class Scope(ScopeCore[KeyspaceLike], MutableMapping[Any, Any]):
    """One namespace of a keyspace, as a mutable mapping of its own keys.

    Do not instantiate directly; use :meth:`Keyspace.scope`, :meth:`Scope.scope` or
    ``tx.scope`` inside :meth:`Keyspace.transaction`.

    Mapping methods (``s[k]``, ``s[k] = v``, ``del s[k]``, ``k in s``, ``get``,
    ``setdefault``, ``pop``) cost one or two point operations on the store.
    ``len(s)``, iteration and ``==`` scan the scope's own range: O(own keys).
    ``keys()``, ``values()`` and ``items()`` without arguments are views (``len``,
    ``in``, ``==`` with a dict's views, iterable again and again); with range
    arguments they are iterators and take plyvel's words: ``items(start=, stop=,
    include_start=True, include_stop=False, reverse=False, limit=None, prefix=)``.

    Attributes: ``path`` (tuple of components), ``prefix`` (the stored bytes every
    own key starts with), ``keyspace``, ``scheme``, ``layout``.
    """

    __slots__ = ()  # the fields are the core's (keyspace._scope_core)

    # -- navigation ------------------------------------------------------------

    @property
    def keyspace(self) -> KeyspaceLike:
        """The :class:`~keyspace.Keyspace` this scope belongs to (its space's
        owner; the scope itself runs on its space and catalog alone), typed as
        :class:`KeyspaceLike`. A scope of a transaction or a snapshot answers
        the keyspace they were taken from."""
        return self._space.owner

    @property
    def layout(self) -> Layout:
        """The compiled layout of this scope's path (stored keys as the keyspace's
        store holds them)."""
        return self._compiled

    def scope(self, *more: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The child scope at ``path + more`` (nothing is written). Codecs default to
        this scope's codecs."""
        from .codecs import resolve_codec

        return Scope(
            self._space,
            self._view,
            self._state,
            self.path + more,
            self._key_spec if key is None else resolve_codec(key),
            self._value_spec if value is None else resolve_codec(value),
        )

    def __repr__(self) -> str:
        return f"<Scope {self.path!r} of {self._space.owner!r}>"

    # -- point operations --------------------------------------------------------

    # []/get/[]=/del are ScopeFields' (keyspace._scope_fields: C methods where
    # the C twin is built, the Python reference otherwise)

    def __contains__(self, key: object) -> bool:
        return self._read(self._stored(key)) is not None

    def discard(self, key: Key) -> None:
        """Remove ``key`` if present; no error when it is missing. Cost: one delete."""
        stored = self._stored(key)
        view = self._writer()
        if self._guard is None or not self._hidden():
            self._state.destructive(
                view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
            )

    def pop(self, key: Key, default: Any = _MISSING) -> Any:
        """Remove ``key`` and return its value; ``default`` when it is missing, else
        :class:`KeyError`. Outside a transaction a found key is read again and
        deleted in one transaction of the store, so that two callers never both
        get one value; that transaction is the scope's own, so when it loses a
        race to another writer (``TransactionConflict``, nothing changed: etcd's
        optimistic commit, LMDB growing a small map while another process
        commits) it is run again, at most 8 times in all. Cost: one point read,
        and for a found key one transaction of one read and one delete."""
        stored = self._stored(key)
        view = self._writer()
        raw = self._read(stored)
        if raw is None:
            if default is _MISSING:
                raise self._missing(key)
            return default
        if view is self._state.store:
            return self._in_one(self._space.transaction, "pop", key, default)
        self._state.destructive(
            view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
        )
        return raw if self._vdec is None else self._vdec(raw)

    def _in_one(
        self, begin: Callable[[], AbstractContextManager[tuple[ReadView, Catalog]]], method: str, *args: Any
    ) -> Any:
        """Run ``method`` on the scope of this path inside what ``begin()`` opens,
        a transaction of the store (a read then a write, as one atomic step) or a
        snapshot (several reads, of one state of the store). The step is this
        scope's own, so one that loses a race (:class:`TransactionConflict`,
        nothing written) is run again from its first read, at most
        :data:`~keyspace._retry.ATTEMPTS` times (:func:`~keyspace._retry.run_atomically`)."""
        return run_atomically(
            begin, lambda pair: getattr(self._on(*pair), method)(*args), f"Scope.{method.strip('_')}"
        )

    def popitem(self) -> tuple[Any, Any]:
        """Remove and return the last ``(key, value)`` in key order (``dict`` takes
        the last inserted); :class:`KeyError` when the scope is empty. Outside a
        transaction it runs in one transaction of the store (two callers never
        both get one item), run again when it loses a race, as :meth:`pop`'s.
        The item goes by the stored key it was read at: a key codec may read
        several stored forms as one key (JSON that another program wrote with
        its fields in another order), and the key it would write for the decoded
        key may be another one, or none. Cost: one one-item reverse
        scan and one delete."""
        view = self._writer()
        if view is self._state.store:
            return self._in_one(self._space.transaction, "popitem")  # type: ignore[no-any-return]
        chunks = self._chunks(reverse=True, limit=1, decode=False)
        try:
            last = next(chunks, None)
        finally:
            chunks.close()  # no read left open across the delete
        if last is None:
            raise KeyError("popitem(): scope is empty")
        stored, raw = last[0]
        key = self._key_of(stored)
        self._state.destructive(
            view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
        )
        return key, (raw if self._vdec is None else self._vdec(raw))

    def setdefault(self, key: Key, default: Any = None) -> Any:
        """Return the value of ``key``; when missing, store ``default`` first (as
        ``dict.setdefault``). Outside a transaction a missing key is read again and
        written in one transaction of the store, so that every caller gets the
        value stored (run again when it loses a race, as :meth:`pop`'s). Cost:
        one point read, and when missing one transaction of one read and one
        write."""
        raw = self._read(self._stored(key))
        if raw is not None:
            return raw if self._vdec is None else self._vdec(raw)
        if self._writer() is self._state.store:
            return self._in_one(self._space.transaction, "setdefault", key, default)
        self[key] = default
        return default

    def check_key(self, key: Key) -> None:
        """Raise what ``self[key] = value`` would raise for ``key`` alone (the key
        codec, the scheme, the engine's key size limit), writing nothing: how an
        operation of several writes refuses bad input before it writes any, even
        in a caller's transaction that goes on after the error. Cost: one key
        transform."""
        self._state.check_storable(self._whole_ops([(self._stored(key), None)]))

    def _iter_items(self, *args: Any) -> Iterator[tuple[Any, Any]]:
        pairs = _pairs(*self._plan(), *args)
        vdec = self._vdec
        if vdec is None:
            return pairs
        return ((k, vdec(v)) for k, v in pairs)

    def items(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Any:
        """Without arguments, a view of the own ``(key, value)`` pairs
        (:class:`ScopeItems`). With any, an iterator of them in key order (descending
        when ``reverse``), bounded by ``start``/``stop`` (``include_*`` decide the
        ends) or by ``prefix``, at most ``limit`` items.

        ``prefix`` is what the scheme's keys start with: leading elements of
        composite keys in the tuple scheme, leading bytes in the byte schemes (in
        ScopeHash, whose keys are stored after their length, the scope's range is
        read and filtered, so the result is exact at O(scope) cost). Under a key
        codec that turns keys into bytes (``json``, a custom codec; ``str`` and
        ``int`` in the byte schemes) the prefix is a key of the codec, encoded by
        it as every key is: the keys whose bytes start with the prefix's bytes,
        or in the tuple scheme, where those bytes are one element, the key equal
        to the prefix.

        Cost: one range scan of the requested part of the scope, read in chunks, each
        decoded by one call of the layout (C where built); no generator is resumed
        per item for bytes values."""
        if limit is not None:  # a short scan is read at once
            short = _short(
                self._layout,
                self._ranges,
                self._bound,
                self.scheme,
                self._key_spec,
                self._guard,
                self._hidden,
                self._data,
                self._chunk,
                self._touch,
                start,
                stop,
                include_start,
                include_stop,
                reverse,
                limit,
                prefix,
            )
            if short is not None:
                vdec = self._vdec
                return iter(short) if vdec is None else ((k, vdec(v)) for k, v in short)
        elif _whole(start, stop, include_start, include_stop, reverse, limit, prefix):
            return ScopeItems(self)
        return self._iter_items(start, stop, include_start, include_stop, reverse, limit, prefix)

    def keys(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Any:
        """Like :meth:`items`, keys only (a :class:`ScopeKeys` view without arguments);
        beyond a short scan (``limit`` up to 1024) no value is read."""
        if _whole(start, stop, include_start, include_stop, reverse, limit, prefix):
            return ScopeKeys(self)
        args = (start, stop, include_start, include_stop, reverse, limit, prefix)
        short = _short(*self._plan(), *args)
        if short is not None:
            return map(_first, iter(short))
        return map(_first, chain.from_iterable(_chunks(*self._plan(), *args, keys=True)))

    def values(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Any:
        """Like :meth:`items`, values only (a :class:`ScopeValues` view without
        arguments)."""
        if _whole(start, stop, include_start, include_stop, reverse, limit, prefix):
            return ScopeValues(self)
        return self._iter_values(start, stop, include_start, include_stop, reverse, limit, prefix)

    def _iter_values(self, *args: Any) -> Iterator[Any]:
        short = _short(*self._plan(), *args) if args and args[5] is not None else None
        values = map(_second, iter(short) if short is not None else _pairs(*self._plan(), *args))
        return values if self._vdec is None else map(self._vdec, values)

    def __iter__(self) -> Iterator[Any]:
        """The own keys in order, read without their values (keys-only ``read_pages``)."""
        return map(_first, chain.from_iterable(_chunks(*self._plan(), keys=True)))

    def __len__(self) -> int:
        """Number of own keys, counted without decoding them. Cost: one ``count``
        of the store view per own range where the ranges hold only own keys
        (LMDB: keys read without values, no Python code per key; SQLite, etcd:
        one query; memory: two bisections); where one byte tells own keys from
        the others in the ranges (the layout's ``lacks``: AsciiHex), one
        ``count(..., without)`` per range, which filters as it counts (SQLite: one
        query; LMDB: one C pass per chunk of keys); else a keys-only scan whose
        chunks the layout's ``decode_chunk`` (C where built) cuts to the own
        keys. Outside a transaction or snapshot, a count of several reads
        (several own ranges, or a scan read in pages) reads one snapshot of the
        store, so it never counts part of a batch."""
        store = self._state.store
        counts = accounting_of(store)
        if counts is not None and counts.counts_scope(self.path, self.prefix):  # the counter record, O(1)
            expired = _expired_own(self)  # keys whose ttl has passed, not swept yet
            if expired is not None:
                return counts.stats(self._view, self.path).keys - expired
        if self._counted_in_pieces() and self._view is store and store.capabilities.snapshots:
            return self._in_one(self._space.snapshot, "__len__")  # type: ignore[no-any-return]
        layout = self._layout
        lacks = layout.lacks
        if not layout.exact and lacks < 0:
            return sum(map(len, self._chunks(keys=True)))
        ranges = self._stored_ranges(None, None, True, False, None)
        view = self._data
        if lacks < 0:
            return sum(view.count(lo, hi) for lo, hi in ranges)
        at = len(layout.prefix)
        return sum(view.count(lo, hi, (lacks, at)) for lo, hi in ranges)

    def stats(self) -> ScopeStats:
        """``(keys, bytes, subtree_keys, subtree_bytes)``: the scope's own keys and
        their stored bytes (stored key + value), and those of its subtree (the
        scope and every scope below it), read from the keyspace's counters
        (``accounting=True``): one point read, whatever the sizes; inside a
        transaction, plus one pass over its uncommitted writes.
        :class:`~keyspace.errors.AccountingUnavailable` when accounting is off."""
        counts = accounting_of(self._state.store)
        if counts is None:
            raise AccountingUnavailable(
                f"stats() of the scope {self.path!r} needs accounting, which {self._state.store.url} does "
                "not keep: open it with accounting=True on a new store, or run "
                "'keyspace accounting enable URL'"
            )
        if not counts.counts_scope(self.path, self.prefix):
            raise AccountingUnavailable(
                f"stats() of {self.path!r}: its keys lie under the prefix {show_bytes(self.prefix)}, not "
                "where the scheme keeps that scope's keys (a directory's contents): no counter counts them"
            )
        return counts.stats(self._view, self.path)

    def _counted_in_pieces(self) -> bool:
        """Whether ``len`` reads the store more than once: several own ranges, or a
        layout whose range holds other scopes' keys too (a scan, read in pages)."""
        return not self._layout.exact or len(self._ranges) > 1

    def __bool__(self) -> bool:
        return next(_chunks(*self._plan(), limit=1, decode=False, keys=True), None) is not None

    # -- bulk changes ----------------------------------------------------------------

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Put the pairs of a mapping (or of an iterable of pairs) and of keyword
        arguments, as ``dict.update``. All or nothing: inside a transaction they
        commit with it; outside, they are written in one atomic transaction of the
        store (engines with a per-batch operation limit: one atomic batch, and
        :class:`TransactionTooLarge` rather than a split).

        Memory: outside a transaction, on engines without a batch limit, the pairs
        are encoded as they are read and handed to the store 4096 at a time, so an
        iterator of any length is written in bounded memory; otherwise they are
        read once into the one list of encoded pairs the batch takes."""
        _bulk.update(self, other, kwargs)

    def clear(self) -> None:
        """Remove every own key; child scopes stay. Cost: one range delete per own
        range where the scheme keeps own keys contiguous, else a scan."""
        _bulk.clear(self, None, None, True, False, False, None, None, False)

    def clear_range(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> int:
        """Remove the own keys that :meth:`items` with the same arguments would
        yield (with ``limit``, the first ``limit`` of them in key order, or from
        the end when ``reverse``), in one atomic write, and return how many were
        removed. A negative ``limit`` raises :class:`InvalidArgument`.

        Cost: without ``limit``, one count and one range delete per own range
        (native where the engine has them) where the scheme keeps own keys
        contiguous; with ``limit`` (or where own keys are not contiguous), a
        keys-only scan of at most ``limit`` own keys and one batch of deletes."""
        check_range_arguments(include_start, include_stop, reverse, limit)
        return _bulk.clear(self, start, stop, include_start, include_stop, reverse, limit, prefix, True)

    def drop(self) -> None:
        """Remove the scope and every scope below it. Cost: one range delete
        (native where the engine has one); the ScopeHash root, whose named scopes
        lie beside it, takes one per registered name."""
        _bulk.drop(self)

    # -- structure -------------------------------------------------------------------

    def scopes(self) -> list[Any]:
        """The direct children of this scope that hold data, in stored order (name
        order for schemes with property 4). Cost: one seek per child and per own
        range, not a scan of their keys."""
        if self._guard is not None:
            self._hidden()
        return self._state.children(self._view, self.path)

    def subtree(self) -> Iterator[tuple[Path, Any, Any]]:
        """Yield ``(path, key, value)`` for every key of this scope and the scopes
        below it, with absolute paths, in stored order. Keys and values are decoded
        with this scope's codecs. Covers exactly the keys :meth:`drop` removes.
        Cost: one scan of the subtree range (the ScopeHash root: one per name).
        A scope whose reads its catalog checks (a read guard) reads the committed
        store's subtree in one snapshot, where the check and the scan read one
        state."""
        return _structure.subtree(self)

    # -- changes -----------------------------------------------------------------------

    def append(self, value: Any) -> Any:
        """Store ``value`` under a new key that the commit fills in with its place
        in the commit order (a :class:`~keyspace.tuples.Versionstamp`: the commit's
        number in the change log, then this append's place in the commit), and
        return that key: complete outside a transaction, incomplete (its user
        version set) inside one. The scope's appended keys sort in commit order:
        an append-only log, on every engine of a keyspace opened with
        ``changes=True``, and on etcd with or without it (its revisions number
        the commits; a commit that appends also rewrites its scope's sequencing
        key, so transactions that append to one scope at once conflict); else
        :class:`~keyspace.errors.InvalidArgument`. See :mod:`keyspace._append`.
        Cost: a put; outside a transaction, one commit."""
        from ._append import append

        return append(self, value)

    def put(self, key: Key, value: Any, *, ttl: float | None = None) -> None:
        """``self[key] = value``; with ``ttl`` (seconds, over 0), the key expires
        then: from its deadline on no read returns it, and a sweep deletes it
        (``ks.expire``, and writers' small sweeps). Needs a keyspace opened with
        ``ttl=True`` (else :class:`~keyspace.errors.InvalidArgument`, as for a bad
        ``ttl``, nothing written). A later put without ``ttl`` keeps the key for
        good. See :mod:`keyspace._expiry`. Cost: a put; with ``ttl``, its deadline
        records in the same commit (outside a transaction, one of its own)."""
        if ttl is None:
            self[key] = value
            return
        from ._expiry import put_expiring

        put_expiring(self, key, value, ttl)

    def expiring(self, ttl: float) -> Any:
        """This scope with a default ``ttl``: its ``[]=``, ``put`` and ``update``
        put with it (:class:`~keyspace._expiry.ExpiringScope`); reads are the scope's."""
        from ._expiry import ExpiringScope

        return ExpiringScope(self, ttl)

    def watch(self, *, subtree: bool = False, start_revision: int | None = None) -> ScopeWatch:
        """A stream of :class:`~keyspace.WatchEvent` (put or delete, ``path``, decoded
        ``key`` and ``value``, store ``revision``) for exactly this scope's own keys,
        or with ``subtree=True`` for the scope and every scope below it. From now on,
        or from ``start_revision``. Iterate it (sync or ``async for``), or ``get(timeout)``;
        ``close()`` it (or use ``with``). See :mod:`keyspace._watch`.

        On etcd: one native Watch, resumed after a member failure with no event lost
        or repeated; a compacted ``start_revision`` raises
        :class:`~keyspace.errors.WatchCompacted`. The memory store sees every write
        (they all go through it) but keeps no history: from now only. LMDB, SQLite,
        LevelDB and RocksDB files may be written by other processes unseen
        (``capabilities.watch`` is ``None``): they raise
        :class:`~keyspace.errors.WatchUnsupported` here. A scope of a transaction or
        a snapshot watches the store's committed writes, as the keyspace's scope of
        the same path does: a watch outlives the block. Cost: one stream (etcd: and
        one thread) per watch."""
        return _structure.watch(self, subtree, start_revision)


class ScopeKeys(KeysView[Any]):
    """``scope.keys()``: a set-like, re-iterable view of the own keys (``len``,
    ``in`` and ``==`` as ``dict.keys()``), read from the store at each use."""

    __slots__ = ()
    _mapping: Scope

    def __iter__(self) -> Iterator[Any]:
        return iter(self._mapping)


class ScopeItems(ItemsView[Any, Any]):
    """``scope.items()``: a set-like, re-iterable view of the own ``(key, value)``
    pairs, read from the store at each use (one scan per iteration)."""

    __slots__ = ()
    _mapping: Scope

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self._mapping._iter_items()

    def __contains__(self, item: object) -> bool:
        """Whether ``item`` is a ``(key, value)`` pair of the scope, as a dict's
        items view answers: ``False`` for anything that is no pair."""
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        return super().__contains__(item)


class ScopeValues(ValuesView[Any]):
    """``scope.values()``: a re-iterable view of the own values, read from the store
    at each use."""

    __slots__ = ()
    _mapping: Scope

    def __iter__(self) -> Iterator[Any]:
        return self._mapping._iter_values()
