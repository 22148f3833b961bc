"""The pairs a mapping's ``update`` takes, read as ``dict.update`` reads them:
shared by :meth:`Scope.update <keyspace.scope.Scope.update>`, the asyncio face
and the scope with a default ``ttl``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any

__all__ = ["update_pairs"]


def update_pairs(other: Any, kwargs: dict[str, Any]) -> Iterable[tuple[Any, Any]]:
    """The pairs ``dict.update(other, **kwargs)`` takes, in order: where ``other``
    has ``keys()``, ``(k, other[k])`` for each of its keys (a ``dict`` or a
    ``Mapping`` through ``items()``, the same pairs); else ``other`` as an
    iterable of pairs; then the keyword arguments. Lazy: an iterator is read as
    the result is."""
    pairs: Iterable[tuple[Any, Any]]
    if isinstance(other, dict | Mapping):
        pairs = other.items()
    elif hasattr(other, "keys"):
        # keys(), as dict.update reads it: iterating a sqlite3.Row gives its values
        pairs = ((k, other[k]) for k in other.keys())  # noqa: SIM118
    else:
        pairs = other
    return chain(pairs, kwargs.items()) if kwargs else pairs
