"""``DequeMap``: a map of deques, one :class:`~keyspace.collections.Deque` per key.

cw-storage-plus has no such collection (cw-storage-plus#15 asks for one). Its
bytes here follow from the rules it has: a deque keeps its items at the u32
position after its namespace and its head and tail at ``"h"``/``"t"``; a map
keeps the entries of key ``k`` under ``len(ns) ns`` and ``k``'s elements, each
length-prefixed when more follows (``Prefix::new``). So the deque of key ``k``
of ``DequeMap(ns)`` is a deque whose namespace bytes are the map's prefix for
``k``::

    item at position p   len(ns) ns len(k1) k1 … len(kn) kn u32be(p)    (JSON value)
    head                 len(ns) ns len(k1) k1 … len(kn) kn "h"         (u32be)
    tail                 len(ns) ns len(k1) k1 … len(kn) kn "t"         (u32be)

which are the keys ``(k, p)`` of a ``Map<(K, u32), T>`` and ``(k, "h")``/``(k,
"t")`` of a ``Map<(K, &str), u32>`` of namespace ``ns``: every deque's entries
lie under the map's prefix for its key, the item and head/tail keys differ in
length (4 bytes against 1), and two keys' deques never share a key (a prefix of
every element length-prefixed is never a prefix of another such prefix). Under
the tuple layout the keys are ``(*k, p)`` and ``(*k, "h")``/``(*k, "t")`` in the
namespace's child scope.
"""

from __future__ import annotations

from typing import Any

from ..codecs import Codec
from ..scope import Scope
from ._base import Collection
from ._deque import Deque
from ._keys import KeySpec, SpecLike
from ._layouts import Layout, Namespace

__all__ = ["DequeMap"]


class _Under:
    """The keys of one deque of a :class:`DequeMap`: ``namespace``'s keys with
    the map key's elements before the deque's own element."""

    __slots__ = ("ns", "prefix")

    def __init__(self, ns: Namespace, prefix: tuple[Any, ...]) -> None:
        self.ns = ns
        self.prefix = prefix

    def scope(self, base: Scope) -> Scope:
        return self.ns.scope(base)

    def key(self, elements: tuple[Any, ...]) -> Any:
        return self.ns.key((*self.prefix, *elements))


class _KeyedDeque(Deque):
    """The deque of one key of a :class:`DequeMap` (see the module notes)."""

    def __init__(self, owner: DequeMap, key: Any, elements: tuple[Any, ...]) -> None:
        super().__init__(owner._base, owner.namespace, value=owner.codec, layout=owner.layout)
        self._base = owner._base
        self._in_tx = owner._in_tx
        self.map_key = key
        self._items = _Under(owner._items_ns, elements)
        self._meta = _Under(owner._meta_ns, elements)

    def __repr__(self) -> str:
        return (
            f"<Deque {self.map_key!r} of DequeMap {self.namespace!r} ({self.layout.name}) in {self._base!r}>"
        )


class DequeMap(Collection):
    """A deque per key, in namespace ``namespace`` of ``scope``: ``deque(key)``
    is a :class:`~keyspace.collections.Deque` (push, pop, get, set, iterate,
    as any deque), ``key`` of spec ``key`` as a :class:`Map`'s. ``remove(key)``
    empties one key's deque; ``clear()`` every deque. Byte layout: see the
    module notes (keyspace's own extension of cw-storage-plus's rules)."""

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
        self.codec = self.layout.value_codec(value)
        self._items_ns = self.layout.namespace(namespace, self.spec + KeySpec("u32"))
        self._meta_ns = self.layout.namespace(namespace, self.spec + KeySpec("str"))

    def __repr__(self) -> str:
        return f"<DequeMap {self.namespace!r} ({self.layout.name}) in {self._base!r}>"

    def deque(self, key: Any) -> Deque:
        """The deque of ``key`` (checked: :class:`~keyspace.errors.InvalidKey`).
        Nothing is read or written until it is used; under :meth:`using` it
        works in the caller's transaction."""
        return _KeyedDeque(self, key, self.spec.elements(key))

    def remove(self, key: Any) -> None:
        """Remove every item of ``key``'s deque and its head and tail. Cost: one
        range delete."""
        self._items_ns.clear_prefix(self._base, self.spec.elements(key))

    def clear(self) -> None:
        """Remove every deque. Cost: one range delete."""
        self._items_ns.clear(self._base)
