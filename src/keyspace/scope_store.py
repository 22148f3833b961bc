"""ScopeStore: a scope seen as a store, for code written against the store contract.

``ScopeStore(ks.scope("app", "cache"))`` behaves like a :class:`~keyspace.stores.Store`
whose keyspace is the scope's own bytes keys: ``get/put/delete/scan/delete_range/
write/transaction/snapshot``. It lets such code (and the conformance suite, which
runs every adapter again through a nested scope) use a scope as if it were a whole
store, without ever touching the rest of the real store.

It needs a scheme whose key order is byte order for bytes keys (property 3) and
that accepts every bytes key: the tuple scheme (the default), AsciiHex,
LengthPrefixed and Naive (with ``allow_collisions=True``; a leaf scope of these two
holds no child scopes). Sublevel keeps order but refuses keys that start with its
separator, so a sublevel ScopeStore refuses them too (:class:`InvalidName`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from ._bulk_writes import write_all as _write_all
from .errors import InvalidArgument, KeyspaceError, KeyTooLarge, show_bytes
from .schemes import Property
from .scope import Scope
from .stores._base import Op, ReadView, Store, WriteView

__all__ = ["ScopeStore"]


class _ScopeView(WriteView):
    """Store-shaped reads and writes on one scope (bytes keys and values)."""

    def __init__(self, scope: Scope, max_key_size: int | None) -> None:
        if Property.ORDER_WITHIN not in scope.scheme.properties:
            raise KeyspaceError(
                f"scheme {scope.scheme!r} does not keep key order within a scope; a ScopeStore needs it"
            )
        self.scope = scope
        self._max_key_size = max_key_size

    def _check(self, key: bytes) -> None:
        limit = self._max_key_size
        if limit is not None and len(key) > limit:
            raise KeyTooLarge(
                f"key {show_bytes(key)} is {len(key)} bytes; keys of this scope store hold at most {limit} "
                "(the engine's limit less the scope's prefix, for keys that escape to twice their size)"
            )

    def get(self, key: bytes) -> bytes | None:
        value: bytes | None = self.scope.get(key)
        return value

    def scan(
        self,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        items: Iterator[tuple[bytes, bytes]] = self.scope.items(
            start=start, stop=stop, reverse=reverse, limit=limit
        )
        return items

    def put(self, key: bytes, value: bytes) -> None:
        self._check(key)
        self.scope[key] = value

    def delete(self, key: bytes) -> None:
        self._check(key)
        self.scope.discard(key)

    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self.scope.clear_range(start, stop)


class ScopeStore(_ScopeView, Store):
    """A :class:`Scope` (of a scheme with ordered bytes keys) as a :class:`Store`.

    ``close()`` closes the keyspace when ``owns_keyspace`` is true (the default is
    to leave it open). Costs are those of the scope's operations: one encode and
    one store operation each.
    """

    def __init__(self, scope: Scope, *, owns_keyspace: bool = False) -> None:
        store = scope.keyspace.store
        limit = store.capabilities.max_key_size
        # A bytes key may double (tuple scheme: 00 -> 00 ff; asciihex: two digits a
        # byte) and gain two bytes (a type code and a terminator).
        own_limit = None if limit is None else max(0, (limit - len(scope.prefix) - 2) // 2)
        super().__init__(scope, own_limit)
        self._owns = owns_keyspace
        self.url = f"{store.url}#scope={scope.path!r}"
        # Every bytes key, the empty one too, is a non-empty stored key here. The URL
        # names a scope, which open_store cannot open in another process: share the
        # underlying store's URL for that.
        self.capabilities = replace(
            store.capabilities,
            max_key_size=own_limit,
            empty_keys=True,
            multi_process=False,
            watch=None,  # watch the scope itself (Scope.watch), not this view
            access_control=False,
        )

    def write(self, ops: Iterable[Op]) -> None:
        stored_key = self.scope._stored  # the scope's, with its refusal of reserved keys
        ops = list(ops)
        for op in ops:
            if type(op) not in (tuple, list) or len(op) != 2:
                raise InvalidArgument(
                    f"a batch operation is a (key, value or None) pair, not {show_bytes(op)}"
                )
            self._check(op[0])
        # every value encoded and checked before anything is written, as a put does it
        stored_value = self.scope._stored_value
        stored = [(stored_key(k), None if v is None else stored_value(v)) for k, v in ops]
        scope = self.scope
        store = scope.keyspace.store
        if not stored:
            return
        if all(v is None for _, v in stored):
            # deletes only: checked as every delete of the scope (a registry entry another
            # writer may have removed, a path another writer may have made a branch)
            scope._state.destructive(
                store, lambda view: _write_all(scope._part(view), stored), path=scope._unsettled
            )
            return
        if scope._put is None and scope._first_write(stored):
            return  # written as the scope's first write, with its checks and records
        _write_all(scope._part(store), stored)  # one atomic batch where the keys are

    @contextmanager
    def transaction(self) -> Iterator[WriteView]:
        scope = self.scope
        with scope.keyspace.transaction() as tx:  # the scope itself (its codecs too) in tx
            yield _ScopeView(scope._on(tx.view, tx.catalog), self._max_key_size)

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        scope = self.scope
        with scope.keyspace.snapshot() as snap:
            yield _ScopeView(scope._on(snap.view, snap.catalog), self._max_key_size)

    def close(self) -> None:
        if self._owns:
            self.scope.keyspace.close()

    def __repr__(self) -> str:
        return f"ScopeStore({self.scope!r})"
