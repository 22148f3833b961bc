"""``keyspace expire URL``: sweep the keys whose ttl has passed."""

from __future__ import annotations

import click

from ._open import opened
from ._options import WholeNumber, scheme_option

__all__ = ["expire"]


@click.command(
    "expire",
    epilog="""\b
Examples:
  keyspace expire data.lmdb
  keyspace expire data.lmdb --limit 100000
""",
)
@click.argument("url")
@scheme_option()
@click.option(
    "--limit",
    type=WholeNumber(0),
    default=1000,
    show_default=True,
    help="Most keys deleted (one transaction).",
)
def expire(url: str, scheme: str | None, limit: int) -> None:
    """Delete the keys whose ttl has passed (put with scope.put(key, value,
    ttl=...) in a store opened with ttl=True), oldest deadline first, at most
    --limit of them in one transaction, and print how many. They were invisible
    to every read already; the change log records their deletes. 0 for a store
    that keeps no deadlines."""
    with opened(url, scheme, writing=True) as op:
        click.echo(op.keyspace.expire(limit))
