"""``PrefixUnion``: several stores of one engine presented as one ordered byte space.

Each part is a store with a distinct one-byte-or-longer tag; the union's key
``tag + k`` is the part's key ``k``. The tags are fixed prefixes, so the union's
byte order is the parts' orders laid end to end (in tag order) and every range of
the union is one range of each part it touches. Keys under no tag read as absent;
writing one raises :class:`~keyspace.errors.InvalidName`.

Atomicity across parts comes from the engine: every part after the first must
offer ``join(view)`` (a view of that part inside a snapshot or transaction of the
first; LMDB named databases of one environment do), so a ``transaction()`` or
``snapshot()`` of the union is one engine transaction, and ``write``/``delete_range``
across parts are atomic.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from .._bytes import prefix_end
from ..errors import InvalidName, KeyspaceError, StoreClosed, StoreError, show_bytes
from ._base import Op, ReadView, Store, WriteView

__all__ = ["PrefixUnion"]

_Part = tuple[bytes, bytes | None, Any]  # tag, end of the tag's range, view


def _part_range(
    tag: bytes, end: bytes | None, start: bytes, stop: bytes | None
) -> tuple[bytes, bytes | None] | None:
    """The part-key range of ``[start, stop)`` within the tag's range, or ``None``."""
    if end is not None and start >= end:
        return None
    if stop is not None and stop <= tag:
        return None
    lo = start[len(tag) :] if start.startswith(tag) else b""
    hi = stop[len(tag) :] if stop is not None and stop.startswith(tag) else None
    return lo, hi


class _Routed(WriteView):
    """Reads and writes routed by tag to the parts' views (stores, snapshots or
    transactions). A view of a snapshot or transaction (``kind``) is ended with
    its block (:meth:`end`): its parts' views end then too, and a scan begun in the
    block raises :class:`~keyspace.errors.StoreClosed` at its next read, within a
    part (the part's own rule) or when it moves on to the next part (checked
    here, once per part)."""

    __slots__ = ("_by_byte", "_ended", "_kind", "_parts", "_url")

    def __init__(self, parts: Sequence[tuple[bytes, Any]], url: str, kind: str = "") -> None:
        self._parts: list[_Part] = [(tag, prefix_end(tag), view) for tag, view in parts]
        self._url = url
        self._kind = kind
        self._ended = False
        # one-byte tags (the common case): route by the key's first byte
        self._by_byte = {t[0]: v for t, v in parts} if all(len(t) == 1 for t, _ in parts) else None

    def end(self) -> None:
        """Mark this snapshot's or transaction's view as ended (its block is over)."""
        self._ended = True

    def _check(self) -> None:
        if self._ended:
            raise StoreClosed(f"this {self._kind} of {self._url} has ended")

    def _route(self, key: bytes) -> tuple[Any, bytes] | None:
        by_byte = self._by_byte
        if by_byte is not None:
            view = by_byte.get(key[0]) if key else None
            return None if view is None else (view, key[1:])
        for tag, _, view in self._parts:
            if key.startswith(tag):
                return view, key[len(tag) :]
        return None

    def _target(self, key: bytes) -> tuple[Any, bytes]:
        found = self._route(key)
        if found is None:
            tags = ", ".join(show_bytes(t) for t, _, _ in self._parts)
            raise InvalidName(f"key {show_bytes(key)} is outside every database of {self._url} (tags {tags})")
        return found

    def narrow(self, prefix: bytes) -> tuple[ReadView, int] | None:
        """The part whose tag ``prefix`` starts with, and the tag's length."""
        for tag, _, view in self._parts:
            if prefix.startswith(tag):
                return view, len(tag)
        return None

    def get(self, key: bytes) -> bytes | None:
        found = self._route(key)
        if found is None:
            return None
        view, rest = found
        return view.get(rest)  # type: ignore[no-any-return]

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        if limit is not None and limit <= 0:
            return
        left = limit
        for tag, end, view in reversed(self._parts) if reverse else self._parts:
            ranged = _part_range(tag, end, start, stop)
            if ranged is None:
                continue
            self._check()
            for k, v in view.scan(ranged[0], ranged[1], reverse=reverse, limit=left):
                yield tag + k, v
                if left is not None:
                    left -= 1
                    if left == 0:
                        return

    def put(self, key: bytes, value: bytes) -> None:
        view, rest = self._target(key)
        view.put(rest, value)

    def delete(self, key: bytes) -> None:
        found = self._route(key)
        if found is not None:
            found[0].delete(found[1])

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        for tag, end, view in self._parts:
            ranged = _part_range(tag, end, start, stop)
            if ranged is not None:
                view.delete_range(*ranged)

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError:
        first = self._parts[0][2]
        return first.translate(exc, key)  # type: ignore[no-any-return]


