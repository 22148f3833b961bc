"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..schemes import SCHEMES

__all__ = ["depth_option", "format_options", "output_format", "scheme_option"]

F = TypeVar("F", bound=Callable[..., Any])


def scheme_option(
    *, required: bool = False, name: str = "--scheme", help_text: str | None = None
) -> Callable[[F], F]:
    """``--scheme NAME`` (one of the registered schemes); the parameter is named
    after the option (``--from-scheme`` gives ``from_scheme``)."""
    return click.option(
        name,
        name.lstrip("-").replace("-", "_"),
        type=click.Choice(list(SCHEMES)),
        required=required,
        help=help_text
        or "Key scheme of the store; default: the one recorded in the store, else detected from its keys.",
    )


def depth_option(f: F) -> F:
    """``--depth N`` for formats that do not record a key's scope depth."""
    return click.option(
        "--depth",
        type=click.IntRange(min=0),
        default=None,
        help="Scope depth of the stored keys, for schemes that do not record it (length-prefixed).",
    )(f)


def format_options(f: F) -> F:
    """``--hex`` / ``--json`` (text is the default)."""
    f = click.option("--json", "as_json", is_flag=True, help="Keys and values as JSON (see below).")(f)
    return click.option("--hex", "as_hex", is_flag=True, help="Keys and values as hex.")(f)


def output_format(as_hex: bool, as_json: bool) -> str:
    """``text``, ``hex`` or ``json`` from the two flags (which exclude each other)."""
    if as_hex and as_json:
        raise click.UsageError("--hex and --json exclude each other")
    return "hex" if as_hex else "json" if as_json else "text"
