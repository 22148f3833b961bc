"""The pairs a mapping's ``update`` takes, read as ``dict.update`` reads them:
shared by :meth:`Scope.update <keyspace.scope.Scope.update>`, the asyncio face
and the scope with a default ``ttl``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from .errors import InvalidArgument, show_bytes

__all__ = ["update_pairs"]


def update_pairs(other: Any, kwargs: dict[str, Any]) -> Iterable[tuple[Any, Any]]:
    """The pairs ``dict.update(other, **kwargs)`` takes, in order: where ``other``
    has ``keys()``, ``(k, other[k])`` for each of its keys (a ``dict`` or a
    ``Mapping`` through ``items()``, the same pairs); else ``other`` as an
    iterable of pairs, each checked to be one (:class:`InvalidArgument` naming
    the element and its place, where ``dict.update`` raises a bare
    ``ValueError`` or ``TypeError``); then the keyword arguments. Lazy: an
    iterator is read as the result is.

    >>> list(update_pairs([(b"k", b"v")], {}))
    [(b'k', b'v')]
    >>> list(update_pairs([(b"k", b"v", b"x")], {}))
    Traceback (most recent call last):
    ...
    keyspace.errors.InvalidArgument: update's element #0 is no (key, value) pair: (b'k', b'v', b'x')
    """
    pairs: Iterable[tuple[Any, Any]]
    if isinstance(other, dict | Mapping):
        pairs = other.items()
    elif hasattr(other, "keys"):
        # keys(), as dict.update reads it: iterating a sqlite3.Row gives its values
        pairs = ((k, other[k]) for k in other.keys())  # noqa: SIM118
    else:
        pairs = _pairs(other)
    return chain(pairs, kwargs.items()) if kwargs else pairs


def _pairs(other: Any) -> Iterator[tuple[Any, Any]]:
    try:
        elements = iter(other)
    except TypeError:
        raise InvalidArgument(
            f"update takes a mapping or an iterable of (key, value) pairs, not {show_bytes(other)}"
        ) from None
    for index, element in enumerate(elements):
        if type(element) is not tuple or len(element) != 2:
            try:
                key, value = element
            except (TypeError, ValueError):
                raise InvalidArgument(
                    f"update's element #{index} is no (key, value) pair: {show_bytes(element)}"
                ) from None
            element = (key, value)
        yield element
