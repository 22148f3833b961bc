"""Write hooks: features that add their own records to every committed write.

A *feature* (the change log of ``changes=True``; per-scope counters) is a
:class:`WriteHook` that, inside the one atomic write of every committed change
of a keyspace, sees what that write changes and adds writes of its own to the
same atomic batch. Every write of a keyspace goes through its store object
(``ks.store``): a keyspace with a feature on gets a :class:`HookedStore` there,
a :class:`~keyspace.stores._base.Store` over the engine's store whose writes --
a point put or delete, a batch, a range delete, a bulk put, a transaction's
commit, whoever makes them (scopes, collections, directories, the catalog's
first writes, the asyncio face) -- are one transaction of the engine's store,
in which the hooks run just before it commits.

How a feature plugs in:

1. Subclass :class:`WriteHook`: ``name`` (its key in the feature record),
   ``old_values`` (``"none"``, ``"deletes"`` or ``"all"``: which changed keys
   the seam reads before their first write of the commit, one point read each,
   to tell the hook their previous value), ``expand_ranges`` (whether range
   deletes reach the hook key by key: a keys scan of the range before it is
   deleted, costing one step per key; else as ranges), and :meth:`WriteHook.commit`.
2. Register a factory with :func:`register_feature`: ``factory(store, scheme,
   params)`` gives the hook for one keyspace over ``store`` (the engine's
   store), or ``None`` where the engine does the job natively (no wrapping then).
3. ``keyspace.open(url, NAME=True)`` (or a dict of parameters) turns it on.
   The feature record (:func:`feature_record_key`) is written inside the atomic
   batch of the first commit that changes a key; every later opener reads it
   (one point read at open) and runs the hook too, whatever it asks for.

What :meth:`WriteHook.commit` receives, once per commit that changes at least
one key outside the reserved ranges: ``view``, the engine's transaction (read
it, add puts and deletes to it: they commit with the data); ``changes``, one
:class:`Change` per stored key changed, in the order first written (several
writes of one key in one commit are one change: the value before the commit,
the value after it); ``ranges``, the range deletes not expanded (empty when any
hook asks for ``expand_ranges``); ``latest``, the view to read shared counters
from (the transaction itself on engines whose write transactions exclude each
other, LMDB and SQLite; the committed store on the one-process engines, whose
commits through one store object the seam runs one at a time under a lock).
Keys in the keyspace's reserved ranges (its records, the hooks' own keys) are
never reported. A hook that raises discards the whole commit.

A feature may also hide keys from reads (expiring keys): its
:meth:`WriteHook.reads` gives the one view every read of the hooked store, of
its snapshots and of its transactions passes; the hooked store then offers no
fast read path and none of the engine's own read faces. A writer tells a hook a
fact about one write of a transaction (a put's deadline) with
:meth:`HookedTransaction.note`; the hook finds it in the commit's
:attr:`ChangeList.notes`, dropped when the key is written again.

Cost with a feature on: every write outside a transaction becomes one
transaction of the engine (on LMDB and SQLite a point put already is one); per
changed key, one dict entry (on LMDB, for a transaction of puts alone, three
list slots of the put route instead), and the point read ``old_values`` asks
for; per range delete, the keys scan ``expand_ranges`` asks for; then what the
hooks write. A keyspace with no feature on has the engine's store itself: nothing.
"""

from __future__ import annotations

import json
import sys
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from types import TracebackType
from typing import Any, ClassVar, Final, Literal, cast

from ._metadata import feature_record_key, read_features, refuse_features_off, reserved_ranges
from ._put_route import PutRoute
from ._retry import run_again, run_atomically
from .errors import (
    InvalidArgument,
    KeyspaceError,
    StoreClosed,
    TransactionConflict,
    UnreadableRecord,
)
from .schemes._base import Scheme
from .stores._base import Capabilities, DelegatedReads, Op, ReadView, Store, WriteView, keys_in
from .stores._events import StoreWatch
from .stores._translated import ended_call

__all__ = [
    "UNKNOWN",
    "Change",
    "ChangeList",
    "HookedStore",
    "Previous",
    "WriteHook",
    "hook_store",
    "native_changes",
    "record_features",
    "register_feature",
]


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()
"""The previous value of a change the seam did not read (no hook asked for it)."""

Previous = bytes | _Unknown | None
"""A changed key's value before the commit: ``None`` absent, :data:`UNKNOWN` not read."""


@dataclass(frozen=True, slots=True)
class Change:
    """One stored key changed by a commit: ``old`` its value before the commit
    (``None``: absent; :data:`UNKNOWN`: not read), ``new`` after it (``None``:
    deleted)."""

    key: bytes
    old: bytes | _Unknown | None
    new: bytes | None


OldValues = Literal["none", "deletes", "all"]
_OLD_RANK: dict[str, int] = {"none": 0, "deletes": 1, "all": 2}


