"""A hooked transaction's put route straight into the engine's transaction.

Where the engine's transaction offers ``fast_replace`` (a put that returns the
value it replaced, in one engine call: LMDB's ``replace``), a transaction with
a feature on that reads every value before (accounting; see
:mod:`keyspace._write_hooks`) writes each put at once through a
:class:`PutRoute` instead of keeping it for the commit: the route keeps what
the hooks may need -- the value each key had before the transaction (its first
replace's answer) and the value after -- in a list, moved into the dicts
``old`` and ``merged`` (key -> value after, in the order first written) when
:meth:`~PythonPutRoute.settle` is called; and, for as long as every change of
the transaction goes through it, a *summary*: the lowest and highest key put
and the net change of keys and bytes (stored key + value) the puts made. A
hook that counts (accounting) reads the summary instead of the keys when they
all lie in one scope, and then no dict is made; a hook that logs the puts (the
change log) reads :meth:`~PythonPutRoute.columns` instead of the dicts.

Where no hook reads a value before (the change log alone), the route is made
with ``knows_old=False`` over the engine's plain ``put``: its answer is
dropped, ``old`` is left alone and there is no summary; the route then only
keeps the keys and values, so that the puts reach the engine at once instead
of waiting for the commit.

``PutRoute`` is the C type of ``keyspace._put_route_accel`` where it is built,
else the Python class below, which gives the same results. Cost per put: the
engine's replace, three list appends and a comparison or two; two dict stores
per put at the settle.

>>> replaced = {}
>>> def replace(key, value):
...     before = replaced.get(key)
...     replaced[key] = value
...     return before
>>> old, merged = {}, {}
>>> route = PythonPutRoute(replace, old, merged)
>>> route(b"b", b"12"); route(b"a", b"1"); route(b"b", b"1234")
>>> route.settle()
>>> old, merged
({b'b': None, b'a': None}, {b'b': b'1234', b'a': b'1'})
>>> route.summary()
(b'a', b'b', 2, 7)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, cast

__all__ = ["PutRoute", "PythonPutRoute", "PythonSplitPut", "SplitPut"]


class PythonPutRoute:
    """``route(key, value)``: ``replace(key, value)``, the key, the value and what
    it replaced kept for :meth:`settle`. :meth:`summary` gives ``(low, high,
    keys, bytes)`` of the puts so far while :attr:`exact` holds (a caller that
    makes a change any other way clears it), else ``None``."""

    __slots__ = (
        "_bytes",
        "_keys",
        "_log",
        "exact",
        "high",
        "knows_old",
        "low",
        "merged",
        "old",
        "puts",
        "replace",
    )

    def __init__(
        self,
        replace: Callable[[bytes, bytes], object],
        old: dict[bytes, Any],
        merged: dict[bytes, Any],
        knows_old: bool = True,
    ) -> None:
        self.replace = replace
        self.knows_old = bool(knows_old)
        """Whether ``replace`` answers the value before (else it is a plain put
        whose answer is dropped)."""
        self.old = old
        self.merged = merged
        self._log: list[Any] = []
        self.exact = True
        """Whether every change of the transaction so far went through this route."""
        self.low: bytes | None = None
        """The lowest key put (``None`` before a put, and always without :attr:`knows_old`)."""
        self.high: bytes | None = None
        """The highest key put (as :attr:`low`)."""
        self._keys = 0
        self._bytes = 0
        self.puts = 0
        """The puts made."""

    def __call__(self, key: bytes, value: bytes) -> None:
        answer = self.replace(key, value)
        if not self.knows_old:  # no summary to keep: the puts alone
            self._log += (key, value, None)
            self.puts += 1
            return
        before = cast("bytes | None", answer)
        self._log += (key, value, before)
        self.puts += 1
        if before is None:
            self._keys += 1
            self._bytes += len(key) + len(value)
        else:
            self._bytes += len(value) - len(before)
        low = self.low
        if low is None:
            self.low = self.high = key
        elif key < low:
            self.low = key
        elif key > self.high:  # type: ignore[operator]
            self.high = key

    def settle(self) -> None:
        """The puts made since the last settle into the dicts, in the order made:
        ``old.setdefault(key, before)`` (the first put of a key in the
        transaction replaced its value before it; only where :attr:`knows_old`)
        and ``merged[key] = value``."""
        log, old, merged, knows_old = self._log, self.old, self.merged, self.knows_old
        for i in range(0, len(log), 3):
            key = log[i]
            if knows_old and key not in old:
                old[key] = log[i + 2]
            merged[key] = log[i + 1]
        log.clear()

    def columns(self) -> tuple[list[bytes], list[bytes]]:
        """The keys and the values of the puts not settled yet, in the order made."""
        return self._log[0::3], self._log[1::3]

    def summary(self) -> tuple[bytes, bytes, int, int] | None:
        """``(low, high, keys, bytes)``: the lowest and highest key put and the net
        change of keys and stored bytes, or ``None`` when no put was made, a
        change went another way (:attr:`exact` cleared) or the values before are
        not known (:attr:`knows_old` false)."""
        if not self.exact or self.low is None or self.high is None:  # low: never set without knows_old
            return None
        return (self.low, self.high, self._keys, self._bytes)


class PythonSplitPut:
    """A put that hands ``(key, value)`` to ``below`` where ``key`` is bytes below
    ``low`` and to ``rest`` otherwise: a hooked transaction's put, whose keys
    under the reserved ranges take a C route and the others (records) the
    Python method that notes them; :meth:`end` makes every later call
    ``ended(key, value)`` (the transaction's block is over). The reference of
    ``SplitPut``.

    >>> seen = []
    >>> fast, slow = (lambda k, v: seen.append(("fast", k))), (lambda k, v: seen.append(("slow", k)))
    >>> put = PythonSplitPut(b"\\xff", fast, slow)
    >>> put(b"a", b""); put(b"\\xff\\x01", b"")
    >>> seen
    [('fast', b'a'), ('slow', b'\\xff\\x01')]
    """

    __slots__ = ("below", "low", "rest")

    def __init__(
        self, low: bytes, below: Callable[[bytes, bytes], object], rest: Callable[[bytes, bytes], object]
    ) -> None:
        if type(low) is not bytes or not callable(below) or not callable(rest):
            raise TypeError("SplitPut(low, below, rest) takes bytes and two callables")
        self.low, self.below, self.rest = low, below, rest

    def __call__(self, key: bytes, value: bytes) -> object:
        return (self.below if type(key) is bytes and key < self.low else self.rest)(key, value)

    def end(self, ended: Callable[[bytes, bytes], object]) -> None:
        """Every later call is ``ended(key, value)``; ``below`` and ``rest`` are let go."""
        if not callable(ended):
            raise TypeError("SplitPut.end takes a callable")
        self.below = self.rest = ended


PutRoute: Any = PythonPutRoute
SplitPut: Any = PythonSplitPut
with contextlib.suppress(ImportError):  # no C compiler at install: the Python code, same results
    from ._put_route_accel import PutRoute
    from ._put_route_accel import SplitPut as SplitPut
