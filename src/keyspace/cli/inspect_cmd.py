"""``keyspace inspect``: the scope tree of a store with key and byte counts."""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from ..errors import show_bytes
from ..keyspace import Keyspace
from ._console import Ticker, err, out
from ._format import dumps
from ._open import opened
from ._options import depth_option, scheme_option, separator_option
from ._tree import ScopeTree, human_bytes
from ._walk import Entry, KeyReader, walk

__all__ = ["Outside", "inspect", "scope_tree"]


@dataclass
class Outside:
    """Keys outside every scope: reserved ones (scheme record, name registry) and
    ones that do not decode (the first few kept for the message)."""

    reserved: int = 0
    reserved_bytes: int = 0
    undecodable: int = 0
    examples: list[str] = field(default_factory=list)


def scope_tree(ks: Keyspace, depth: int | None = None) -> tuple[ScopeTree, Outside]:
    """Count every key of ``ks`` into a :class:`ScopeTree` with one scan of the
    store, decoding each stored key once. Shows a progress bar on stderr when
    the scan takes long."""
    tree = ScopeTree()
    outside = Outside()
    reader = KeyReader(ks.scheme, depth, ks.store)
    add = tree.add
    with Ticker("reading keys") as ticker:
        for item in walk(ks.store, reader):
            size = len(item.stored) + len(item.value)
            if isinstance(item, Entry):
                add(item.path, size)
            elif item.reason is None:
                outside.reserved += 1
                outside.reserved_bytes += size
            else:
                outside.undecodable += 1
                if len(outside.examples) < 3:
                    outside.examples.append(f"{show_bytes(item.stored)}: {item.reason}")
            ticker.advance()
    return tree, outside


@click.command(
    epilog="""\b
Examples:
  keyspace inspect demo-data/keyspace.lmdb
  keyspace inspect leveldb:///srv/node-db            # scheme detected from the keys
  keyspace inspect sqlite:///app.db --levels 2
  keyspace inspect data.lmdb --json | jq '.children[].path'
  keyspace inspect lmdb:///cw --scheme length-prefixed --depth 2
  keyspace inspect leveldb:///sessions --scheme delimited --separator : --depth 1

\b
JSON: one object for the root scope,
  {"path": [...], "keys": N, "bytes": M, "children": [...]}
with the children nested the same way; "keys" and "bytes" count the scope's
own keys (stored key + value bytes). Path components: strings, numbers,
{"hex": "..."} for bytes (strings in the byte schemes when valid UTF-8).
"""
)
@click.argument("url")
@scheme_option()
@depth_option
@separator_option
@click.option("--json", "as_json", is_flag=True, help="Print the tree as one JSON object, nothing else.")
@click.option("--levels", type=click.IntRange(min=0), default=None, help="Show only N levels below the root.")
def inspect(
    url: str, scheme: str | None, depth: int | None, separator: str | None, as_json: bool, levels: int | None
) -> None:
    """Show the scope tree of the store at URL: per scope, its own keys and bytes
    (stored keys + values) and the totals of its subtree.

    The scheme is the one given, else the one recorded in the store, else
    detected by decoding a sample of keys with each scheme (the choice and its
    certainty are printed on stderr). One scan of the store; a progress bar on
    stderr when it takes long.
    """
    with opened(url, scheme, depth=depth, separator=separator) as op:
        ks = op.keyspace
        err().print(f"scheme: {op.how}", markup=False)
        tree, outside = scope_tree(ks, depth)
        typed = ks.scheme.typed_keys
        if as_json:
            click.echo(dumps(tree.to_json(typed=typed)))
        else:
            out().print(tree.table(f"{ks.url}  ({ks.scheme!r})", typed=typed, levels=levels))
            if outside.reserved:
                out().print(
                    f"reserved (scheme record, name registry): {outside.reserved:,} keys, "
                    f"{human_bytes(outside.reserved_bytes)}"
                )
    if outside.undecodable:
        err().print(
            f"warning: {outside.undecodable:,} keys do not decode as {ks.scheme.name} and are not counted; "
            f"first: {outside.examples[0]}",
            markup=False,
        )
