"""Accounting: every scope's key and byte counts, and quotas, kept in the store.

With ``keyspace.open(url, accounting=True)`` (recorded in the store, so every
later opener keeps it) each scope has one *counter record*, a reserved key
updated inside the same atomic write as the data it counts::

    ff "keyspace-counts" 00  pack((raw_prefix,))  pack(path)   ->
        i64le(keys) i64le(bytes) i64le(subtree_keys) i64le(subtree_bytes)
        i64le(quota_keys) i64le(quota_bytes)                  (48 bytes; a quota of -1: none)

``keys``/``bytes``: the scope's own keys and their stored size (stored key +
value); ``subtree_*``: the same for the scope and every scope below it;
``quota_*``: the limits of :meth:`Accounting.set_quota` on the subtree (``None``:
none). ``path`` is the path as the scheme decodes it (bytes components in the
byte schemes). A record whose counts are all zero and that holds no quota is
deleted, so a store's records are exactly its non-empty scopes, their ancestors
and the scopes with a quota. The counting of ``keyspace accounting enable``
keeps its place at ``ff "keyspace-counting" 00 pack((raw_prefix,))`` (the last
stored key counted), so that it resumes where it stopped.

A commit's changes are grouped by scope (the scope of a stored key found by the
scheme's :meth:`~Scheme.decode`, skipped while keys fall in the own ranges of
the scope found last), so a transaction writes one record per touched scope and
ancestor however many keys it changes. Only schemes that decode a stored key
without outside information (:attr:`Property.DECODABLE`) can be counted; the
others refuse accounting with :class:`AccountingUnavailable`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from typing import Any, Final, NamedTuple, cast

from ._bytes import prefix_end
from ._counter_records import NONE as _NONE
from ._counter_records import RECORD as _RECORD
from ._counter_records import bump
from ._metadata import read_features, reserved_ranges
from ._write_hooks import (
    UNKNOWN,
    Change,
    ChangeList,
    HookedStore,
    HookedTransaction,
    Previous,
    WriteHook,
    record_features,
    register_feature,
)
from .errors import (
    AccountingUnavailable,
    InvalidArgument,
    KeyspaceError,
    LayoutError,
    QuotaExceeded,
    SchemeMismatch,
    UnreadableRecord,
    show_bytes,
)
from .schemes._base import Path, Property, Scheme
from .stores._base import ReadView, Store, WriteView, keys_in
from .tuples import pack, unpack

__all__ = [
    "COUNTS",
    "NAME",
    "PROGRESS",
    "Accounting",
    "ScopeStats",
    "counter_prefix",
    "progress_key",
    "recount",
]

NAME: Final = "accounting"
COUNTS: Final = b"\xffkeyspace-counts\x00"
PROGRESS: Final = b"\xffkeyspace-counting\x00"
_SAMPLE_KEY = b"k"
_SAMPLE_NAME = "k"
_DEPTHS = 32
_MEMO = 4096

Record = list[Any]
"""``[keys, bytes, subtree_keys, subtree_bytes, quota_keys, quota_bytes]``."""


class ScopeStats(NamedTuple):
    """A scope's counts: its own keys and their bytes (stored key + value), and
    those of its subtree (the scope and every scope below it)."""

    keys: int
    bytes: int
    subtree_keys: int
    subtree_bytes: int


def counter_prefix(scheme: Scheme) -> bytes:
    """Where the counter records of a keyspace of ``scheme`` start."""
    return COUNTS + pack((scheme.raw_prefix,))


def progress_key(scheme: Scheme) -> bytes:
    """The key that holds how far ``keyspace accounting enable`` has counted."""
    return PROGRESS + pack((scheme.raw_prefix,))


def check_countable(scheme: Scheme, url: str = "") -> None:
    """Raise :class:`AccountingUnavailable` unless ``scheme`` tells a stored key's scope."""
    if Property.DECODABLE not in scheme.properties:
        where = f" of {url}" if url else ""
        raise AccountingUnavailable(
            f"accounting needs a scheme that tells which scope a stored key belongs to; the keyspace{where} "
            f"has scheme {scheme!r}, which cannot (schemes that can: tuple, asciihex, sublevel, delimited)"
        )


