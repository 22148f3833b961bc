"""Key schemes: a namespace path and a key <-> one stored key (pure, no I/O).

=================  =================================  ======================================
class              format                             compatible with
=================  =================================  ======================================
``LengthPrefixed`` ``u16be(len c) c … key``           cosmwasm-std ``namespace_with_key``
``AsciiHex``       ``hex(c1) 00 … hex(key)``          key-namespacing "0x00 separated ASCIIHEX"
``Sublevel``       ``!c1!!c2!key``                    abstract-level / subleveldown sublevels
``ScopeHash``      ``u32le(xxh32) u64le(len) key``    scoped-heed bytes databases
``Delimited``      ``c1 SEP c2 SEP … key``            hand-made ``ns:key`` keys (fixed depth)
``Naive``          ``c1 c2 … key``                    nothing (legacy reads only)
=================  =================================  ======================================

Each scheme declares which of the properties 1–6 of the design it guarantees
(:attr:`Scheme.properties`); :func:`property_table` renders them, and
:func:`scheme_from_name` rebuilds a scheme from the name and parameters recorded in
a keyspace's metadata.
"""

from __future__ import annotations

from typing import Any

from ..errors import SchemeMismatch
from ._base import Property, Scheme
from .asciihex import AsciiHex
from .delimited import Delimited, NulDelimited
from .length_prefixed import LengthPrefixed
from .naive import Naive
from .scope_hash import ScopeHash
from .sublevel import Sublevel
from .tuple_scheme import TupleScheme

__all__ = [
    "SCHEMES",
    "AsciiHex",
    "Delimited",
    "LengthPrefixed",
    "Naive",
    "NulDelimited",
    "Property",
    "Scheme",
    "ScopeHash",
    "Sublevel",
    "TupleScheme",
    "property_table",
    "scheme_from_name",
]

SCHEMES: dict[str, type[Scheme]] = {
    cls.name: cls for cls in (TupleScheme, LengthPrefixed, AsciiHex, Sublevel, ScopeHash, Delimited, Naive)
}
"""Every scheme class by its :attr:`Scheme.name`, in the order of the design."""


def scheme_from_name(name: str, **params: Any) -> Scheme:
    """Return the scheme called ``name`` built with ``params`` (as recorded by
    :meth:`Scheme.params`), e.g. ``scheme_from_name("sublevel", separator="!")`` or
    ``scheme_from_name("delimited", separator=":", depth=2)``.

    Raises :class:`SchemeMismatch` for an unknown name, naming the known ones, and
    :class:`TypeError` for parameters the scheme does not take.
    """
    try:
        cls = SCHEMES[name]
    except KeyError:
        raise SchemeMismatch(f"unknown scheme {name!r}; known schemes: {', '.join(SCHEMES)}") from None
    return cls(**params)


def property_table() -> str:
    """Return a Markdown table, one row per scheme (and per variant whose properties
    differ, e.g. ``Delimited(":")`` and ``Delimited("\\x00")``) and one column per
    property, with ✔ where the scheme declares the property and ✘ where it does not."""
    header = "| scheme | " + " | ".join(f"{int(p)} {p.title}" for p in Property) + " |"
    rule = "|---|" + "---|" * len(Property)
    rows = [
        f"| `{cls.table_label or cls.__name__}` ({cls.name}) | "
        + " | ".join("✔" if p in cls.properties else "✘" for p in Property)
        + " |"
        for top in SCHEMES.values()
        for cls in (top, *top.variants)
    ]
    return "\n".join([header, rule, *rows])
