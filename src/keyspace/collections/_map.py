"""``Item`` (one value) and ``Map`` (typed, composite, ranged keys)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..codecs import Codec
from ..errors import InvalidArgument, InvalidKey, KeyTooLarge, show_bytes
from ..scope import Scope, check_range_arguments
from ._base import Collection, owns_transaction
from ._bounds import prefix_scan
from ._keys import KeySpec, SpecLike
from ._layouts import Layout, Namespace
from ._path import Path

__all__ = ["Item", "Map", "Prefix"]

_MISSING = object()


class Item(Collection):
    """One value stored under ``namespace`` in ``scope``.

    ``save(v)``, ``load()`` (:class:`KeyError` when absent), ``may_load(default)``,
    ``exists()``, ``remove()``, ``update(fn)``. Each costs one point operation
    (``update`` two). Values go through ``value`` (a codec name or object; JSON by
    default). Under the ``COSMWASM`` layout the item is stored at its raw
    namespace, so an item named like a map entry's stored key shares that entry
    (see :mod:`keyspace.collections._layouts`).
    """

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        *,
        value: str | Codec | None = None,
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, layout)
        self.namespace = namespace
        self.key = self.layout.item_key(namespace)
        self.codec = self.layout.value_codec(value)

    def __repr__(self) -> str:
        return f"<Item {self.namespace!r} ({self.layout.name}) in {self._base!r}>"

    def save(self, value: Any) -> None:
        """Store ``value``."""
        self._base[self.key] = self.codec.encode(value)

    def load(self) -> Any:
        """The stored value; :class:`KeyError` when there is none."""
        raw = self._base.get(self.key)
        if raw is None:
            raise KeyError(self.namespace)
        return self.codec.decode(raw)

    def may_load(self, default: Any = None) -> Any:
        """The stored value, or ``default``."""
        raw = self._base.get(self.key)
        return default if raw is None else self.codec.decode(raw)

    def exists(self) -> bool:
        """Whether a value is stored."""
        return self.key in self._base

    def remove(self) -> None:
        """Remove the value (no error when there is none)."""
        self._base.discard(self.key)

    @owns_transaction
    def update(self, fn: Callable[[Any], Any]) -> Any:
        """Store and return ``fn(current value or None)``, atomically."""
        with self._atomic() as base:
            new, raw = self._updated(fn, base.get(self.key))
            base[self.key] = raw
        return new


class _Ranged:
    """Ranged reads over the keys of a namespace that start with ``prefix``."""

    _ns: Namespace
    codec: Codec

    def _scope(self) -> Scope:
        raise NotImplementedError

    _prefix: tuple[Any, ...]
    _rest: KeySpec

    def _fix(self, spec: KeySpec, prefix: tuple[Any, ...]) -> None:
        """Range over the keys of ``spec`` whose leading elements are ``prefix``."""
        self._prefix = prefix
        self._rest = spec.suffix(len(prefix))

    def _span(self) -> tuple[tuple[Any, ...], KeySpec]:
        """The fixed leading elements and the spec of the remaining ones."""
        return self._prefix, self._rest

    def _bounds(
        self, start: Any, stop: Any
    ) -> tuple[tuple[Any, ...], tuple[Any, ...] | None, tuple[Any, ...] | None, int]:
        prefix, rest = self._span()
        lo = None if start is None else rest.elements(start)
        hi = None if stop is None else rest.elements(stop)
        return prefix, lo, hi, len(prefix)

    def _raw(
        self,
        start: Any,
        stop: Any,
        include_start: bool,
        include_stop: bool,
        reverse: bool,
        limit: int | None,
    ) -> tuple[Iterator[tuple[Any, Any]], int]:
        check_range_arguments(include_start, include_stop, reverse, limit)
        prefix, lo, hi, skip = self._bounds(start, stop)
        it = self._ns.scan(self._scope(), prefix, lo, hi, include_start, include_stop, reverse, limit)
        return it, skip

    def items(
        self,
        start: Any = None,
        stop: Any = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(key, value)`` in key order (descending when ``reverse``),
        from ``start`` to ``stop`` (whole keys; ``include_start``/``include_stop``
        decide whether the ends are in), at most ``limit`` of them. Under a
        ``prefix`` the keys are the remaining elements. Cost: one range scan."""
        it, _ = self._raw(start, stop, include_start, include_stop, reverse, limit)
        read, decode = self._ns.key_reader(*self._span()), self.codec.decode
        for k, v in it:
            yield read(k), decode(v)

    def range(self, start: Any = None, stop: Any = None, **kwargs: Any) -> Iterator[tuple[Any, Any]]:
        """cw-storage-plus's name for :meth:`items`."""
        return self.items(start, stop, **kwargs)

    def keys(self, start: Any = None, stop: Any = None, **kwargs: Any) -> Iterator[Any]:
        """Like :meth:`items`, keys only."""
        for k, _ in self.items(start, stop, **kwargs):
            yield k

    def values(self, start: Any = None, stop: Any = None, **kwargs: Any) -> Iterator[Any]:
        """Like :meth:`items`, values only."""
        for _, v in self.items(start, stop, **kwargs):
            yield v

    def range_raw(
        self,
        start: Any = None,
        stop: Any = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Like :meth:`items`, but neither keys nor values are decoded: each key is
        the bytes after the namespace and the prefix (cw-storage-plus's
        ``range_raw``)."""
        it, skip = self._raw(start, stop, include_start, include_stop, reverse, limit)
        raw_remainder = self._ns.raw_remainder
        for k, v in it:
            yield raw_remainder(k, skip), v

    def keys_raw(self, start: Any = None, stop: Any = None, **kwargs: Any) -> Iterator[bytes]:
        """Like :meth:`range_raw`, keys only."""
        for k, _ in self.range_raw(start, stop, **kwargs):
            yield k

    def is_empty(self) -> bool:
        """Whether no key is in range. Cost: a scan of at most one key."""
        return next(self._raw(None, None, True, False, False, 1)[0], None) is None

    def __len__(self) -> int:
        """Number of keys in range. Cost: a scan of all of them."""
        return sum(1 for _ in self._raw(None, None, True, False, False, None)[0])


class Map(Collection, _Ranged):
    """A map from typed keys to values, in namespace ``namespace`` of ``scope``.

    ``key`` is the key spec: one element type (``"str"``, ``"addr"``, ``"bytes"``,
    ``"u8"``–``"u128"``, ``"i8"``–``"i128"``) for bare keys, or a tuple of them
    for composite keys. ``value`` is a codec (JSON by default).

    Point operations: ``save``/``[k] = v``, ``load``/``[k]`` (:class:`KeyError`),
    ``may_load``, ``has``/``in``, ``remove``/``del``, ``update``: one point
    operation each. Ranges: ``items``/``keys``/``values``/``range_raw``/
    ``keys_raw`` with ``start``/``stop`` (inclusive or exclusive), ``reverse``
    and ``limit``; ``prefix(p)`` and ``sub_prefix(p)`` range over the keys whose
    leading elements are ``p``. ``clear()`` removes every key with one range
    delete. Key order is the order of the elements (ints numerically, text and
    bytes by their bytes); under the CosmWasm layout a text or bytes element
    other than the last is length-prefixed, so it sorts by its length first
    (cw-storage-plus's order).
    """

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        *,
        key: SpecLike,
        value: str | Codec | None = None,
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, layout)
        self.namespace = namespace
        self.spec = KeySpec(key)
        self._ns = self.layout.namespace(namespace, self.spec)
        self.codec = self.layout.value_codec(value)
        self._stored = self._ns.key_writer()  # the scope key of a key

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.namespace!r} ({self.layout.name}) in {self._base!r}>"

    def _scope(self) -> Scope:
        return self._ns.scope(self._base)

    def _span(self) -> tuple[tuple[Any, ...], KeySpec]:
        return (), self.spec

    def _roles(self) -> list[tuple[str, Any]]:
        return [("the map", self.namespace)]

    # -- point operations ----------------------------------------------------------

    def save(self, key: Any, value: Any) -> None:
        """Store ``value`` at ``key``."""
        self._scope()[self._stored(key)] = self.codec.encode(value)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.save(key, value)

    def load(self, key: Any) -> Any:
        """The value at ``key``; :class:`KeyError` when there is none."""
        raw = self._scope().get(self._stored(key))
        if raw is None:
            raise KeyError(key)
        return self.codec.decode(raw)

    def __getitem__(self, key: Any) -> Any:
        return self.load(key)

    def may_load(self, key: Any, default: Any = None) -> Any:
        """The value at ``key``, or ``default``."""
        raw = self._scope().get(self._stored(key))
        return default if raw is None else self.codec.decode(raw)

    def has(self, key: Any) -> bool:
        """Whether ``key`` holds a value."""
        return self._stored(key) in self._scope()

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` holds a value; False for a key no map can hold (of
        another shape or type, or too large to store), as ``key in scope``."""
        try:
            return self.has(key)
        except (InvalidKey, KeyTooLarge):
            return False

    def remove(self, key: Any) -> None:
        """Remove ``key`` (no error when it is absent)."""
        self._scope().discard(self._stored(key))

    def __delitem__(self, key: Any) -> None:
        stored = self._stored(key)
        scope = self._scope()
        if stored not in scope:
            raise KeyError(key)
        scope.discard(stored)

    @owns_transaction
    def update(self, key: Any, fn: Callable[[Any], Any]) -> Any:
        """Store and return ``fn(current value or None)`` at ``key``, atomically."""
        stored = self._stored(key)
        with self._atomic() as base:
            scope = self._ns.scope(base)
            new, raw = self._updated(fn, scope.get(stored))
            scope[stored] = raw
        return new

    def key(self, key: Any) -> Any:
        """The key that ``key`` has in the namespace's scope (the full stored bytes
        under the CosmWasm layout on a raw root scope)."""
        return self._stored(key)

    def __iter__(self) -> Iterator[Any]:
        return self.keys()

    # -- prefixes and bulk -----------------------------------------------------------

    def prefix(self, prefix: Any) -> Prefix:
        """The keys whose leading elements are ``prefix`` (a bare value for one
        element, a tuple for several; fewer than the key has). Its ranges yield the
        remaining elements as keys."""
        return Prefix(self, self.spec.prefix_elements(prefix))

    def sub_prefix(self, prefix: Any) -> Prefix:
        """cw-storage-plus's name for a prefix two elements short of the key."""
        return self.prefix(prefix)

    def _namespaces(self) -> tuple[Namespace, ...]:
        """Every namespace the map writes, its own first: beside it an indexed
        map's indexes, a snapshot map's changelog and checkpoints. A map with
        more than its own removes part of itself key by key (:meth:`_drop`)."""
        return (self._ns,)

    @owns_transaction
    def clear(self, limit: int | None = None) -> None:
        """Remove every key of the map and whatever it keeps beside them (an
        indexed map's index entries, a snapshot map's changelog and
        checkpoints: it then reads as never written, at every height),
        atomically; cost: one range delete per namespace. With ``limit``: the
        first ``limit`` keys in key order and what the map keeps for each (index
        entries, change sets; checkpoints stay), atomically (cost: a scan of
        them and one batch; cw-storage-plus#46). :class:`InvalidArgument` for a
        ``limit`` that is not an int of at least 0."""
        if limit is not None:
            self._clear_under((), limit)
            return
        spaces = self._namespaces()
        if len(spaces) == 1:
            spaces[0].clear(self._base)
            return
        with self._atomic() as base:
            for ns in spaces:
                ns.clear(base)

    @owns_transaction
    def _clear_under(self, prefix: tuple[Any, ...], limit: Any) -> None:
        """Remove the keys under ``prefix``, all of them (``limit`` ``None``) or the
        first ``limit`` in key order, atomically (the caller's transaction under
        ``using``). :class:`InvalidArgument` for a ``limit`` that is not an int
        of at least 0 or ``None``."""
        if limit is not None and (type(limit) is not int or limit < 0):
            raise InvalidArgument(
                f"clear(limit=) takes an int of at least 0 or None, not {show_bytes(limit)}"
            )
        if limit is None and len(self._namespaces()) == 1:
            self._ns.clear_prefix(self._base, prefix)
            return
        with self._atomic() as base:
            scope = self._ns.scope(base)
            scan = self._ns.scan(scope, prefix, None, None, True, False, False, limit)
            for elements in [self._ns.elements(k) for k, _ in scan]:
                self._drop(base, elements)

    def _drop(self, base: Scope, elements: tuple[Any, ...]) -> None:
        """Remove the key of ``elements`` and whatever the map keeps for it, in
        ``base``'s transaction."""
        self._ns.scope(base).discard(self._ns.key(elements))

    # -- cw-storage-plus's other reads ----------------------------------------------

    def first(self) -> tuple[Any, Any] | None:
        """``(key, value)`` of the smallest key, or ``None`` when the map is empty
        (``Map::first``). Cost: a scan of one key."""
        return next(self.items(limit=1), None)

    def last(self) -> tuple[Any, Any] | None:
        """``(key, value)`` of the largest key, or ``None`` when the map is empty
        (``Map::last``). Cost: a scan of one key."""
        return next(self.items(reverse=True, limit=1), None)

    def prefix_range(
        self, min: Any = None, max: Any = None, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(key, value)`` of the whole keys whose leading elements lie
        between the prefix bounds ``min`` and ``max``
        (:class:`~keyspace.collections.PrefixBound`; ``None`` leaves a side
        open), in key order (descending when ``reverse``), at most ``limit``.
        Cost: one range scan of the keys yielded (plus two seeks at most)."""
        read, decode = self._ns.key_reader((), self.spec), self.codec.decode
        for k, v in prefix_scan(self._ns, self._scope(), min, max, reverse, limit):
            yield read(k), decode(v)

    def prefix_range_raw(
        self, min: Any = None, max: Any = None, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        """Like :meth:`prefix_range`, neither keys nor values decoded: each key is
        the bytes after the namespace (cw-storage-plus's ``prefix_range_raw``;
        a packed tuple under the tuple layout)."""
        raw_remainder = self._ns.raw_remainder
        for k, v in prefix_scan(self._ns, self._scope(), min, max, reverse, limit):
            yield raw_remainder(k, 0), v

    def path(self, key: Any) -> Path:
        """The handle of one key (cw-storage-plus's ``Path``, which its
        ``Map::key`` returns): ``load``/``may_load``/``save``/``update``/
        ``remove``/``has`` without naming the key again; writes go through this
        collection, so an indexed or snapshot map keeps its indexes and history.
        The key is checked now (:class:`InvalidKey`)."""
        return Path(self, key)


class Prefix(_Ranged):
    """A :class:`Map` seen through fixed leading key elements (``map.prefix(p)``):
    ``items``/``keys``/``values``/``range_raw``/``keys_raw`` over the rest."""

    def __init__(self, owner: Map, prefix: tuple[Any, ...]) -> None:
        self._owner = owner
        self._ns = owner._ns
        self.codec = owner.codec
        self._fix(owner.spec, prefix)

    def _scope(self) -> Scope:
        return self._owner._scope()

    def __repr__(self) -> str:
        return f"<Prefix {self._prefix!r} of {self._owner!r}>"

    def clear(self, limit: int | None = None) -> None:
        """Remove the keys under the prefix, or with ``limit`` the first
        ``limit`` of them in key order, atomically (``Prefix::clear``). Cost: one
        range delete for all of a plain map's, else a scan of them and one batch;
        an indexed map removes their index entries too, a snapshot map their
        history."""
        self._owner._clear_under(self._prefix, limit)
