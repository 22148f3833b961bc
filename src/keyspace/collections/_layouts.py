"""Layouts: where a collection's entries go inside the scope it is given.

A layout turns (namespace, key elements) into keys of a scope, and back. Two are
built in, and every collection runs on either through the same methods:

* :data:`TUPLE` (the default in the tuple scheme): a namespace is a child scope of the collection's
  scope, named by the namespace, whose keys are tuple-layer composite keys of the
  elements (so under :class:`~keyspace.TupleScheme` a stored key unpacks to
  ``(path + (namespace,), *elements)``); an ``Item`` is the key ``namespace`` in
  the collection's scope itself.
* :data:`COSMWASM` (the default in the byte schemes): cw-storage-plus's bytes, as
  bytes keys of the collection's scope. An ``Item`` is the raw namespace; a ``Map`` key is
  ``len(ns) ns len(k1) k1 … kn`` (every element length-prefixed except the last,
  which is raw); values are JSON as serde writes it (compact, fields in order).
  So, as in cw-storage-plus, an ``Item`` named ``len(ns) ns k`` and the entry of
  key ``k`` of a ``Map`` of namespace ``ns`` in the same scope are one stored
  entry (under ``TUPLE`` they never meet: a map's entries are in a child scope).
  On the root scope of a keyspace whose scheme stores keys raw (``LengthPrefixed``,
  ``Naive``) the stored bytes are exactly cw-storage-plus's; on any other scope
  they are the scope's encoding of those bytes, with the same order. Where the
  scheme does not keep keys in order within a scope (``ScopeHash``, which stores
  a key's length first), a range reads the keys under the prefix with ``prefix=``
  (one range per key length stored) and sorts them: the same items in the same
  order, at the reads of the n keys under the prefix and O(n log r) for their r
  runs of one length, each already in key order (the sort merges runs).
"""

from __future__ import annotations

import base64
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, takewhile
from operator import itemgetter
from typing import Any

from .._bytes import prefix_end
from ..codecs import JSON as _JSON
from ..codecs import Codec, JsonCodec, resolve_codec
from ..errors import DecodeError, show_bytes
from ..schemes._base import Property, component_bytes
from ..schemes.length_prefixed import decompose, to_length_prefixed, to_length_prefixed_nested
from ..scope import Scope
from ..stores._base import limited
from ..tuples import pack, unpack
from ._keys import KeySpec, KeyType

__all__ = ["COSMWASM", "TUPLE", "CosmWasmLayout", "Layout", "Namespace", "TupleLayout", "joined_key"]

Elements = tuple[Any, ...]
Bound = Elements | None


def _in_key_order(
    scope: Scope,
    base: bytes,
    lo: bytes,
    lo_incl: bool,
    hi: bytes | None,
    hi_incl: bool,
    reverse: bool,
    limit: int | None,
) -> Iterator[tuple[bytes, bytes]]:
    """``scope.items(start=lo, stop=hi, ...)`` in key order, for a scope whose stored
    order is not key order: every key starting with ``base`` (``prefix=``, which
    every scheme answers exactly), cut to the bounds and sorted. Cost: what
    ``prefix=`` reads (ScopeHash: the n keys under ``base``, one range per key
    length stored), then holding and sorting them: O(n log r) for r key lengths,
    as each length's keys come in key order and the sort merges such runs."""
    if limit is not None and limit <= 0:
        scope._touch()  # nothing to read, on a view that must still be open
        return iter(())
    found = [
        (k, v)
        for k, v in scope.items(prefix=base)
        if (lo <= k if lo_incl else lo < k) and (hi is None or (k <= hi if hi_incl else k < hi))
    ]
    found.sort(key=itemgetter(0), reverse=reverse)
    return _paged(scope, base, found if limit is None else found[:limit])


_PAGE = 1024


def _paged(scope: Scope, base: bytes, found: list[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, bytes]]:
    """``found`` a page (1024 items) at a time, as the scans of the other layouts
    read theirs: before each page after the first, a read of one key under
    ``base`` raises :class:`~keyspace.errors.StoreClosed` once the view the scope
    reads (a transaction's, a snapshot's) has ended."""
    for at in range(0, len(found), _PAGE):
        if at:
            next(iter(scope.items(prefix=base, limit=1)), None)
        yield from found[at : at + _PAGE]


