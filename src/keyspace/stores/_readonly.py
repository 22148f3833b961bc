"""A read-only face over any store: reads pass through, every write is refused.

``open_store(url, readonly=True)`` opens the engine in its own non-creating,
read-only mode where it has one (each adapter first checks that the path holds a
store of its engine, so nothing is created or changed anywhere) and wraps it here,
so that every write — ``put``, ``delete``, ``write``, ``delete_range``, a
transaction's first write — raises the same :class:`~keyspace.errors.StoreError`
on every engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any

from ..errors import KeyspaceError, StoreClosed, StoreError
from ._base import Capabilities, DelegatedReads, Op, ReadView, Store, WriteView
from ._events import StoreWatch

__all__ = ["ReadOnlyStore"]


class ReadOnlyStore(DelegatedReads, Store):
    """``inner`` with every write refused. Reads cost one Python call more than the
    inner store's, except ``get``, which is the inner's."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.url = inner.url
        self.capabilities: Capabilities = inner.capabilities
        self.get = inner.get  # type: ignore[method-assign]  # the inner's call itself
        self.readonly = True

    def _reads(self) -> ReadView:
        return self.inner

    def narrow(self, prefix: bytes) -> tuple[ReadView, int] | None:
        """The inner store's part for ``prefix`` (see ``ReadView.narrow``), read-only
        as this store is. Cost: the inner's, and one wrapper."""
        got = self.inner.narrow(prefix)
        if got is None or not isinstance(got[0], Store):
            return None
        return ReadOnlyStore(got[0]), got[1]

    def checked_reads(self, check: ReadView, check_key: bytes, expected: bytes) -> Any:
        """The inner store's ``checked_reads`` (see
        :class:`~keyspace.stores._checked.CheckedReads`), for a ``check`` that is
        read-only as this store is; ``None`` where the inner has none."""
        offered = getattr(self.inner, "checked_reads", None)
        if offered is None:
            return None
        return offered(check.inner if isinstance(check, ReadOnlyStore) else check, check_key, expected)

    def _refuse(self, what: str) -> StoreError:
        return StoreError(f"{self.url} was opened read-only: {what} refused (open it without readonly)")

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        return self.inner.translate(exc, key)

    def put(self, key: bytes, value: bytes) -> None:
        raise self._refuse("put")

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        raise self._refuse("put")

    def delete(self, key: bytes) -> None:
        raise self._refuse("delete")

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        raise self._refuse("delete_range")

    def write(self, ops: Iterable[Op]) -> None:
        raise self._refuse("write")

    def snapshot(self) -> AbstractContextManager[ReadView]:
        return self.inner.snapshot()

    def transaction(self) -> AbstractContextManager[WriteView]:
        return _ReadOnlyTransaction(self, self.inner.snapshot())

    def watch(
        self, ranges: Sequence[tuple[bytes, bytes | None]], *, start_revision: int | None = None
    ) -> StoreWatch:
        """Watching is reading: the inner store's watch."""
        return self.inner.watch(ranges, start_revision=start_revision)

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self.inner!r})"


class _ReadOnlyTransaction(DelegatedReads, WriteView):
    """A transaction of a read-only store: a snapshot whose writes are refused.
    Its reads, fast paths and the iterators they give are the snapshot's, and end
    with it: once the block has ended, a read raises
    :class:`~keyspace.errors.StoreClosed`, and so does a scan or seeker begun in
    the block at its next read (the snapshot's own rule)."""

    def __init__(self, store: ReadOnlyStore, snapshot: AbstractContextManager[ReadView]) -> None:
        self._store = store
        self._context = snapshot
        self._view: ReadView | None = None
        self._ended = False

    def _reads(self) -> ReadView:
        return self._live()

    def __enter__(self) -> _ReadOnlyTransaction:
        self._view = self._context.__enter__()
        self.get = self._view.get  # type: ignore[method-assign]  # the snapshot's call itself
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Any:
        self._ended = True
        return self._context.__exit__(exc_type, exc, tb)

    def _live(self) -> ReadView:
        if self._ended:
            raise StoreClosed(f"this transaction of {self._store.url} has ended")
        if self._view is None:
            raise StoreError("a transaction of a read-only store used outside its block")
        return self._view

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """The snapshot's translation (also once it has ended: an error of an
        iterator it gave out); the store's before the block."""
        view = self._view
        return self._store.translate(exc, key) if view is None else view.translate(exc, key)

    def narrow(self, prefix: bytes) -> tuple[ReadView, int] | None:
        """The snapshot's part for ``prefix`` (see ``ReadView.narrow``), its writes
        refused as this transaction's are."""
        got = self._live().narrow(prefix)
        if got is None:
            return None
        part = _ReadOnlyTransaction(self._store, nullcontext(got[0]))
        part.__enter__()
        return part, got[1]

    def put(self, key: bytes, value: bytes) -> None:
        raise self._store._refuse("put")

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        raise self._store._refuse("put")

    def delete(self, key: bytes) -> None:
        raise self._store._refuse("delete")

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        raise self._store._refuse("delete_range")
