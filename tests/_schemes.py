"""The schemes the write and fault tests run, each with a scope that holds keys
and a sibling of it (a child scope beside the first's own keys where the scheme
allows one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keyspace.schemes import (
    AsciiHex,
    Delimited,
    LengthPrefixed,
    Naive,
    Scheme,
    ScopeHash,
    Sublevel,
    TupleScheme,
)

SCOPE_AND_SIBLING: dict[str, tuple[Callable[[], Scheme], tuple[Any, ...], tuple[Any, ...]]] = {
    "tuple": (TupleScheme, ("t", "a"), ("t", "b")),
    "asciihex": (AsciiHex, ("t", "a"), ("t", "b")),
    "sublevel": (Sublevel, ("t", "a"), ("t", "b")),
    "scopehash": (ScopeHash, ("a",), ("b",)),
    "delimited": (lambda: Delimited(":"), ("a",), ("b",)),
    "length-prefixed": (LengthPrefixed, (b"t", b"a"), (b"t", b"b")),
    "naive": (lambda: Naive(allow_collisions=True), ("t", "a"), ("t", "b")),
}