class WriteHook(ABC):
    """A feature that adds writes to every commit (module docstring)."""

    name: str = ""
    old_values: OldValues = "none"
    expand_ranges: bool = True
    capabilities: ClassVar[dict[str, Any]] = {}
    """Capability fields the hooked store reports otherwise (``{"watch": "log"}``)."""

    def params(self) -> dict[str, Any]:
        """The parameters recorded for this feature (JSON values)."""
        return {}

    @abstractmethod
    def commit(
        self,
        view: WriteView,
        changes: Sequence[Change],
        ranges: Sequence[tuple[bytes, bytes | None]],
        latest: ReadView,
    ) -> None:
        """Add this feature's writes for ``changes`` to ``view`` (module docstring)."""

    def commit_one(
        self, view: WriteView, key: bytes, old: Previous, new: bytes | None, latest: ReadView
    ) -> None:
        """:meth:`commit` of a commit that changes one key, ``key`` (outside the
        reserved ranges), from ``old`` to ``new`` (as a :class:`Change`'s): a
        single put or delete outside a transaction. This default hands
        :meth:`commit` a :class:`ChangeList` of it; a hook overrides it to skip
        making one."""
        self.commit(view, ChangeList({key: new}, {} if old is UNKNOWN else {key: old}), (), latest)  # type: ignore[dict-item]

    cas_key: bytes | None = None
    """A key every commit the hook sees changes (the change log's counter), or
    ``None``: where every hook names one, single writes outside a transaction
    may commit as one checked engine batch (:meth:`HookedStore._checked`), the
    hooks reading the committed store and writing into the batch."""

    def next_commit(self, latest: ReadView) -> int | None:
        """The number the commit being made will get, where the feature numbers
        commits (the change log), read from ``latest`` inside the commit; ``None``
        (this default) where it does not. Keys appended with
        :meth:`HookedTransaction.defer` are made from it."""
        return None

    def recording(self, view: WriteView, latest: ReadView) -> None:  # noqa: B027  # optional
        """The feature record is written by a commit that changes no key the hooks
        see (the records of a first write, a feed's cursor): check, inside it,
        what :meth:`commit` would check before the feature is recorded (raise to
        discard the commit). Default: nothing."""

    def committed(self) -> None:  # noqa: B027  # optional
        """Called after a commit the hook saw has committed (wake waiters). Default: nothing."""

    def watch(
        self, ranges: Sequence[tuple[bytes, bytes | None]], start_revision: int | None
    ) -> StoreWatch | None:
        """A watch this feature serves (the change log), or ``None``."""
        return None

    def close(self) -> None:  # noqa: B027  # optional
        """The store closed. Default: nothing."""

    def attached(self, store: HookedStore) -> None:  # noqa: B027  # optional
        """``store`` is the hooked store this hook runs in (a feature that writes
        through it after a commit: the expiry's sweep). Default: nothing."""

    def reads(self, view: ReadView, tx: HookedTransaction | None) -> ReadView | None:
        """A view of ``view`` (the engine's store, one of its snapshots, or the
        engine transaction under ``tx``, a :class:`HookedTransaction`) that every
        read of the keyspace passes, where the feature hides keys (the expiry's
        deadlines); ``None`` (this default) where it hides nothing. A hooked store
        with such a feature offers no fast read path and none of the engine's
        own read faces (checked or watched reads, a native asyncio store), so no
        read skips the view."""
        return None

    def hidden(self, view: ReadView) -> Iterable[bytes]:
        """The stored keys of ``view`` that every read hides while they are still
        stored (the expiry's keys past their deadline, not swept yet): what a
        quota, which limits the keys reads see, leaves out. None by default."""
        return ()


def native_changes(caps: Capabilities) -> bool:
    """Whether a store of ``caps`` numbers its commits for every process and
    watches them itself (etcd): its revisions stand for a change log, so
    ``changes=True`` keeps none there."""
    return caps.watch == "native" and caps.multi_process


Factory = Callable[[Store, Scheme, dict[str, Any]], WriteHook | None]
_FEATURES: dict[str, Factory] = {}


def register_feature(name: str, factory: Factory) -> None:
    """Make ``keyspace.open(url, NAME=...)`` turn on the feature ``name``."""
    _FEATURES[name] = factory


def known_features() -> tuple[str, ...]:
    """The names :func:`register_feature` took (the open options they add)."""
    return tuple(_FEATURES)


def record_features(
    view: WriteView, scheme: Scheme, record: dict[str, Any], *, replace: bool = True, url: str = ""
) -> None:
    """Add ``record`` (``{name: params}``) to the feature record of the keyspace of
    ``scheme`` in ``view``, the features recorded already kept; a feature in both
    takes ``record``'s parameters, or with ``replace=False`` keeps its own.
    Written only where that changes it. Cost: one point read, at most one put."""
    have = read_features(view, scheme, url)
    wanted = {**have, **record} if replace else {**record, **have}
    if wanted != have:
        view.put(
            feature_record_key(scheme), json.dumps(wanted, sort_keys=True, separators=(",", ":")).encode()
        )


