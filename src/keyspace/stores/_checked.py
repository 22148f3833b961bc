"""``CheckedReads``: a store's reads of one part, each made only in a state of the
store where one key holds the bytes it is expected to hold.

A catalog whose facts other writers may remove and replace (scoped-heed's
registry: another process may unregister a scope's name and register another
name of the same 32-bit hash) cannot trust an answer it read once: a read made
later may find the newcomer's keys. So every read of such a scope on the
committed store checks the fact in the same state of the store as the read
itself, which a check made before the read (in another read transaction) would
not: the fact could change between the two.

- A point read is one ``get_where`` of the part where the engine offers it (LMDB:
  one read transaction reads the check key and the key; a check that held is
  remembered for the state it was read in, so reads of that state skip it), else
  one snapshot of the store.
- A scan, a count, a keys-only scan read one snapshot of the store (held while
  the scan runs).
- Where the check fails, the catalog's ``recheck`` reads the same snapshot and
  says whether the scope is readable there (it may raise, e.g.
  :class:`~keyspace.errors.HashCollision`); when it is not, reads find nothing.

Writes pass through to the part unchanged: the catalog checks its facts inside
the transaction of every write (a read cannot, so it is checked here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import KeyspaceError
from ._base import Op, ReadView, Store, WriteView

__all__ = ["CheckFailed", "CheckedReads"]


class CheckFailed(Exception):
    """Raised by a store's ``get_where(check, check_key, expected, memo, key)``
    when, in the read transaction of the read, ``check_key`` of ``check`` does not
    hold ``expected`` (or when the engine cannot answer in one transaction): the
    caller then reads one snapshot and decides there."""


Recheck = Callable[[ReadView], bool]
"""The catalog's decision in a snapshot where the check failed: whether the scope
is readable there (``False``: reads find nothing); it may raise instead."""


class CheckedReads(WriteView):
    """The reads of ``data`` (the part of ``store`` that holds a scope's keys,
    without their first ``len(tag)`` bytes; ``tag=b""``: ``data`` is ``store``),
    each made where ``check_key`` (a key of ``store``) holds ``expected`` in the
    state read, else decided by ``recheck`` in a snapshot of ``store`` (see the
    module docstring). Writes go to ``data``.

    Cost: a point read where ``data`` offers ``get_where``: its get plus one
    comparison of the state's id (and a read of ``check_key`` once per state of
    the store); else, and per scan or count, one snapshot of ``store`` and one
    point read more."""

    def __init__(
        self, store: Store, data: Store, tag: bytes, check_key: bytes, expected: bytes, recheck: Recheck
    ) -> None:
        self._store = store
        self._data = data
        self._tag = tag
        self._check_key = check_key
        self._expected = expected
        self._recheck = recheck
        self.fast_put = data.fast_put
        self._where: Callable[[bytes], bytes | None] | None = None
        get_where = getattr(data, "get_where", None)
        part = store.narrow(check_key)
        if get_where is not None and part is not None:
            check, cut = part
            memo: list[Any] = [None]  # the id of the last state the check held in
            rest = check_key[cut:]

            def where(key: bytes) -> bytes | None:
                return get_where(check, rest, expected, memo, key)  # type: ignore[no-any-return]

            self._where = where

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
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
        where = self._where
        if where is not None:
            try:
                return where(key)
            except CheckFailed:
                pass  # decided in a snapshot, which also says what an engine error was
        with self._checked() as data:
            return None if data is None else data.get(key)

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        with self._checked() as data:
            if data is not None:
                yield from data.scan(start, stop, reverse=reverse, limit=limit)

    def scan_keys(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[bytes]:
        with self._checked() as data:
            if data is not None:
                yield from data.scan_keys(start, stop, reverse=reverse, limit=limit)

    def count(self, start: bytes = b"", stop: bytes | None = None) -> int:
        with self._checked() as data:
            return 0 if data is None else data.count(start, stop)

    # -- writes: the part's own ------------------------------------------------

    def put(self, key: bytes, value: bytes) -> None:
        self._data.put(key, value)

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
