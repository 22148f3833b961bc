"""The synchronous keyspace code run over an async store: plans and replays.

The scopes of :mod:`keyspace.aio` do not re-implement what a scope checks and
stores: each operation runs the synchronous :class:`~keyspace.Scope` method (key
and value encoding, the catalog's checks: scheme record, ScopeHash registry,
leaf/branch layout) over *plan views* — synchronous store views that do no I/O:

- a read is answered from the operation's cache of reads already fetched; a read
  not fetched yet raises :class:`Miss`, the driver awaits it through the async
  store (in the transaction it belongs to, so that etcd guards it with a compare)
  and runs the operation again from the start (a *replay*). The code is
  deterministic given its reads, so each replay gets one read further; scans are
  fetched in growing pages (1, 4, 16, … up to 4096 items), so a ``limit=1`` seek
  costs one item;
- a write is recorded in the plan: the store's own writes (``put``, ``write``,
  ``delete_range``) as effects, each transaction the catalog opens (its first
  write's atomic batch) as ONE effect that commits the reads and writes of that
  transaction together, and the writes into the caller's transaction as pending
  writes of that transaction.

When the run completes, the driver applies the effects in order through the
async store and moves the pending writes into the caller's transaction. Each run
works on a child of the catalog (:meth:`Catalog.child`), whose new facts (scheme
recorded, names registered, layout, paths prepared) merge into the catalog only
once the effects are applied: another task never skips a check on the strength of
a write that has not happened, and a replay starts from the catalog as it is. A catalog transaction that
loses a race to another writer (``TransactionConflict``: etcd's, or LMDB's when it
grew a small map while another process committed) runs the whole operation again,
at most :data:`~keyspace._retry.ATTEMPTS` times, as the synchronous code runs a
step it owns again (:mod:`keyspace._retry`): a catalog's first write, a scope's
``pop``, ``popitem`` and ``setdefault``. The caller's transaction is never run
again here: its conflict reaches the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

from .._retry import ATTEMPTS, gave_up
from ..catalog import Catalog
from ..errors import KeyspaceError, StoreError, TransactionConflict
from ..stores._aio import AsyncStore, AsyncTransaction, AsyncView, to_the_end
from ..stores._base import Capabilities, DelegatedReads, Op, ReadView, Store, WriteView
from ..stores._events import StoreWatch
from ..stores._overlay import OverlayTransaction, Range, ops_apply

T = TypeVar("T")
MAX_REPLAYS = 1 << 16
"""Replays of one operation: each fetches one more read; a bound, not a budget."""
_PAGE_MAX = 4096
_ABSENT: Any = object()


class Miss(BaseException):
    """A read the running operation needs that is not fetched yet. A
    ``BaseException`` so that no ``except Exception`` of the synchronous code
    takes it for a failure."""

    def __init__(self, source: Any, request: tuple[Any, ...]) -> None:
        super().__init__(source, request)
        self.source = source
        self.request = request


class Plan:
    """One run of an operation: the reads fetched (kept across replays), the
    effects recorded, the caller transaction's pending writes."""

    def __init__(
        self, cache: dict[Any, Any], user: bool, hub: Hub, check: Callable[[bytes], None] | None = None
    ) -> None:
        self.cache = cache
        self.effects: list[tuple[Any, ...]] = []
        self.txs = 0
        self.begun: dict[int, Any] = {}
        """The store transactions begun for the plan's reads, by number."""
        self.pending: tuple[list[Range], list[Op]] | None = None
        # ``check`` refuses a key the engine would refuse while the operation runs,
        # so an operation of several writes refuses it before any becomes pending
        self.user = (
            OverlayTransaction(_Cached(hub, "user"), ops_apply(self._keep), _nothing, check) if user else None
        )

    def _keep(self, ranges: list[Range], ops: list[Op]) -> None:
        self.pending = (ranges, ops)


def _nothing() -> None:
    return None


class _Cached(ReadView):
    """Reads of one source (the store, a catalog transaction, the caller's
    transaction) from the running plan's cache; :class:`Miss` for the rest."""

    def __init__(self, hub: Hub, source: Any) -> None:
        self._hub = hub
        self._source = source

    def get(self, key: bytes) -> bytes | None:
        found = self._hub.plan().cache.get((self._source, "get", key), _ABSENT)
        if found is _ABSENT:
            raise Miss(self._source, ("get", key))
        value: bytes | None = found
        return value

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        if limit is not None and limit <= 0:
            return iter(())
        return self._scan(start, stop, reverse, limit)

    def _scan(
        self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None
    ) -> Iterator[tuple[bytes, bytes]]:
        cache = self._hub.plan().cache
        key = (self._source, "scan", start, stop, reverse)
        at = 0
        while True:  # bounded: each pass yields the fetched items or raises
            items, complete = cache.get(key, ([], False))
            while at < len(items):
                yield items[at]
                at += 1
                if limit is not None and at >= limit:
                    return
            if complete:
                return
            raise Miss(self._source, ("scan", start, stop, reverse))


