"""Expiring keys: ``scope.put(key, value, ttl=seconds)``.

A keyspace opened with ``ttl=True`` (recorded in the store like ``changes``, so
every later opener keeps it) keeps a *deadline* for each key put with a ``ttl``,
in reserved keys written inside the same atomic write as the data::

    ff "keyspace-ttl" 00 pack((raw_prefix,)) 01 stored_key            -> u64be(deadline)
    ff "keyspace-ttl" 00 pack((raw_prefix,)) 02 u64be(deadline) stored_key -> b""

(the deadline in microseconds of the clock, :data:`clock`). The first record
says a key's deadline; the second, ordered by deadline, is what a sweep reads:
only the entries whose deadline has passed. Any later write of the key in a
commit -- a put without ``ttl``, a delete, a clear, a drop, a range delete, a
directory's removal -- removes its records in that same commit (the hook sees
every changed key, :class:`Expiry`), and a put with ``ttl`` replaces them.

The one read rule: a key whose deadline is at or before now is invisible to
every read of the keyspace, from its deadline on, before any sweep deleted it.
The hooked store's reads, its snapshots' and its transactions' pass
:class:`ExpiringReads` (see :meth:`~keyspace._write_hooks.WriteHook.reads`):
point reads, scans either way with limits, keys, counts, seekers; the engine's
fast read paths and its own read faces (checked, watched, asyncio-native) are
not offered, so no read skips it. Cost: a point read reads the key's deadline
record too (one point read more); a scan, a count or a seeker first asks
whether any deadline has passed at all (one seek of the deadline index): when
none has, the engine answers alone; when one has, the scan is merged with the
deadline records of its own range (one cursor more, a step per key that has a
deadline in the range, and a Python step per item), a count subtracts the
expired keys among them. A keyspace without the feature has none of this.

Expired keys are deleted by :func:`expire` (``ks.expire(limit)``), a bounded
sweep through the normal write path (the change log records delete events,
accounting's counts drop), and after each commit of a ttl keyspace that finds
the oldest deadline passed (one seek), by a sweep of at most
:data:`WRITER_SWEEP` keys, and as many more as that commit set deadlines, made
by that writer.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from contextlib import suppress
from itertools import islice
from typing import Any, Final

from ._bytes import prefix_end
from ._retry import run_atomically
from ._update_pairs import pair_list
from ._write_hooks import HookedStore, HookedTransaction, WriteHook, register_feature
from .errors import InvalidArgument, KeyspaceError, KeyTooLarge, show_bytes
from .schemes._base import Scheme
from .stores._base import (
    ReadView,
    Seeker,
    Store,
    WriteView,
    count_lacking,
    cut_pages,
    key_pages_of,
    keys_in,
    pages_in_turn,
)
from .tuples import pack

__all__ = [
    "MAX_TTL",
    "NAME",
    "WRITER_SWEEP",
    "ExpiringReads",
    "ExpiringScope",
    "Expiry",
    "clock",
    "expire",
    "expiry_of",
    "put_expiring",
    "put_until",
]

NAME: Final = "ttl"
BASE: Final = b"\xffkeyspace-ttl\x00"
MAX_TTL: Final = 1e9
"""The longest ``ttl`` taken, in seconds (about 31 years)."""
WRITER_SWEEP: Final = 16
"""Most expired keys a writer's sweep after its commit deletes."""

clock: Callable[[], float] = time.time
"""The clock deadlines are read on (seconds); tests set a fake one here
(``keyspace._expiry.clock = fake``): every deadline and every read's "now" comes
from it."""


def now_micros() -> int:
    """The clock's now, in whole microseconds."""
    return math.floor(clock() * 1_000_000)