def joined_key(parts: Sequence[bytes]) -> bytes:
    """cw-storage-plus's ``joined_key``: every part length-prefixed except the
    last, which is raw; one part is itself, none is ``b""``."""
    if not parts:
        return b""
    return to_length_prefixed_nested(parts[:-1]) + parts[-1]


class Namespace(ABC):
    """The keys of one namespace of a collection under a layout (pure key math,
    no store): ``key(elements)`` is the key in ``scope(base)``; ``elements(key)``
    its inverse; ``scan`` a range of full keys sharing leading elements."""

    def __init__(self, name: str | bytes, spec: KeySpec) -> None:
        self.name = name
        self.spec = spec

    @abstractmethod
    def scope(self, base: Scope) -> Scope:
        """The scope that holds this namespace's keys, given the collection's."""

    @abstractmethod
    def key(self, elements: Elements) -> Any:
        """The scope key of a full key given as checked flat elements."""

    @abstractmethod
    def elements(self, key: Any) -> Elements:
        """The flat elements of a scope key of this namespace (:class:`DecodeError`
        when it is not one)."""

    def key_writer(self) -> Callable[[Any], Any]:
        """``write(key)``: the scope key of a full key given as the spec takes it
        (checked: :class:`InvalidKey` for a key of another shape or type). Made
        once per collection, so that a layout can join what it knows in advance."""
        key, elements = self.key, self.spec.elements
        return lambda k: key(elements(k))

    def key_reader(self, prefix: Elements, rest: KeySpec) -> Callable[[Any], Any]:
        """``read(key)``: the key, in ``rest``'s shape, of a scope key that
        :meth:`scan` yielded under ``prefix`` (its elements after the prefix's).
        Made once per scan, so that a layout can cut what it knows in advance."""
        skip, elements, key_of = len(prefix), self.elements, rest.key_of
        return lambda key: key_of(elements(key)[skip:])

    @abstractmethod
    def relative(self, elements: Elements) -> bytes:
        """A full key as bytes relative to the namespace (an index's reference to
        its record): cw-storage-plus's ``joined_key`` or a packed tuple."""

    @abstractmethod
    def from_relative(self, raw: bytes) -> Elements:
        """Inverse of :meth:`relative`."""

    @abstractmethod
    def raw_remainder(self, key: Any, skip: int) -> bytes:
        """The bytes of a scope key after its namespace and its first ``skip``
        elements, without decoding the rest (cw-storage-plus's ``range_raw``)."""

    def clear(self, base: Scope) -> None:
        """Remove every key of the namespace from ``scope(base)``: one range delete
        (:meth:`clear_prefix` with no prefix)."""
        self.clear_prefix(base, ())

    @abstractmethod
    def clear_prefix(self, base: Scope, prefix: Elements) -> None:
        """Remove every key of the namespace whose leading elements are ``prefix``
        from ``scope(base)``: one range delete (a scan on a scheme whose stored
        order is not key order)."""

    @abstractmethod
    def scan(
        self,
        scope: Scope,
        prefix: Elements,
        start: Bound,
        stop: Bound,
        include_start: bool,
        include_stop: bool,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(scope key, raw value)`` of the keys whose first elements are
        ``prefix``, bounded by ``start``/``stop`` (the remaining elements, whole),
        in key order (descending when ``reverse``), at most ``limit``.
        Cost: one range scan of the keys yielded, plus at most one more."""

    @abstractmethod
    def prefix_scan(
        self,
        scope: Scope,
        lo: Bound,
        lo_incl: bool,
        hi: Bound,
        hi_incl: bool,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(scope key, raw value)`` of the keys whose leading elements lie
        between the prefixes ``lo`` and ``hi`` (cw-storage-plus's
        ``prefix_range``): an inclusive ``lo`` takes the keys that start with it,
        an exclusive one starts after them; an inclusive ``hi`` takes the keys
        that start with it, an exclusive one stops before them. ``None`` leaves
        that side open. In key order (descending when ``reverse``), at most
        ``limit``."""


class Layout(ABC):
    """How collections place their namespaces in a scope."""

    name: str
    typed_keys: bool = False
    """Whether its keys are tuples of typed elements, which only a scheme that
    takes typed keys stores (:attr:`~keyspace.schemes.Scheme.typed_keys`)."""

    @abstractmethod
    def namespace(self, name: str | bytes, spec: KeySpec) -> Namespace:
        """The keys of namespace ``name`` with keys of ``spec``."""

    @abstractmethod
    def item_key(self, name: str | bytes) -> Any:
        """The key of the ``Item`` called ``name`` in the collection's scope."""

    def value_codec(self, spec: str | Codec | None) -> Codec:
        """The codec for values given as ``spec`` (default ``"json"``)."""
        return resolve_codec("json" if spec is None else spec)

    @abstractmethod
    def unique_entry(self, pk: bytes, raw_value: bytes) -> bytes:
        """The value a unique index stores for the record at relative key ``pk``."""

    @abstractmethod
    def unique_pk(self, entry: bytes) -> bytes:
        """The relative key of the record a unique index entry refers to."""

    @abstractmethod
    def multi_entry(self, pk: bytes) -> bytes:
        """The value a multi index stores beside its key."""

    def __repr__(self) -> str:
        return f"<layout {self.name}>"


# -- tuple layout ----------------------------------------------------------------------


class _TupleNamespace(Namespace):
    def __init__(self, name: str | bytes, spec: KeySpec) -> None:
        super().__init__(name, spec)
        self._made: tuple[Scope | None, Scope | None] = (None, None)

    def scope(self, base: Scope) -> Scope:
        """The child scope ``name`` of ``base``, kept for the last base asked (a
        collection asks once per operation, with the same base until it is bound
        to a transaction): one identity test instead of a scope per operation."""
        made_for, made = self._made  # one read: threads see a pair, never half of one
        if made_for is base and made is not None:
            return made
        made = base.scope(self.name)
        self._made = (base, made)
        return made

    def key(self, elements: Elements) -> Any:
        return elements

    def key_writer(self) -> Callable[[Any], Any]:
        """A bare key is itself, checked: the tuple scheme stores ``x`` as it
        stores ``(x,)``, through its one-call routes for str and bytes."""
        if not self.spec.bare:
            return super().key_writer()
        return self.spec.types[0].check

    def elements(self, key: Any) -> Elements:
        elements = key if type(key) is tuple else (key,)
        if len(elements) != len(self.spec):
            raise DecodeError(f"key {show_bytes(key)} has {len(elements)} elements, not {len(self.spec)}")
        return elements

    def key_reader(self, prefix: Elements, rest: KeySpec) -> Callable[[Any], Any]:
        """Where the key is one bare element, it is the element of the stored
        tuple after the prefix's: one index where the tuple has the spec's length
        (else :meth:`elements` says why it is no key of this namespace)."""
        if not rest.bare:
            return super().key_reader(prefix, rest)
        skip, size, elements = len(prefix), len(self.spec), self.elements

        def read(key: Any) -> Any:
            if type(key) is tuple and len(key) == size:
                return key[skip]
            return elements(key)[skip]

        return read

    def relative(self, elements: Elements) -> bytes:
        return pack(elements)

    def from_relative(self, raw: bytes) -> Elements:
        return unpack(raw)

    def raw_remainder(self, key: Any, skip: int) -> bytes:
        return pack(self.elements(key)[skip:])

    def clear_prefix(self, base: Scope, prefix: Elements) -> None:
        if prefix:
            self.scope(base).clear_range(prefix=prefix)
        else:
            self.scope(base).clear()

    def scan(
        self,
        scope: Scope,
        prefix: Elements,
        start: Bound,
        stop: Bound,
        include_start: bool,
        include_stop: bool,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[Any, Any]]:
        # The low end of a prefix is the prefix itself as a key; its high end is no
        # key, so a scan without ``stop`` under a prefix ends where the prefix does.
        lo: Any = (*prefix, *start) if start is not None else (prefix or None)
        lo_incl = include_start if start is not None else True
        if stop is not None:
            return iter(
                scope.items(
                    start=lo,
                    stop=(*prefix, *stop),
                    include_start=lo_incl,
                    include_stop=include_stop,
                    reverse=reverse,
                    limit=limit,
                )
            )
        if not prefix:
            return iter(scope.items(start=lo, include_start=lo_incl, reverse=reverse, limit=limit))
        n = len(prefix)
        if not reverse:
            items = scope.items(start=lo, include_start=lo_incl, limit=limit)
            return takewhile(lambda kv: self.elements(kv[0])[:n] == prefix, items)
        items = scope.items(prefix=prefix, reverse=True)
        if start is not None:
            low = pack(lo)

            def above(kv: tuple[Any, Any]) -> bool:
                packed = pack(self.elements(kv[0]))
                return packed >= low if lo_incl else packed > low

            items = takewhile(above, items)
        return limited(items, limit)

    def prefix_scan(
        self,
        scope: Scope,
        lo: Bound,
        lo_incl: bool,
        hi: Bound,
        hi_incl: bool,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[Any, Any]]:
        # A prefix as a key sorts before every key that starts with it, so an
        # inclusive low end and an exclusive high end are the prefixes themselves;
        # an exclusive low end starts after the last key under it (one seek), and
        # the keys under an inclusive high end are one more prefix= range. A low
        # end past the high end leaves nothing, unless it lies under an inclusive
        # high end (a longer prefix that starts with it): then the keys under the
        # high end from the low end on.
        if lo is not None and hi is not None:
            packed_lo, packed_hi = pack(lo), pack(hi)
            if packed_lo > packed_hi and not (hi_incl and packed_lo.startswith(packed_hi)):
                return iter(scope.items(limit=0))
        start: Any = lo
        start_incl = True
        if lo is not None and not lo_incl:
            last = next(iter(scope.keys(prefix=lo, reverse=True, limit=1)), None)
            if last is not None:
                start, start_incl = last, False
        main: Iterator[tuple[Any, Any]] = iter(
            scope.items(start=start, stop=hi, include_start=start_incl, reverse=reverse)
        )
        if hi is None or not hi_incl:
            return limited(main, limit)
        low = None if start is None else pack(start if type(start) is tuple else (start,))

        def after_start(kv: tuple[Any, Any]) -> bool:
            if low is None:
                return True
            packed = pack(self.elements(kv[0]))
            return packed >= low if start_incl else packed > low

        tail = filter(after_start, scope.items(prefix=hi, reverse=reverse))
        return limited(chain(tail, main) if reverse else chain(main, tail), limit)


class TupleLayout(Layout):
    """Namespaces as child scopes with tuple-layer composite keys (see the module
    notes). Needs a scope that takes typed keys (:class:`~keyspace.TupleScheme`)."""

    name = "tuple"
    typed_keys = True

    def namespace(self, name: str | bytes, spec: KeySpec) -> Namespace:
        return _TupleNamespace(name, spec)

    def item_key(self, name: str | bytes) -> Any:
        return name

    def unique_entry(self, pk: bytes, raw_value: bytes) -> bytes:
        return pk

    def unique_pk(self, entry: bytes) -> bytes:
        return entry

    def multi_entry(self, pk: bytes) -> bytes:
        return b""


# -- CosmWasm layout -------------------------------------------------------------------


SERDE_JSON = JsonCodec(sort_keys=False)
"""JSON as serde_json writes it: compact, object fields in the given order."""


class _CwNamespace(Namespace):
    def __init__(self, name: str | bytes, spec: KeySpec) -> None:
        super().__init__(name, spec)
        self.head = to_length_prefixed(name)

    def scope(self, base: Scope) -> Scope:
        return base

    def key(self, elements: Elements) -> bytes:
        return self.head + joined_key(self.spec.to_bytes(elements))

    def key_writer(self) -> Callable[[Any], Any]:
        """A bare key is the namespace's bytes and the key's, checked."""
        if not self.spec.bare:
            return super().key_writer()
        head, checked_bytes = self.head, self.spec.types[0].checked_bytes
        return lambda k: head + checked_bytes(k)

    def prefix_bytes(self, prefix: Elements) -> bytes:
        """cw-storage-plus's ``Prefix::new(ns, prefix)``: every element length-prefixed."""
        return self.head + to_length_prefixed_nested(self.spec.to_bytes(prefix))

    def elements(self, key: Any) -> Elements:
        if type(key) is not bytes or not key.startswith(self.head):
            raise DecodeError(f"key {show_bytes(key)} is not in namespace {self.name!r}", 0)
        return self.from_relative(key[len(self.head) :])

    def key_reader(self, prefix: Elements, rest: KeySpec) -> Callable[[Any], Any]:
        """Where the key is one bare element, it is the bytes after the scanned
        prefix (every key :meth:`scan` yields starts with them): one slice and its
        type's ``from_bytes``."""
        if not rest.bare:
            return super().key_reader(prefix, rest)
        cut, from_bytes = len(self.prefix_bytes(prefix)), rest.types[0].from_bytes
        return lambda key: from_bytes(key[cut:])

    def relative(self, elements: Elements) -> bytes:
        return joined_key(self.spec.to_bytes(elements))

    def from_relative(self, raw: bytes) -> Elements:
        types = self.spec.types
        parts, last = decompose(raw, len(types) - 1)
        return tuple(t.from_bytes(p) for t, p in zip(types, (*parts, last), strict=True))

    def raw_remainder(self, key: Any, skip: int) -> bytes:
        return bytes(decompose(key[len(self.head) :], skip)[1])

    @staticmethod
    def _joined(types: Sequence[KeyType], elements: Elements) -> bytes:
        return joined_key([t.to_bytes(v) for t, v in zip(types, elements, strict=True)])

    def clear_prefix(self, base: Scope, prefix: Elements) -> None:
        start = self.prefix_bytes(prefix)
        if Property.ORDER_WITHIN in base.scheme.properties:
            base.clear_range(start=start, stop=prefix_end(start))
        else:  # stored order is not key order: the keys starting with start, exactly
            base.clear_range(prefix=start)

    def scan(
        self,
        scope: Scope,
        prefix: Elements,
        start: Bound,
        stop: Bound,
        include_start: bool,
        include_stop: bool,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[Any, Any]]:
        base = self.prefix_bytes(prefix)
        types = self.spec.types[len(prefix) :]
        if start is None:
            lo, lo_incl = base, True
        else:
            lo, lo_incl = base + self._joined(types, start), include_start
        if stop is None:
            hi, hi_incl = prefix_end(base), False
        else:
            hi, hi_incl = base + self._joined(types, stop), include_stop
        if Property.ORDER_WITHIN not in scope.scheme.properties:
            return _in_key_order(scope, base, lo, lo_incl, hi, hi_incl, reverse, limit)
        return iter(
            scope.items(
                start=lo, stop=hi, include_start=lo_incl, include_stop=hi_incl, reverse=reverse, limit=limit
            )
        )

    def prefix_scan(
        self,
        scope: Scope,
        lo: Bound,
        lo_incl: bool,
        hi: Bound,
        hi_incl: bool,
        reverse: bool,
        limit: int | None,
    ) -> Iterator[tuple[Any, Any]]:
        # cw-storage-plus's bounds: the namespace, then the bound's joined_prefix
        # (every element length-prefixed); past a prefix is its exclusive end.
        head = self.head
        start = head if lo is None else self.prefix_bytes(lo)
        if lo is not None and not lo_incl:
            start = prefix_end(start) or prefix_end(head) or start
        stop: bytes | None = prefix_end(head)
        if hi is not None:
            stop = self.prefix_bytes(hi)
            if hi_incl:
                stop = prefix_end(stop) or prefix_end(head)
        if Property.ORDER_WITHIN not in scope.scheme.properties:
            return _in_key_order(scope, head, start, True, stop, False, reverse, limit)
        return iter(scope.items(start=start, stop=stop, reverse=reverse, limit=limit))


class CosmWasmLayout(Layout):
    """cw-storage-plus's byte layout (see the module notes)."""

    name = "cosmwasm"

    def namespace(self, name: str | bytes, spec: KeySpec) -> Namespace:
        return _CwNamespace(name, spec)

    def item_key(self, name: str | bytes) -> Any:
        return component_bytes(name)

    def value_codec(self, spec: str | Codec | None) -> Codec:
        if spec is None or spec == "json":
            return SERDE_JSON
        return resolve_codec(spec)

    def unique_entry(self, pk: bytes, raw_value: bytes) -> bytes:
        # UniqueRef { pk: Binary, value: T }: the value's own JSON, embedded as it is
        return b'{"pk":"' + base64.b64encode(pk) + b'","value":' + raw_value + b"}"

    def unique_pk(self, entry: bytes) -> bytes:
        try:  # the entry is stored bytes: decoded as a json value is (DecodeError is a ValueError)
            return base64.b64decode(_JSON.decode(entry)["pk"], validate=True)
        except (ValueError, KeyError, TypeError) as exc:
            raise DecodeError(f"unique index entry {show_bytes(entry)} has no base64 'pk': {exc}") from None

    def multi_entry(self, pk: bytes) -> bytes:
        return str(len(pk)).encode()


TUPLE = TupleLayout()
COSMWASM = CosmWasmLayout()
