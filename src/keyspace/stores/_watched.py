"""``WatchedReads``: a store's reads, each made in a state of the store that a
caller's check has seen.

A catalog that must notice a fact another writer may add later (a keyspace
opened on data another program wrote, with no scheme record of its own: a
record written since may name a scheme whose keys overlap its scopes) checks it
before reading. Checking before every read costs a few reads more per read;
an engine that tells its states apart cheaply (LMDB's transaction id) offers
``watched_reads(check)``, whose reads run ``check`` on a view of their own read
transaction only when the store committed since the last check. The check
runs in the very state the read reads, so no commit can fall between them.

Writes pass through to the store unchanged: the catalog checks its facts
inside the transaction of every write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import KeyspaceError
from ._base import Op, PagedReads, ReadView, Store, WriteView
from ._translated import PointSlots

__all__ = ["WatchedReads", "watched"]


def watched(store: Store, check: Callable[[ReadView], object]) -> WatchedReads | None:
    """``store``'s reads behind ``check`` (:class:`WatchedReads`), or ``None``
    where the engine offers no ``watched_reads``: the caller then checks before
    each read itself."""
    offered = getattr(store, "watched_reads", None)
    return None if offered is None else WatchedReads(store, offered(check))


class WatchedReads(PointSlots, PagedReads, WriteView):
    """The reads of ``store`` through ``reads``, the engine's watched reads (an
    object with ``get(key)``, which raises keyspace errors only, ``pages(start,
    stop, reverse, limit, keys, cut)``, as :meth:`PagedReads._pages`, and
    ``count(start, stop, without)``, as :meth:`ReadView.count`); writes go to
    ``store``.

    Cost: the engine's reads plus one comparison of the state's id per read or
    page, and the check once per commit of the store that a read comes after."""

    def __init__(self, store: Store, reads: Any) -> None:
        self._store = store
        self._reads = reads
        self.put = store.put  # writes: the store's own call
        self.get = reads.get  # the engine's watched read itself (it translates its engine's errors)

    def hold(self) -> None:
        """Run the check in the store's current state unless it ran there already:
        what a caller about to read the store some other way asks first."""
        self._reads.hold()

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        if isinstance(exc, KeyspaceError):  # the check's refusal, as it is
            return exc
        return self._store.translate(exc, key)

    def _pages(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        cut: int = 0,
    ) -> Iterator[list[Any]]:
        return self._reads.pages(start, stop, reverse, limit, keys, cut)  # type: ignore[no-any-return]

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        """The engine's count behind the check (its ``without`` filter too)."""
        return self._reads.count(start, stop, without)  # type: ignore[no-any-return]

    # -- writes: the store's own -------------------------------------------------

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        return self._store.put_many(items)

    def delete(self, key: bytes) -> None:
        self._store.delete(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._store.delete_range(start, stop)

    def write(self, ops: Iterable[Op]) -> None:
        self._store.write(ops)

    def __repr__(self) -> str:
        return f"WatchedReads({self._store!r})"
