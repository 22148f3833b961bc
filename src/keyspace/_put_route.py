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

The route is also the transaction's ``put`` itself: made with ``bound`` and
``rest``, it hands every call but a put of a bytes key below ``bound`` (the
keyspace's reserved records, which the transaction notes) to ``rest``, and
:meth:`~PythonPutRoute.end` makes every later call ``ended(key, value)`` once
the block is over. Made with ``keeps=False`` (a transaction whose puts wait for
the commit in a dict), it only splits: ``replace`` is that dict, whose item a
put sets (one C call in the C type), and nothing is kept.

``PutRoute`` is the C type of ``keyspace._put_route_accel`` where it is built,
else the Python class below, which gives the same results. Cost per put: one
bytes comparison with ``bound``, the engine's replace, three list appends and
a comparison or two; two dict stores per put at the settle.

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

__all__ = ["PutRoute", "PythonPutRoute"]


class PythonPutRoute:
    """``route(key, value)``: ``replace(key, value)``, the key, the value and what
    it replaced kept for :meth:`settle`. :meth:`summary` gives ``(low, high,
    keys, bytes)`` of the puts so far while :attr:`exact` holds (a caller that
    makes a change any other way clears it), else ``None``."""

    __slots__ = (
        "_bytes",
        "_keys",
        "_log",
        "_write",
        "bound",
        "exact",
        "high",
        "keeps",
        "knows_old",
        "low",
        "merged",
        "old",
        "puts",
        "replace",
        "rest",
    )

    def __init__(
        self,
        replace: Callable[[bytes, bytes], object] | dict[bytes, bytes],
        old: dict[bytes, Any],
        merged: dict[bytes, Any],
        knows_old: bool = True,
        *,
        bound: bytes | None = None,
        rest: Callable[[bytes, bytes], object] | None = None,
        keeps: bool = True,
    ) -> None:
        into_dict = type(replace) is dict
        if into_dict and knows_old:
            raise TypeError("PutRoute into a dict knows no values before: give knows_old=False")
        if (
            not (into_dict or callable(replace))
            or not isinstance(old, dict)
            or not isinstance(merged, dict)
            or (rest is None) != (bound is None)
            or (rest is not None and (type(bound) is not bytes or not callable(rest)))
        ):
            raise TypeError(
                "PutRoute takes a callable or dict replace, two dicts, "
                "and bytes bound with a callable rest, or neither"
            )
        self.replace = replace
        """The engine's replace, or the dict the puts set."""
        self._write: Callable[[bytes, bytes], object] = (
            replace.__setitem__ if isinstance(replace, dict) else replace  # a dict: exactly one (above)
        )
        self.bound = bound
        self.rest = rest
        """With :attr:`bound`: what takes every call but a put of a bytes key below
        the bound (a hooked transaction's reserved records)."""
        self.keeps = bool(keeps)
        """Whether the puts are kept (else the route only splits them)."""
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

    def __call__(self, key: bytes, value: bytes) -> object:
        rest = self.rest
        if rest is not None and not (type(key) is bytes and key < self.bound):  # type: ignore[operator]
            return rest(key, value)
        answer = self._write(key, value)
        if not self.keeps:
            return None
        if not self.knows_old:  # no summary to keep: the puts alone
            self._log += (key, value, None)
            self.puts += 1
            return None
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
        return None

    def end(self, ended: Callable[[bytes, bytes], object]) -> None:
        """Every later call is ``ended(key, value)`` (the transaction's block is
        over); the route holds its rest no more. What it kept stays."""
        if not callable(ended):
            raise TypeError("PutRoute.end takes a callable")
        self.bound, self.rest = b"", ended

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


PutRoute: Any = PythonPutRoute
with contextlib.suppress(ImportError):  # no C compiler at install: the Python code, same results
    from ._put_route_accel import PutRoute
