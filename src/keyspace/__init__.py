"""keyspace: collision-free, order-preserving, nestable namespaces for ordered
key-value stores."""

from __future__ import annotations

import importlib
from typing import Any

from . import bincode, errors
from ._watch import ScopeWatch, WatchEvent
from .codecs import Codec
from .directory import Directories, Directory, DirectoryPartition
from .errors import (
    AccessDenied,
    AuthenticationFailed,
    DecodeError,
    DirectoryError,
    DirectoryExists,
    DirectoryNotFound,
    HashCollision,
    InvalidKey,
    InvalidName,
    KeyspaceError,
    KeyTooLarge,
    LayerMismatch,
    LayoutError,
    PrefixInUse,
    SchemeMismatch,
    StaleDirectory,
    StoreClosed,
    StoreError,
    TransactionTooLarge,
    UniqueViolation,
    UnreadableRecord,
    WatchCompacted,
    WatchUnsupported,
)
from .keyspace import Keyspace, Transaction, attach, open
from .schemes import (
    AsciiHex,
    Delimited,
    LengthPrefixed,
    Naive,
    Property,
    Scheme,
    ScopeHash,
    Sublevel,
    TupleScheme,
)
from .scope import Scope

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "AsciiHex",
    "AuthenticationFailed",
    "Codec",
    "DecodeError",
    "Delimited",
    "Directories",
    "Directory",
    "DirectoryError",
    "DirectoryExists",
    "DirectoryNotFound",
    "DirectoryPartition",
    "HashCollision",
    "InvalidKey",
    "InvalidName",
    "KeyTooLarge",
    "Keyspace",
    "KeyspaceError",
    "LayerMismatch",
    "LayoutError",
    "LengthPrefixed",
    "Naive",
    "PrefixInUse",
    "Property",
    "Scheme",
    "SchemeMismatch",
    "Scope",
    "ScopeHash",
    "ScopeWatch",
    "StaleDirectory",
    "StoreClosed",
    "StoreError",
    "Sublevel",
    "Transaction",
    "TransactionTooLarge",
    "TupleScheme",
    "UniqueViolation",
    "UnreadableRecord",
    "WatchCompacted",
    "WatchEvent",
    "WatchUnsupported",
    "__version__",
    "attach",
    "bincode",
    "errors",
    "open",
    "scoped_heed",
]


def __getattr__(name: str) -> Any:
    """``keyspace.scoped_heed`` is imported when first used (it opens LMDB)."""
    if name == "scoped_heed":
        return importlib.import_module(".scoped_heed", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