class PlanStore(DelegatedReads, Store):
    """The store as the synchronous code of a plan sees it (module docstring)."""

    def __init__(self, hub: Hub, store: AsyncStore) -> None:
        self._hub = hub
        self._cache = _Cached(hub, "store")
        self.real = store
        self.url = store.url
        # its snapshot() is the caller's (an async snapshot's view), never one of its own
        self.capabilities: Capabilities = replace(store.capabilities, snapshots=False)

    def _reads(self) -> ReadView:
        return self._cache

    @property
    def hook(self) -> Any:
        """The feature hooks of the keyspace's store (``hook(name)``), or ``None``:
        a scope's ``stats()`` finds the accounting there and reads its counters
        through this plan's views."""
        return getattr(self.real.sync, "hook", None)

    def put(self, key: bytes, value: bytes) -> None:
        self._hub.plan().effects.append(("put", key, value))

    def delete(self, key: bytes) -> None:
        self._hub.plan().effects.append(("delete", key))

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._hub.plan().effects.append(("delete_range", start, stop))

    def write(self, ops: Any) -> None:
        self._hub.plan().effects.append(("write", list(ops)))

    def check_batch(self, ops: Sequence[Op]) -> None:
        self.real.sync.check_batch(ops)

    def key_refusal(self, key: bytes) -> KeyspaceError:
        return self.real.sync.key_refusal(key)

    def transaction(self) -> OverlayTransaction:
        plan = self._hub.plan()
        number = plan.txs
        plan.txs += 1

        check = self.real.check_commit

        def commit(ranges: list[Range], ops: list[Op]) -> None:
            # refused now, as the engine would refuse it when applied, so that the code
            # that opened the transaction can do without it
            check(plan.begun.get(number), ranges, ops)
            plan.effects.append(("commit", number, ranges, ops))

        return OverlayTransaction(_Cached(self._hub, ("tx", number)), ops_apply(commit), _nothing)

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        yield _Cached(self._hub, "user")

    def watch(self, ranges: Any, *, start_revision: int | None = None) -> StoreWatch:
        return self.real.sync.watch(ranges, start_revision=start_revision)

    def close(self) -> None:
        return None


class PlanSnapshot(DelegatedReads):
    """The caller's snapshot as the synchronous code of a plan sees it (read-only:
    a scope over it refuses writes as a synchronous snapshot scope does)."""

    def __init__(self, hub: Hub) -> None:
        self._cache = _Cached(hub, "user")

    def _reads(self) -> ReadView:
        return self._cache


