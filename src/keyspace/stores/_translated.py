"""An engine's call with a store view's errors: how a view offers the engine's own
C call as its contract method.

``translated(fn, translate)`` is ``fn``, except that an :class:`Exception` it
raises that is not a :class:`~keyspace.errors.KeyspaceError` is raised as
``translate(error, key)`` (``key``: the call's first positional argument,
``None`` without one), chained from it; keyspace errors and other
:class:`BaseException` go through as they are. A view sets its ``get``,
``put`` or ``fast_replace`` to one (py-lmdb's ``txn.get`` in an LMDB snapshot): the
layers above call the contract's method, which is the engine call with no
Python frame, and never meet an engine error.

``translated`` is the C function of ``keyspace.stores._gate_accel`` (the
module of the stores' engine calls: an uncounted guarded call, see
:class:`~keyspace.stores._gate.Gate`) where it is built (one vectorcall more
than ``fn``); :func:`translated_py` is its pure-Python reference, with the
same behaviour.

>>> def get(key):
...     raise LookupError("gone")
>>> from keyspace.errors import StoreError
>>> read = translated_py(get, lambda exc, key: StoreError(f"{exc} at {key!r}"))
>>> read(b"k")
Traceback (most recent call last):
...
keyspace.errors.StoreError: gone at b'k'
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NoReturn

from ..errors import KeyspaceError, StoreClosed

__all__ = [
    "GetSlot",
    "PointSlots",
    "PutSlot",
    "Translate",
    "ended_call",
    "raise_translation",
    "translated",
    "translated_py",
]

Translate = Callable[[BaseException, Any], KeyspaceError]
"""A view's translation of an engine error (the error, and the key of the call or
``None``) into the keyspace error it raises."""


class GetSlot:
    """A base of a view whose ``get`` is set on each instance (a slot): the
    engine's call, :func:`translated`. Listed before the contract's class among
    the bases, so that the slot is the view's ``get``."""

    __slots__ = ("get",)
    get: Callable[[bytes], bytes | None]


class PutSlot:
    """As :class:`GetSlot`, for ``put``."""

    __slots__ = ("put",)
    put: Callable[[bytes, bytes], None]


class PointSlots:
    """As :class:`GetSlot`, for ``get`` and ``put``."""

    __slots__ = ("get", "put")
    get: Callable[[bytes], bytes | None]
    put: Callable[[bytes, bytes], None]


def ended_call(message: str) -> Callable[..., Any]:
    """A view's ``get`` or ``put`` once the view has ended: every call raises
    :class:`~keyspace.errors.StoreClosed` saying ``message``. It holds no view,
    where the view's own methods or translation would hold it in a reference
    cycle.

    >>> ended_call("this snapshot has ended")(b"k")
    Traceback (most recent call last):
    ...
    keyspace.errors.StoreClosed: this snapshot has ended
    """
    return partial(_raise_closed, message)


def _raise_closed(message: str, *args: Any) -> Any:
    raise StoreClosed(message)


def raise_translation(error: BaseException, exc: BaseException) -> NoReturn:
    """Raise ``error``, the translation of ``exc`` (the engine error being
    handled), chained from it; ``exc`` itself where the translation gave it
    back. The rule of the C gate's translated calls and iterators, which this
    module's and the gate's references follow."""
    if error is exc:
        raise exc
    raise error from exc


def translated_py(fn: Callable[..., Any], translate: Translate) -> Callable[..., Any]:
    """``fn``, its errors raised as ``translate(error, key)`` (module docstring)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KeyspaceError:
            raise
        except Exception as exc:
            raise_translation(translate(exc, args[0] if args else None), exc)

    return call


translated: Callable[[Callable[..., Any], Translate], Callable[..., Any]]
try:  # the optional C type (setup.py builds it when it can)
    from ._gate_accel import translated
except ImportError:  # pragma: no cover - the reference then serves
    translated = translated_py
