"""The pairs a mapping's ``update`` takes, read as ``dict.update`` reads them:
shared by :meth:`Scope.update <keyspace.scope.Scope.update>`, the asyncio face
and the scope with a default ``ttl``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import chain
from typing import Any

from .errors import InvalidArgument, KeyspaceError, show_bytes

__all__ = ["pair_list", "pairs_checked", "update_pairs"]


def update_pairs(other: Any, kwargs: dict[str, Any]) -> Iterable[tuple[Any, Any]]:
    """The pairs ``dict.update(other, **kwargs)`` takes, in order: where ``other``
    has ``keys()``, ``(k, other[k])`` for each of its keys (a ``dict`` or a
    ``Mapping`` through ``items()``, the same pairs); else ``other`` as an
    iterable of pairs (a list or tuple as it is: read it inside
    :func:`pairs_checked`, which names an element that is no pair; any other
    iterable each element checked as it is read); then the keyword arguments.
    Lazy: an iterator is read as the result is. :class:`InvalidArgument` where
    ``dict.update`` raises a bare ``ValueError`` or ``TypeError``.

    >>> list(update_pairs(iter([(b"k", b"v")]), {}))
    [(b'k', b'v')]
    >>> list(update_pairs(iter([(b"k", b"v", b"x")]), {}))
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
    elif type(other) is list or type(other) is tuple:
        pairs = other  # unchecked, at no cost per pair: pairs_checked names a bad one
    else:
        pairs = _pairs(other)
    return chain(pairs, kwargs.items()) if kwargs else pairs


def pair_list(other: Any, kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
    """:func:`update_pairs` read into a list of 2-tuples, each element checked."""
    with pairs_checked(other):
        return [(key, value) for key, value in update_pairs(other, kwargs)]


@contextmanager
def pairs_checked(other: Any) -> Iterator[None]:
    """Around the reading of ``update_pairs(other, ...)``: a ``ValueError`` or
    ``TypeError`` that is no :class:`~keyspace.errors.KeyspaceError`, met while
    ``other`` is a list or tuple holding an element that is no pair, becomes
    the :class:`InvalidArgument` naming the first such element (any other error
    passes as it is). Costs nothing while no error comes."""
    try:
        yield
    except (TypeError, ValueError) as exc:
        if isinstance(exc, KeyspaceError) or not (type(other) is list or type(other) is tuple):
            raise
        for index, element in enumerate(other):
            _pair(index, element)
        raise


def _pair(index: int, element: Any) -> tuple[Any, Any]:
    """``element`` (the ``index``-th) as a ``(key, value)`` tuple, as ``dict.update``
    unpacks it; :class:`InvalidArgument` naming it where it is no pair."""
    try:
        key, value = element
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"update's element #{index} is no (key, value) pair: {show_bytes(element)}"
        ) from None
    return key, value


def _pairs(other: Any) -> Iterator[tuple[Any, Any]]:
    try:
        elements = iter(other)
    except TypeError:
        raise InvalidArgument(
            f"update takes a mapping or an iterable of (key, value) pairs, not {show_bytes(other)}"
        ) from None
    for index, element in enumerate(elements):
        yield element if type(element) is tuple and len(element) == 2 else _pair(index, element)
