"""The bulk writes of a scope: ``update``, ``clear``, ``clear_range`` and ``drop``.

Each function takes the scope it writes as its first argument and reads of it
only what :class:`BulkScope` names: its catalog state, its key and value
routes, its write view and the part of it that holds its keys, its first
write. The scope's methods of the same names call them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain, islice
from operator import itemgetter
from typing import Any, Protocol, cast

from ._scan_plan import Range
from ._update_pairs import pairs_checked, update_pairs
from .codecs import BYTES
from .errors import InvalidKey
from .schemes._base import Key, Path
from .schemes._layouts import Layout
from .stores._base import ReadView, WriteView, keys_in

__all__ = ["BulkScope", "clear", "drop", "encode_value", "not_bytes", "update", "write_all"]


class BulkScope(Protocol):
    """What the bulk writes read of a scope (:class:`~keyspace.scope.Scope`)."""

    path: Path

    @property
    def _state(self) -> Any: ...
    @property
    def _layout(self) -> Layout: ...
    @property
    def _data(self) -> ReadView: ...
    @property
    def _stored(self) -> Callable[[Any], bytes]: ...
    @property
    def _venc(self) -> Callable[[Any], Any] | None: ...
    @property
    def _put(self) -> Callable[[bytes, bytes], object] | None: ...
    @property
    def _guard(self) -> object: ...
    @property
    def _unsettled(self) -> Path | None: ...
    def _writer(self) -> WriteView: ...
    def _part(self, view: WriteView) -> WriteView: ...
    def _first_write(self, ops: Sequence[tuple[bytes, bytes | None]], puts: bool = False) -> bool: ...
    def _bind_put(self) -> Callable[[bytes, bytes], object]: ...
    def _hidden(self) -> bool: ...
    def _stored_ranges(self, *args: Any) -> list[Range]: ...


def not_bytes(value: Any) -> bytes:
    """A value that is not ``bytes`` as the bytes codec takes it (a bytes-like
    object's bytes); else :class:`InvalidKey` that says it is the value."""
    try:
        return BYTES.encode(value)
    except InvalidKey as exc:
        raise value_error(exc) from None


def value_error(exc: InvalidKey) -> InvalidKey:
    """A codec's refusal of a value, as an error that says it is the value (the
    codecs' messages serve keys and values alike)."""
    return InvalidKey(f"value {exc}")


def encode_value(venc: Callable[[Any], Any], value: Any) -> bytes:
    """The stored bytes of ``value`` through the value codec's ``venc``: its
    refusal names the value (:func:`value_error`). Cost: one Python call
    besides the codec's."""
    try:
        raw = venc(value)
    except InvalidKey as exc:
        raise value_error(exc) from None
    return raw if type(raw) is bytes else not_bytes(raw)


def write_all(view: WriteView, ops: Sequence[tuple[bytes, bytes | None]], puts: bool = False) -> None:
    """Write ``ops`` (puts, and deletes as ``(key, None)``; ``puts``: the caller
    knows there is no delete) as one atomic batch: ``write`` where the view has it
    (the store: engines with a per-batch operation limit raise
    :class:`TransactionTooLarge` rather than split it), else in the transaction
    the view is, which commits them with everything else."""
    write = getattr(view, "write", None)
    if write is not None:
        write(ops)
    elif puts or None not in map(itemgetter(1), ops):  # one pass in C
        view.put_many(ops)  # type: ignore[arg-type]  # no None values: checked above
    else:
        for k, v in ops:
            if v is None:
                view.delete(k)
            else:
                view.put(k, v)


def update(scope: BulkScope, other: Any, kwargs: dict[str, Any]) -> None:
    """Put the pairs of a mapping (or of an iterable of pairs) and of keyword
    arguments, as ``dict.update``. All or nothing: inside a transaction they
    commit with it; outside, they are written in one atomic transaction of the
    store (engines with a per-batch operation limit: one atomic batch, and
    :class:`~keyspace.errors.TransactionTooLarge` rather than a split).

    Memory: outside a transaction, on engines without a batch limit, the pairs
    are encoded as they are read and handed to the store 4096 at a time, so an
    iterator of any length is written in bounded memory; otherwise they are
    read once into the one list of encoded pairs the batch takes."""
    view = scope._writer()
    pairs = update_pairs(other, kwargs)
    state = scope._state
    with pairs_checked(other):  # a list or tuple's element that is no pair: named
        if view is state.store and view.capabilities.max_batch_ops is None:
            stream(scope, view, encoded(scope, pairs))
            return
        stored, venc = scope._stored, scope._venc
        if venc is None:
            ops = stored_pairs(stored, pairs, other if type(other) is dict and not kwargs else pairs)
        else:
            encode = partial(encode_value, venc)
            ops = [(stored(k), encode(v)) for k, v in pairs]
    if not ops:
        return
    if scope._put is None and scope._first_write(ops, puts=True):
        return
    write_all(scope._part(view), ops, puts=True)


def stored_pairs(
    stored: Callable[[Any], bytes], pairs: Iterable[tuple[Any, Any]], source: Any
) -> list[tuple[bytes, bytes]]:
    """``(stored(key), value)`` of each pair, a value that is not ``bytes`` as the
    bytes codec takes it (:func:`not_bytes`). Made by one C call where ``stored``
    is a layout's transform (its ``stored_pairs``) and ``source``, what ``pairs``
    reads (``pairs`` itself, or the dict whose items they are), is a list or tuple
    of pairs or a dict whose values are all ``bytes``; else by the comprehension
    below, its reference. Cost: ``stored(key)`` and a tuple a pair."""
    in_c = getattr(stored, "stored_pairs", None)
    if in_c is not None:
        made: list[tuple[bytes, bytes]] | Any = in_c(source)
        if made is not NotImplemented:
            return cast(list[tuple[bytes, bytes]], made)
    return [(stored(k), v if type(v) is bytes else not_bytes(v)) for k, v in pairs]


def encoded(scope: BulkScope, pairs: Iterable[tuple[Any, Any]]) -> Iterator[tuple[bytes, bytes]]:
    """``(stored key, stored value)`` of each pair, as the pairs are read."""
    stored, venc = scope._stored, scope._venc
    if venc is None:
        for k, v in pairs:
            yield stored(k), (v if type(v) is bytes else not_bytes(v))
        return
    encode = partial(encode_value, venc)
    for k, v in pairs:
        yield stored(k), encode(v)


def stream(scope: BulkScope, store: WriteView, encoded: Iterator[tuple[bytes, bytes]]) -> None:
    """Write ``encoded`` in one transaction of ``store``, 4096 pairs at a time;
    the scope's first write takes the catalog's checks and records into that
    same transaction. A key the engine refuses (``put_many`` checks them)
    ends the transaction, so nothing of the stream is written."""
    first = next(encoded, None)
    if first is None:
        return
    pending = chain((first,), encoded)
    state = scope._state
    part = scope._part

    def apply(w: WriteView) -> None:
        w = part(w)
        while chunk := list(islice(pending, 4096)):
            w.put_many(chunk)

    if scope._put is None and not state.write_ready(scope.path):
        state.first_write(store, scope.path, apply)
        if state.write_ready(scope.path):
            scope._bind_put()
        return
    with state.store.transaction() as tx:
        apply(tx)


def clear(
    scope: BulkScope,
    start: Key | None,
    stop: Key | None,
    include_start: bool,
    include_stop: bool,
    reverse: bool,
    limit: int | None,
    prefix: Key | None,
    count: bool,
) -> int:
    """:meth:`~keyspace.scope.Scope.clear_range`, whose count is read inside the delete's own write:
    what it removes is what it counts. ``count=False`` (:meth:`~keyspace.scope.Scope.clear`, which
    has no ``limit`` and returns nothing): a range delete counts nothing and is
    one delete of the store where there is one range; own keys that are not
    one range are read first and deleted blind, so that an engine that caps
    the reads of a transaction (etcd's compares) still deletes them in one."""
    view = scope._writer()
    ranges = scope._stored_ranges(start, stop, include_start, include_stop, prefix)
    deleted = 0
    if limit is None and scope._layout.exact:

        def delete_ranges(w: WriteView) -> None:
            nonlocal deleted
            w = scope._part(w)
            if count:
                deleted = sum(w.count(lo, hi) for lo, hi in ranges)
            for lo, hi in ranges:
                w.delete_range(lo, hi)

        single = not count and len(ranges) == 1  # a count and its delete are one write
        scope._state.destructive(view, delete_ranges, single=single, path=scope._unsettled)
        return deleted
    if reverse:
        ranges.reverse()
    # clear(): the own keys read first, through the scope's reads
    known = None if count else own_keys(scope._layout, scope._data, ranges, reverse, limit)
    batch = scope._state.batch_limit

    def delete_keys(w: WriteView) -> None:
        nonlocal deleted
        w = scope._part(w)
        doomed = own_keys(scope._layout, w, ranges, reverse, limit) if known is None else known
        write = getattr(w, "write", None)
        if write is not None and len(doomed) <= batch:
            write([(k, None) for k in doomed])
        else:
            for k in doomed:
                w.delete(k)
        deleted = len(doomed)

    scope._state.destructive(view, delete_keys, path=scope._unsettled)
    return deleted


def own_keys(
    layout: Layout, view: ReadView, ranges: list[Range], reverse: bool, limit: int | None
) -> list[bytes]:
    """The stored own keys ``view`` holds in ``ranges`` (in the order of the
    scan), the first ``limit`` of them with a limit. Cost: one keys-only scan
    per range read, limited by the store where the own ranges are exact."""
    found: list[bytes] = []
    for lo, hi in ranges:
        left = None if limit is None else limit - len(found)
        if left is not None and left <= 0:
            break
        keys: Iterable[bytes] = keys_in(view, lo, hi, reverse=reverse, limit=left if layout.exact else None)
        if not layout.exact:
            keys = filter(layout.is_own, keys)
        found.extend(keys if left is None else islice(keys, left))
    return found


def drop(scope: BulkScope) -> None:
    """Remove the scope and every scope below it. Cost: one range delete
    (native where the engine has one); the ScopeHash root, whose named scopes
    lie beside it, takes one per registered name."""
    view = scope._writer()
    if scope._guard is not None:
        scope._hidden()  # a ScopeHash name whose hash another name holds raises

    def delete_subtree(w: WriteView) -> None:
        for lo, hi in scope._state.subtree_ranges(w, scope.path):
            w.delete_range(lo, hi)

    scope._state.destructive(view, delete_subtree, path=scope._unsettled, own=False)
