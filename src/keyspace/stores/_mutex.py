"""A lock for the statements of a connection that a store's threads share.

``Mutex()`` is the C type of ``keyspace.stores._gate_accel`` where it is built,
else :class:`threading.Lock`, its reference: a lock no thread holds twice, with
``acquire()`` (taking no arguments here), ``release()``, ``locked()`` and ``with``.
A thread that waits for the C one lets the others run (the GIL is released
while it waits); a signal that comes meanwhile is handled once it holds it.

Cost: ``threading.Lock``'s ``acquire`` (and its ``with`` entry) parses its
keyword arguments at every call, about 700 instructions; the C type's take none.
A SQLite point read of a held scope, whose reading connection is taken under
such a lock, costs about 2 % less with it (1.10 to 1.11 against 1.12 to 1.13
times the same statement by hand, alternated in one process).

>>> lock = Mutex()
>>> with lock:
...     lock.locked()
True
>>> lock.locked()
False
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Lock", "Mutex"]


class Lock(Protocol):
    """What a store needs of a lock (:class:`threading.Lock` has it)."""

    def acquire(self) -> bool: ...

    def release(self) -> None: ...

    def locked(self) -> bool: ...

    def __enter__(self) -> bool: ...

    def __exit__(self, *exc: Any) -> Any: ...


Mutex: Callable[[], Lock]
try:  # the optional C lock (setup.py builds it when it can)
    from ._gate_accel import Mutex
except ImportError:  # pragma: no cover - the reference then serves
    Mutex = threading.Lock
