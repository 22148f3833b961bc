"""keyspace: collision-free, order-preserving, nestable namespaces for ordered
key-value stores."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import (
    AccessDenied,
    AccountingUnavailable,
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
    QuotaExceeded,
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

if TYPE_CHECKING:
    from . import bincode, scoped_heed
    from ._accounting import ScopeStats
    from ._watch import ScopeWatch, WatchEvent
    from .codecs import Codec
    from .directory import Directories, Directory, DirectoryPartition
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

# the public names below are imported when first used (``import keyspace`` reads
# only the errors): the module that defines each
_LAZY = {
    "ScopeStats": "._accounting",
    "ScopeWatch": "._watch",
    "WatchEvent": "._watch",
    "Codec": ".codecs",
    "Directories": ".directory",
    "Directory": ".directory",
    "DirectoryPartition": ".directory",
    "Keyspace": ".keyspace",
    "Transaction": ".keyspace",
    "attach": ".keyspace",
    "open": ".keyspace",
    "AsciiHex": ".schemes",
    "Delimited": ".schemes",
    "LengthPrefixed": ".schemes",
    "Naive": ".schemes",
    "Property": ".schemes",
    "Scheme": ".schemes",
    "ScopeHash": ".schemes",
    "Sublevel": ".schemes",
    "TupleScheme": ".schemes",
    "Scope": ".scope",
}
_MODULES = {"bincode": ".bincode", "scoped_heed": ".scoped_heed"}

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "AccountingUnavailable",
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
    "QuotaExceeded",
    "Scheme",
    "SchemeMismatch",
    "Scope",
    "ScopeHash",
    "ScopeStats",
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
    """The public names other than the errors, imported when first asked for
    (``keyspace.scoped_heed`` opens LMDB; ``keyspace.open`` the whole library),
    so that ``import keyspace`` costs the errors module alone."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later lookups find it without this call
        return value
    if not name.startswith("_") or name in _MODULES:
        # a submodule (``keyspace.tuples``, ``keyspace.stores``, ...), as an attribute
        # of the package, as when ``import keyspace`` imported the whole library
        try:
            return importlib.import_module(_MODULES.get(name, "." + name), __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_MODULES))