def _parse(key: bytes, raw: bytes | None) -> Record:
    if raw is None:
        return [0, 0, 0, 0, None, None]
    if len(raw) != 48:
        raise UnreadableRecord(
            f"the counter record at key {show_bytes(key)} is unreadable (not 48 bytes): {show_bytes(raw)}"
        )
    got = list(_RECORD.unpack(raw))
    if got[4] == _NONE:
        got[4] = None
    if got[5] == _NONE:
        got[5] = None
    return got


def _encode(record: Record) -> bytes:
    quota_keys, quota_bytes = record[4], record[5]
    return _RECORD.pack(
        record[0],
        record[1],
        record[2],
        record[3],
        _NONE if quota_keys is None else quota_keys,
        _NONE if quota_bytes is None else quota_bytes,
    )


class ScopeFinder:
    """The scope path of stored keys of one scheme, as the scheme decodes it:
    where the scheme's own ranges hold only own keys, keys that fall in the own
    ranges of the scope found last cost two comparisons per range; any other
    one a :meth:`~Scheme.decode`."""

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self.last_ranges: tuple[tuple[bytes, bytes | None], ...] = ()
        """The own ranges of the scope found last."""
        self._path: Path = ()
        self._canonical: dict[Path, Path] = {}
        self._exact = scheme.own_range_is_exact()
        """Whether a key in a scope's own ranges is that scope's (AsciiHex's own
        range of ``t`` holds the keys of ``t/u`` too: every key is decoded)."""

    def __call__(self, key: bytes) -> Path | None:
        for lo, hi in self.last_ranges:
            if lo <= key and (hi is None or key < hi):
                return self._path
        try:
            path = self.scheme.decode(key)[0]
        except KeyspaceError:
            return None
        self._path = path
        self.last_ranges = self.scheme.own_ranges(path) if self._exact else ()
        return path

    def canonical(self, path: Path) -> Path:
        """``path`` as the scheme decodes it (str components of a byte scheme as bytes)."""
        try:
            return self._canonical[path]
        except (KeyError, TypeError):
            pass
        got = self._decoded(path)
        if len(self._canonical) < _MEMO:
            with suppress(TypeError):  # an unhashable path: not kept
                self._canonical[path] = got
        return got

    def _decoded(self, path: Path) -> Path:
        """``path`` as the scheme decodes a key of it, or of a scope below it where
        the scheme keeps keys only at a fixed depth (Delimited): the root and the
        ancestors such a scheme holds no key in have counts too."""
        scheme = self.scheme
        if not path:
            return ()
        deeper = path
        for _ in range(_DEPTHS):
            try:
                return scheme.decode(scheme.encode(deeper, _SAMPLE_KEY))[0][: len(path)]
            except LayoutError as exc:
                refused = exc
                deeper = (*deeper, _SAMPLE_NAME)
        raise refused


def scope_deltas(find: ScopeFinder, changes: Iterable[Change]) -> dict[Path, list[int]]:
    """Own key and byte deltas per scope of ``changes`` (whose ``old`` is read).
    A change whose key lies in the own ranges of the scope of the change before
    costs a few comparisons; any other one a call of ``find``."""
    return _key_deltas(find, ((c.key, c.old, c.new) for c in changes))


def _key_deltas(find: ScopeFinder, items: Iterable[tuple[bytes, Any, bytes | None]]) -> dict[Path, list[int]]:
    """:func:`scope_deltas` of ``(key, old, new)`` triples, one step per key
    (``old`` counts where it is bytes: read and present)."""
    deltas: dict[Path, list[int]] = {}
    ranges: tuple[tuple[bytes, bytes | None], ...] = ()
    entry: list[int] = []
    for key, old, new in items:
        for lo, hi in ranges:
            if lo <= key and (hi is None or key < hi):
                break
        else:
            path = find(key)
            if path is None:
                ranges = ()
                continue
            ranges = find.last_ranges
            got = deltas.get(path)
            entry = deltas[path] = [0, 0] if got is None else got
        if type(old) is bytes:
            entry[0] -= 1
            entry[1] -= len(key) + len(old)
        if new is not None:
            entry[0] += 1
            entry[1] += len(key) + len(new)
    return deltas


