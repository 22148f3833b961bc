"""The ``keyspace`` command: demo, inspect, get/put/delete/scan, decode, schemes,
migrate.

The top layer: it uses the library's public API (and the scheme record reader for
detection). Every failure, usage errors included, is printed as one line,
``error: <message>``, on stderr, with exit code 1.
"""

from __future__ import annotations

import os
import sys

import click

from ..errors import KeyspaceError
from ._lazy import COMMANDS, LazyGroup

__all__ = ["cli", "main"]


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,  # each command's module is imported when it runs or its help is asked
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


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return (and, as a script, exit with) its exit code.

    Every failure — a usage error, bad input, an error of the library, anything
    unexpected — prints one line ``error: …`` on stderr and exits with 1 (130 when
    interrupted); no traceback is shown (set ``KEYSPACE_TRACEBACK=1`` to see one).
    The error is the first failure: one that followed it (closing the store after a
    write failed) is printed after it as a line ``note: …``.
    A reader that goes away (``keyspace scan … | head``) ends the command quietly
    with exit code 0."""
    try:
        code = cli.main(args=argv, prog_name="keyspace", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError:
        code = _error("no command given; run `keyspace --help` for the commands")
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        message = exc.format_message()
        takes_path = exc.ctx is not None and any(p.name == "path" for p in exc.ctx.command.params)
        if isinstance(exc, click.exceptions.NoSuchOption) and exc.ctx is not None and takes_path:
            # a PATH component that begins with '-' reads as an option
            message = (
                f"{message.rstrip('.')}; a PATH component that begins with '-' goes after `--`: "
                f"`{exc.ctx.command_path} URL -- {exc.option_name}`"
            )
        code = _error(f"{message}{where}")
    except click.ClickException as exc:
        code = _error(exc.format_message())
    except click.Abort:
        code = _error("aborted", 130)
    except KeyspaceError as exc:
        code = _error(str(exc))
        for note in getattr(exc, "__notes__", ()):  # e.g. a close that failed after the error
            click.echo(f"note: {' '.join(str(note).split())}", err=True)
    except KeyboardInterrupt:
        code = _error("interrupted", 130)
    except BrokenPipeError:
        code = _quiet()
    except OSError as exc:  # a path the command cannot use (missing, not writable, a loop)
        where = f" {exc.filename}" if exc.filename is not None else ""
        code = _error(f"cannot use{where}: {exc.strerror or exc}")
    except SystemExit as exc:
        # click exits with 1 when stdout is a closed pipe, after wrapping it
        code = _quiet() if type(sys.stdout).__name__.endswith("PacifyFlushWrapper") else exc.code
    except Exception as exc:
        if os.environ.get("KEYSPACE_TRACEBACK"):
            raise
        code = _error(f"unexpected {type(exc).__name__}: {exc}")
    code = code if isinstance(code, int) else 0
    if argv is None:
        sys.exit(code)
    return code


def _error(message: str, code: int = 1) -> int:
    click.echo(f"error: {' '.join(message.split())}", err=True)
    return code


def _quiet() -> int:
    """The reader went away (e.g. `| head`): stop quietly, with success."""
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed pipe until exit
    return 0