class PrefixUnion(_Routed, Store):
    """``PrefixUnion([(tag, store), ...], url=...)``: the stores as one byte space
    (see the module docstring). Tags must be non-empty and none a prefix of
    another; every store after the first needs ``join``. ``close()`` closes the
    parts. Costs: a point operation is one tag comparison per part plus the part's
    own; a scan or range delete touches only the parts its range overlaps; outside
    a transaction, ``write`` and a range delete over several parts are one joint
    transaction."""

    def __init__(self, parts: Sequence[tuple[bytes, Store]], *, url: str) -> None:
        tags = [t for t, _ in parts]
        for i, a in enumerate(tags):
            if not a:
                raise StoreError("a PrefixUnion tag must not be empty")
            for b in tags[i + 1 :]:
                if a.startswith(b) or b.startswith(a):
                    raise StoreError(f"PrefixUnion tags {show_bytes(a)} and {show_bytes(b)} overlap")
        for _, store in parts[1:]:
            if not callable(getattr(store, "join", None)):
                raise StoreError(f"{store.url} cannot join another store's transactions (no join)")
        ordered = sorted(parts, key=lambda p: p[0])
        super().__init__(ordered, url)
        self.url = url
        self._stores = [s for _, s in parts]  # the first one's views are joined by the others
        limits = [s.capabilities.max_key_size for _, s in parts]
        known = [limit + len(t) for (t, _), limit in zip(parts, limits, strict=True) if limit is not None]
        self.capabilities = replace(
            parts[0][1].capabilities,
            max_key_size=min(known) if known else None,
            empty_keys=False,
            native_delete_range=False,
            multi_process=all(s.capabilities.multi_process for _, s in parts),
            key_tag=len(tags[0]) if len({len(t) for t in tags}) == 1 else 0,  # tags of one length
        )
        self._tags = {id(s): t for t, s in parts}

    def key_refusal(self, key: bytes) -> KeyspaceError:
        """The refusal of the part whose tag ``key`` starts with, of the key
        without its tag: the key and the limit as that database counts them."""
        found = self._route(key)
        if found is None:
            return super().key_refusal(key)
        part, rest = found
        return part.key_refusal(rest)  # type: ignore[no-any-return]

    @contextmanager
    def _joint(self, view: ReadView, kind: str) -> Iterator[_Routed]:
        first = self._stores[0]
        views = [(self._tags[id(first)], view)]
        views += [(self._tags[id(s)], s.join(view)) for s in self._stores[1:]]  # type: ignore[attr-defined]
        routed = _Routed(views, self.url, kind)
        try:
            yield routed
        finally:
            routed.end()

    @contextmanager
    def transaction(self) -> Iterator[WriteView]:
        with self._stores[0].transaction() as view, self._joint(view, "transaction") as routed:
            yield routed

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        with self._stores[0].snapshot() as view, self._joint(view, "snapshot") as routed:
            yield routed

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """A scan over one part reads that part; over several, one joint snapshot."""
        touched = [p for p in self._parts if _part_range(p[0], p[1], start, stop) is not None]
        if len(touched) <= 1:
            yield from super().scan(start, stop, reverse=reverse, limit=limit)
            return
        with self.snapshot() as snap:
            yield from snap.scan(start, stop, reverse=reverse, limit=limit)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        with self.transaction() as view:
            view.delete_range(start, stop)

    def write(self, ops: Iterable[Op]) -> None:
        batch = list(ops)
        for key, _ in batch:
            self._target(key)  # refuse keys under no tag before writing anything
        with self.transaction() as view:
            for key, value in batch:
                if value is None:
                    view.delete(key)
                else:
                    view.put(key, value)

    def close(self) -> None:
        for store in self._stores:
            store.close()

    def __repr__(self) -> str:
        return f"PrefixUnion({self.url!r})"