def merged_deltas(
    find: ScopeFinder, merged: dict[bytes, bytes | None], old: dict[bytes, Any]
) -> dict[Path, list[int]]:
    """:func:`scope_deltas` of a commit given as ``merged`` (key -> value after,
    ``None``: deleted) and ``old`` (key -> value before, ``None``: absent).
    Where every key lies in one own range of one scope and the old values are
    all absent or all present, C calls alone (sums of lengths, a count) make it."""
    if len(merged) > 1:
        whole = _one_scope_deltas(find, merged, old)
        if whole is not None:
            return whole
    return _key_deltas(find, zip(merged, map(old.get, merged), merged.values(), strict=True))


def summary_deltas(find: ScopeFinder, summary: tuple[bytes, bytes, int, int]) -> dict[Path, list[int]] | None:
    """:func:`scope_deltas` of a commit of puts the seam summed up (``(low, high,
    keys, bytes)``, :attr:`~keyspace._write_hooks.ChangeList.summary`) when its
    lowest and highest key lie in one own range of one scope: one scope lookup
    whatever the number of keys; ``None`` for any other commit."""
    low, high, keys, size = summary
    path = find(low)
    if path is None:
        return None
    if not any(lo <= low and (hi is None or high < hi) for lo, hi in find.last_ranges):
        return None
    return {path: [keys, size]}


def _one_scope_deltas(
    find: ScopeFinder, merged: dict[bytes, bytes | None], old: dict[bytes, Any]
) -> dict[Path, list[int]] | None:
    """:func:`merged_deltas` of a commit all of whose keys lie in one own range
    of the scope of its first key, with no delete and its old values all absent
    or all present; ``None`` for any other commit."""
    first = next(iter(merged))
    path = find(first)
    if path is None:
        return None
    low, high = min(merged), max(merged)
    if not any(lo <= low and (hi is None or high < hi) for lo, hi in find.last_ranges):
        return None
    if None in merged.values():
        return None
    values = cast(list[bytes], list(merged.values()))
    size = sum(map(len, merged)) + sum(map(len, values))
    if not old:
        return {path: [len(values), size]}
    before = list(map(old.get, merged))
    absent = before.count(None)
    if absent == len(before):
        return {path: [len(values), size]}
    if absent or UNKNOWN in before:
        return None
    return {path: [0, size - sum(map(len, merged)) - sum(map(len, cast(list[bytes], before)))]}


def spread(deltas: dict[Path, list[int]]) -> dict[Path, list[int]]:
    """``[own_keys, own_bytes, subtree_keys, subtree_bytes]`` deltas of every scope
    ``deltas`` touches and of every ancestor of one (scopes whose own deltas are
    all zero add nothing)."""
    out: dict[Path, list[int]] = {}
    for path, (dk, db) in deltas.items():
        if not (dk or db):
            continue
        entry = out.get(path)
        if entry is None:
            out[path] = [dk, db, dk, db]
        else:
            entry[0] += dk
            entry[1] += db
            entry[2] += dk
            entry[3] += db
        for depth in range(len(path) - 1, -1, -1):
            above = path[:depth]
            entry = out.get(above)
            if entry is None:
                out[above] = [0, 0, dk, db]
            else:
                entry[2] += dk
                entry[3] += db
    return out


def _exceeded(path: Path, what: str, limit: int, size: int) -> QuotaExceeded:
    return QuotaExceeded(
        f"the scope {_show_path(path)} has a quota of {limit} {what}; this write would make it {size} "
        f"{what}; nothing was written",
        path,
        what,
        limit,
        size,
    )


def _show_path(path: Path) -> str:
    return "/" + "/".join(c.decode("utf-8", "backslashreplace") if type(c) is bytes else str(c) for c in path)


def _uncommitted(tx: HookedTransaction) -> list[Change]:
    """The changes ``tx`` holds so far, each with its value before ``tx`` (read
    from the engine transaction where the seam did not read it yet), reserved
    keys left out: one pass over them."""
    tx.settle()
    store, engine = tx.store, tx.view
    pending, merged, old = tx.pending, tx.merged, tx.old
    out: list[Change] = []
    for key, new in merged.items():
        if key not in pending and not store._reserved_key(key):
            out.append(Change(key, old[key] if key in old else engine.get(key), new))
    for key, value in pending.items():
        if not store._reserved_key(key):
            out.append(Change(key, old[key] if key in old else engine.get(key), value))
    return out