def check_ttl(ttl: Any) -> float:
    """``ttl`` as a float of seconds, or :class:`InvalidArgument` naming the value
    and the limits: a number (not a bool) over 0 and at most :data:`MAX_TTL`."""
    if type(ttl) is bool or not isinstance(ttl, int | float):
        raise InvalidArgument(f"ttl must be a number of seconds, over 0 and at most {MAX_TTL:g}, not {ttl!r}")
    if not (0 < ttl <= MAX_TTL):  # NaN fails both comparisons; an int compares exactly
        raise InvalidArgument(f"ttl must be over 0 and at most {MAX_TTL:g} seconds, not {ttl!r}")
    return float(ttl)


def _deadline(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


class Expiry(WriteHook):
    """The ``ttl`` feature of one keyspace over ``store`` (the engine's store)."""

    name = NAME
    old_values = "none"
    expand_ranges = True  # a range delete's keys, each, so their deadlines go with them

    def __init__(self, store: Store, scheme: Scheme) -> None:
        self.store = store
        base = BASE + pack((scheme.raw_prefix,))
        self.rec = base + b"\x01"
        self.idx = base + b"\x02"
        self.rec_end = prefix_end(self.rec)
        self.idx_end = prefix_end(self.idx)
        self.max_key = store.capabilities.max_key_size
        self.hooked: HookedStore | None = None
        self._sweeping = False
        self._set = threading.local()
        """``deadlines``: how many deadlines this thread's last commit set, for the
        size of the sweep after it (:meth:`committed`)."""
        self.grant: Callable[[int], int] | None = getattr(store, "grant_lease", None)
        """The engine's leases (etcd's ``grant_lease``), or ``None``."""
        self._granted: dict[int, tuple[int, float]] = {}
        """Deadline second -> (lease ID, monotonic time it ends by)."""

    def low(self, bound: bytes) -> bytes:
        """A scan's start at or before ``bound`` that the engine takes (a prefix of
        it, where it is over the key size limit)."""
        limit = self.max_key
        return bound if limit is None or len(bound) <= limit else bound[:limit]

    def high(self, bound: bytes) -> bytes | None:
        """A scan's stop at or after ``bound`` that the engine takes, keys past the
        deadline records excluded all the same (they start otherwise)."""
        limit = self.max_key
        if limit is None or len(bound) <= limit:
            return bound
        return prefix_end(bound[:limit]) or self.rec_end

    def attached(self, store: HookedStore) -> None:
        self.hooked = store

    def _passed(self, view: ReadView, limit: int | None = None) -> Iterator[tuple[bytes, bytes]]:
        """``(index entry, stored key)`` of the keys of ``view`` whose deadline has
        passed, oldest deadline first, at most ``limit``. Cost: a scan of the
        deadline index up to now."""
        idx = self.idx
        cut, stop = len(idx) + 8, idx + (now_micros() + 1).to_bytes(8, "big")
        for entry in keys_in(view, idx, stop, limit=limit):
            yield entry, entry[cut:]

    def hidden(self, view: ReadView) -> Iterator[bytes]:
        """The stored keys of ``view`` whose deadline has passed, not swept yet."""
        return (key for _, key in self._passed(view))

    def deadline(self, view: ReadView, stored: bytes) -> int | None:
        """The deadline of the stored key ``stored`` in ``view`` (microseconds of
        :data:`clock`), or ``None`` where it has none. Cost: one point read."""
        limit = self.max_key
        if limit is not None and len(self.rec) + len(stored) > limit:
            return None  # such a key can hold no deadline
        raw = view.get(self.rec + stored)
        return None if raw is None else _deadline(raw)

    def holds_deadlines(self, view: ReadView) -> bool:
        """Whether ``view`` holds any deadline, passed or not (one seek)."""
        return any(True for _ in keys_in(view, self.idx, self.idx_end, limit=1))

    def reads(self, view: ReadView, tx: HookedTransaction | None) -> ReadView:
        return ExpiringReads(view, self, tx)

    # -- writes ---------------------------------------------------------------------------

    def storable(self, stored: bytes) -> None:
        """:class:`KeyTooLarge` where the deadline index key of ``stored`` would be
        over the engine's key size limit (a key near the limit can hold no ttl)."""
        limit = self.max_key
        size = len(self.idx) + 8 + len(stored)
        if limit is not None and size > limit:
            raise KeyTooLarge(
                f"key {show_bytes(stored)} can take no ttl: its deadline record would be {size} bytes, over "
                f"the limit of {limit} bytes of {self.store.url}"
            )

    def commit(self, view: WriteView, changes: Any, ranges: Any, latest: ReadView) -> None:
        """The deadline records of the commit's changed keys: a put noted with a
        ttl (:meth:`HookedTransaction.note`) gets its deadline's, every other
        change loses its key's. The records there are read in ``view``: its
        engine's transactions exclude each other (LMDB, SQLite; the memory,
        LevelDB and RocksDB stores run theirs one at a time) or guard their
        reads (etcd: a record changed since it was read fails the commit, which
        is made again), so they are the ones the commit replaces. Cost: one seek
        of the records of the changed keys' span; where it meets one (or a put
        has a ttl), one point read per changed key (over 32 keys: one scan of
        that span)."""
        merged: dict[bytes, bytes | None] = changes.merged
        notes: dict[bytes, dict[str, Any]] = changes.notes
        rec = self.rec
        reader = view
        news = {}
        for key, note in notes.items():
            deadline = note.get(NAME)
            if deadline is not None and merged.get(key) is not None:
                news[key] = deadline.to_bytes(8, "big")
        lo, hi = self.low(rec + min(merged)), self.high(rec + max(merged) + b"\x00")
        olds: dict[bytes, bytes]
        if len(merged) <= 32:
            olds = {}
            limit = self.max_key
            if news or next(keys_in(reader, lo, hi, limit=1), None) is not None:
                for key in merged:
                    if limit is None or len(rec) + len(key) <= limit:
                        got = reader.get(rec + key)
                        if got is not None:
                            olds[key] = got
        else:
            cut = len(rec)
            olds = {k[cut:]: v for k, v in reader.scan(lo, hi) if k[cut:] in merged}
        self._set.deadlines = len(news)
        idx = self.idx
        for key, old in olds.items():
            if news.get(key) != old:
                view.delete(idx + old + key)
                if key not in news:
                    view.delete(rec + key)
        for key, new in news.items():
            if olds.get(key) != new:
                view.put(rec + key, new)
                view.put(idx + new + key, b"")
        leases = self._leases_of(view)
        if leases is not None:
            for key, new in news.items():
                lease = self._lease(_deadline(new))
                leases[key] = leases[rec + key] = leases[idx + new + key] = lease

    def _leases_of(self, view: WriteView) -> dict[bytes, int] | None:
        """Where the engine deletes keys itself when a lease expires (etcd): the
        transaction's keys-to-lease map; ``None`` elsewhere, and where a feature
        counts keys (accounting: a key the engine deletes would stay counted)."""
        if self.grant is None or (self.hooked is not None and self.hooked.hook("accounting") is not None):
            return None
        leases: dict[bytes, int] | None = getattr(view, "leases", None)
        return leases

    def _lease(self, deadline: int) -> int:
        """A lease of the engine that lasts at least until ``deadline`` (clock
        microseconds): one per deadline second, granted once and reused while it
        lasts long enough. Cost: one round trip per lease granted."""
        assert self.grant is not None
        needed = max(1, math.ceil((deadline - now_micros()) / 1_000_000))
        second = -(-deadline // 1_000_000)
        now = time.monotonic()
        cached = self._granted.get(second)
        if cached is not None and cached[1] >= now + needed:
            return cached[0]
        for old in [k for k, (_, ends) in self._granted.items() if ends <= now]:
            del self._granted[old]
        lease = self.grant(needed)
        self._granted[second] = (lease, now + needed)
        return lease

    def committed(self) -> None:
        """After a commit: where the oldest deadline has passed (one seek), a sweep
        of at most :data:`WRITER_SWEEP` keys and as many more as the commit set
        deadlines, made by this writer: a steady stream of commits of expiring
        keys leaves no growing heap of expired ones (reads pass over each). A
        sweep that fails (a conflict with another writer, a closed store) is
        left to the next writer: the commit it follows has committed."""
        deadlines = getattr(self._set, "deadlines", 0)
        self._set.deadlines = 0
        if self._sweeping or self.hooked is None:
            return
        first = next(keys_in(self.store, self.idx, self.idx_end, limit=1), None)
        if first is None or _deadline(first[len(self.idx) : len(self.idx) + 8]) > now_micros():
            return
        with suppress(KeyspaceError):
            self.sweep(WRITER_SWEEP + deadlines)

    def sweep(self, limit: int) -> int:
        """Delete at most ``limit`` keys whose deadline has passed, oldest deadline
        first, in one transaction of the hooked store (every feature's hooks see
        the deletes); how many. Cost: a scan of the expired index entries read,
        and per key a delete and its records'."""
        hooked = self.hooked
        assert hooked is not None

        def step(tx: HookedTransaction) -> int:
            found = list(self._passed(tx.view, limit))
            for entry, key in found:
                tx.delete(key)
                tx.view.delete(entry)  # its records, here too: a key found absent is not reported
                tx.view.delete(self.rec + key)
            return len(found)

        sweeping, self._sweeping = self._sweeping, True  # its own commit starts no writer's sweep
        try:
            done: int = run_atomically(hooked.transaction, step, f"a sweep of expired keys in {hooked.url}")
        finally:
            self._sweeping = sweeping
        return done


def _factory(store: Store, scheme: Scheme, params: dict[str, Any]) -> WriteHook | None:
    if params:
        raise InvalidArgument(f"ttl takes no parameters (ttl=True), not {params!r}")
    return Expiry(store, scheme)


register_feature(NAME, _factory)


def expiry_of(store: Any) -> Expiry | None:
    """The :class:`Expiry` of a keyspace's store, or ``None`` where ``ttl`` is off."""
    hook = getattr(store, "hook", None)
    got = hook(NAME) if callable(hook) else None
    return got if isinstance(got, Expiry) else None


class ExpiringReads(ReadView):
    """``view`` behind the read rule of ``hook`` (module docstring): keys whose
    deadline has passed are not there. ``tx``: the hooked transaction ``view``
    is the engine transaction of, whose written keys' deadlines are its notes
    (their records in ``view`` are the ones before the transaction)."""

    def __init__(self, view: ReadView, hook: Expiry, tx: HookedTransaction | None) -> None:
        self._view = view
        self._hook = hook
        self._tx = tx

    def __repr__(self) -> str:
        return f"ExpiringReads({self._view!r})"

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self._view.translate(exc, key)

    def release(self) -> None:
        release = getattr(self._view, "release", None)
        if release is not None:
            release()

    # -- the rule ----------------------------------------------------------------------------

    def _written(self, key: bytes) -> bool:
        tx = self._tx
        return tx is not None and (key in tx.merged or key in tx.pending)

    def _noted_dead(self, key: bytes, now: int) -> bool:
        """A key written in the transaction: whether its last write's ttl has passed."""
        note = self._tx.notes.get(key) if self._tx is not None else None
        deadline = None if note is None else note.get(NAME)
        return deadline is not None and deadline <= now

    def _dead(self, key: bytes, now: int) -> bool:
        """Whether ``key`` (present in the view) has a deadline at or before ``now``.
        Cost: one point read (none for a key written in the transaction)."""
        if self._written(key):
            return self._noted_dead(key, now)
        deadline = self._hook.deadline(self._view, key)
        return deadline is not None and deadline <= now

    def any_passed(self, now: int) -> bool:
        """Whether any deadline of the view is at or before ``now`` (one seek of the
        index; in a transaction, its notes too): when none is, nothing is hidden."""
        hook = self._hook
        first = next(keys_in(self._view, hook.idx, hook.idx_end, limit=1), None)
        if first is not None and _deadline(first[len(hook.idx) : len(hook.idx) + 8]) <= now:
            return True
        tx = self._tx
        if tx is not None and tx.notes:
            return any(note.get(NAME, now + 1) <= now for note in tx.notes.values())
        return False

    def _records(self, start: bytes, stop: bytes | None, reverse: bool) -> Iterator[tuple[bytes, bytes]]:
        hook = self._hook
        rec = hook.rec
        hi = hook.rec_end if stop is None else hook.high(rec + stop)
        return iter(self._view.scan(hook.low(rec + start), hi, reverse=reverse))

    def expired_keys(self, start: bytes, stop: bytes | None, now: int | None = None) -> list[bytes]:
        """The keys of ``[start, stop)`` present in the view whose deadline has
        passed (hidden from its reads, not swept yet). Cost: a scan of the
        deadline records of the range (one seek when no deadline has passed)."""
        now = now_micros() if now is None else now
        if (stop is not None and stop <= start) or not self.any_passed(now):
            return []
        cut = len(self._hook.rec)
        tx = self._tx
        found = []
        for rk, raw in self._records(start, stop, False):
            key = rk[cut:]
            if key < start or (stop is not None and key >= stop):
                continue  # a bound over the key size limit, clipped: read past
            if tx is not None and (key in tx.merged or key in tx.pending):
                if self._noted_dead(key, now) and (key in tx.pending or tx.merged[key] is not None):
                    found.append(key)
            elif _deadline(raw) <= now:
                found.append(key)
        if tx is not None:  # written in the transaction with a ttl passed already: no record yet
            found.extend(
                k
                for k in tx.notes
                if start <= k and (stop is None or k < stop) and self._noted_dead(k, now) and k not in found
            )
        return found

    def _merged(
        self, items: Iterator[Any], start: bytes, stop: bytes | None, reverse: bool, now: int, keyed: bool
    ) -> Iterator[Any]:
        """``items`` (a scan's, or its keys with ``keyed``) without the expired keys:
        merged with the deadline records of the same range, read in the same order."""
        records = self._records(start, stop, reverse)
        cut = len(self._hook.rec)
        rk: bytes | None
        rk, raw = next(records, (None, b""))
        tx = self._tx
        for item in items:
            key = item if keyed else item[0]
            if tx is not None and (key in tx.merged or key in tx.pending):
                if not self._noted_dead(key, now):
                    yield item
                continue
            while rk is not None and (rk[cut:] > key if reverse else rk[cut:] < key):
                rk, raw = next(records, (None, b""))
            if rk is not None and rk[cut:] == key and _deadline(raw) <= now:
                continue
            yield item

    # -- reads -------------------------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        tx = self._tx
        got = None
        if tx is not None:
            got = tx.pending.get(key)
        if got is None:
            got = self._view.get(key)
        if got is None:
            return None
        return None if self._dead(key, now_micros()) else got

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        now = now_micros()
        if not self.any_passed(now):
            return self._view.scan(start, stop, reverse=reverse, limit=limit)
        items = self._merged(
            iter(self._view.scan(start, stop, reverse=reverse)), start, stop, reverse, now, False
        )
        return items if limit is None else islice(items, limit)

    def read_pages(
        self,
        ranges: Sequence[tuple[bytes, bytes | None]],
        reverse: bool = False,
        limit: int | None = None,
        keys_only: bool = False,
        cut: int = 0,
    ) -> Iterable[Iterable[tuple[bytes, bytes]]]:
        """The view's own pages while no deadline has passed; else the default,
        through :meth:`scan`, which leaves out the keys that expired, and for
        keys only the view's keys without them (no value read)."""
        now = now_micros()
        if not self.any_passed(now):
            return self._view.read_pages(ranges, reverse, limit, keys_only, cut)
        if not keys_only:
            return super().read_pages(ranges, reverse, limit, keys_only, cut)

        def pages(start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> Iterator[Any]:
            keys = self._merged(
                keys_in(self._view, start, stop, reverse=reverse), start, stop, reverse, now, True
            )
            return key_pages_of(keys if limit is None else islice(keys, limit))

        read = pages_in_turn(pages, ranges, reverse, limit)
        return cut_pages(read, cut) if cut else read

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        now = now_micros()
        total = self._view.count(start, stop, without)
        expired = self.expired_keys(start, stop, now)
        return total - (len(expired) if without is None else count_lacking(expired, *without))

    def seeker(self, stop: bytes | None = None) -> Seeker:
        inner = self._view.seeker(stop)
        now = now_micros()
        return _ExpiringSeeker(self, inner, now) if self.any_passed(now) else inner


class _ExpiringSeeker(Seeker):
    """A seeker that steps over the expired keys its inner seeker finds (one
    point read per key found)."""

    __slots__ = ("_inner", "_now", "_reads")

    def __init__(self, reads: ExpiringReads, inner: Seeker, now: int) -> None:
        self._reads = reads
        self._inner = inner
        self._now = now

    def seek(self, start: bytes) -> bytes | None:
        while True:
            key = self._inner.seek(start)
            if key is None or not self._reads._dead(key, self._now):
                return key
            start = key + b"\x00"

    def release(self) -> None:
        self._inner.release()


# -- the scope's faces ------------------------------------------------------------------------


def put_expiring(scope: Any, key: Any, value: Any, ttl: Any) -> None:
    """:meth:`Scope.put` with a ``ttl``: ``scope[key] = value`` and the key's deadline
    (now + ``ttl``) in one commit (the scope's transaction's, or one of its own).
    :class:`InvalidArgument` for a bad ``ttl`` or a keyspace without the feature,
    before anything is written."""
    seconds = check_ttl(ttl)
    put_until(scope, key, value, lambda: math.floor((clock() + seconds) * 1_000_000), f"ttl={ttl!r}")


def put_until(
    scope: Any, key: Any, value: Any, deadline: Callable[[], int], asked: str = "a deadline"
) -> None:
    """``scope[key] = value`` with the deadline ``deadline()`` (microseconds of
    :data:`clock`, taken at the write) in one commit: :func:`put_expiring`'s
    write, and a copy's of a key that expires (``keyspace migrate``).
    :class:`InvalidArgument` for a keyspace without the feature (``asked`` names
    what was asked in the message), before anything is written."""
    view = scope._writer()
    hook = expiry_of(view.store if isinstance(view, HookedTransaction) else view)
    if hook is None:
        raise InvalidArgument(
            f"put(..., {asked}) needs expiring keys, which {scope._state.store.url} does not keep: "
            "open it with ttl=True (keyspace.open(url, ttl=True): recorded in the store, every later "
            "opener keeps it)"
        )
    stored = scope._stored(key)
    scope._stored_value(value)  # a value the codec refuses: refused before the deadline is taken
    hook.storable(stored)

    def write(tx: HookedTransaction, on: Any) -> None:
        on[key] = value
        tx.note(NAME, stored, deadline())

    if isinstance(view, HookedTransaction):
        write(view, scope)
        return

    def step(pair: tuple[HookedTransaction, Any]) -> None:
        tx, state = pair
        write(tx, scope._on(tx, state))

    run_atomically(scope._space.transaction, step, "Scope.put with a ttl")


def expire(ks: Any, limit: Any = 1000) -> int:
    """``ks.expire(limit)``: delete at most ``limit`` keys whose deadline has passed
    (oldest first) through the normal write path, in one transaction; how many.
    0 on a keyspace without the feature (it holds no deadlines).
    :class:`InvalidArgument` for a ``limit`` that is not an int of 0 or more."""
    if type(limit) is not int or limit < 0:
        raise InvalidArgument(f"expire(limit=...) takes an int of 0 or more, not {limit!r}")
    hook = expiry_of(ks.store)
    if hook is None or limit == 0:
        return 0
    return hook.sweep(limit)


class ExpiringScope(MutableMapping[Any, Any]):
    """A scope whose writes take a default ``ttl`` (:meth:`Scope.expiring`): ``[]=``,
    :meth:`put` (its own ``ttl`` wins) and :meth:`update` put with it; reads,
    deletes and everything else are the scope's own. A child scope of it
    (:meth:`scope`) takes the same default ``ttl``, so a collection built on it
    puts with it too."""

    def __init__(self, scope: Any, ttl: Any) -> None:
        self._scope = scope
        self.ttl = check_ttl(ttl)

    def scope(self, *path: Any, **codecs: Any) -> ExpiringScope:
        """The child scope ``path`` (the scope's :meth:`~keyspace.scope.Scope.scope`)
        with this face's default ``ttl``."""
        return ExpiringScope(self._scope.scope(*path, **codecs), self.ttl)

    def __repr__(self) -> str:
        return f"ExpiringScope({self._scope!r}, ttl={self.ttl!r})"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._scope, name)

    def put(self, key: Any, value: Any, *, ttl: Any = None) -> None:
        """``scope.put(key, value, ttl=ttl)``, this face's ``ttl`` where ``None``."""
        put_expiring(self._scope, key, value, self.ttl if ttl is None else ttl)

    def __setitem__(self, key: Any, value: Any) -> None:
        put_expiring(self._scope, key, value, self.ttl)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Every pair put with this face's ``ttl``, in one commit (the scope's
        transaction's, or one of its own)."""
        pairs = pair_list(other, kwargs)
        scope = self._scope
        if isinstance(scope._writer(), HookedTransaction):
            for key, value in pairs:
                put_expiring(scope, key, value, self.ttl)
            return

        def step(pair: tuple[HookedTransaction, Any]) -> None:
            on = scope._on(*pair)
            for key, value in pairs:
                put_expiring(on, key, value, self.ttl)

        run_atomically(scope._space.transaction, step, "ExpiringScope.update")

    def items(self, *args: Any, **kwargs: Any) -> Any:
        return self._scope.items(*args, **kwargs)

    def keys(self, *args: Any, **kwargs: Any) -> Any:
        return self._scope.keys(*args, **kwargs)

    def values(self, *args: Any, **kwargs: Any) -> Any:
        return self._scope.values(*args, **kwargs)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._scope.get(key, default)

    def clear(self) -> None:
        self._scope.clear()

    def __getitem__(self, key: Any) -> Any:
        return self._scope[key]

    def __delitem__(self, key: Any) -> None:
        del self._scope[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._scope)

    def __len__(self) -> int:
        return len(self._scope)

    def __contains__(self, key: object) -> bool:
        return key in self._scope


def _rule_of(view: Any) -> ExpiringReads | None:
    """The :class:`ExpiringReads` a view of a ttl keyspace reads through: the
    view itself (a snapshot's), a hooked transaction's or a hooked store's."""
    if isinstance(view, ExpiringReads):
        return view
    if isinstance(view, HookedTransaction):
        got = view._filtered
    elif isinstance(view, HookedStore):
        got = view._read_view
    else:
        return None
    return got if isinstance(got, ExpiringReads) else None


def expired_own(scope: Any) -> int | None:
    """How many of ``scope``'s own keys have a passed deadline and are not swept
    yet (what ``len()`` from the accounting counter subtracts): 0 in a keyspace
    without the feature; ``None`` where the scope's ranges hold other keys that
    its layout tells apart only by decoding (``len()`` then counts). Cost: one
    seek of the deadline index; where a deadline has passed, a scan of the
    deadline records of the scope's own ranges."""
    rule = _rule_of(scope._data)
    if rule is None:
        hook = expiry_of(scope._state.store)
        if hook is None:
            return 0
        rule = ExpiringReads(scope._data, hook, None)  # a view of another face (asyncio's plans)
    gone = [
        k for lo, hi in scope._stored_ranges(None, None, True, False, None) for k in rule.expired_keys(lo, hi)
    ]
    if not gone:
        return 0
    layout = scope._layout
    if layout.exact:
        return len(gone)
    if layout.lacks >= 0:
        sought, at = bytes((layout.lacks,)), len(layout.prefix)
        return sum(1 for k in gone if k.find(sought, at) == -1)
    return None