def feature_options(options: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Take the feature options (``changes=True``, ``changes={...}``) out of an
    open's ``options``: ``{name: params}``, ``None`` params for ``True`` (the
    recorded parameters, else the defaults). ``False``/``None`` asks nothing.
    :class:`InvalidArgument` for another value."""
    asked: dict[str, dict[str, Any] | None] = {}
    for name in known_features():
        if name not in options:
            continue
        value = options.pop(name)
        if value is None or value is False:
            continue
        if value is True:
            asked[name] = None
        elif isinstance(value, dict):
            asked[name] = dict(value)
        else:
            raise InvalidArgument(f"{name} must be True, False or a dict of its parameters, not {value!r}")
    return asked


def hook_store(
    store: Store, scheme: Scheme, asked: dict[str, dict[str, Any] | None], recorded: dict[str, dict[str, Any]]
) -> Store:
    """``store`` itself where no feature is on, else a :class:`HookedStore` over it
    running the hooks of the features ``asked`` and ``recorded`` (asked parameters
    win; ``None``: the recorded ones). A ``store`` that runs hooks already (the
    ``store`` of another keyspace, given to ``keyspace.attach``) is hooked from
    the engine's store below it, so that no hook runs twice for one commit."""
    while isinstance(store, HookedStore):
        store = store.inner
    wanted: dict[str, dict[str, Any]] = dict(recorded)
    for name, params in asked.items():
        if params is not None or name not in wanted:
            wanted[name] = params or {}
    hooks: list[WriteHook] = []
    for name, params in wanted.items():
        factory = _FEATURES.get(name)
        if factory is None:
            raise UnreadableRecord(
                f"{store.url} records the feature {name!r}, which this version of keyspace does not know"
            )
        hook = factory(store, scheme, params)
        if hook is not None:
            hooks.append(hook)
    record = {h.name: h.params() for h in hooks}
    if not hooks:
        return store
    return HookedStore(
        store, scheme, hooks, record if record != {k: recorded.get(k) for k in record} else None
    )


