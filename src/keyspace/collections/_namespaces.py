"""One collection's namespaces must be distinct: the refusal every collection
with more than one namespace (an indexed map and its indexes, a snapshot
collection and its changelog and checkpoints) makes in its constructor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidArgument
from ..schemes._base import component_bytes

__all__ = ["check_distinct"]


def _identity(namespace: Any) -> Any:
    """What makes two namespaces one: a str and the bytes of its UTF-8 are one
    namespace (the CosmWasm layout stores both as those bytes)."""
    if isinstance(namespace, (str, bytes, bytearray, memoryview)):
        return component_bytes(namespace)
    return (type(namespace), namespace)


def check_distinct(owner: str, roles: Sequence[tuple[str, Any]]) -> None:
    """Raise :class:`InvalidArgument` when two of ``roles`` (``(role, namespace)``
    pairs, such as ``("the map", "tokens")`` and ``("index 'owner'", "tokens")``)
    name one namespace: their entries would share keys, so one would be read as
    the other's (a ``DecodeError``) or overwrite and delete the other's. Two
    different namespaces never share a key under either layout (the CosmWasm
    layout length-prefixes them; the tuple layout makes each a child scope), so
    equality is the whole test. Cost: O(number of roles)."""
    seen: dict[Any, str] = {}
    for role, namespace in roles:
        ident = _identity(namespace)
        other = seen.get(ident)
        if other is not None:
            raise InvalidArgument(
                f"{owner}: {role} uses namespace {namespace!r}, which {other} uses too; the two would "
                "write and delete each other's entries: give each its own namespace"
            )
        seen[ident] = role
