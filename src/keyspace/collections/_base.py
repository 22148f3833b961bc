"""What every collection shares: its scope, its layout, and atomic writes."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from .._retry import retry_conflicts
from ..codecs import Codec
from ..errors import InvalidArgument, show_bytes
from ..scope import Scope, TransactionLike
from ._layouts import COSMWASM, TUPLE, Layout

__all__ = ["Collection", "owns_transaction"]

C = TypeVar("C", bound="Collection")
P = ParamSpec("P")
T = TypeVar("T")


class Collection:
    """A typed collection over a scope.

    ``scope`` is a scope taken from a keyspace (``ks.scope(...)``): single-key
    operations are atomic on their own, and operations that touch several keys
    (an indexed record and its index entries, a deque item and its head or tail)
    run in one transaction of their own. ``using(tx)`` gives the same collection
    inside the caller's transaction ``tx``, where everything commits or is
    discarded with ``tx``. The collection reads and writes the scope with bytes
    codecs, whatever codecs ``scope`` was made with.
    """

    codec: Codec
    """The values' codec (set by each collection)."""

    def __init__(self, scope: Scope, layout: Layout | None) -> None:
        scheme = scope.scheme
        if layout is None:  # tuple-layer keys where the scheme's keys are typed, else bytes
            layout = TUPLE if scheme.typed_keys else COSMWASM
        elif not isinstance(layout, Layout):
            raise InvalidArgument(
                f"layout={show_bytes(layout)} is not a collection layout; pass TUPLE or COSMWASM "
                "(keyspace.collections), or nothing for the scheme's"
            )
        elif layout.typed_keys and not scheme.typed_keys:
            raise InvalidArgument(
                f"layout {layout.name!r} keeps typed tuple keys, which the scheme {scheme!r} of this scope "
                "does not store (its keys are bytes): pass COSMWASM, or nothing for the scheme's"
            )
        self.layout: Layout = layout
        self._base = scope.scope(key="bytes", value="bytes")
        self._in_tx = False

    @property
    def scope(self) -> Scope:
        """The scope the collection lives in."""
        return self._base

    def using(self, tx: TransactionLike) -> Self:
        """This collection bound to the transaction ``tx`` (``ks.transaction()``,
        or ``ks.snapshot()`` for reads; anything whose ``scope(*path, key=,
        value=)`` gives scopes of it): its reads see ``tx``'s writes, its
        writes commit with ``tx``."""
        scope = getattr(tx, "scope", None)
        if not callable(scope):
            raise InvalidArgument(
                "using() takes a transaction or snapshot (ks.transaction(), ks.snapshot()), "
                f"not {show_bytes(tx)}"
            )
        clone = copy.copy(self)
        clone._base = tx.scope(*self._base.path, key="bytes", value="bytes")
        clone._in_tx = True
        clone._rebind()
        return clone

    def _rebind(self) -> None:
        """Hook: rebind collections held by this one after :meth:`using`."""

    def _roles(self) -> list[tuple[str, Any]]:
        """``(role, namespace)`` of the namespaces beside which a snapshot
        collection's changelog and checkpoints must be distinct (see
        :func:`~keyspace.collections._namespaces.check_distinct`): none for an
        item, stored at its raw name; a map's own, an indexed map's indexes."""
        return []

    def _updated(self, fn: Callable[[Any], Any], raw: bytes | None) -> tuple[Any, bytes]:
        """The step of every ``update``: ``fn(current value or None)``, the value
        stored as ``raw``, and its bytes to store."""
        new = fn(None if raw is None else self.codec.decode(raw))
        return new, self.codec.encode(new)

    @contextmanager
    def _atomic(self) -> Iterator[Scope]:
        """The collection's scope inside a transaction: the caller's (``using``),
        else a transaction of its own that commits when the block ends. A method
        that opens one of its own is marked :func:`owns_transaction`, which runs
        it again when that transaction loses a race."""
        if self._in_tx:
            yield self._base
            return
        with self._base.keyspace.transaction() as tx:
            yield tx.scope(*self._base.path, key="bytes", value="bytes")


def owns_transaction(method: Callable[Concatenate[C, P], T]) -> Callable[Concatenate[C, P], T]:
    """Mark a collection method that makes its reads and writes in ONE
    :meth:`Collection._atomic` block and nothing outside it but reads and
    checks: outside :meth:`Collection.using` that block is a transaction of its
    own, so a call that loses a race to another writer
    (:class:`~keyspace.errors.TransactionConflict`, nothing of it written) is
    made again from its start, at most :data:`~keyspace._retry.ATTEMPTS` times
    (:func:`~keyspace._retry.retry_conflicts`); a function it was given (an
    ``update``'s ``fn``) is then called again. Under ``using(tx)`` the
    transaction is the caller's: the call is made once and a conflict reaches
    the caller. Cost: one attribute test and one frame."""
    what = method.__qualname__

    @functools.wraps(method)
    def run(self: C, /, *args: P.args, **kwargs: P.kwargs) -> T:
        if self._in_tx:
            return method(self, *args, **kwargs)
        return retry_conflicts(lambda: method(self, *args, **kwargs), what)

    return run