_LOCKS: weakref.WeakKeyDictionary[Store, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def _commit_lock(store: Store) -> threading.Lock:
    with _LOCKS_LOCK:
        lock = _LOCKS.get(store)
        if lock is None:
            lock = _LOCKS[store] = threading.Lock()
        return lock


class HookedStore(DelegatedReads, Store):
    """The engine's ``store`` with ``hooks`` run inside each commit (module
    docstring). Reads are the engine's (its fast paths included); unknown
    attributes are the engine store's. ``record``: the feature record to write
    inside the next commit (``None``: recorded already)."""

    # the engine's checked writes commit without the hooks: not offered (a
    # directory's writes then check its node in a transaction of this store)
    write_if = None
    put_if = None
    # nor its own asyncio client (etcd's) or views of it inside another store's
    # transactions (LMDB's join), which write without them: keyspace.aio then
    # runs this store's calls in worker threads
    asynchronous = None
    join = None

    def __init__(
        self, store: Store, scheme: Scheme, hooks: list[WriteHook], record: dict[str, Any] | None
    ) -> None:
        self.inner = store
        self.url = store.url
        self.scheme = scheme
        self.hooks = tuple(hooks)
        caps = store.capabilities
        extra: dict[str, Any] = {}
        for hook in hooks:
            extra.update(hook.capabilities)
        self.capabilities: Capabilities = replace(caps, **extra) if extra else caps
        self._serialized = caps.serialized_transactions
        self._lock = None if self._serialized else _commit_lock(store)
        self._old = max((_OLD_RANK[h.old_values] for h in hooks), default=0)
        self._expand = any(h.expand_ranges for h in hooks)
        self._reserved = reserved_ranges(scheme, caps.reserved)
        self._reserved_low = min((lo for lo, _ in self._reserved), default=b"\xff" * 64)
        self._record_key = feature_record_key(scheme)
        self._record = record
        self._features_held: bytes | None = None
        """The feature record as it was when this keyspace last found that it
        runs every feature recorded (:meth:`_features_hold`)."""
        self._txn_ended = ended_call(f"this transaction of {self.url} has ended")
        """What the put of each of its ended transactions is (made once)."""
        # single writes as one checked engine batch, where every hook names the key
        # each commit changes and the engine offers such a batch (LMDB's write_if)
        cas = [h.cas_key for h in hooks]
        self._cas_key = cas[0] if cas and all(k is not None for k in cas) else None
        checked = getattr(type(store), "write_if", None)
        self._checked_write: Callable[..., bool] | None = (
            store.write_if if self._cas_key is not None and callable(checked) else None  # type: ignore[attr-defined]
        )
        self._single = _Single(self) if self._serialized else None
        """Single writes outside a transaction, on an engine whose write
        transactions exclude each other: one engine transaction with the hooks
        run in it (:class:`_Single`), which :meth:`put` and :meth:`delete` are,
        bound here, on this store object."""
        if self._single is not None:
            self.put = self._single.put  # type: ignore[method-assign]
            self.delete = self._single.delete  # type: ignore[method-assign]
        filters = [h for h in hooks if type(h).reads is not WriteHook.reads]
        self._filter = filters[0].reads if filters else None
        """The one read rule of a feature that hides keys (:meth:`WriteHook.reads`)."""
        self._read_view: ReadView = store
        if self._filter is not None:
            self._read_view = self._filter(store, None) or store
            # the engine's own read faces would answer without the rule
            self.watched_reads = None
            self.checked_reads = None
        else:
            self.get = store.get  # type: ignore[method-assign]  # the engine's read itself
        for hook in hooks:
            hook.attached(self)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"HookedStore({self.inner!r}, {[h.name for h in self.hooks]})"

    def hook(self, name: str) -> WriteHook | None:
        """The hook of the feature ``name``, or ``None``."""
        return next((h for h in self.hooks if h.name == name), None)

    @property
    def unrecorded(self) -> bool:
        """Whether the feature record is still to be written (it comes with the
        next commit that writes anything, or :meth:`HookedTransaction.touch`)."""
        return self._record is not None

    # -- reads: the engine's (DelegatedReads: scan, read_pages, count, seeker) ----

    def _reads(self) -> ReadView:
        return self._read_view

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self.inner.translate(exc, key)

    def get(self, key: bytes) -> bytes | None:
        return self._read_view.get(key)

    def snapshot(self) -> AbstractContextManager[ReadView]:
        if self._filter is None:
            return self.inner.snapshot()
        return _filtered_snapshot(self.inner.snapshot(), self._filter)

    def key_refusal(self, key: bytes) -> KeyspaceError:
        return self.inner.key_refusal(key)

    def check_batch(self, ops: Sequence[Op]) -> None:
        self.inner.check_batch(ops)

    # -- writes: each one transaction with the hooks ------------------------------------------
    # The hooks read (old values, counters) in the write's transaction, so it may
    # lose a race (TransactionConflict, nothing written: LMDB growing a small map
    # while another process commits, etcd's guarded commit). The transaction is
    # this store's own: run_atomically runs it again.

    def transaction(self) -> HookedTransaction:
        return HookedTransaction(self)

    def put(self, key: bytes, value: bytes) -> None:
        if self._checked_write is not None and self._checked(((key, value),)):
            return
        run_atomically(self.transaction, lambda tx: tx.put(key, value), f"a put to {self.url}")

    def delete(self, key: bytes) -> None:
        if self._checked_write is not None and self._checked(((key, None),)):
            return
        run_atomically(self.transaction, lambda tx: tx.delete(key), f"a delete in {self.url}")

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        run_atomically(self.transaction, lambda tx: tx.delete_range(start, stop), f"a delete in {self.url}")

    def write(self, ops: Iterable[Op]) -> None:
        ops = ops if isinstance(ops, list | tuple) else list(ops)  # read again by a second run
        if self._checked_write is not None and self._checked(ops):
            return
        run_atomically(self.transaction, lambda tx: tx.write(ops), f"a write to {self.url}")

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        """One transaction of all the pairs (atomic here, unlike the engine's bulk load)."""
        items = items if isinstance(items, list | tuple) else list(items)
        count: int = run_atomically(self.transaction, lambda tx: tx.put_many(items), f"a write to {self.url}")
        return count

    def watch(
        self, ranges: Sequence[tuple[bytes, bytes | None]], *, start_revision: int | None = None
    ) -> StoreWatch:
        for hook in self.hooks:
            got = hook.watch(ranges, start_revision)
            if got is not None:
                return got
        return self.inner.watch(ranges, start_revision=start_revision)

    def close(self) -> None:
        for hook in self.hooks:
            hook.close()
        self.inner.close()

    def _checked(self, ops: Sequence[Op]) -> bool:
        """``ops`` and the hooks' writes as one checked batch of the engine
        (``write_if``): the hooks read the committed store, and the batch commits
        only if the key every commit changes (:attr:`WriteHook.cas_key`) still
        holds what it held before those reads, so no commit came between. Run
        again when another commit came; False (nothing written) when that keeps
        happening, or while the feature record is still to be written: the
        caller then takes a transaction. The feature record the hooks' check
        read (:meth:`_features_hold`) is checked in the batch too. Cost: the
        engine's batch (on LMDB, its own write path rather than a transaction
        object) and two point reads."""
        if self._record is not None:
            return False
        write_if, key, inner, record_key = self._checked_write, self._cas_key, self.inner, self._record_key
        assert write_if is not None and key is not None
        for _ in range(_CHECKED_ATTEMPTS):
            expected, features = inner.get(key), inner.get(record_key)
            batch = _Batch(self, ops)
            batch.view.known[key] = expected  # what the hooks read of it: the value checked
            batch.view.known[record_key] = features  # and of the feature record, checked too
            ran = self._run_hooks(batch, True)  # type: ignore[arg-type]  # a transaction's fields
            if write_if(key, expected, list(batch.view.ops.items()), ((record_key, features),)):
                if ran:
                    for hook in self.hooks:
                        hook.committed()
                return True
        return False

    # -- the seam --------------------------------------------------------------------------

    def _reserved_key(self, key: bytes) -> bool:
        return any(lo <= key < hi for lo, hi in self._reserved)

    def _run_hooks(self, tx: HookedTransaction, wrote: bool) -> bool:
        """Inside ``tx``'s engine transaction, its puts flushed, before it commits:
        the feature record (once) and the hooks' writes. True when any hook ran.
        Reserved keys and deletes of keys that were not there are left out."""
        view = tx.view
        record = self._record
        if record is not None and wrote:  # any write, records too (a feed's cursor made first)
            self._write_record(view, record)
        if wrote:
            self._features_hold(view)
        latest: ReadView = view if self._serialized else self.inner
        route = getattr(tx, "route", None)  # a _Batch has none
        if route is not None:
            if route.exact and route.puts:  # puts alone, all through the route
                # settled if a hook reads the dicts; none settled yet: the columns hold every put
                columns = route.columns if not tx.merged else None
                changes = ChangeList(
                    tx.merged, tx.old, tx.notes, route.summary(), route.settle, columns, deletes=False
                )
                for hook in self.hooks:
                    hook.commit(view, changes, (), latest)
                return True
            route.settle()
        merged, old = tx.merged, tx.old
        for key in tx.reserved_keys:
            merged.pop(key, None)
        if tx.deleted and self._old:
            for key in set(tx.deleted):
                if merged.get(key, b"") is None and old.get(key, UNKNOWN) is None:
                    del merged[key]
        ranges = tx.ranges
        if not merged and not ranges:
            if record is not None and wrote:  # the record comes with a commit no hook sees
                for hook in self.hooks:
                    hook.recording(view, latest)
            return False
        notes = getattr(tx, "notes", None)  # a _Batch has none
        changes = ChangeList(merged, old, notes, deletes=bool(tx.deleted))
        for hook in self.hooks:
            hook.commit(view, changes, ranges, latest)
        return True

    def _features_hold(self, view: ReadView) -> None:
        """Inside a commit that writes: :func:`~keyspace._metadata.refuse_features_off`
        (a feature another keyspace turned on after this one opened the store,
        which this one does not run, refuses the commit). Cost: one point read;
        the record is parsed only when it changed since it last held."""
        raw = view.get(self._record_key)
        if raw is None or raw == self._features_held:
            return
        refuse_features_off(view, self, self.scheme, self.url)
        self._features_held = raw

    def _write_record(self, view: WriteView, record: dict[str, Any]) -> None:
        """The feature record, where it does not say ``record`` yet."""
        record_features(view, self.scheme, record, url=self.url)


class ChangeList(Sequence[Change]):
    """The changes of one commit (:meth:`WriteHook.commit`): a sequence of
    :class:`Change`, made on first use; a hook that needs speed reads
    :attr:`merged` (stored key -> value after the commit, ``None``: deleted, in
    the order first written) and :attr:`old` (key -> value before the commit,
    where read) instead, or :attr:`summary` and :meth:`columns` where the seam
    kept them. ``settle``: what fills the two dicts before their first read (the
    put route's :meth:`~keyspace._put_route.PythonPutRoute.settle`), where they
    are not full yet; ``columns``: what gives :meth:`columns`'s lists."""

    def __init__(
        self,
        merged: dict[bytes, bytes | None],
        old: dict[bytes, bytes | None],
        notes: dict[bytes, dict[str, Any]] | None = None,
        summary: tuple[bytes, bytes, int, int] | None = None,
        settle: Callable[[], None] | None = None,
        columns: Callable[[], tuple[list[bytes], list[bytes]]] | None = None,
        deletes: bool = True,
    ) -> None:
        self._merged = merged
        self._old = old
        self._settle = settle
        self._columns = columns
        self.notes: dict[bytes, dict[str, Any]] = notes or {}
        """What writers told the hooks of a key's last write (:meth:`HookedTransaction.note`)."""
        self.deletes = deletes
        """Whether the commit may hold a delete (``False``: every change is a put,
        so no value of :attr:`merged` is ``None``)."""
        self.summary = summary
        """``(low, high, keys, bytes)`` where every change of the commit was a put
        through the transaction's put route and the route read the values before
        (:attr:`~keyspace._put_route.PythonPutRoute.knows_old`): its lowest and
        highest key and the net change of keys and stored bytes (key + value);
        else ``None``."""
        self._made: list[Change] | None = None

    def columns(self) -> tuple[list[bytes], list[bytes]] | None:
        """``(keys, values)`` of the puts in the order made, where every change of
        the commit is a put through the transaction's put route (no dict of them
        is made): a key put more than once in the commit is there each time, its
        last value the one committed. ``None`` for any other commit, or once
        :attr:`merged` was read."""
        columns = self._columns
        return None if columns is None or self._settle is None else columns()

    @property
    def merged(self) -> dict[bytes, bytes | None]:
        """Stored key -> value after the commit (``None``: deleted), first written first."""
        settle = self._settle
        if settle is not None:
            self._settle = None
            settle()
        return self._merged

    @property
    def old(self) -> dict[bytes, bytes | None]:
        """Stored key -> value before the commit, where read (``None``: absent)."""
        self.merged  # noqa: B018  # settled first
        return self._old

    def _list(self) -> list[Change]:
        made = self._made
        if made is None:
            old = self.old
            made = self._made = [Change(k, old.get(k, UNKNOWN), v) for k, v in self.merged.items()]
        return made

    def __len__(self) -> int:
        return len(self.merged)

    def __getitem__(self, index: Any) -> Any:
        return self._list()[index]

    def __iter__(self) -> Iterator[Change]:
        return iter(self._list())


class HookedTransaction(DelegatedReads, WriteView):
    """A transaction of a :class:`HookedStore` over the engine's transaction.

    Where the engine's transaction offers ``fast_replace`` (LMDB: it writes at
    once, one engine call a put) and no feature hides keys, every put goes to
    the engine at once through a :class:`~keyspace._put_route.PutRoute` (in C),
    which keeps the puts in order (:meth:`ChangeList.columns`); where a hook
    reads the value before every changed key, it puts by ``fast_replace`` and
    keeps each key's value before the transaction (its replace's answer: no
    read more than the put's own) and, while every change goes through it, the
    summary the hooks may read (:attr:`ChangeList.summary`); else by the plain
    put, and a delete later in the transaction of a key it wrote over reads the
    value before from the committed store (:meth:`_before`). Elsewhere puts wait
    in :attr:`pending` (a dict store, in C) and reach the engine transaction in one ``put_many`` at the
    commit, or before a read that needs them (a scan, a count, a seek, a range
    delete: one flush); a point read looks in :attr:`pending` first. Deletes go
    to the engine at once. Where a hook asks for old values, each key's value
    before the transaction is read as it first reaches the engine: at the flush
    by the puts themselves
    (:meth:`~keyspace.stores._base.WriteView.replace_many`: on LMDB no read more
    than the put's own), at a delete by a point read. Where no feature hides
    keys, ``put`` is a C call (a :class:`~keyspace._put_route.PutRoute`) that
    takes a key below the reserved ranges that route (or into :attr:`pending`),
    and a record to the Python method that notes it. The transaction's reads
    are each one Python call more than the engine's."""

    def __init__(self, store: HookedStore) -> None:
        self.store = store
        self._manager: AbstractContextManager[WriteView] | None = None
        self.view: WriteView
        self.pending: dict[bytes, bytes] = {}
        self.merged: dict[bytes, bytes | None] = {}
        self.old: dict[bytes, bytes | None] = {}
        self.ranges: list[tuple[bytes, bytes | None]] = []
        self.deleted: list[bytes] = []
        self._wrote = False
        self._ended = False
        self.notes: dict[bytes, dict[str, Any]] = {}
        """Per key, what a writer told the hooks of its last write (:meth:`note`)."""
        self._filtered: ReadView | None = None
        self.reserved_keys: set[bytes] = set()
        """Keys written in the reserved ranges (records, the hooks' own keys): never
        reported. Only the Python method :meth:`_put` meets them."""
        self.deferred: list[tuple[Callable[[int, int], bytes], bytes]] = []
        self.commit_number: int | None = None
        """The number of the commit, once made, where deferred keys asked for it."""
        self.route: Any = None
        """The :class:`~keyspace._put_route.PutRoute` puts take, where a hook reads
        every value before and the engine offers ``fast_replace`` (set at the
        start); ``None``: puts wait in :attr:`pending`."""

    @property
    def wrote(self) -> bool:
        """Whether anything was written (reserved keys too)."""
        route = self.route
        return (
            self._wrote
            or bool(self.pending)
            or bool(self.merged)
            or bool(self.deferred)
            or (route is not None and route.puts > 0)
        )

    def settle(self) -> None:
        """The puts the route made since the last settle into :attr:`merged` and
        :attr:`old` (one pass over them); nothing without a route."""
        route = self.route
        if route is not None:
            route.settle()

    def defer(self, make_key: Callable[[int, int], bytes], value: bytes) -> int:
        """Put ``value`` at ``make_key(number, index)`` at the commit: ``number`` the
        commit's (a hook's :meth:`WriteHook.next_commit`), ``index`` this put's
        among the deferred puts of the commit (0, 1, ...), returned now. The
        hooks see it as a put of the commit."""
        self._check_open()
        self.deferred.append((make_key, value))
        return len(self.deferred) - 1

    def _resolve_deferred(self, latest: ReadView) -> None:
        number = next(
            (n for n in (hook.next_commit(latest) for hook in self.store.hooks) if n is not None), None
        )
        if number is None:
            raise InvalidArgument(
                f"keys filled at commit need a commit number, which {self.store.url} does not keep: "
                "open it with changes=True"
            )
        self.commit_number = number
        pending = self.pending
        for index, (make_key, value) in enumerate(self.deferred):
            pending[make_key(number, index)] = value

    def touch(self) -> None:
        """Count this transaction as one that writes, with nothing written yet: its
        commit writes the feature record where it is still to be written."""
        self._check_open()
        self._wrote = True

    def note(self, name: str, key: bytes, value: Any) -> None:
        """Tell the hook ``name`` ``value`` about the write of ``key`` just made in
        this transaction (a put's deadline): the hooks find it in the commit's
        :attr:`ChangeList.notes`; a later write of ``key`` in the transaction drops it."""
        self.notes.setdefault(key, {})[name] = value

    def __enter__(self) -> HookedTransaction:
        manager = self.store.inner.transaction()
        self.view = manager.__enter__()
        self._manager = manager
        store_filter = self.store._filter
        if store_filter is not None:
            self._filtered = store_filter(self.view, self)
        else:
            replace = self.view.fast_replace
            if replace is not None and self.store._old == 2:
                # a hook reads every value before: the put reads it (no read more)
                self.route = self.put = self._split(replace)  # type: ignore[method-assign]
            elif replace is not None and self.store._serialized:
                # the view writes at once, one engine call a put: the route keeps the puts for
                # the hooks, and a value before that a delete asks for is the committed store's
                self.route = self.put = self._split(self.view.put, knows_old=False)  # type: ignore[method-assign]
            else:  # the puts wait in the dict (with a filter, above, each is put(): it drops notes)
                self.put = self._split(self.pending, knows_old=False, keeps=False)  # type: ignore[method-assign]
        return self

    def _split(
        self,
        below: Callable[[bytes, bytes], object] | dict[bytes, bytes],
        knows_old: bool = True,
        keeps: bool = True,
    ) -> Any:
        """A put (a :class:`~keyspace._put_route.PutRoute`, one C call where
        built) that hands keys below the reserved ranges to ``below`` and the
        others to :meth:`_put`."""
        low = self.store._reserved_low
        return PutRoute(below, self.old, self.merged, knows_old, bound=low, rest=self._put, keeps=keeps)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        manager = self._manager
        if manager is None:
            return None
        self._manager = None
        self._ended = True
        # the split put (which a scope bound in the block may still hold) refuses every
        # later put, and holds this transaction no more: no reference cycle keeps it
        # (its dicts of old and new values) alive after the block; the route it may be
        # keeps its puts for the hooks
        split = self.__dict__.pop("put", None)
        if split is not None:
            split.end(self.store._txn_ended)
        if exc_type is not None:
            return manager.__exit__(exc_type, exc, tb)
        store = self.store
        lock = store._lock
        ran = False
        try:
            if lock is not None:
                lock.acquire()
            try:
                wrote = self.wrote
                if self.deferred:
                    self._resolve_deferred(self.view if store._serialized else store.inner)
                self.flush(committing=True)
                ran = store._run_hooks(self, wrote)
            except BaseException:
                if manager.__exit__(*sys.exc_info()):
                    return None
                raise
            manager.__exit__(None, None, None)
            if wrote and store._record is not None:
                store._record = None
                if store._single is not None:
                    store._single.ready = True
        finally:
            if lock is not None:
                lock.release()
        if ran:
            for hook in store.hooks:
                hook.committed()
        return None

    def flush(self, committing: bool = False) -> None:
        """Write :attr:`pending` into the engine transaction (one ``put_many``, or
        one ``replace_many`` where the hooks ask for old values: those read by it)."""
        pending = self.pending
        if not pending:
            return
        route = self.route
        if route is not None:
            route.exact = False
            route.settle()
        rank = self.store._old
        if rank == 2 or (rank == 1 and not committing):
            # the values before, read by the puts themselves where the engine can
            got = dict(
                zip(pending, self.view.replace_many(list(pending), list(pending.values())), strict=True)
            )
            old = self.old
            if old:  # a key flushed before keeps the value it had before the transaction
                got.update(old)
            old.update(got)
        else:
            self.view.put_many(list(pending.items()))
        if committing and not self.merged:  # the dict itself: no copy (no put comes after the commit's flush)
            self.merged, self.pending = cast(dict[bytes, bytes | None], pending), {}
            return
        self.merged.update(pending)
        pending.clear()

    # -- reads: the engine transaction's, after the puts they may meet ------------------------

    def _reads(self) -> ReadView:
        """The engine transaction, :attr:`pending` flushed into it first (a scan,
        a count or a seeker may meet those puts), behind the store's read rule
        where a feature has one."""
        self.flush()
        return self._filtered or self.view

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self.view.translate(exc, key)

    def get(self, key: bytes) -> bytes | None:
        filtered = self._filtered
        if filtered is not None:
            return filtered.get(key)  # it looks in pending first
        got = self.pending.get(key)
        return got if got is not None else self.view.get(key)

    # -- writes ------------------------------------------------------------------------------------

    def _reserved(self, key: bytes) -> None:
        store = self.store
        if key >= store._reserved_low and store._reserved_key(key):
            self.reserved_keys.add(key)

    def _ended_message(self) -> str:
        return f"this transaction of {self.store.url} has ended"

    def _check_open(self) -> None:
        """Refuse a write that would only reach the pending puts (nothing an ended
        engine transaction would refuse) once the block has ended."""
        if self._ended:
            raise StoreClosed(self._ended_message())

    def _put(self, key: bytes, value: bytes) -> None:
        if self._ended:  # _check_open inline: every put of a store that hides keys comes here
            self._check_open()
        route = self.route
        if route is not None and key < self.store._reserved_low:
            route(key, value)
            return
        self.pending[key] = value
        self._reserved(key)
        if self.notes:
            self.notes.pop(key, None)

    put = _put  # the split put (set while the block runs) takes keys below the records

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        self._check_open()
        pairs = items if isinstance(items, list) else list(items)
        self.pending.update(pairs)
        notes = self.notes
        if notes:
            for key, _ in pairs:
                notes.pop(key, None)
        if pairs and max(map(_first_of, pairs)) >= self.store._reserved_low:
            for key, _ in pairs:
                self._reserved(key)
        if self.route is not None:  # puts reach the engine in the order made
            self.flush()
        return len(pairs)

    def write(self, ops: Iterable[Op]) -> None:
        for key, value in ops:
            if value is None:
                self.delete(key)
            else:
                self.put(key, value)

    def _before(self, key: bytes) -> bytes | None:
        """The value ``key`` held before the transaction, where :attr:`old` does not
        hold it yet: the engine transaction's, unless the put route wrote over it
        without reading it (a key of :attr:`merged`, settled, whose route knows no
        values before): then the committed store's, which on an engine whose
        write transactions exclude each other (the only ones such a route is
        made on) is the state this transaction began on. Cost: one point read."""
        route = self.route
        if route is not None and not route.knows_old and key in self.merged:
            return self.store.inner.get(key)
        return self.view.get(key)

    def delete(self, key: bytes) -> None:
        self._wrote = True
        route = self.route
        if route is not None:
            route.exact = False
            route.settle()
        self._reserved(key)
        self.pending.pop(key, None)
        if self.notes:
            self.notes.pop(key, None)
        old = self.old
        if self.store._old and key not in old:  # never flushed: the engine holds the old value
            old[key] = self._before(key)
        self.view.delete(key)
        self.merged[key] = None
        self.deleted.append(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        if stop is not None and stop <= start:
            return
        self._wrote = True
        self.flush()
        route = self.route
        if route is not None:
            route.exact = False
            route.settle()
        notes = self.notes
        if notes:
            for key in [k for k in notes if start <= k and (stop is None or k < stop)]:
                del notes[key]
        store = self.store
        if store._expand:
            merged, old, deleted = self.merged, self.old, self.deleted
            low, reserved = store._reserved_low, self._reserved
            if store._old:
                for key, value in self.view.scan(start, stop):
                    if key not in old:
                        old[key] = self._before(key) if key in merged else value
                    merged[key] = None
                    deleted.append(key)
                    if key >= low:
                        reserved(key)
            else:
                for key in keys_in(self.view, start, stop):
                    merged[key] = None
                    deleted.append(key)
                    if key >= low:
                        reserved(key)
        else:
            self.ranges.append((start, stop))
        self.view.delete_range(start, stop)


_CHECKED_ATTEMPTS = 3


class _Single:
    """The single writes of a :class:`HookedStore` outside a transaction, on an
    engine whose write transactions exclude each other (LMDB, SQLite): a put or
    delete of a key outside the reserved ranges, once the feature record is
    written (:attr:`ready`), is one engine transaction holding the old value
    read the hooks ask for, the write and the hooks' writes
    (:meth:`WriteHook.commit_one`), with none of a :class:`HookedTransaction`'s
    bookkeeping; any other one is the hooked store's own (a transaction). An
    object of its own, whose attribute reads are the interpreter's fastest: the
    hooked store forwards unknown attributes (``__getattr__``), which slows
    every attribute read of it. Cost: the engine's transaction, the old value
    (on LMDB read by the put itself), the hooks."""

    __slots__ = ("hooks", "inner", "low", "rank", "ready", "store", "url")

    def __init__(self, store: HookedStore) -> None:
        self.store = store
        self.inner = store.inner
        self.hooks = store.hooks
        self.rank = store._old
        self.low = store._reserved_low
        self.url = store.url
        self.ready = store._record is None
        """Whether the feature record is written (until then writes take a
        transaction of the hooked store, which writes it)."""

    def put(self, key: bytes, value: bytes) -> None:
        if not self.ready or key >= self.low:
            HookedStore.put(self.store, key, value)
            return
        try:
            self._write(key, value)
        except TransactionConflict as exc:  # see _retry: run again, as a step the library owns
            run_again(partial(self._write, key, value), exc, "a put to " + self.url)

    def delete(self, key: bytes) -> None:
        if not self.ready or key >= self.low:
            HookedStore.delete(self.store, key)
            return
        try:
            self._write(key, None)
        except TransactionConflict as exc:
            run_again(partial(self._write, key, None), exc, "a delete in " + self.url)

    def _write(self, key: bytes, value: bytes | None) -> None:
        """A put (``value``) or delete (``None``) of ``key`` in one engine transaction."""
        old: Previous = UNKNOWN
        hooks = self.hooks
        with self.inner.transaction() as view:
            self.store._features_hold(view)
            rank = self.rank
            if value is None:
                if rank:
                    old = view.get(key)
                view.delete(key)
                if old is None:  # read, and not there: nothing changed
                    return
            elif rank == 2:  # the old value read and the put in one engine call where it has one
                replace = view.fast_replace
                if replace is None:
                    old = view.get(key)
                    view.put(key, value)
                else:
                    old = replace(key, value)
            else:
                view.put(key, value)
            for hook in hooks:
                hook.commit_one(view, key, old, value, view)
        for hook in hooks:
            hook.committed()


def _first_of(pair: tuple[bytes, bytes]) -> bytes:
    return pair[0]


Filter = Callable[[ReadView, "HookedTransaction | None"], "ReadView | None"]


@contextmanager
def _filtered_snapshot(block: AbstractContextManager[ReadView], rule: Filter) -> Iterator[ReadView]:
    """A snapshot of the engine's store behind a feature's read rule."""
    with block as snap:
        yield rule(snap, None) or snap


class _Collect(DelegatedReads, WriteView):
    """The view hooks write into for a checked batch: reads of the committed store
    (a key the batch wrote reads as written; scans the store's own), writes kept
    in :attr:`ops`."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.ops: dict[bytes, bytes | None] = {}
        self.known: dict[bytes, bytes | None] = {}

    def _reads(self) -> ReadView:
        return self.inner

    def get(self, key: bytes) -> bytes | None:
        ops, known = self.ops, self.known
        if key in ops:
            return ops[key]
        return known[key] if key in known else self.inner.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.ops[key] = value

    def delete(self, key: bytes) -> None:
        self.ops[key] = None

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        for key in keys_in(self.inner, start, stop):
            self.ops[key] = None


class _Batch:
    """A single write's fields as :meth:`HookedStore._run_hooks` reads a
    transaction's: the changes of ``ops``, their old values read from the
    committed store where the hooks ask for them."""

    def __init__(self, store: HookedStore, ops: Sequence[Op]) -> None:
        inner = store.inner
        self.view = view = _Collect(inner)
        self.merged: dict[bytes, bytes | None] = {}
        self.old: dict[bytes, bytes | None] = {}
        self.deleted: list[bytes] = []
        self.ranges: list[tuple[bytes, bytes | None]] = []
        low = store._reserved_low
        self.reserved_keys = {key for key, _ in ops if key >= low and store._reserved_key(key)}
        rank, old = store._old, self.old
        for key, value in ops:
            view.ops[key] = value
            self.merged[key] = value
            if value is None:
                self.deleted.append(key)
            if rank and key not in old and (rank == 2 or value is None):
                old[key] = inner.get(key)
