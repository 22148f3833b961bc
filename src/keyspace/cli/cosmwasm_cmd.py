"""``keyspace cosmwasm decode``: a contract-state dump, decoded with a schema."""

from __future__ import annotations

import codecs
import json
import sys
import warnings
from decimal import Decimal
from typing import Any

import click

from ..cosmwasm import (
    SHIPPED_SCHEMAS,
    Row,
    SchemaWarning,
    decode_state,
    load_schema,
    models_from_dump,
    summarize,
)
from ._format import InputError

__all__ = ["cosmwasm"]


@click.group()
def cosmwasm() -> None:
    """CosmWasm contract state (cw-storage-plus layouts)."""


_SPACED = (", ", ": ")
_COMPACT = (",", ":")


def _json_text(value: Any, separators: tuple[str, str] = _SPACED) -> str:
    """``value`` as strict JSON (no ``NaN`` or ``Infinity``, which no decoded value
    holds): a :class:`~decimal.Decimal` (a number no float holds, such as
    ``1e400``) is written as the number it is. Cost: one C encoder call; values
    holding a Decimal are written by a recursive walk."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=separators)
    except TypeError:  # a Decimal somewhere
        return _walk(value, separators)


def _walk(value: Any, separators: tuple[str, str]) -> str:
    item, key = separators
    if isinstance(value, Decimal):
        return str(value)  # finite: scientific notation is a JSON number
    if isinstance(value, dict):
        fields = (
            json.dumps(str(k), ensure_ascii=False) + key + _walk(v, separators) for k, v in value.items()
        )
        return "{" + item.join(fields) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + item.join(_walk(v, separators) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=separators)


def _cell(value: Any) -> str:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, str):
        return value
    return _json_text(value, _COMPACT)


def _key_text(row: Row) -> str:
    if row.kind == "unknown":
        return "0x" + row.raw_key.hex()
    parts = (json.dumps(k, ensure_ascii=False) if isinstance(k, str) else _cell(k) for k in row.key)
    return "[" + ", ".join(parts) + "]"


def _dump_text(dump: str, data: bytes) -> str:
    """The text of a dump file: UTF-8, or UTF-16 when it starts with that
    byte-order mark (what Windows PowerShell's ``>`` and ``Out-File`` write); a
    UTF-8 byte-order mark is skipped."""
    encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        name = "UTF-16" if encoding == "utf-16" else "UTF-8"
        raise InputError(f"dump {dump!r} is not {name} text: {exc.reason} at byte {exc.start}") from None


@cosmwasm.command(
    epilog=f"""\b
DUMP is the output of `wasmd query wasm contract-state all ADDR -o json`
(or -o yaml); `-` reads standard input.

\b
Shipped schemas: {", ".join(SHIPPED_SCHEMAS)}. A schema file is JSON:
  {{"items": {{"token_info": "json"}},
   "maps": {{"balance": {{"key": ["addr"], "value": "json"}}}},
   "indexed_maps": {{...}}, "deques": {{...}}, "snapshot_maps": {{...}}}}

\b
Examples:
  keyspace cosmwasm decode state.json --schema cw20
  keyspace cosmwasm decode state.yaml --schema my-schema.json --json
"""
)
@click.argument("dump", metavar="DUMP")
@click.option("--schema", "schema_name", required=True, metavar="FILE|cw20|cw721|cw4", help="The schema.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per entry, then a summary line.")
def decode(dump: str, schema_name: str, as_json: bool) -> None:
    """Decode every entry of the contract-state dump DUMP into its collection,
    key and value; entries that match no collection are printed as unknown with
    their raw bytes. Ends with how many entries each collection matched."""
    schema = load_schema(schema_name)
    try:
        if dump == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(dump, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise InputError(f"cannot read dump {dump!r}: {exc.strerror}") from None
    text = _dump_text(dump, data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)
        rows = decode_state(models_from_dump(text), schema)
    for warning in caught:
        click.echo(f"warning: {warning.message}", err=True)
    summary = summarize(rows)
    if as_json:
        for row in rows:
            click.echo(_json_text(row.to_json()))
        click.echo(_json_text({"summary": summary}))
        return
    table = [
        (
            row.collection or ("(keyspace)" if row.kind == "keyspace_record" else "?"),
            row.kind,
            _key_text(row),
            _cell(row.raw_value if row.kind == "unknown" else row.value),
        )
        for row in rows
    ]
    header = ("COLLECTION", "KIND", "KEY", "VALUE")
    widths = [max([len(header[i]), *(len(r[i]) for r in table)]) for i in range(3)]
    for line in (header, *table):
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False)) + "  " + line[3])
    click.echo("")
    click.echo(f"{len(rows)} entries")
    for name, count in summary.items():
        click.echo(f"  {name}: {count}")
