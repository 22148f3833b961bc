"""keyspace: collision-free, order-preserving, nestable namespaces for ordered
key-value stores."""

from __future__ import annotations

from . import errors
from .codecs import Codec
from .errors import (
    DecodeError,
    HashCollision,
    InvalidKey,
    InvalidName,
    KeyspaceError,
    KeyTooLarge,
    LayoutError,
    SchemeMismatch,
    StoreClosed,
    StoreError,
    TransactionTooLarge,
    UnreadableRecord,
)
from .keyspace import Keyspace, Transaction, attach, open
from .schemes import AsciiHex, LengthPrefixed, Naive, Property, Scheme, ScopeHash, Sublevel, TupleScheme
from .scope import Scope

__version__ = "0.1.0"

__all__ = [
    "AsciiHex",
    "Codec",
    "DecodeError",
    "HashCollision",
    "InvalidKey",
    "InvalidName",
    "KeyTooLarge",
    "Keyspace",
    "KeyspaceError",
    "LayoutError",
    "LengthPrefixed",
    "Naive",
    "Property",
    "Scheme",
    "SchemeMismatch",
    "Scope",
    "ScopeHash",
    "StoreClosed",
    "StoreError",
    "Sublevel",
    "Transaction",
    "TransactionTooLarge",
    "TupleScheme",
    "UnreadableRecord",
    "__version__",
    "attach",
    "errors",
    "open",
]
