"""The ``keyspace`` command: demo, inspect, get/put/delete/scan, decode, schemes,
migrate.

The top layer: it uses the library's public API (and the scheme record reader for
detection). Every error the library raises on purpose is printed as one line,
``error: <message>``, on stderr, with exit code 1; usage errors exit with 2.
"""

from __future__ import annotations

import os
import sys

import click

from ..errors import KeyspaceError
from .access_cmd import grant, revoke
from .cosmwasm_cmd import cosmwasm
from .data import delete, get, put, scan
from .decode import decode
from .demo import demo
from .inspect_cmd import inspect
from .migrate import migrate
from .schemes_cmd import schemes

__all__ = ["cli", "main"]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="""\b
Stores (URL): data.lmdb or lmdb:///path, sqlite:///file, leveldb:///dir,
rocksdb:///dir, etcd://host:port,host:port, memory:

\b
Examples:
  keyspace demo
  keyspace inspect demo-data/keyspace.lmdb
  keyspace put data.lmdb acme users --key alice --value '{"role": "admin"}'
  keyspace scan data.lmdb acme users --limit 10
  keyspace migrate leveldb:///node-db data.lmdb --from-scheme sublevel --to-scheme tuple

Run `keyspace COMMAND --help` for each command.
""",
)
@click.version_option(package_name="keyspace")
def cli() -> None:
    """Collision-free, ordered, nestable namespaces (scopes) in one key-value store."""


for command in (demo, inspect, get, put, delete, scan, decode, schemes, migrate, cosmwasm, grant, revoke):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return (and, as a script, exit with) its exit code."""
    try:
        code = cli.main(args=argv, prog_name="keyspace", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.Abort:
        click.echo("error: aborted", err=True)
        code = 130
    except KeyspaceError as exc:
        message = " ".join(str(exc).split())
        click.echo(f"error: {message}", err=True)
        code = 1
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        code = 130
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed pipe until exit
        code = 0
    code = code if isinstance(code, int) else 0
    if argv is None:
        sys.exit(code)
    return code