class Accounting(WriteHook):
    """The write hook of ``accounting=True`` (module docstring)."""

    name = NAME
    old_values = "all"
    expand_ranges = True

    def __init__(self, store: Store, scheme: Scheme) -> None:
        check_countable(scheme, store.url)
        self.store = store
        self.scheme = scheme
        self.prefix = counter_prefix(scheme)
        self.find = ScopeFinder(scheme)
        self._guarded = store.capabilities.guarded_reads
        self._keys: dict[Path, bytes] = {}  # counter record keys of paths met
        self._chains: dict[Path, tuple[tuple[Path, bytes, int], ...]] = {}  # see _chain
        self._prefixes: dict[Path, bytes] = {}  # the scheme's prefix of paths asked
        self._hooked: HookedStore | None = None
        self._writing: Sequence[Change] | bytes = ()  # the commit under way: its changes, or its one key
        self.unconfirmed = False
        """Whether the store recorded no accounting when this keyspace opened it
        (set by the opener): another program that does not count may have
        written since, so each commit checks (:meth:`_confirm`) until one of
        them has committed."""
        self._confirming = False

    def params(self) -> dict[str, Any]:
        """The scheme the counts are kept for (the feature record names it)."""
        return scheme_params(self.scheme)

    def attached(self, store: HookedStore) -> None:
        self._hooked = store

    def counts_scope(self, path: Path, prefix: bytes) -> bool:
        """Whether the scope at ``path`` whose own keys start with ``prefix`` is one
        the counters count: a scope of the scheme, not a directory's (whose keys
        lie under an allocated prefix no scope of the scheme decodes to). Cost:
        a dictionary lookup and a comparison."""
        known = self._prefixes.get(path)
        if known is None:
            known = self.scheme.prefix(path)
            if len(self._prefixes) < _MEMO:
                with suppress(TypeError):
                    self._prefixes[path] = known
        return known == prefix

    def counter_key(self, path: Path) -> bytes:
        """The counter record key of the scope at ``path`` (as the scheme decodes it)."""
        return self.prefix + pack(path)

    def commit(
        self,
        view: WriteView,
        changes: Sequence[Change],
        ranges: Sequence[tuple[bytes, bytes | None]],
        latest: ReadView,
    ) -> None:
        summary = getattr(changes, "summary", None)  # the seam's own sums, where it kept them
        deltas = None if summary is None else summary_deltas(self.find, summary)
        if deltas is None:
            merged = getattr(changes, "merged", None)  # the seam's dicts where it has them: no Change objects
            if merged is not None:
                deltas = merged_deltas(self.find, merged, getattr(changes, "old", {}))
            else:
                deltas = scope_deltas(self.find, changes)
        reader = view if self._guarded else latest
        if self.unconfirmed:  # any commit may be the one that records accounting
            self._confirm(view, reader, deltas)
        if not deltas:
            return
        self._writing = changes
        try:
            if len(deltas) == 1:  # one scope: its chain of records, made once per path
                ((path, (dk, db)),) = deltas.items()
                if dk or db:
                    self._bump(view, reader, path, dk, db)
                return
            self.apply(view, reader, spread(deltas))
        finally:
            self._writing = ()

    def commit_one(
        self, view: WriteView, key: bytes, old: Previous, new: bytes | None, latest: ReadView
    ) -> None:
        """:meth:`commit` of a single write: the key's scope found (a few
        comparisons when it is the scope found last), its deltas from the two
        sizes, then the records of its chain (:meth:`_bump`)."""
        if self.unconfirmed:  # the commit that may record accounting: checked as any other
            super().commit_one(view, key, old, new, latest)
            return
        path = self.find(key)
        if path is None:
            return
        dk = db = 0
        if type(old) is bytes:
            dk, db = -1, -len(key) - len(old)
        if new is not None:
            dk += 1
            db += len(key) + len(new)
        if dk or db:
            self._writing = key
            try:
                self._bump(view, view if self._guarded else latest, path, dk, db)
            finally:
                self._writing = ()

    def _bump(self, view: WriteView, reader: ReadView, path: Path, dk: int, db: int) -> None:
        """Add ``dk`` keys and ``db`` bytes to the scope at ``path``: its own and
        subtree counts, and the subtree counts of each ancestor (the chain of
        records, made once per path)."""
        chain = self._chains.get(path)
        if chain is None:
            chain = self._chain(path)
        self._update(view, reader, [(p, k, own * dk, own * db, dk, db) for p, k, own in chain], True)

    def recording(self, view: WriteView, latest: ReadView) -> None:
        if self.unconfirmed:  # accounting recorded by a commit of no counted key: checked all the same
            self._confirm(view, view if self._guarded else latest, {})

    def committed(self) -> None:
        if self._confirming:
            self.unconfirmed = self._confirming = False

    def _confirm(self, view: WriteView, reader: ReadView, deltas: dict[Path, list[int]]) -> None:
        """Inside a commit of a keyspace that found no accounting recorded when it
        opened the store: :class:`AccountingUnavailable` (nothing is written) when
        the keys there before this commit are not the ones the records count
        (a program without accounting wrote them after this keyspace opened the
        store, which held no key then). Cost: a recount of the keyspace's keys,
        in the commits of this keyspace up to the first that commits."""
        counted, _ = recount(view, self.scheme, self.store)
        now = counted.get((), [0, 0, 0, 0])
        key = self.counter_key(())
        record = _parse(key, reader.get(key))
        added_keys = sum(d[0] for d in deltas.values())
        added_bytes = sum(d[1] for d in deltas.values())
        before_keys, before_bytes = now[2] - added_keys, now[3] - added_bytes
        if (before_keys, before_bytes) != (record[2], record[3]):
            raise AccountingUnavailable(
                f"{self.store.url} holds {before_keys - record[2]} keys ({before_bytes - record[3]} bytes) "
                "that no counter counts, written since this keyspace opened it by a program that does not "
                "keep the counts; nothing was written and accounting is not recorded: run 'keyspace "
                "accounting enable URL' to count them once"
            )
        self._confirming = True

    def _chain(self, path: Path) -> tuple[tuple[Path, bytes, int], ...]:
        """``(path, record key, 1)`` then ``(ancestor, record key, 0)`` for each
        ancestor of ``path``, kept for the next commit into it."""
        chain = tuple(
            (path[:depth], self.counter_key(path[:depth]), int(depth == len(path)))
            for depth in range(len(path), -1, -1)
        )
        if len(self._chains) < _MEMO:
            self._chains[path] = chain
        return chain

    def apply(
        self, view: WriteView, reader: ReadView, touched: dict[Path, list[int]], check: bool = True
    ) -> None:
        """Add ``touched`` (see :func:`spread`) to the records, read from ``reader``
        and written to ``view``: one read and one write per scope. With ``check``,
        :class:`QuotaExceeded` for a scope an increase takes past its quota."""
        keys = self._keys
        rows: list[tuple[Path, bytes, int, int, int, int]] = []
        for path, (a, b, c, d) in touched.items():
            if not (a or b or c or d):
                continue
            key = keys.get(path)
            if key is None:
                key = self.counter_key(path)
                if len(keys) < _MEMO:
                    keys[path] = key
            rows.append((path, key, a, b, c, d))
        self._update(view, reader, rows, check)

    def _update(
        self,
        view: WriteView,
        reader: ReadView,
        rows: Iterable[tuple[Path, bytes, int, int, int, int]],
        check: bool,
    ) -> None:
        """Add each row's ``(own_keys, own_bytes, subtree_keys, subtree_bytes)``
        deltas to the record at its key (see :meth:`apply`), by
        :func:`~keyspace._counter_records.bump` (in C where built): reads and
        puts through the views' own ``get`` and ``put``, :class:`QuotaExceeded`
        or :class:`UnreadableRecord` from its answer. The counts hold every
        stored key, the quotas limit the keys reads see: a row that takes its
        scope past a quota is added all the same where the keys reads hide in
        that scope's subtree (:meth:`_hidden_sizes`) bring it back within."""
        rows = rows if isinstance(rows, list) else list(rows)
        while rows:
            answer = bump(reader.get, view.put, view.delete, rows, check)
            if answer is None:
                return
            index = answer[1]
            path, key = rows[index][0], rows[index][1]
            if answer[0] == "unreadable":
                _parse(key, reader.get(key))  # raises UnreadableRecord
                raise AssertionError("unreachable")
            hidden_keys, hidden_bytes = self._hidden_sizes(view, reader, path)
            record, row = _parse(key, reader.get(key)), rows[index]
            for what, quota, added, size in (
                ("keys", record[4], row[4], record[2] + row[4] - hidden_keys),
                ("bytes", record[5], row[5], record[3] + row[5] - hidden_bytes),
            ):
                if quota is not None and added > 0 and size > quota:
                    raise _exceeded(path, what, quota, size)
            bump(reader.get, view.put, view.delete, [row], False)
            rows = rows[index + 1 :]

    def _hidden_sizes(self, view: WriteView, reader: ReadView, path: Path) -> tuple[int, int]:
        """The keys, and their bytes, that the subtree of ``path`` holds in ``view``
        but every read hides (the expiry's keys past their deadline, not swept
        yet), leaving out the keys the commit under way writes. Cost: the hooks'
        :meth:`~keyspace._write_hooks.WriteHook.hidden` scans and a point read
        per key found in the subtree; only for a write a quota would refuse."""
        hooked = self._hooked
        if hooked is None:
            return 0, 0
        writing = self._writing
        written: set[bytes]
        if isinstance(writing, bytes):
            written = {writing}
        elif isinstance(writing, ChangeList):
            written = set(writing.merged)
        else:
            written = {c.key for c in writing}
        keys = size = 0
        depth = len(path)
        for hook in hooked.hooks:
            for stored in hook.hidden(view):
                found = self.find(stored)
                if found is None or found[:depth] != path or stored in written:
                    continue
                value = reader.get(stored)
                if value is not None:
                    keys += 1
                    size += len(stored) + len(value)
        return keys, size

    @staticmethod
    def _store_record(view: WriteView, key: bytes, record: Record) -> None:
        if record[0] or record[1] or record[2] or record[3] or record[4] is not None or record[5] is not None:
            view.put(key, _encode(record))
        else:
            view.delete(key)

    # -- reads -----------------------------------------------------------------------------------

    def record(self, view: ReadView, path: Path) -> Record:
        """The counter record of ``path`` (a path as given to ``ks.scope``) in ``view``."""
        key = self.counter_key(self.find.canonical(path))
        return _parse(key, view.get(key))

    def stats(self, view: ReadView, path: Path) -> ScopeStats:
        """The counts of the scope at ``path`` in ``view``, with the writes a
        transaction ``view`` holds uncommitted (one pass over them)."""
        record = self.record(view, path)
        changes = _uncommitted(view) if isinstance(view, HookedTransaction) else None
        if changes:
            canonical = self.find.canonical(path)
            depth = len(canonical)
            for scope, (dk, db) in scope_deltas(ScopeFinder(self.scheme), changes).items():
                if scope == canonical:
                    record[0] += dk
                    record[1] += db
                if scope[:depth] == canonical:
                    record[2] += dk
                    record[3] += db
        return ScopeStats(record[0], record[1], record[2], record[3])

    def records(self, view: ReadView) -> Iterator[tuple[Path, Record]]:
        """Every counter record in ``view``: ``(path, record)`` in path order."""
        prefix = self.prefix
        cut = len(prefix)
        for key, raw in view.scan(prefix, prefix_end(prefix)):
            try:
                path = unpack(key, cut)
            except KeyspaceError:
                raise UnreadableRecord(f"the counter record key {show_bytes(key)} is unreadable") from None
            yield path, _parse(key, raw)

    def differences(self, view: ReadView) -> list[tuple[Path, tuple[int, ...], tuple[int, ...]]]:
        """The scopes whose counter record in ``view`` differs from a full recount
        of ``view``: ``(path, recorded, counted)``, each ``(keys, bytes,
        subtree_keys, subtree_bytes)``, in path order; empty when the counts are
        exact. ``view``: the engine's store (:attr:`store`) or a state of it,
        whose reads hide no stored key (a ttl keyspace's reads hide its expired
        keys, which the counts hold until a sweep). Cost: one scan of the
        keyspace's keys and of its records."""
        counted, _ = recount(view, self.scheme, self.store)
        recorded = {path: tuple(rec[:4]) for path, rec in self.records(view)}
        zero = (0, 0, 0, 0)
        out: list[tuple[Path, tuple[int, ...], tuple[int, ...]]] = []
        for path in sorted(set(counted) | set(recorded), key=pack):
            have = recorded.get(path, zero)
            want = tuple(counted.get(path, zero))
            if have != want:
                out.append((path, have, want))
        return out

    def set_quota(self, view: WriteView, path: Path, keys: int | None, size: int | None) -> None:
        """Set (``None``: remove) the quotas of the scope at ``path`` inside ``view``."""
        for name, value in (("keys", keys), ("bytes", size)):
            if value is not None and (type(value) is not int or not 0 <= value < 1 << 63):
                raise InvalidArgument(
                    f"a quota of {name} must be an int from 0 to 2**63 - 1, or None; not {value!r}"
                )
        if self.unconfirmed:  # this write may be the one that records accounting
            self._confirm(view, view, {})
        key = self.counter_key(self.find.canonical(path))
        record = _parse(key, view.get(key))
        record[4], record[5] = keys, size
        self._store_record(view, key, record)


