"""``Scope.append(value)``: keys in commit order.

An appended value is stored under a key holding a
:class:`~keyspace.tuples.Versionstamp` that the commit fills in: its transaction
version is a number of the commit (``u64be(number)`` and two zero bytes) that
grows with the commit order and every process of the store agrees on, its user
version the append's place among the commit's appends (0, 1, ...). Keys of later
commits sort after those of earlier ones, so a scope's appended keys are an
append-only log in commit order.

Where the number comes from:

- a keyspace with ``changes=True`` on an engine that keeps the change log
  (memory, LMDB, SQLite, LevelDB, RocksDB): the commit's number in that log
  (the commit sequence, which its watch events carry as their revision);
- etcd (its own revisions stand for the log: with or without ``changes=True``):
  the revision the commit's transaction reads at, plus one. Every commit that
  appends to a scope reads and rewrites that scope's sequencing key
  (:func:`sequencing_key`: under the reserved ``ff "keyspace"`` range, hidden
  from every scan, one per scope) in its one guarded ``Txn``, whose compare on
  that key's ``mod_revision`` lets it commit only when no other append to the
  scope committed since the revision it read at. So an append commit made
  after another to the same scope read at a revision at or past that one's
  commit: its number is larger. The number is at most the commit's own etcd
  revision (that of its watch events) and past the revision of every append
  commit to the scope before it. The value written (the number and how many
  appends the transaction made to the scope) serves the transaction's next
  append only: a commit's number never depends on what the key holds, so no
  writer of it can make numbers go back, only make an append conflict. Two
  transactions that append to one scope at once conflict
  (:class:`~keyspace.errors.TransactionConflict` for the one that commits
  second); appends to different scopes do not race. An append outside a
  transaction runs its transaction again (:data:`APPEND_ATTEMPTS`,
  :data:`APPEND_BUDGET`); one inside the caller's transaction gives the
  conflict to the caller. The sequencing keys of a scope's subtree lie in one
  range (:func:`sequencing_range`), which :func:`keyspace.access.grant` gives a
  user with the scope: a user restricted to some scopes appends in them, and
  can make only their own appends conflict.

In a tuple-scheme scope with bytes keys the key is the versionstamp itself (a
typed tuple element: ``pack((path, Versionstamp))``); where the scope's keys are
bytes of another scheme, its 12 bytes (:meth:`Versionstamp.to_bytes`), which sort
the same way. Cost: a put, and at the commit one read of the commit counter (the
change log reads it anyway); on etcd, a point read and a put of the sequencing
key in the transaction (outside one: the transaction's begin, the read and the
commit, three round trips).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ._bytes import prefix_end
from ._retry import run_atomically
from ._write_hooks import HookedTransaction, WriteHook, native_changes
from .errors import InvalidArgument, InvalidName
from .tuples import Versionstamp, pack

__all__ = [
    "APPEND_ATTEMPTS",
    "APPEND_BUDGET",
    "SEQUENCING_KEY",
    "append",
    "sequencing_key",
    "sequencing_key_at",
    "sequencing_range",
]

_USER_VERSIONS = 0x10000
SEQUENCING_KEY: Final = b"\xffkeyspace-append\x00"
"""Where the sequencing keys of the scopes on etcd start (:func:`sequencing_key`)."""
APPEND_ATTEMPTS: Final = 1000
APPEND_BUDGET: Final = 15.0
"""An etcd append's own transaction runs again while it loses its race, until
it has run :data:`APPEND_ATTEMPTS` times or for :data:`APPEND_BUDGET` seconds
(the etcd store's default ``retry_budget``), then its conflict reaches the
caller. More than other owned operations' :data:`~keyspace._retry.ATTEMPTS`:
every append of a keyspace writes one key, so appenders that run at once all
race for it, and one may lose many races in a row (four processes appending
without pause on a loaded two-core machine: up to 38 runs for one of 1,200
appends). A run starts at once after the conflict: the others start theirs
after their commit, so all race from the same moment (a pause would start a
run behind the others, and lose again)."""


def _stamp(number: int, index: int) -> Versionstamp:
    return Versionstamp(number.to_bytes(8, "big") + b"\x00\x00", index)


def _sequencing_base(scheme: Any) -> bytes:
    """The start of the sequencing keys of the keyspace of ``scheme`` (one per raw
    prefix, as the feature record)."""
    return SEQUENCING_KEY + pack((scheme.raw_prefix,))


def sequencing_key_at(scheme: Any, prefix: bytes) -> bytes:
    """The sequencing key of the scope of ``prefix`` in the keyspace of ``scheme``:
    the keyspace's base then the prefix, so that those of a subtree lie in
    :func:`sequencing_range` of its own range."""
    return _sequencing_base(scheme) + prefix


def sequencing_key(scope: Any) -> bytes:
    """The sequencing key of ``scope``, on etcd (:func:`sequencing_key_at` of its
    prefix): every commit that appends to the scope reads and rewrites it.

    >>> from keyspace.schemes import TupleScheme
    >>> scheme = TupleScheme()
    >>> class Scope: scheme, prefix = scheme, scheme.prefix(("log",))
    >>> sequencing_key(Scope())
    b'\\xffkeyspace-append\\x00\\x01\\x00\\x05\\x02log\\x00\\x00'
    """
    return sequencing_key_at(scope.scheme, scope.prefix)


def sequencing_range(scheme: Any, start: bytes, stop: bytes | None) -> tuple[bytes, bytes | None]:
    """The sequencing keys of the scopes whose prefixes lie in ``[start, stop)`` (a
    scope's subtree range): the same range under the keyspace's base."""
    base = _sequencing_base(scheme)
    return base + start, base + stop if stop is not None else prefix_end(base)


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


def _numbers_commits(store: Any) -> bool:
    """Whether a feature of the hooked ``store`` numbers its commits (the change log)."""
    return any(type(hook).next_commit is not WriteHook.next_commit for hook in store.hooks)


def _pinned(view: Any) -> Callable[[], int] | None:
    """``snapshot_revision`` of the engine transaction under ``view`` (a keyspace
    transaction's view: the engine's own, or a hooked one over it), where the
    engine numbers every commit and guards what a transaction read (etcd)."""
    engine = view.view if isinstance(view, HookedTransaction) else view
    got: Callable[[], int] | None = getattr(engine, "snapshot_revision", None)
    return got


def _native_revisions(view: Any) -> bool:
    """Whether ``view`` (a keyspace's store) is a store whose own revisions stand
    for the change log (etcd, as for ``changes=True``): revision-numbered
    transactions that guard what they read."""
    caps = getattr(view, "capabilities", None)
    return caps is not None and native_changes(caps) and caps.guarded_reads


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
    if isinstance(view, HookedTransaction) and _numbers_commits(view.store):
        return _defer(scope, view, form, raw)
    pinned = _pinned(view)
    if pinned is not None:
        return Versionstamp.incomplete(_append_pinned(scope, view, pinned, form, value))
    hooks = getattr(view, "hooks", None)
    if hooks is not None and _numbers_commits(view):

        def step(pair: tuple[HookedTransaction, Any]) -> tuple[HookedTransaction, int]:
            tx, state = pair
            return tx, _defer(scope._on(tx, state), tx, form, raw).user_version

        tx, index = run_atomically(scope._space.transaction, step, "Scope.append")
        number = tx.commit_number
        assert number is not None
        return _stamp(number, index)
    if _native_revisions(view) and not isinstance(view, HookedTransaction):
        return _append_own(scope, form, value)
    raise InvalidArgument(
        f"append needs commit numbers that grow in commit order, which {scope._state.store.url} does not "
        "keep: open it with changes=True (a change log numbers the commits; on etcd the cluster's "
        "revisions do, changes=True or not)"
    )


def _append_own(scope: Any, form: Any, value: Any) -> Versionstamp:
    """An append outside a transaction on etcd: a transaction of its own, run
    again at once while it loses its race (two appends made at once conflict
    on the sequencing key), within :data:`APPEND_ATTEMPTS` and
    :data:`APPEND_BUDGET` (:func:`~keyspace._retry.run_atomically`)."""

    def step(pair: tuple[Any, Any]) -> Versionstamp:
        tx, state = pair
        pinned = _pinned(tx)
        if pinned is None:
            raise InvalidArgument(f"append: a transaction of {scope._state.store.url} tells no revision")
        return _stamp(pinned() + 1, _append_pinned(scope._on(tx, state), tx, pinned, form, value))

    return run_atomically(scope._space.transaction, step, "Scope.append", APPEND_ATTEMPTS, APPEND_BUDGET)


def _append_pinned(scope: Any, tx: Any, pinned: Callable[[], int], form: Any, value: Any) -> int:
    """Put ``value`` in transaction ``tx`` (reads pinned to the revision
    ``pinned()``) under the stamp of number ``pinned() + 1`` and this append's
    place among the transaction's appends to the scope; the scope's sequencing
    key read (so the commit compares it) and rewritten. Returns the place."""
    number = pinned() + 1
    seq = sequencing_key(scope)
    held = tx.get(seq)
    index = 0
    if held is not None and len(held) == 12 and int.from_bytes(held[:8], "big") == number:
        # this transaction's own put: a committed one holds at most the revision read at
        index = int.from_bytes(held[8:], "big")
    if index >= _USER_VERSIONS:
        raise InvalidArgument(f"a transaction appends at most {_USER_VERSIONS} values (the user versions)")
    scope[form(_stamp(number, index))] = value
    tx.put(seq, number.to_bytes(8, "big") + (index + 1).to_bytes(4, "big"))
    return index


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