class PlanView(DelegatedReads, WriteView):
    """The caller's transaction as the synchronous code of a plan sees it: reads
    from the plan's cache, writes pending in the plan."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub

    def _user(self) -> OverlayTransaction:
        user = self._hub.plan().user
        if user is None:
            raise StoreError("an async transaction's scope was used outside an operation of it")
        return user

    def _reads(self) -> ReadView:
        return self._user()

    def put(self, key: bytes, value: bytes) -> None:
        self._user().put(key, value)

    def put_many(self, items: Any) -> int:
        return self._user().put_many(items)

    def delete(self, key: bytes) -> None:
        self._user().delete(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._user().delete_range(start, stop)


class Hub:
    """Runs operations of one async keyspace as plans over its async store."""

    def __init__(self, store: AsyncStore) -> None:
        self.store = store
        self._plan: Plan | None = None

    def plan(self) -> Plan:
        plan = self._plan
        if plan is None:
            raise StoreError("an async scope's synchronous view was used outside an operation")
        return plan

    async def run(
        self, operation: Callable[[Catalog], T], catalog: Catalog, view: AsyncTransaction | None = None
    ) -> T:
        """Run ``operation`` (synchronous code over the plan views, given the catalog
        state to use) to completion, fetching its reads through the async store and
        applying its writes; inside the caller's transaction ``view`` when given.
        Each run works on a child of ``catalog``, merged into it only once the
        run's effects are applied."""
        for left in range(ATTEMPTS - 1, -1, -1):
            cache: dict[Any, Any] = {}
            txs: dict[int, AsyncTransaction] = {}
            try:
                plan, state, result, error = await self._replay(operation, catalog, cache, txs, view)
                try:
                    await to_the_end(self._apply(plan, txs, view), self.store.runner)
                except _LostRace as lost:
                    if left == 0:
                        raise gave_up(lost.error, "an async operation", ATTEMPTS) from None
                    continue  # nothing was written: run it all again, reading what the winner wrote
                state.commit()
                if error is not None:
                    try:
                        raise error
                    finally:
                        error = None  # no cycle through this frame: it would keep the channel alive
                done: T = result
                return done
            finally:
                for tx in txs.values():
                    await tx.discard()
        raise AssertionError("unreachable")  # pragma: no cover

    async def _replay(
        self,
        operation: Callable[[Catalog], T],
        catalog: Catalog,
        cache: dict[Any, Any],
        txs: dict[int, AsyncTransaction],
        view: AsyncTransaction | None,
    ) -> tuple[Plan, Catalog, Any, BaseException | None]:
        for _ in range(MAX_REPLAYS):
            state = catalog.child()
            plan = Plan(cache, view is not None, self, _key_check(state))
            plan.begun = txs
            self._plan = plan
            miss: Miss | None = None
            result: Any = None
            error: BaseException | None = None
            try:
                result = operation(state)
            except Miss as exc:
                miss = exc
            except Exception as exc:  # the operation's own error: raised once its effects are applied
                error = exc
            finally:
                self._plan = None
            if miss is None:
                if plan.user is not None and error is None:
                    plan.user.commit()
                return plan, state, result, error
            await self._fetch(miss, cache, txs, view)
        raise StoreError(f"an operation needed more than {MAX_REPLAYS} reads fetched one at a time")

    async def _source(
        self, source: Any, txs: dict[int, AsyncTransaction], view: AsyncTransaction | None
    ) -> AsyncView:
        if source == "store":
            return self.store
        if source == "user":
            if view is None:
                raise StoreError("no transaction to read from")
            return view
        number = source[1]
        tx = txs.get(number)
        if tx is None:
            tx = txs[number] = await self.store.begin()
        return tx

    async def _fetch(
        self,
        miss: Miss,
        cache: dict[Any, Any],
        txs: dict[int, AsyncTransaction],
        view: AsyncTransaction | None,
    ) -> None:
        target = await self._source(miss.source, txs, view)
        request = miss.request
        if request[0] == "get":
            cache[(miss.source, "get", request[1])] = await target.get(request[1])
            return
        _, start, stop, reverse = request
        key = (miss.source, "scan", start, stop, reverse)
        items, _complete = cache.get(key, ([], False))
        count = 1 if not items else min(_PAGE_MAX, len(items) * 4)
        low, high = start, stop
        if items:
            last = items[-1][0]
            if reverse:
                high = last
            else:
                low = last + b"\x00"
        page = [kv async for kv in target.scan(low, high, reverse=reverse, limit=count)]
        cache[key] = (items + page, len(page) < count)

    async def _apply(
        self, plan: Plan, txs: dict[int, AsyncTransaction], view: AsyncTransaction | None
    ) -> None:
        """Apply the effects in order. A catalog transaction that lost the race to
        another writer (:class:`TransactionConflict`, nothing of it written)
        before any effect was applied raises :class:`_LostRace` (the synchronous
        catalog runs it again too); every other failure is raised as it is."""
        store = self.store
        for index, effect in enumerate(plan.effects):
            kind = effect[0]
            if kind == "put":
                await store.put(effect[1], effect[2])
            elif kind == "delete":
                await store.delete(effect[1])
            elif kind == "delete_range":
                await store.delete_range(effect[1], effect[2])
            elif kind == "write":
                await store.write(effect[1])
            else:
                _, number, ranges, ops = effect
                tx = txs.pop(number, None) or await store.begin()
                try:
                    await _move(tx, ranges, ops)
                    await tx.commit()
                except TransactionConflict as exc:
                    if index == 0:
                        raise _LostRace(exc) from exc
                    raise
                finally:
                    await tx.discard()
        if plan.pending is not None and view is not None:
            await _move(view, *plan.pending)


def _key_check(state: Catalog) -> Callable[[bytes], None]:
    """A key's check as the catalog ``state`` makes it before a write (its
    :meth:`~Catalog.check_storable`)."""

    def check(key: bytes) -> None:
        state.check_storable((key,))

    return check


class _LostRace(Exception):
    """A catalog transaction that wrote nothing because another writer won."""

    def __init__(self, error: TransactionConflict) -> None:
        super().__init__(str(error))
        self.error = error


async def _move(view: AsyncTransaction, ranges: list[Range], ops: list[Op]) -> None:
    """Add deletions of ``ranges`` then ``ops`` to the transaction ``view``."""
    for start, stop in ranges:
        await view.delete_range(start, stop)
    for key, value in ops:
        if value is None:
            await view.delete(key)
        else:
            await view.put(key, value)