def scheme_params(scheme: Scheme) -> dict[str, Any]:
    """The parameters accounting records: the scheme that counts (its name and
    parameters, as its scheme record says them)."""
    return {"scheme": scheme.name, "params": json.loads(json.dumps(dict(scheme.params())))}


def check_scheme(params: dict[str, Any], scheme: Scheme, url: str = "") -> None:
    """:class:`SchemeMismatch` when the recorded accounting ``params`` name another
    scheme than ``scheme`` (a record without one, written before they did, passes)."""
    if "scheme" not in params:
        return
    mine = scheme_params(scheme)
    if {"scheme": params.get("scheme"), "params": params.get("params")} != mine:
        raise SchemeMismatch(
            f"{url} keeps accounting for the scheme {params.get('scheme')!r} {params.get('params')!r}; "
            f"{scheme!r} would count its keys in that scheme's counter records under other scopes: "
            "open it with the scheme that counted it"
        )


def write_feature_record(view: WriteView, scheme: Scheme) -> None:
    """Record accounting as on for the keyspace of ``scheme`` (kept with the
    other features the record lists)."""
    record_features(view, scheme, {NAME: scheme_params(scheme)}, replace=False)


def counted_ranges(scheme: Scheme, store: Store) -> list[tuple[bytes, bytes | None]]:
    """The ranges whose keys a keyspace of ``scheme`` counts: its footprint without
    the reserved ranges."""
    reserved = reserved_ranges(scheme, store.capabilities.reserved)
    out: list[tuple[bytes, bytes | None]] = []
    for lo, hi in scheme.footprint():
        cur: bytes | None = lo
        for r_lo, r_hi in reserved:
            if cur is None:
                break
            if hi is not None and r_lo >= hi:
                break
            if r_hi <= cur:
                continue
            if r_lo > cur:
                out.append((cur, r_lo))
            cur = r_hi
        if cur is not None and (hi is None or cur < hi):
            out.append((cur, hi))
    return out


