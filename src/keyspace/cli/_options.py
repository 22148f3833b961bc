"""Options shared by several commands."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from ..schemes import SCHEMES, Scheme

__all__ = [
    "SectionedCommand",
    "WholeNumber",
    "check_depth_applies",
    "depth_applies",
    "depth_option",
    "format_options",
    "output_format",
    "parse_separator",
    "scheme_option",
    "separator_option",
]

F = TypeVar("F", bound=Callable[..., Any])

_SECTIONS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "Scheme options (stores another program wrote; keyspace records its own)",
        frozenset(
            {
                "scheme",
                "separator",
                "depth",
                "from_scheme",
                "to_scheme",
                "to_depth",
                "to_separator",
                "strict_separators",
            }
        ),
    ),
    (
        "scoped-heed options (LMDB environments of Rust programs)",
        frozenset({"heed_name", "api", "unnamed_default", "key_type", "value_type"}),
    ),
)


class SectionedCommand(click.Command):
    """A command whose help lists the options most users need first, under
    "Options", then the options of one kind of store each under its own heading
    (:data:`_SECTIONS`: the scheme options, the scoped-heed options)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        main: list[tuple[str, str]] = []
        grouped: dict[str, list[tuple[str, str]]] = {title: [] for title, _ in _SECTIONS}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None or isinstance(param, click.Argument):
                continue
            title = next((t for t, names in _SECTIONS if param.name in names), None)
            (main if title is None else grouped[title]).append(record)
        for title, records in (("Options", main), *grouped.items()):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


class WholeNumber(click.ParamType):  # type: ignore[type-arg]
    """An integer of at least ``least`` (and at most ``sys.maxsize``), shown in
    the help as ``N`` with no range; a value out of range fails naming the
    least value."""

    name = "integer"

    def __init__(self, least: int = 0) -> None:
        self.least = least

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value), 10)
            except ValueError:
                self.fail(f"{value!r} is not a whole number", param, ctx)
        if number < self.least:
            self.fail(f"{number} is less than {self.least}", param, ctx)
        if number > sys.maxsize:
            self.fail(f"{number} is more than {sys.maxsize}", param, ctx)
        return number


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
        type=WholeNumber(0),
        default=None,
        help="Scope depth of the stored keys, for schemes that do not record it (length-prefixed, "
        "delimited: default 1).",
    )(f)


def depth_applies(scheme: Scheme | type[Scheme]) -> bool:
    """Whether a ``--depth`` means something for ``scheme``: its keys do not
    record their depth (:attr:`~Scheme.decode_needs_depth`,
    :attr:`~Scheme.max_decode_depth`), its keyspace records a leaf layout a depth
    may declare instead (:attr:`~Scheme.records_layout`), or the depth is one of
    its parameters (delimited)."""
    return (
        scheme.decode_needs_depth
        or scheme.max_decode_depth is not None
        or scheme.records_layout
        or "depth" in scheme.parameters
    )


def check_depth_applies(scheme: Scheme, depth: int | None, option: str = "--depth") -> None:
    """Raise :class:`click.UsageError` for a ``depth`` (given as ``option``) that
    ``scheme`` has no use for (:func:`depth_applies`): its keys record their
    depth, and a whole-store read at one depth would take every other key for one
    that does not decode."""
    if depth is None or depth_applies(scheme):
        return
    takers = ", ".join(name for name, cls in SCHEMES.items() if depth_applies(cls))
    raise click.UsageError(
        f"{option} {depth} does not apply to {scheme.name} keys: they record their own depth "
        f"({option} is for: {takers})"
    )


def parse_separator(text: str) -> str:
    """A one-byte separator from the command line: one ASCII character, or
    ``\\xHH`` / ``\\0`` / ``\\t`` for bytes a shell cannot pass (``\\x00``) and for
    the bytes 80-ff (a character there would mean its UTF-8 bytes in a path or
    key, but one byte here). Raises :class:`click.BadParameter` otherwise."""
    escapes = {"\\0": "\x00", "\\t": "\t", "\\n": "\n", "\\\\": "\\"}
    if text in escapes:
        return escapes[text]
    if len(text) == 4 and text[:2] == "\\x":
        try:
            return chr(int(text[2:], 16))
        except ValueError:
            pass
    if len(text) == 1 and ord(text) < 0x80:
        return text
    if len(text) == 1 and ord(text) <= 0xFF:
        raise click.BadParameter(
            f"{text!r} is no ASCII character: paths and keys are UTF-8 text, where it is "
            f"{text.encode().hex(' ')}; give the byte {ord(text):02x} as \\x{ord(text):02x}"
        )
    raise click.BadParameter(f"{text!r} is not one byte: give one character, or \\xHH (e.g. \\x00)")


def separator_option(f: F) -> F:
    """``--separator C`` for the delimited scheme (implies ``--scheme delimited``)."""
    return click.option(
        "--separator",
        default=None,
        callback=lambda _ctx, _param, value: None if value is None else parse_separator(value),
        help="Separator byte of delimited keys (':', '!', '~', '|', '\\x00', ...); implies --scheme "
        "delimited when no scheme is given.",
    )(f)


def format_options(f: F) -> F:
    """``--hex`` / ``--json`` (text is the default); the command receives ``fmt``
    (:func:`output_format`) in place of the two flags."""

    @functools.wraps(f)
    def with_format(*args: Any, as_hex: bool, as_json: bool, **kwargs: Any) -> Any:
        return f(*args, fmt=output_format(as_hex, as_json), **kwargs)

    g = cast(F, with_format)
    g = click.option("--json", "as_json", is_flag=True, help="Keys and values as JSON (see below).")(g)
    return click.option("--hex", "as_hex", is_flag=True, help="Keys and values as hex.")(g)


def output_format(as_hex: bool, as_json: bool) -> str:
    """``text``, ``hex`` or ``json`` from the two flags (which exclude each other)."""
    if as_hex and as_json:
        raise click.UsageError("--hex and --json exclude each other")
    return "hex" if as_hex else "json" if as_json else "text"
