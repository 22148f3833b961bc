"""``CheckedReads``: a store's reads of one part, each made only in a state of the
store where one key holds the bytes it is expected to hold.

A catalog whose facts other writers may remove and replace (scoped-heed's
registry: another process may unregister a scope's name and register another
name of the same 32-bit hash) cannot trust an answer it read once: a read made
later may find the newcomer's keys. So every read of such a scope on the
committed store checks the fact in the same state of the store as the read
itself, which a check made before the read (in another read transaction) would
not: the fact could change between the two.

- Where the engine offers ``checked_reads`` (LMDB: one read transaction reads the
  check key and the key, or a page of a scan, or a count; a check that held is
  remembered for the state it was read in, so reads of that state skip it), each
  read is that; a scan reads pages of short read transactions as the engine's
  own scans do.
- Elsewhere, and from a check that failed on, a read reads one snapshot of the
  store (a scan: held while the rest of it runs).
- Where the check fails, the catalog's ``recheck`` reads the same snapshot and
  says whether the scope is readable there (it may raise, e.g.
  :class:`~keyspace.errors.HashCollision`); when it is not, reads find nothing.

Writes pass through to the part unchanged: the catalog checks its facts inside
the transaction of every write (a read cannot, so it is checked here). A
catalog whose fact is the check itself (a directory's node) may ask for
``checked_put`` too (``refused``): where the engine offers ``put_if`` (LMDB), a
point put that reads the check key in its own write transaction and writes
only where it holds, so that a scope's ``[]=`` need not take the catalog's
general write route; where the check fails, nothing is written and it raises
``refused()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from itertools import islice
from typing import Any

from ..errors import KeyspaceError
from ._base import Op, PagedReads, ReadView, Store, WriteView, keys_in
from ._cut import cut_keys
from ._translated import PutSlot, translated

__all__ = ["CheckFailed", "CheckedReads"]

_PAGE = 1024


class CheckFailed(Exception):
    """Raised by the reads an engine offers through ``checked_reads(check,
    check_key, expected)`` (an object with ``get(key)``, ``pages(start, stop,
    reverse, limit, keys, cut)`` and ``count(start, stop, without)``, each read in one
    transaction that also reads ``check_key`` of ``check``) where the check does
    not hold, or where the engine cannot answer so: the caller then reads one
    snapshot and decides there."""


Recheck = Callable[[ReadView], bool]
"""The catalog's decision in a snapshot where the check failed: whether the scope
is readable there (``False``: reads find nothing); it may raise instead."""


class CheckedReads(PutSlot, PagedReads, WriteView):
    """The reads of ``data`` (the part of ``store`` that holds a scope's keys,
    without their first ``len(tag)`` bytes; ``tag=b""``: ``data`` is ``store``),
    each made where ``check_key`` (a key of ``store``) holds ``expected`` in the
    state read, else decided by ``recheck`` in a snapshot of ``store`` (see the
    module docstring). Writes go to ``data``; with ``refused``, where ``data``
    is ``store`` and offers ``put_if``, :attr:`checked_put` puts a key only where
    the check holds in the put's own write transaction (else the
    :class:`CheckFailed` it raises translates to ``refused()``).

    Cost: where ``data`` offers ``checked_reads``, its reads plus one comparison
    of the state's id per read or page (and a read of ``check_key`` once per
    state of the store), the point read being the engine's (one Python frame);
    else one snapshot of ``store`` and one point read more per read, scan or
    count. :attr:`checked_put`: the engine's put and one point read."""

    def __init__(
        self,
        store: Store,
        data: Store,
        tag: bytes,
        check_key: bytes,
        expected: bytes,
        recheck: Recheck,
        refused: Callable[[], KeyspaceError] | None = None,
    ) -> None:
        self._store = store
        self._data = data
        self._tag = tag
        self._check_key = check_key
        self._expected = expected
        self._recheck = recheck
        self._refused = refused
        self.put = data.put  # writes: the part's own, its call itself
        self._fast: Any = None  # the engine's checked reads, where it has them
        offered = getattr(data, "checked_reads", None)
        # the part of the store that holds the check key; the store itself where it
        # narrows to none (a store of one part: a directory's node beside its keys)
        part = store.narrow(check_key) or (store, 0)
        if offered is not None:
            check, cut = part
            fast = self._fast = offered(check, check_key[cut:], expected)
            if fast is not None and hasattr(fast, "otherwise"):
                fast.otherwise = self._snapshot_get  # its get then never raises CheckFailed
                self.get = fast.get  # type: ignore[method-assign]  # the engine's checked read itself
        put_if = getattr(data, "put_if", None) if refused is not None and data is store else None
        self.checked_put: Callable[[bytes, bytes], object] | None = (
            None if put_if is None else translated(partial(put_if, check_key, expected), self.translate)
        )
        """A put of one key that checks ``check_key`` in its own write (see the
        module docstring), or ``None``."""

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        """The part's translation; for the :class:`CheckFailed` of
        :attr:`checked_put` (nothing written), ``refused()``."""
        if type(exc) is CheckFailed and self._refused is not None:
            return self._refused()
        return self._data.translate(exc, key)

    @contextmanager
    def _checked(self) -> Iterator[ReadView | None]:
        """The part's view in one snapshot of the store where the check holds or
        ``recheck`` allows reads; ``None`` where it does not."""
        with self._store.snapshot() as snap:
            if snap.get(self._check_key) != self._expected and not self._recheck(snap):
                yield None
                return
            if not self._tag:
                yield snap
                return
            narrowed = snap.narrow(self._tag)
            if narrowed is None or narrowed[1] != len(self._tag):
                raise KeyspaceError(f"{snap!r} does not hold the keys of {self._data!r} under one tag")
            yield narrowed[0]

    def get(self, key: bytes) -> bytes | None:
        fast = self._fast
        if fast is not None:
            try:
                return fast.get(key)  # type: ignore[no-any-return]
            except CheckFailed:
                pass  # decided in a snapshot, which also says what an engine error was
        return self._snapshot_get(key)

    def _snapshot_get(self, key: bytes) -> bytes | None:
        """The read of ``key`` in one snapshot of the store (:meth:`_checked`)."""
        with self._checked() as data:
            return None if data is None else data.get(key)

    def _pages(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        cut: int = 0,
    ) -> Iterator[list[Any]]:
        """The items (``keys``: the keys) of ``[start, stop)`` as lists, each key
        of an item without its first ``cut`` bytes: the engine's checked pages,
        each read where the check holds; from the first page where it does not
        on (or without them), the rest read in one snapshot where ``recheck``
        decides (this view's ``read_pages``)."""
        fast = self._fast
        left = limit
        head = start[:cut]
        if fast is not None:
            try:
                for page in fast.pages(start, stop, reverse, left, keys, cut):
                    yield page
                    if left is not None:
                        left -= len(page)
                    last = page[-1] if keys else head + page[-1][0]
                    if reverse:
                        stop = last
                    else:
                        start = last + b"\x00"
                return
            except CheckFailed:
                pass
        if left is not None and left <= 0:
            return
        with self._checked() as data:
            if data is None:
                return
            items: Iterator[Any]
            if keys:
                items = keys_in(data, start, stop, reverse=reverse, limit=left)
            else:
                items = data.scan(start, stop, reverse=reverse, limit=left)
            while page := list(islice(items, _PAGE)):
                yield cut_keys(page, cut) if cut and not keys else page  # type: ignore[arg-type]

    def count(
        self, start: bytes = b"", stop: bytes | None = None, without: tuple[int, int] | None = None
    ) -> int:
        fast = self._fast
        if fast is not None:
            try:
                return fast.count(start, stop, without)  # type: ignore[no-any-return]
            except CheckFailed:
                pass
        with self._checked() as data:
            return 0 if data is None else data.count(start, stop, without)

    # -- writes: the part's own ------------------------------------------------

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> int:
        return self._data.put_many(items)

    def delete(self, key: bytes) -> None:
        self._data.delete(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self._data.delete_range(start, stop)

    def write(self, ops: Iterable[Op]) -> None:
        self._data.write(ops)

    def __repr__(self) -> str:
        return f"CheckedReads({self._data!r})"
