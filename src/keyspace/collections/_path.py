"""``Path``: the handle of one key of a map (cw-storage-plus's ``Path``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Path"]


class _Owner(Protocol):
    def key(self, key: Any) -> Any: ...
    def load(self, key: Any) -> Any: ...
    def may_load(self, key: Any, default: Any = None) -> Any: ...
    def has(self, key: Any) -> bool: ...
    def save(self, key: Any, value: Any, *args: Any) -> None: ...
    def remove(self, key: Any, *args: Any) -> None: ...
    def update(self, key: Any, fn: Callable[[Any], Any], *args: Any) -> Any: ...


class Path:
    """One key of a map, bound: ``map.path(key)``. ``storage_key`` is the key's
    place in the map's scope (the full stored bytes under the CosmWasm layout on
    a raw root scope, as cw-storage-plus's ``Path`` derefs to). Every method is
    the map's own with the key filled in, so its costs are the map's, and a
    snapshot map's ``save``/``remove``/``update`` still take the height
    (``path.save(value, height)``)."""

    __slots__ = ("key", "owner", "storage_key")

    def __init__(self, owner: _Owner, key: Any) -> None:
        self.owner = owner
        self.key = key
        self.storage_key = owner.key(key)  # checks the key

    def __repr__(self) -> str:
        return f"<Path {self.key!r} of {self.owner!r}>"

    def load(self) -> Any:
        """The value; :class:`KeyError` when there is none."""
        return self.owner.load(self.key)

    def may_load(self, default: Any = None) -> Any:
        """The value, or ``default``."""
        return self.owner.may_load(self.key, default)

    def has(self) -> bool:
        """Whether the key holds a value."""
        return self.owner.has(self.key)

    def save(self, value: Any, *args: Any) -> None:
        """Store ``value`` at the key."""
        self.owner.save(self.key, value, *args)

    def remove(self, *args: Any) -> None:
        """Remove the key (no error when it is absent)."""
        self.owner.remove(self.key, *args)

    def update(self, fn: Callable[[Any], Any], *args: Any) -> Any:
        """Store and return ``fn(current value or None)``, atomically."""
        return self.owner.update(self.key, fn, *args)
