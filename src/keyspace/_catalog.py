"""The catalog's former module: every name it offered, now served by
:mod:`keyspace.catalog` (one module per fact, behind :class:`Catalog`)."""

from __future__ import annotations

from .catalog import LAYOUT_START, LAYOUT_STOP, SETTLED, Catalog, GuardAnswer, ReadGuard, check_leaf_depth
from .catalog.leaves import _layout_key as _layout_key

__all__ = [
    "LAYOUT_START",
    "LAYOUT_STOP",
    "SETTLED",
    "Catalog",
    "GuardAnswer",
    "ReadGuard",
    "check_leaf_depth",
]
