"""A gate on an engine handle: it counts the calls in flight, so that closing the
handle waits for them to end.

An engine binding that releases the GIL inside its calls (plyvel) frees the engine
under a call another thread is making when its handle is closed, and the process
crashes. Every call into such a handle goes through the handle's :class:`Gate`;
:func:`close_when_idle` shuts the gate (later calls raise ``RuntimeError`` with
"closed" in the message, which the adapter translates into
:class:`~keyspace.errors.StoreClosed`), waits until no call is in flight and only
then closes the handle.

``Gate`` is the C type of ``keyspace.stores._gate_accel`` where it is built (one
counted call costs about 20 ns more than the call); :class:`PyGate` is its
pure-Python reference, with the same behaviour.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import KeyspaceError
from ._translated import Translate, raise_translation, translated_py

__all__ = ["Gate", "PyGate", "close_when_idle"]

_END: Any = object()


def _closed() -> RuntimeError:
    return RuntimeError("the store is closed")


class PyGate:
    """Counts the calls in flight made through it (a list grown and shrunk by one
    element per call: both are atomic under the GIL)."""

    __slots__ = ("_calls", "closed")

    def __init__(self) -> None:
        self._calls: list[None] = []
        self.closed = False

    @property
    def inflight(self) -> int:
        """The calls in flight now."""
        return len(self._calls)

    def guard(self, fn: Callable[..., Any], translate: Translate | None = None) -> Callable[..., Any]:
        """``fn``, its calls counted; once closed, a call raises without calling it.
        With ``translate``, an error of a call (the refusal included) is raised
        as ``translate(error, key)``, as :func:`~keyspace.stores._translated.translated_py`
        raises it."""

        def guarded(*args: Any, **kwargs: Any) -> Any:
            return self.run(fn, *args, **kwargs)

        return guarded if translate is None else translated_py(guarded, translate)

    def guard_iter(
        self, iterable: Iterable[Any], translate: Callable[[BaseException], BaseException] | None = None
    ) -> Iterator[Any]:
        """The iterator of ``iterable``, each step counted; with ``translate``, an
        error of a step (the refusal of a closed gate included) is raised as
        ``translate(error)``, chained from it (a keyspace error as it is). ``iter(iterable)`` is taken at
        once (its error is raised here, untranslated), as the C gate does."""
        return self._chain(iter((iter(iterable),)), translate)

    def guard_chain(
        self,
        iterables: Iterable[Iterable[Any]],
        translate: Callable[[BaseException], BaseException] | None = None,
    ) -> Iterator[Any]:
        """The items of each of ``iterables`` in turn (as
        ``itertools.chain.from_iterable``), every step counted, errors as
        :meth:`guard_iter`'s: one iterator between the caller and the engine's."""
        return self._chain(iter(iterables), translate)

    def _chain(
        self, sources: Iterator[Iterable[Any]], translate: Callable[[BaseException], BaseException] | None
    ) -> Iterator[Any]:
        calls = self._calls
        it: Iterator[Any] | None = None
        while True:
            try:
                if it is None:
                    source = next(sources, _END)
                    if source is _END:
                        return
                    it = iter(source)
                if self.closed:
                    raise _closed()
                calls.append(None)
                try:
                    item = next(it, _END)
                finally:
                    calls.pop()
            except Exception as exc:
                if translate is None or isinstance(exc, KeyspaceError):
                    raise
                raise_translation(translate(exc), exc)
            if item is _END:
                it = None
            else:
                yield item

    def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, counted (a keyword argument named ``fn`` is
        ``fn``'s, as with the C gate)."""
        if self.closed:
            raise _closed()
        calls = self._calls
        calls.append(None)
        try:
            return fn(*args, **kwargs)
        finally:
            calls.pop()

    def close(self) -> None:
        """Every later call refuses; the calls in flight go on."""
        self.closed = True


Gate: Any
try:  # the optional C gate (setup.py builds it when it can)
    from ._gate_accel import Gate
except ImportError:  # pragma: no cover - the reference then serves
    Gate = PyGate

IDLE_WAIT = 10.0
"""Seconds :func:`close_when_idle` waits for the calls in flight to end."""


def close_when_idle(gate: Any, close: Callable[[], object], wait: float = IDLE_WAIT) -> bool:
    """Shut ``gate``, wait until no call is in flight (polling each millisecond,
    at most ``wait`` seconds), then ``close()`` the handle. Returns False, without
    closing, when calls are still in flight at the end of the wait: the handle is
    then closed when its last reference goes (closing it under a call would crash
    the process)."""
    gate.close()
    deadline = time.monotonic() + wait
    while gate.inflight:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    close()
    return True
