"""``keyspace get | put | delete | scan``: keys of one scope."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import click

from .._other_type import KeyOfOtherType
from ..errors import KeyspaceError
from ..keyspace import Keyspace, Transaction
from ._created import removed_on_failure
from ._format import (
    InputError,
    component_json,
    dumps,
    key_from_text,
    parse_path,
    render_key,
    render_path,
    render_value,
    value_from_text,
    value_json,
)
from ._heed import heed_options
from ._open import opened
from ._options import (
    SectionedCommand,
    WholeNumber,
    depth_option,
    format_options,
    scheme_option,
    separator_option,
)

__all__ = ["delete", "get", "put", "scan"]

_PATH_HELP = """\b
PATH components are text; prefixes give other types:
  hex:00ff      bytes from hex         bytes:abc   bytes from UTF-8 text
  int:12        an integer (tuple scheme)   str:hex:x   the text "hex:x"
In the byte schemes (all but tuple) text and bytes components are the same.
Delimited keys (c1:c2:key) take --separator and --depth (the names per scope).

\b
Keys and values are UTF-8 text by default; --hex takes and prints hex; --json
takes a JSON key (string, number, list for a composite key, {"hex": "..."} for
bytes) and a JSON string or {"hex": "..."} value, and prints JSON lines.
Text keys are bytes keys; str:user1 names a str key (the tuple scheme keeps
the two apart).

\b
scoped-heed: URL --scoped-heed NAME, or the URL scoped-heed:///env?name=NAME;
PATH is empty for the default scope, or one scope name from the registry."""


def _key(ks: Keyspace, text: str, fmt: str) -> Any:
    return key_from_text(text, fmt, typed=ks.scheme.typed_keys)


def _no_key(path: tuple[Any, ...], key: Any, ks: Keyspace, miss: KeyError | None = None) -> KeyspaceError:
    """The error of a missing key; where the scope holds the same text as a key
    of the other type (a str key where the command line gave bytes, in the
    tuple scheme), it says so and how to name that key."""
    where = render_path(path, typed=ks.scheme.typed_keys)
    message = f"no key {render_key(key, 'text')!r} in scope {where} of {ks.url}"
    if isinstance(miss, KeyOfOtherType):
        other = miss.other
        if isinstance(other, str):
            message += f" (a str key {other!r} exists: this scope's keys are str; give --key str:{other})"
        else:
            message += f" (a bytes key {other!r} exists: this scope's keys are bytes; give --key bytes:{key})"
    return KeyspaceError(message)


def _one_state(ks: Keyspace) -> AbstractContextManager[Keyspace | Transaction]:
    """What reads ``ks`` in one state: a snapshot where its store has them, else
    the keyspace itself."""
    if ks.store.capabilities.snapshots:
        return ks.snapshot()
    return nullcontext(ks)


def _record(ks: Keyspace, path: tuple[Any, ...], key: Any, value: bytes) -> str:
    typed = ks.scheme.typed_keys
    doc = {
        "path": [component_json(c, typed=typed) for c in path],
        "key": component_json(key, typed=typed),
        "value": value_json(value),
    }
    return dumps(doc)


@click.command(
    cls=SectionedCommand,
    epilog=_PATH_HELP
    + """

\b
Examples:
  keyspace get data.lmdb acme users --key alice
  keyspace get data.lmdb acme users --key 616c696365 --hex
  keyspace get data.lmdb acme events --json --key '["2026-11-01", 3]'
""",
)
@click.argument("url")
@click.argument("path", nargs=-1)
@click.option("--key", "-k", "key_text", required=True, help="The key.")
@scheme_option()
@separator_option
@depth_option
@format_options
@heed_options
def get(
    url: str,
    path: tuple[str, ...],
    key_text: str,
    scheme: str | None,
    separator: str | None,
    depth: int | None,
    fmt: str,
) -> None:
    """Print the value of one key of the scope PATH in the store at URL.

    Exits with 1 and a one-line error when the key is missing."""
    scope_path = parse_path(path)
    with opened(url, scheme, separator=separator, depth=depth) as op:
        ks = op.keyspace
        key = _key(ks, key_text, fmt)
        try:
            value = ks.scope(*scope_path)[key]
        except KeyError as miss:
            raise _no_key(scope_path, key, ks, miss) from None
        click.echo(_record(ks, scope_path, key, value) if fmt == "json" else render_value(value, fmt))


@click.command(
    cls=SectionedCommand,
    epilog=_PATH_HELP
    + """

\b
Examples:
  keyspace put data.lmdb acme users --key alice --value '{"role": "admin"}'
  keyspace put sqlite:///app.db acme --key logo --value - < logo.png
  keyspace put data.lmdb hex:00ff int:7 --key 01 --value ff00 --hex
