"""Running again a step the library owns whole, when it lost a race.

A read then a write that keyspace runs in a transaction of its own (a scope's
``pop``, ``popitem``, ``setdefault``; a collection's indexed save, deque push
or ``update``; a catalog's first write or guarded delete) may end with
:class:`~keyspace.errors.TransactionConflict`: on an engine that guards what a
transaction read (etcd), another writer changed it before the commit; on
LMDB, another process committed while the transaction grew a small map. Such a
transaction wrote nothing, and its reads are the library's own, so running it
again from its first read is safe: it then reads what the other writer wrote.
This module is the one loop that does so, for every engine, at most
:data:`ATTEMPTS` times. A transaction the caller opened (``with
ks.transaction()``) is never run again here: the caller's block computed
things from its reads that only the caller can compute again, so the conflict
reaches the caller. Steps nest (a collection's ``clear(limit=)`` runs its
ranged clear, a scope's step a catalog batch): only the outermost one of a
thread is run again, as a whole.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from .errors import TransactionConflict

__all__ = ["ATTEMPTS", "gave_up", "retry_conflicts", "run_again", "run_atomically"]

T = TypeVar("T")
V = TypeVar("V")

ATTEMPTS = 8
"""Runs of one step the library owns before its conflict reaches the caller."""

_running = threading.local()
"""``depth``: how many steps this thread is running inside one another."""


def gave_up(error: TransactionConflict, what: str, attempts: int) -> TransactionConflict:
    """The conflict raised once ``what`` lost its race ``attempts`` times in a row
    (``error``: the last one)."""
    return TransactionConflict(
        f"{what}: another writer won the race {attempts} times in a row ({attempts} attempts, each "
        f"a transaction of its own that wrote nothing); the last conflict: {error}"
    )


def retry_conflicts(
    call: Callable[[], T], what: str, attempts: int = ATTEMPTS, seconds: float | None = None
) -> T:
    """``call()``, run again while it raises :class:`TransactionConflict`, at most
    ``attempts`` runs in all; then the conflict :func:`gave_up` makes. ``call``
    must own every transaction it opens and write nothing outside them: each
    run starts over from its first read. Inside another such call of this
    thread it is made once: its conflict ends the outer call's run, which is
    made again whole. ``seconds``: no run begins that many seconds after the
    first began (then the conflict :func:`gave_up` makes). Cost: a thread-local
    counter and one ``try``."""
    if getattr(_running, "depth", 0):
        return call()
    began = 0.0 if seconds is None else time.monotonic()
    _running.depth = 1
    try:
        return call()
    except TransactionConflict as exc:
        conflict = exc
    finally:
        _running.depth = 0
    return run_again(call, conflict, what, attempts, None if seconds is None else began + seconds)


def run_again(
    call: Callable[[], T],
    conflict: TransactionConflict,
    what: str,
    attempts: int = ATTEMPTS,
    deadline: float | None = None,
) -> T:
    """What :func:`retry_conflicts` does after the first run of ``call`` raised
    ``conflict``, for a caller that made that first run itself (outside it, to
    save its cost on the usual run that meets no conflict; ``call`` must then
    run no such step inside it): ``conflict`` raised again inside another step
    of this thread, else ``call()`` run again, at most ``attempts`` runs in all
    counting the first, none begun after ``deadline`` (``time.monotonic()``
    seconds, where given)."""
    if getattr(_running, "depth", 0):
        raise conflict
    _running.depth = 1
    runs = 1
    try:
        while runs < attempts and (deadline is None or time.monotonic() < deadline):
            runs += 1
            try:
                return call()
            except TransactionConflict as exc:
                conflict = exc
        raise gave_up(conflict, what, runs) from conflict
    finally:
        _running.depth = 0


def run_atomically(
    begin: Callable[[], AbstractContextManager[V]],
    step: Callable[[V], T],
    what: str,
    attempts: int = ATTEMPTS,
    seconds: float | None = None,
) -> T:
    """``step(view)`` in a transaction ``begin()`` opens (it commits when the step
    returns), the whole transaction begun again while it raises
    :class:`TransactionConflict` (:func:`retry_conflicts`). ``step`` may run
    several times: its only effects must be its writes through ``view``.
    ``seconds``: as :func:`retry_conflicts` takes it."""

    def once() -> T:
        with begin() as view:
            return step(view)

    return retry_conflicts(once, what, attempts, seconds)
