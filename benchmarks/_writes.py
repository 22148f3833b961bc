"""The timed body of the write workloads that compare a keyspace feature on and
off (accounting, the change log): keys put into one scope, in one transaction
or each its own commit."""

from __future__ import annotations

from collections.abc import Callable

from keyspace.keyspace import Keyspace

from ._data import VALUE

__all__ = ["put_all"]


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
