"""``Scope.append(value)``: keys in commit order.

An appended value is stored under a key holding a
:class:`~keyspace.tuples.Versionstamp` that the commit fills in: its transaction
version is the commit's number in the change log (``u64be(seq)`` and two zero
bytes: the commit sequence every process of the store shares), its user version
the append's place among the commit's appends (0, 1, ...). Keys of later commits
sort after those of earlier ones, so a scope's appended keys are an append-only
log in commit order, on every engine with ``changes=True``.

In a tuple-scheme scope with bytes keys the key is the versionstamp itself (a
typed tuple element: ``pack((path, Versionstamp))``); where the scope's keys are
bytes of another scheme, its 12 bytes (:meth:`Versionstamp.to_bytes`), which sort
the same way. Cost: a put, and at the commit one read of the commit counter (the
change log reads it anyway).
"""

from __future__ import annotations

from typing import Any

from ._retry import run_atomically
from ._write_hooks import HookedTransaction
from .errors import InvalidArgument, InvalidName
from .tuples import Versionstamp

__all__ = ["append"]

_USER_VERSIONS = 0x10000


def _stamp(number: int, index: int) -> Versionstamp:
    return Versionstamp(number.to_bytes(8, "big") + b"\x00\x00", index)


def _key_maker(scope: Any) -> Any:
    """The scope's key of a versionstamp: the versionstamp as a key element, or
    its 12 bytes where the scope takes only bytes keys. Tried on a complete one,
    so that a scope that takes neither refuses now, not at the commit."""
    probe = _stamp(1, 0)
    for form in (lambda stamp: stamp, Versionstamp.to_bytes):
        try:
            scope._stored(form(probe))
        except InvalidName:
            continue
        return form
    raise InvalidArgument(
        f"scope {scope.path!r} takes neither a Versionstamp nor bytes as a key: append needs one of them"
    )


def append(scope: Any, value: Any) -> Versionstamp:
    """:meth:`Scope.append`: store ``value`` under a key filled at commit; return the
    key's versionstamp: complete outside a transaction (the write commits here),
    incomplete (its user version set) inside one, complete once it commits.
    Outside a transaction the commit is the append's own: one that loses a
    race (:class:`~keyspace.errors.TransactionConflict`) is made again
    (:func:`~keyspace._retry.run_atomically`)."""
    raw = scope._stored_value(value)
    form = _key_maker(scope)
    view = scope._writer()
    if isinstance(view, HookedTransaction):
        return _defer(scope, view, form, raw)
    if getattr(view, "hooks", None) is None:
        raise InvalidArgument(
            f"append needs the change log's commit numbers, which {view.url} does not keep: open it with "
            "changes=True (on etcd, whose own revisions stand for the log, append is not offered)"
        )

    def step(pair: tuple[HookedTransaction, Any]) -> tuple[HookedTransaction, int]:
        tx, state = pair
        return tx, _defer(scope._on(tx, state), tx, form, raw).user_version

    tx, index = run_atomically(scope._space.transaction, step, "Scope.append")
    number = tx.commit_number
    assert number is not None
    return _stamp(number, index)


def _defer(scope: Any, tx: HookedTransaction, form: Any, raw: bytes) -> Versionstamp:
    if len(tx.deferred) >= _USER_VERSIONS:
        raise InvalidArgument(f"a transaction appends at most {_USER_VERSIONS} values (the user versions)")
    state = scope._state
    stored = scope._stored

    def make_key(number: int, index: int) -> bytes:
        return bytes(stored(form(_stamp(number, index))))

    if not state.write_ready(scope.path):  # the path's records, in this transaction
        probe = stored(form(_stamp(1, 0)))
        state.first_write(tx, scope.path, lambda w: None, [(probe, raw)])
    index = tx.defer(make_key, raw)
    return Versionstamp.incomplete(index)
