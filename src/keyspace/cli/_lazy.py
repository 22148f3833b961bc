"""The ``keyspace`` command's group of subcommands, each imported when it runs or
its help is asked for: ``keyspace --help`` lists them from a table of their
names and one-line summaries, so a command started per use pays for its own
module alone (the engines, gRPC, rich and asyncio are imported by the commands
that use them)."""

from __future__ import annotations

import importlib
from typing import Any

import click

__all__ = ["COMMANDS", "LazyGroup"]

COMMANDS: dict[str, tuple[str, str, str]] = {
    # name: (module of keyspace.cli, attribute, the command's short help as it
    # gives it; a test keeps the two the same)
    "accounting": (
        "accounting_cmd",
        "accounting_group",
        "Per-scope key and byte counts kept in the store (accounting=True).",
    ),
    "cosmwasm": ("cosmwasm_cmd", "cosmwasm", "CosmWasm contract state (cw-storage-plus layouts)."),
    "decode": (
        "decode",
        "decode",
        "Print the scope path and key of the stored key HEX (hex digits, spaces allowed).",
    ),
    "delete": (
        "data",
        "delete",
        "Delete one key of the scope PATH (exit 1 when it is missing), or with --drop the whole scope "
        "and its subtree (one range delete).",
    ),
    "demo": ("demo", "demo", "Build a multi-tenant LMDB store in DIRECTORY and show what keyspace does."),
    "dir": (
        "dir_cmd",
        "dir_group",
        "List, move and remove the directories of a store (FoundationDB's directory layer: paths mapped "
        "to short allocated prefixes).",
    ),
    "expire": (
        "expire_cmd",
        "expire",
        "Delete the keys whose ttl has passed (put with scope.put(key, value, ttl=...) in a store opened "
        "with ttl=True), oldest deadline first, at most --limit of them in one transaction, and print how "
        "many.",
    ),
    "feed": (
        "feed_cmd",
        "feed_group",
        "List and remove the durable change feeds (ks.feed) of a store opened with changes=True: each a "
        "name, a scope and the last change it acknowledged.",
    ),
    "get": ("data", "get", "Print the value of one key of the scope PATH in the store at URL."),
    "grant": (
        "access_cmd",
        "grant",
        "Let USER read (and write) the scope PATH and everything below it, enforced by the etcd server, "
        "through the role keyspace:USER.",
    ),
    "inspect": (
        "inspect_cmd",
        "inspect",
        "Show the scope tree of the store at URL: per scope, its own keys and bytes (stored keys + "
        "values) and the totals of its subtree.",
    ),
    "migrate": (
        "migrate",
        "migrate",
        "Copy every scope and key of the store SRC into the store DST, decoding with SRC's scheme and "
        "encoding with DST's, in batches of --batch keys (each one atomic transaction on DST), with a "
        "progress bar on stderr.",
    ),
    "put": (
        "data",
        "put",
        "Set one key of the scope PATH in the store at URL (creating the store if it does not exist).",
    ),
    "quota": (
        "quota_cmd",
        "quota",
        "Set the quota of the scope at PATH (its components, as for `scan`) with --keys and --bytes; "
        "with neither, list every quota of the store at URL with the sizes now.",
    ),
    "revoke": (
        "access_cmd",
        "revoke",
        "Take USER's access to the scope PATH away (without PATH: all of keyspace:USER).",
    ),
    "scan": (
        "data",
        "scan",
        "Print the own keys and values of the scope PATH in key order (not the keys of its child scopes).",
    ),
    "schemes": (
        "schemes_cmd",
        "schemes",
        "Print the key schemes and which of the six properties each guarantees.",
    ),
}
"""The subcommands of ``keyspace``."""


def _short(text: str, limit: int) -> str:
    """click's short help of a command whose help is ``text``, within ``limit``
    (as a command not imported yet would give it)."""
    return click.Command(None, help=text).get_short_help_str(limit)


class LazyGroup(click.Group):
    """A :class:`click.Group` whose commands are named in ``lazy``: ``name ->
    (module, attribute, summary)``, the module (relative to this package) and
    the attribute that hold the command, and its short help as ``--help``
    lists it. A command is imported by :meth:`get_command`, when it runs or
    its own help is shown. Cost of ``--help``: no command module imported."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self._lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is not None:
            return found
        spec = self._lazy.get(cmd_name)
        if spec is None:
            return None
        module, attribute, _ = spec
        command = getattr(importlib.import_module(f".{module}", __package__), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"keyspace.cli.{module}.{attribute} is not a click command")
        self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of ``--help``, as :class:`click.Group` writes it,
        from the table's summaries (a command already imported gives its own)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is not None:
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                rows.append((name, _short(self._lazy[name][2], limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
