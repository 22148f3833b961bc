"""``PrefixBound`` and ``prefix_range``: ranges whose ends are prefixes of a
composite key, as cw-storage-plus's ``prefix_range`` (CosmWasm/cw-plus#446).

``map.prefix(p).items()`` fixes the leading elements to one value and ranges over
the rest; ``map.prefix_range(PrefixBound.inclusive(3), PrefixBound.exclusive(7))``
lets the leading elements themselves vary, and yields whole keys: every key whose
leading elements are from ``3`` (all keys that start with it) up to, not
including, ``7``. An exclusive low end starts after every key that starts with
it; an inclusive high end takes every key that starts with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import InvalidArgument, show_bytes
from ..scope import Scope, check_range_arguments
from ._keys import KeySpec
from ._layouts import Namespace

__all__ = ["PrefixBound"]


class PrefixBound:
    """One end of a :meth:`~keyspace.collections.Map.prefix_range`: ``prefix``
    (a bare value for one leading element, a tuple for several; fewer elements
    than the key has), ``inclusive`` or not. Build it with
    :meth:`PrefixBound.inclusive` or :meth:`PrefixBound.exclusive`. Immutable."""

    __slots__ = ("inclusive_end", "prefix")

    def __init__(self, prefix: Any, inclusive: bool = True) -> None:
        if type(inclusive) is not bool:
            raise InvalidArgument(f"PrefixBound inclusive= takes True or False, not {show_bytes(inclusive)}")
        self.prefix = prefix
        self.inclusive_end = inclusive

    @classmethod
    def inclusive(cls, prefix: Any) -> PrefixBound:
        """The end that takes the keys starting with ``prefix``."""
        return cls(prefix, True)

    @classmethod
    def exclusive(cls, prefix: Any) -> PrefixBound:
        """The end that leaves out the keys starting with ``prefix``."""
        return cls(prefix, False)

    def __repr__(self) -> str:
        kind = "inclusive" if self.inclusive_end else "exclusive"
        return f"PrefixBound.{kind}({self.prefix!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrefixBound):
            return NotImplemented
        return (self.prefix, self.inclusive_end) == (other.prefix, other.inclusive_end)

    def __hash__(self) -> int:
        return hash((PrefixBound, self.inclusive_end, repr(self.prefix)))


def _checked(bound: Any, spec: KeySpec, side: str) -> tuple[tuple[Any, ...] | None, bool]:
    """The checked leading elements and inclusiveness of one end (``None``: open)."""
    if bound is None:
        return None, True
    if not isinstance(bound, PrefixBound):
        raise InvalidArgument(
            f"prefix_range {side}= takes a PrefixBound (PrefixBound.inclusive(p) or "
            f"PrefixBound.exclusive(p)) or None, not {show_bytes(bound)}"
        )
    return spec.prefix_elements(bound.prefix), bound.inclusive_end


def prefix_scan(
    ns: Namespace,
    scope: Scope,
    min: Any,
    max: Any,
    reverse: bool,
    limit: int | None,
    fixed: tuple[Any, ...] = (),
    rest: KeySpec | None = None,
) -> Iterator[tuple[Any, Any]]:
    """``(scope key, raw value)`` of the keys of ``ns`` between the prefix bounds
    ``min`` and ``max`` (see :class:`PrefixBound`), checked first
    (:class:`InvalidArgument`, :class:`~keyspace.errors.InvalidKey`). Under
    the fixed leading elements ``fixed`` (a view's ``prefix(p)``; ``rest``: the
    spec of the elements after them) the bounds are prefixes of those
    elements, and only keys under ``fixed`` are read: an open side is
    ``fixed`` itself, inclusive. Cost: one range scan of the keys yielded, plus
    at most two seeks on the tuple layout."""
    check_range_arguments(True, False, reverse, limit)
    spec = ns.spec if rest is None else rest
    lo, lo_incl = _checked(min, spec, "min")
    hi, hi_incl = _checked(max, spec, "max")
    if fixed:
        lo, lo_incl = (fixed, True) if lo is None else ((*fixed, *lo), lo_incl)
        hi, hi_incl = (fixed, True) if hi is None else ((*fixed, *hi), hi_incl)
    return ns.prefix_scan(scope, lo, lo_incl, hi, hi_incl, reverse, limit)
