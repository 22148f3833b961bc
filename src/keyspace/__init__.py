"""keyspace: collision-free, order-preserving, nestable namespaces for ordered
key-value stores."""

from __future__ import annotations

from . import errors
from .errors import (
    DecodeError,
    HashCollision,
    InvalidName,
    KeyspaceError,
    KeyTooLarge,
    LayoutError,
    SchemeMismatch,
    StoreClosed,
    StoreError,
    TransactionTooLarge,
)

__version__ = "0.1.0"

__all__ = [
    "DecodeError",
    "HashCollision",
    "InvalidName",
    "KeyTooLarge",
    "KeyspaceError",
    "LayoutError",
    "SchemeMismatch",
    "StoreClosed",
    "StoreError",
    "TransactionTooLarge",
    "__version__",
    "errors",
]
