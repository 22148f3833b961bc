"""Store options: URL query parameters and keyword arguments, checked in one place.

An adapter's options are the keyword-only parameters of its constructor; the URL
query (``lmdb:///p?map_size=64GiB&sync=false``) is split off the path here, so it
never becomes part of a file or directory name, and each value is converted to the
type of the parameter's default (``bool``: true/false/1/0/yes/no/on/off; ``int``:
an integer with an optional size suffix: ``64MiB`` and ``64M`` binary,
``64MB`` decimal; ``float``).
An unknown name raises :class:`~keyspace.errors.StoreError` listing the known ones.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from ..errors import StoreError

__all__ = ["checked_option", "known_options", "parse_value", "resolve_options", "split_query"]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
MAX_COUNT = 2**63 - 1
"""The largest size or count an option takes (what the engines' C ``int64``/``size_t`` hold)."""


def split_query(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` without its ``?query``, and the query's ``(name, value)`` pairs."""
    base, sep, query = text.partition("?")
    if not sep:
        return text, []
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise StoreError(f"malformed options {query!r} in the store URL {text!r}: {exc}") from None
    return base, pairs


def known_options(factory: Callable[..., Any]) -> dict[str, Any]:
    """The keyword-only parameters of ``factory`` (an adapter class) and their
    defaults: the options it accepts."""
    params = inspect.signature(factory).parameters.values()
    return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def parse_value(name: str, text: str, default: Any) -> Any:
    """Convert the URL text of option ``name`` to the type of its ``default``."""
    word = text.strip().lower()
    if isinstance(default, bool):
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise StoreError(f"option {name}={text!r} is not a boolean (use true or false)")
    if isinstance(default, int):
        match = _SIZE.match(text)
        if match is None:
            raise StoreError(f"option {name}={text!r} is not an integer (size suffixes: KiB, MiB, GiB, TiB)")
        number, unit, binary = match.groups()
        base = 1000 if binary.lower() == "b" else 1024  # 64GB: decimal; 64GiB and 64G: binary
        return _count(name, int(number) * base ** _POWERS[unit.lower()])
    if isinstance(default, float) or default is None:
        try:
            return float(text)
        except ValueError:
            raise StoreError(f"option {name}={text!r} is not a number") from None
    return text


def resolve_options(
    factory: Callable[..., Any],
    engine: str,
    url: str,
    query: list[tuple[str, str]],
    given: Mapping[str, Any],
) -> dict[str, Any]:
    """The keyword arguments for ``factory``: the URL query converted, then the
    ``given`` keyword options (which win). Unknown names raise
    :class:`~keyspace.errors.StoreError` listing the known ones."""
    known = known_options(factory)
    options: dict[str, Any] = {}
    for name, text in query:
        if name not in known:
            _unknown(name, engine, url, known)
        options[name] = parse_value(name, text, known[name])
    for name, value in given.items():
        if name not in known:
            _unknown(name, engine, url, known)
        options[name] = checked_option(name, value, known[name])
    return options


def checked_option(name: str, value: Any, default: Any) -> Any:
    """A keyword option's ``value``: text is converted as in a URL; a flag must be a
    bool, a size or count (an int default) an int from 0 to :data:`MAX_COUNT`, and
    a name (a str default) a str, so a wrong one is refused with its name before
    the engine sees it."""
    if isinstance(value, str) and not isinstance(default, str) and default is not None:
        return parse_value(name, value, default)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise StoreError(f"option {name}={value!r} is not a boolean (use True or False)")
    elif isinstance(default, int):
        return _count(name, value)
    elif isinstance(default, str) and not isinstance(value, str):
        raise StoreError(f"option {name}={value!r} must be a str, not {type(value).__name__}")
    return value


def _count(name: str, value: Any) -> int:
    """``value`` when it is a size or a count: an int (not a bool) from 0 to
    :data:`MAX_COUNT`; else :class:`~keyspace.errors.StoreError` naming both."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise StoreError(
            f"option {name}={value!r} must be an int of 0 or more and at most {MAX_COUNT} (a size or a count)"
        )
    return value


def _unknown(name: str, engine: str, url: str, known: Mapping[str, Any]) -> None:
    # open_store takes readonly for every engine (wrapping the store where the
    # adapter has no read-only mode of its own), so it is always a known option.
    names = ", ".join(sorted({*known, "readonly"}))
    raise StoreError(f"unknown {engine} option {name!r} for {url!r}; known options: {names}")
