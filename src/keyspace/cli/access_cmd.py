"""``keyspace grant | revoke``: per-scope access enforced by the etcd server."""

from __future__ import annotations

import warnings

import click

from .. import access
from ._format import parse_path
from ._open import opened
from ._options import SectionedCommand, scheme_option

__all__ = ["grant", "revoke"]

_HELP = """\b
URL carries the administrator's credentials and TLS files, e.g.
  etcd://root:PASSWORD@h1:2379,h2:2379?cacert=ca.pem&cert=c.pem&key=c-key.pem
PATH components as in `keyspace get` (hex:, bytes:, int: prefixes)."""


def _show(permissions: list[object]) -> None:
    for p in permissions:
        mode = "readwrite" if getattr(p, "write", False) else "read"
        key, end = getattr(p, "key", b""), getattr(p, "range_end", b"")
        span = f"[{key.hex()}, {end.hex()})" if end else f"key {key.hex()}"
        click.echo(f"{mode:9} {span}")


@click.command(cls=SectionedCommand, epilog=_HELP)
@click.argument("url")
@click.argument("path", nargs=-1, required=True)
@click.option("--user", "-u", required=True, help="The etcd user to give access to.")
@click.option("--password", default=None, help="Password for a user that does not exist yet.")
@click.option("--read-only", is_flag=True, help="Read access only.")
@scheme_option()
def grant(
    url: str, path: tuple[str, ...], user: str, password: str | None, read_only: bool, scheme: str | None
) -> None:
    """Let USER read (and write) the scope PATH and everything below it, enforced by
    the etcd server, through the role keyspace:USER. Prints the role's permissions."""
    with opened(url, scheme, writing=True) as op, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", access.ServerAccessWarning)
        try:
            granted = access.grant(
                op.keyspace, parse_path(path), user=user, password=password, read_only=read_only
            )
        except ValueError as exc:  # a new user without --password
            raise click.UsageError(str(exc)) from None
        _show(granted)
    for warning in caught:
        click.echo(f"warning: {warning.message}", err=True)


@click.command(cls=SectionedCommand, epilog=_HELP)
@click.argument("url")
@click.argument("path", nargs=-1)
@click.option("--user", "-u", required=True, help="The etcd user to take access from.")
@scheme_option()
def revoke(url: str, path: tuple[str, ...], user: str, scheme: str | None) -> None:
    """Take USER's access to the scope PATH away (without PATH: all of keyspace:USER).
    Prints the permissions left."""
    with opened(url, scheme, writing=True) as op:
        paths = (parse_path(path),) if path else ()
        _show(access.revoke(op.keyspace, *paths, user=user))
