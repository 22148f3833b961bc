"""``keyspace dir ls|mv|rm``: the directory tree of a store, for operators."""

from __future__ import annotations

import json

import click

from ..errors import DirectoryError
from ._console import out
from ._format import dumps
from ._open import opened
from ._options import SectionedCommand, scheme_option

__all__ = ["dir_group"]

_PATHS = """\b
A PATH is a directory's names joined by '/' (`acme/users`); '/' alone, or no
PATH, is the root. A name that holds a '/', or is empty, is given in a JSON
list of the names (`'["acme", "a/b"]'`), as `ls` shows it."""


def _path(text: str) -> tuple[str, ...]:
    """``a/b`` (or ``/a/b``) as the path ``("a", "b")``, or a JSON list of the
    names (``["a", "b/c"]``: names holding a '/', or empty); an empty name
    between '/' is refused."""
    if text.lstrip().startswith("["):
        try:
            names = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past Python's limit
            raise DirectoryError(f"directory path {text!r} is no JSON list of names: {exc}") from None
        if not isinstance(names, list) or not all(type(name) is str for name in names):
            raise DirectoryError(f"directory path {text!r} must be a JSON list of strings")
        return tuple(names)
    names = tuple(text.strip("/").split("/")) if text.strip("/") else ()
    if any(not name for name in names):
        raise DirectoryError(f"directory path {text!r} has an empty name (two '/' in a row)")
    return names


def _show(path: tuple[str, ...]) -> str:
    """``path`` as a PATH the commands take back: ``/a/b``, or its JSON list where
    a name holds a '/', is empty or starts with '['."""
    if any(not name or "/" in name or name.startswith("[") for name in path):
        return json.dumps(list(path), ensure_ascii=False)
    return "/" + "/".join(path)


@click.group("dir", epilog=_PATHS)
def dir_group() -> None:
    """List, move and remove the directories of a store (FoundationDB's directory
    layer: paths mapped to short allocated prefixes)."""


@dir_group.command(
    "ls",
    cls=SectionedCommand,
    epilog=_PATHS
    + """

\b
Examples:
  keyspace dir ls data.lmdb
  keyspace dir ls data.lmdb acme acme/users --json
""",
)
@click.argument("url")
@click.argument("paths", nargs=-1)
@scheme_option()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per PATH: its subdirectories.")
def ls(url: str, paths: tuple[str, ...], scheme: str | None, as_json: bool) -> None:
    """List the subdirectories of each PATH (the root without one): name, prefix
    (hex) and layer. Opens the store read-only."""
    with opened(url, scheme) as op:
        dirs = op.keyspace.directories
        for text in paths or ("/",):
            path = _path(text)
            rows = [(below[-1], prefix, layer) for below, prefix, layer in dirs.walk(path, depth=1)]
            if as_json:
                children = [
                    {"name": n, "prefix": p.hex(), "layer": la.decode("utf-8", "replace")}
                    for n, p, la in rows
                ]
                click.echo(dumps({"path": list(path), "children": children}))
                continue
            if len(paths) > 1:
                click.echo(f"{_show(path)}:")
            for name, prefix, layer in rows:
                shown = f"\tlayer={layer.decode('utf-8', 'backslashreplace')}" if layer else ""
                named = _show((name,)).lstrip("/")  # a name the commands take back
                click.echo(f"{named}\tprefix={prefix.hex(' ')}{shown}")  # tab-separated, as it is


@dir_group.command(
    "mv",
    cls=SectionedCommand,
    epilog=_PATHS
    + """

\b
Example:
  keyspace dir mv data.lmdb acme/users acme/people
""",
)
@click.argument("url")
@click.argument("old")
@click.argument("new")
@scheme_option()
def mv(url: str, old: str, new: str, scheme: str | None) -> None:
    """Move the directory OLD to NEW: its keys keep their prefix (one child entry
    written, one deleted, whatever it holds)."""
    with opened(url, scheme, writing=True) as op:
        moved = op.keyspace.directories.move(_path(old), _path(new))
        out().print(f"moved {_show(_path(old))} to {_show(moved.path)}", markup=False)


@dir_group.command(
    "rm",
    cls=SectionedCommand,
    epilog=_PATHS
    + """

\b
Example:
  keyspace dir rm data.lmdb acme/old-users
""",
)
@click.argument("url")
@click.argument("paths", nargs=-1, required=True)
@scheme_option()
@click.option("--if-exists", is_flag=True, help="A PATH with no directory is no error.")
def rm(url: str, paths: tuple[str, ...], scheme: str | None, if_exists: bool) -> None:
    """Remove each directory PATH with its keys and subdirectories (each in one
    transaction)."""
    with opened(url, scheme, writing=True) as op:
        dirs = op.keyspace.directories
        for text in paths:
            path = _path(text)
            if not path:
                raise DirectoryError("the root directory cannot be removed")
            if if_exists:
                done = dirs.remove_if_exists(path)
            else:
                dirs.remove(path)
                done = True
            out().print(f"{'removed' if done else 'no directory at'} {_show(path)}", markup=False)