""",
)
@click.argument("url")
@click.argument("path", nargs=-1)
@click.option("--key", "-k", "key_text", required=True, help="The key.")
@click.option("--value", "-v", "value_text", required=True, help="The value; '-' reads raw bytes from stdin.")
@scheme_option(help_text="Key scheme; default: the recorded one, else detected, else tuple for a new store.")
@separator_option
@depth_option
@format_options
@heed_options
def put(
    url: str,
    path: tuple[str, ...],
    key_text: str,
    value_text: str,
    scheme: str | None,
    separator: str | None,
    depth: int | None,
    fmt: str,
) -> None:
    """Set one key of the scope PATH in the store at URL (creating the store if
    it does not exist). One atomic write: a put that fails wrote nothing, and
    leaves no store it created."""
    scope_path = parse_path(path)
    value = sys.stdin.buffer.read() if value_text == "-" else value_from_text(value_text, fmt)
    written: list[bool] = []
    with (
        removed_on_failure(url, wrote=lambda: bool(written)),
        opened(url, scheme, create=True, writing=True, separator=separator, depth=depth) as op,
    ):
        ks = op.keyspace
        ks.scope(*scope_path)[_key(ks, key_text, fmt)] = value
        written.append(True)  # a failure after it (closing) keeps the store and the key


@click.command(
    cls=SectionedCommand,
    epilog=_PATH_HELP
    + """

\b
Examples:
  keyspace delete data.lmdb acme users --key alice
  keyspace delete data.lmdb globex --drop       # the scope and all below it
""",
)
@click.argument("url")
@click.argument("path", nargs=-1)
@click.option("--key", "-k", "key_text", default=None, help="The key to delete.")
@click.option("--drop", is_flag=True, help="Delete the scope PATH and every scope below it instead.")
@scheme_option()
@separator_option
@depth_option
@format_options
@heed_options
def delete(
    url: str,
    path: tuple[str, ...],
    key_text: str | None,
    drop: bool,
    scheme: str | None,
    separator: str | None,
    depth: int | None,
    fmt: str,
) -> None:
    """Delete one key of the scope PATH (exit 1 when it is missing), or with
    --drop the whole scope and its subtree (one range delete)."""
    if (key_text is None) == (not drop):
        raise click.UsageError("give either --key K or --drop")
    scope_path = parse_path(path)
    with opened(url, scheme, writing=True, separator=separator, depth=depth) as op:
        ks = op.keyspace
        scope = ks.scope(*scope_path)
        if drop:
            if not scope_path:
                raise InputError("--drop needs a scope PATH; it does not empty the whole store")
            scope.drop()
            return
        assert key_text is not None
        key = _key(ks, key_text, fmt)
        try:
            del scope[key]
        except KeyError as miss:
            raise _no_key(scope_path, key, ks, miss) from None


@click.command(
    cls=SectionedCommand,
    epilog=_PATH_HELP
    + """

\b
Output: one line per key, KEY<TAB>VALUE (tabs, newlines and backslashes
escaped), or hex with --hex, or one JSON object per line with --json:
{"path": [...], "key": ..., "value": ...}.

\b
Examples:
  keyspace scan data.lmdb acme users
  keyspace scan data.lmdb acme audit --start 0003 --stop 0006 --reverse
  keyspace scan data.lmdb acme users --start b --limit 2
  keyspace scan data.lmdb acme users --json --limit 2
""",
)
@click.argument("url")
@click.argument("path", nargs=-1)
@click.option("--start", "start_text", default=None, help="First key (inclusive unless --exclude-start).")
@click.option("--stop", "stop_text", default=None, help="End key (exclusive unless --include-stop).")
@click.option("--exclude-start", is_flag=True, help="Leave out the --start key itself.")
@click.option("--include-stop", is_flag=True, help="Include the --stop key itself.")
@click.option(
    "--prefix",
    "prefix_text",
    default=None,
    help="Only keys under this prefix: leading bytes in the byte schemes; leading elements "
    "of composite keys in the tuple scheme (where bytes keys do not match on part of their bytes).",
)
@click.option("--reverse", is_flag=True, help="Descending key order.")
@click.option("--limit", type=WholeNumber(0), default=None, help="At most N keys.")
@scheme_option()
@separator_option
@depth_option
@format_options
@heed_options
def scan(
    url: str,
    path: tuple[str, ...],
    start_text: str | None,
    stop_text: str | None,
    exclude_start: bool,
    include_stop: bool,
    prefix_text: str | None,
    reverse: bool,
    limit: int | None,
    scheme: str | None,
    separator: str | None,
    depth: int | None,
    fmt: str,
) -> None:
    """Print the own keys and values of the scope PATH in key order (not the
    keys of its child scopes). One range scan of the store, in one snapshot where
    the store has snapshots: writes made while it prints are not shown, however
    long it takes."""
    if prefix_text is not None and (start_text is not None or stop_text is not None):
        raise click.UsageError("--prefix cannot be combined with --start or --stop")
    scope_path = parse_path(path)
    with opened(url, scheme, separator=separator, depth=depth) as op, _one_state(op.keyspace) as reader:
        ks = op.keyspace

        def key(text: str | None) -> Any:
            return None if text is None else _key(ks, text, fmt)

        items = reader.scope(*scope_path).items(
            key(start_text),
            key(stop_text),
            include_start=not exclude_start,
            include_stop=include_stop,
            reverse=reverse,
            limit=limit,
            prefix=key(prefix_text),
        )
        write = sys.stdout.write
        for k, v in items:
            if fmt == "json":
                write(_record(ks, scope_path, k, v) + "\n")
            else:
                write(f"{render_key(k, fmt)}\t{render_value(v, fmt, one_line=True)}\n")
