"""Watching a scope: :meth:`Scope.watch` and its events.

The store reports changes of byte ranges (:meth:`Store.watch`); this module asks it
for the scope's own range(s) (or its subtree range), keeps only the stored keys
that belong to the scope exactly as :meth:`Scope.items` would, and decodes them
into :class:`WatchEvent` objects with the scope's codecs. One mechanism for every
store: whether a store can watch is its ``capabilities.watch``; a store that
cannot raises :class:`~keyspace.errors.WatchUnsupported` when the watch is made,
never an empty stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ._closing import Closing
from .errors import StoreClosed
from .schemes._base import Path
from .stores._base import Store
from .stores._events import StoreWatch, check_timeout

__all__ = ["ScopeWatch", "WatchEvent"]

Decode = Callable[[bytes], "tuple[Path, Any] | None"]
"""Stored key -> ``(path, key)``, or ``None`` for a key that is not the scope's."""


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change seen by :meth:`Scope.watch`: ``kind`` ``"put"`` or ``"delete"``;
    ``path`` the scope it happened in (the watched scope itself unless
    ``subtree=True``); ``key`` and ``value`` decoded with the scope's codecs
    (``value`` is ``None`` for a delete); ``revision`` the store revision."""

    kind: Literal["put", "delete"]
    path: Path
    key: Any
    value: Any
    revision: int


class ScopeWatch(Closing):
    """The stream of :class:`WatchEvent` of one scope: an iterator, an async
    iterator and a context manager. ``get(timeout)`` waits at most ``timeout``
    seconds; ``close()`` ends it (iteration then stops). ``revision`` is the
    revision of the last event handed out."""

    def __init__(self, source: StoreWatch, decode: Decode, value: Callable[[bytes], Any] | None) -> None:
        self._source = source
        self._decode = decode
        self._value = value

    @property
    def revision(self) -> int:
        return self._source.revision

    @property
    def store_watch(self) -> StoreWatch:
        """The underlying byte-level stream (engine details such as reconnects)."""
        return self._source

    def _event(self, raw: Any) -> WatchEvent | None:
        decoded = self._decode(raw.key)
        if decoded is None:
            return None
        path, key = decoded
        value = raw.value
        if value is not None and self._value is not None:
            value = self._value(value)
        return WatchEvent(raw.kind, path, key, value, raw.revision)

    def get(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event, or ``None`` when ``timeout`` seconds passed without one:
        one deadline for the call, however many changes of the watched range that
        are not this scope's (its children's, where the range holds them) arrive
        meanwhile and are passed over. Changes already here are always looked
        through, past the deadline too (``get(0)`` finds an event behind a
        child's): ``None`` means none of this scope's was waiting."""
        check_timeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        left = timeout
        take = self._source._take  # the timeout checked above, once
        while True:
            raw = take(left)
            if raw is None:
                return None
            event = self._event(raw)
            if event is not None:
                return event
            if deadline is not None:
                left = max(0.0, deadline - time.monotonic())

    def __iter__(self) -> Iterator[WatchEvent]:
        for raw in self._source:
            event = self._event(raw)
            if event is not None:
                yield event

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._async_events()

    async def _async_events(self) -> AsyncIterator[WatchEvent]:
        """Wakes up through :meth:`StoreWatch.listen` (the producer sets an
        :class:`asyncio.Event` with ``call_soon_threadsafe``): no thread waits, the
        loop never blocks. Ends when the watch is closed; raises, as iterating
        without ``async`` does, the error that ended the stream
        (:class:`~keyspace.errors.StoreClosed` when the store was closed under it)."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(ready.set)

        remove = self._source.listen(wake)
        try:
            while True:
                ready.clear()  # before looking, so a push after the look still wakes us
                try:
                    event = self.get(0)
                except StoreClosed:
                    if self._source.error is None:  # this watch was closed
                        return
                    raise
                if event is not None:
                    yield event
                else:
                    await ready.wait()
        finally:
            remove()

    def close(self) -> None:
        self._source.close()


def watch_ranges(
    store: Store,
    ranges: list[tuple[bytes, bytes | None]],
    decode: Decode,
    value: Callable[[bytes], Any] | None,
    start_revision: int | None,
) -> ScopeWatch:
    """A :class:`ScopeWatch` over ``ranges`` of ``store``; raises
    :class:`~keyspace.errors.WatchUnsupported` where the store cannot watch."""
    return ScopeWatch(store.watch(ranges, start_revision=start_revision), decode, value)


def watch_scope(
    store: Store,
    path: Path,
    *,
    own_ranges: tuple[tuple[bytes, bytes | None], ...],
    own_exact: bool,
    is_own: Callable[[bytes], bool],
    prefix: bytes,
    key_decode: Callable[[bytes], Any],
    subtree_ranges: list[tuple[bytes, bytes | None]] | None,
    subtree_decode: Callable[[bytes], tuple[Path, Any] | None],
    value: Callable[[bytes], Any] | None,
    start_revision: int | None,
) -> ScopeWatch:
    """The watch of one scope from its public facts: with ``subtree_ranges`` every
    key of the subtree, decoded by ``subtree_decode``; else only the keys that
    ``own_ranges`` hold and (unless ``own_exact``) ``is_own`` accepts, decoded by
    ``key_decode`` after the scope's ``prefix``."""
    if subtree_ranges is not None:

        def decode_subtree(stored: bytes) -> tuple[Path, Any] | None:
            return subtree_decode(stored)

        return watch_ranges(store, subtree_ranges, decode_subtree, value, start_revision)
    plen = len(prefix)

    def decode_own(stored: bytes) -> tuple[Path, Any] | None:
        rem = stored[plen:]
        if not (own_exact or is_own(rem)):
            return None
        return path, key_decode(rem)

    return watch_ranges(store, list(own_ranges), decode_own, value, start_revision)
