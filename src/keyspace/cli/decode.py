"""``keyspace decode``: the scope path and key of one stored key."""

from __future__ import annotations

import click

from ._format import InputError, component_json, dumps, render_key, render_path
from ._open import make_scheme
from ._options import SectionedCommand, depth_option, scheme_option, separator_option

__all__ = ["decode"]


@click.command(
    cls=SectionedCommand,
    epilog="""\b
Examples:
  keyspace decode --scheme tuple 050261636d6500027573657273000001616c69636500
  keyspace decode --scheme sublevel 2161636d65212175736572732161
  keyspace decode --scheme length-prefixed --depth 2 000461636d6500057573657273616c696365
  keyspace decode --scheme asciihex 36313632 --json
  keyspace decode --scheme delimited --separator : --depth 2 757365723a34323a6e616d65

\b
Scopehash keys decode to the 32-bit hash of the scope name (the name itself
is only in the store's registry); naive keys decode only at depth 0.
""",
)
@scheme_option(required=True, help_text="The key scheme of the stored key.")
@depth_option
@separator_option
@click.option("--json", "as_json", is_flag=True, help='Print {"path": [...], "key": ...} as JSON.')
@click.argument("stored_hex", metavar="HEX")
def decode(scheme: str, depth: int | None, separator: str | None, as_json: bool, stored_hex: str) -> None:
    """Print the scope path and key of the stored key HEX (hex digits, spaces
    allowed). Pure: reads no store."""
    try:
        stored = bytes.fromhex(stored_hex)
    except ValueError:
        raise InputError(f"{stored_hex!r} is not hex") from None
    s = make_scheme(scheme, separator=separator, depth=depth)
    path, key = s.decode(stored, depth)
    typed = s.typed_keys
    if as_json:
        doc = {
            "path": [component_json(c, typed=typed) for c in path],
            "key": component_json(key, typed=typed),
        }
        click.echo(dumps(doc))
        return
    click.echo(f"path: {render_path(path, typed=typed)}")
    click.echo(f"key:  {render_key(key, 'text')}")