def recount(
    view: ReadView,
    scheme: Scheme,
    store: Store,
    *,
    start: bytes | None = None,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[Path, list[int]], bytes | None]:
    """Count the keys of ``view`` by scope: ``(touched, last)`` where ``touched``
    holds ``[own_keys, own_bytes, subtree_keys, subtree_bytes]`` per scope and
    ancestor (:func:`spread`) and ``last`` is the last stored key counted when
    ``limit`` keys were counted (``None``: the end was reached). ``start``: count
    keys after this one only. One scan; one decode per scope met."""
    find = ScopeFinder(scheme)
    own: dict[Path, list[int]] = {}
    counted = 0
    last: bytes | None = None
    for lo, hi in counted_ranges(scheme, store):
        if start is not None:
            if hi is not None and hi <= start:
                continue
            if lo <= start:
                lo = start + b"\x00"
        for key, value in view.scan(lo, hi):
            path = find(key)
            if path is not None:
                got = own.get(path)
                if got is None:
                    own[path] = [1, len(key) + len(value)]
                else:
                    got[0] += 1
                    got[1] += len(key) + len(value)
            counted += 1
            if progress is not None and counted % 4096 == 0:
                progress(4096)
            if limit is not None and counted >= limit:
                last = key
                break
        if last is not None:
            break
    if progress is not None and counted % 4096:
        progress(counted % 4096)
    return spread(own), last


