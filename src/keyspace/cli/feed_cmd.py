"""``keyspace feed ls|rm``: the durable change feeds of a store, for operators."""

from __future__ import annotations

from contextlib import suppress

import click

from .._feeds import _last, _log, _native, list_feeds, remove_feed
from ..errors import InvalidArgument, KeyspaceError
from ._console import out
from ._format import dumps
from ._open import opened
from ._options import scheme_option

__all__ = ["feed_group"]


@click.group("feed")
def feed_group() -> None:
    """List and remove the durable change feeds (ks.feed) of a store opened with
    changes=True: each a name, a scope and the last change it acknowledged."""


@feed_group.command(
    "ls",
    epilog="""\b
Examples:
  keyspace feed ls data.lmdb
  keyspace feed ls data.lmdb --json
""",
)
@click.argument("url")
@scheme_option()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per feed.")
def ls(url: str, scheme: str | None, as_json: bool) -> None:
    """List the feeds: name, scope path, subtree, cursor (the last revision it
    acknowledged) and behind (the commits made since, in any scope). Opens the store
    read-only."""
    with opened(url, scheme) as op:
        ks = op.keyspace
        log = _log(ks)
        last: int | None = None  # a store that keeps no change log: the feeds are listed as recorded
        if log is not None or _native(ks):
            with suppress(KeyspaceError):
                last = _last(ks, log)
        for info in list_feeds(ks):
            behind = None if last is None else max(last - info.cursor, 0)
            if as_json:
                click.echo(
                    dumps(
                        {
                            "name": info.name,
                            "path": [c if isinstance(c, str | int) else repr(c) for c in info.path],
                            "subtree": info.subtree,
                            "cursor": info.cursor,
                            "behind": behind,
                        }
                    )
                )
            else:
                click.echo(  # tab-separated, as it is
                    f"{info.name}\tpath={info.path!r}\tsubtree={info.subtree}\tcursor={info.cursor}"
                    f"\tbehind={'?' if behind is None else behind}"
                )


@feed_group.command(
    "rm",
    epilog="""\b
Example:
  keyspace feed rm data.lmdb audit-export
""",
)
@click.argument("url")
@click.argument("names", nargs=-1, required=True)
@scheme_option()
@click.option("--if-exists", is_flag=True, help="A NAME with no feed is no error.")
def rm(url: str, names: tuple[str, ...], scheme: str | None, if_exists: bool) -> None:
    """Remove each feed NAME: its cursor goes, and the change log no longer keeps
    changes for it."""
    with opened(url, scheme, writing=True) as op:
        for name in names:
            done = remove_feed(op.keyspace, name)
            if not done and not if_exists:
                raise InvalidArgument(f"no feed named {name!r} in {url}")
            out().print(f"{'removed' if done else 'no feed named'} {name}", markup=False)
