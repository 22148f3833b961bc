"""The timed bodies of the write workloads that compare a keyspace feature on
and off (accounting, the change log): keys put into one scope, in one
transaction or each its own commit."""

from __future__ import annotations

from collections.abc import Callable

from keyspace.keyspace import Keyspace

from ._data import VALUE
from ._harness import Factory, Trial

__all__ = ["inserts", "put_all"]


def put_all(ks: Keyspace, path: tuple[str, ...], keys: list[bytes], transaction: bool) -> Callable[[], None]:
    """A function putting :data:`VALUE` at each of ``keys`` in the scope ``path``
    of ``ks``: all in one transaction, or (not ``transaction``) each its own
    commit through a scope made once here."""
    if transaction:

        def in_one() -> None:
            with ks.transaction() as tx:
                scope = tx.scope(*path)
                for k in keys:
                    scope[k] = VALUE

        return in_one
    scope = ks.scope(*path)

    def each() -> None:
        for k in keys:
            scope[k] = VALUE

    return each


def inserts(ks: Keyspace, path: tuple[str, ...], keys: list[bytes], transaction: bool = True) -> Factory:
    """Trials of ``keys`` put into the scope ``path`` of ``ks`` (a store shared by
    the rounds, whose scope holds other keys), in one transaction or each its
    own commit (:func:`put_all`): each trial's close takes them out again
    (untimed, one transaction), so every round inserts new keys into the same
    scope."""
    run = put_all(ks, path, keys, transaction)

    def remove() -> None:
        with ks.transaction() as tx:
            scope = tx.scope(*path)
            for k in keys:
                del scope[k]

    return lambda: Trial(run, len(keys), remove)