def enabled(store: ReadView, scheme: Scheme, url: str = "") -> bool:
    """Whether the store records accounting as on for the keyspace of ``scheme``."""
    return NAME in read_features(store, scheme, url)


def refuse_written_without(view: ReadView, hook: Accounting | None, scheme: Scheme, url: str = "") -> None:
    """:class:`AccountingUnavailable` where ``hook`` (a keyspace's accounting, which
    found none recorded when it opened the store) would record accounting on a
    store that ``view`` shows a keyspace of ``scheme`` wrote without it: its
    record is there and accounting is not. That program may write uncounted
    keys still, even where its writes left none. Asked at open and inside the
    first write. Cost: a point read or two, while unconfirmed."""
    record = scheme.metadata_key
    if hook is None or not hook.unconfirmed or record is None or view.get(record) is None:
        return
    if enabled(view, scheme, url):
        return
    raise AccountingUnavailable(
        f"{url} holds the record of a keyspace of {scheme!r} that keeps no counts: keys no counter "
        "counts may be there, and that program may write more; nothing was written and accounting is not "
        "recorded: accounting=True is for a new keyspace, so run 'keyspace accounting enable URL' to turn "
        "it on, then open the store again in every program"
    )


def enable(
    store: Store,
    scheme: Scheme,
    *,
    chunk: int = 20_000,
    progress: Callable[[int], None] | None = None,
    max_chunks: int | None = None,
) -> bool:
    """Count the keys of the keyspace of ``scheme`` in ``store`` (the engine's
    store, not a hooked one) once and turn accounting on: ``chunk`` keys per
    transaction, each adding its counts to the counter records and moving the
    place kept at :func:`progress_key` in the same atomic write, so an
    interrupted count resumes where it stopped; the last one records accounting
    as on (a no-op when it is on already). Other writers must stay away until
    it is done: their writes to keys already counted would not be counted.
    ``max_chunks``: stop after that many transactions. True when accounting is
    on at the end. Cost: one scan of the keyspace's keys, one record write per
    scope (and ancestor) per chunk."""
    check_countable(scheme, store.url)
    if enabled(store, scheme, store.url):
        return True
    limit = store.capabilities.max_batch_ops
    if limit is not None:
        chunk = max(1, min(chunk, limit // 8))
    hook = Accounting(store, scheme)
    place = progress_key(scheme)
    done = 0
    while max_chunks is None or done < max_chunks:
        with store.transaction() as tx:
            raw = tx.get(place)
            start: bytes | None = None
            if raw is None:  # a count from the beginning: no counter of an earlier count stays
                tx.delete_range(hook.prefix, prefix_end(hook.prefix))
            else:
                start = _place(place, raw)
            touched, last = recount(tx, scheme, store, start=start, limit=chunk, progress=progress)
            hook.apply(tx, tx, touched, check=False)
            if last is None:
                tx.delete(place)
                write_feature_record(tx, scheme)
            else:
                tx.put(place, pack((last,)))
        done += 1
        if last is None:
            return True
    return False


def _place(key: bytes, raw: bytes) -> bytes | None:
    try:
        got = unpack(raw)
    except KeyspaceError:
        got = (0,)
    if got == ():
        return None
    if len(got) != 1 or type(got[0]) is not bytes:
        raise UnreadableRecord(
            f"the counting place at key {show_bytes(key)} is unreadable: {show_bytes(raw)}"
        )
    return got[0]


def _factory(store: Store, scheme: Scheme, params: dict[str, Any]) -> WriteHook | None:
    recorded = read_features(store, scheme, store.url).get(NAME)  # what was asked does not matter here
    if recorded is not None:
        check_scheme(recorded, scheme, store.url)
    hook = Accounting(store, scheme)
    hook.unconfirmed = recorded is None
    if hook.unconfirmed and any(
        next(keys_in(store, lo, hi, limit=1), None) is not None for lo, hi in counted_ranges(scheme, store)
    ):
        raise AccountingUnavailable(
            f"{store.url} holds keys that no counter counts yet; accounting=True is for a new keyspace: "
            "run 'keyspace accounting enable URL' to count them once and keep the counts from then on"
        )
    refuse_written_without(store, hook, scheme, store.url)
    return hook


register_feature(NAME, _factory)


def accounting_of(store: Any) -> Accounting | None:
    """The accounting hook of a keyspace's store (``ks.store``), or ``None`` when
    accounting is off. Cost: an attribute lookup and, when hooked, a short loop."""
    hook = getattr(store, "hook", None)
    if hook is None:
        return None
    got = hook(NAME)
    return got if isinstance(got, Accounting) else None
