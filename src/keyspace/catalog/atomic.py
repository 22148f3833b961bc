"""First writes and deletes as one atomic batch, with the engine's policy in one
place.

A path's first write runs the checks and records it depends on (scheme
record, footprint, registry entry, layout) in one atomic transaction with the
data, inside the caller's transaction when there is one; after it, writes cost
nothing extra (:meth:`AtomicWrites.write_ready`). What the engine asks of such
a batch is decided here and nowhere else: where it caps the operations of a
batch (etcd), the records commit apart and the committed ones are read
(:meth:`AtomicWrites._committed`); where its transactions neither exclude each
other nor guard their reads, first writes through one store object take one
lock (:meth:`AtomicWrites._atomically`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._retry import run_atomically
from ..errors import TransactionConflict, TransactionTooLarge, show_bytes
from ..schemes._base import Path
from ..stores._base import ReadView, Store, WriteView
from ..stores._key_sizes import bad_key
from .names import NameRegistry
from .state import GuardAnswer, ReadGuard

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


class AtomicWrites(NameRegistry):
    """The first writes and the deletes of one keyspace (module docstring)."""

    @property
    def _records_apart(self) -> bool:
        """Whether the engine caps the operations of one batch (etcd: 128), so
        that a first write inside a transaction commits its records in a batch of
        their own, before the transaction's (:meth:`first_write`), and checks
        read the committed records (:meth:`_committed`). Cost: two attribute
        reads."""
        return self.store.capabilities.max_batch_ops is not None

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
            elif check is None and not self._records_apart:
                run_atomically(store.transaction, apply, f"a delete in the keyspace at {self.url}")
            else:  # a guard to ask inside the delete, or an engine that caps its batches
                try:
                    self._atomically(apply)
                except TransactionTooLarge:  # nothing written: the engine took no part of it
                    apply(view)
            return
        if view is not self.store:
            if not self._records_apart:
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
        if not self._records_apart:
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

    def record_now(self) -> None:
        """Write this keyspace's record and its feature record now where either is
        still to be written (else they come with its first write): a watch of
        the change log made before that relies on every process that opens the
        store later writing the log. Cost: a flag read once both are written;
        else one atomic write."""
        unrecorded = getattr(self.store, "unrecorded", None)  # None: a store with no feature on
        if unrecorded is None or (self.recorded and not unrecorded):
            return

        def claim(tx: WriteView) -> None:
            if not self.recorded:
                self._claim_record(tx)
            touch = getattr(tx, "touch", None)  # a transaction of a store with features on
            if touch is not None:
                touch()

        self._atomically(claim)

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


def _guarded(check: ReadGuard, apply: Callable[[WriteView], None], own: bool) -> Callable[[WriteView], None]:
    """``apply`` after ``check`` on the same view: skipped where ``own`` and the
    check finds no own keys (a branch); the check's errors propagate."""

    def guarded(view: WriteView) -> None:
        if not check(view) and own:
            return
        apply(view)

    return guarded
