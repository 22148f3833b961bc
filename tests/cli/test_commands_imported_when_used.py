"""``keyspace --help`` lists the commands without importing them; a command's
module (and what it needs: engines, gRPC, rich, asyncio) is imported when that
command runs or its help is shown. The list it prints says what each command's
own help says."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from keyspace.cli import cli
from keyspace.cli._lazy import COMMANDS

COMMAND_MODULES = sorted({f"keyspace.cli.{module}" for module, _, _ in COMMANDS.values()})
HEAVY = [
    "asyncio",
    "concurrent.futures",
    "grpc",
    "rich",
    "lmdb",
    "sqlite3",
    "keyspace.keyspace",
    "keyspace.stores",
]


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\nfrom keyspace.cli import main\n"
        f"code = main({argv!r})\n"
        "print('\\n'.join(sys.modules))\nsys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_help_imports_no_command() -> None:
    loaded = _modules_after(["--help"])
    assert [m for m in COMMAND_MODULES + HEAVY if m in loaded] == []


def test_a_commands_help_imports_that_command_alone() -> None:
    loaded = _modules_after(["schemes", "--help"])
    assert "keyspace.cli.schemes_cmd" in loaded
    assert [m for m in COMMAND_MODULES if m in loaded and m != "keyspace.cli.schemes_cmd"] == []
    assert [m for m in ("asyncio", "grpc") if m in loaded] == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_summary_is_the_commands_own(name: str) -> None:
    module, attribute, summary = COMMANDS[name]
    command = cli.get_command(click.Context(cli), name)
    assert command is not None and command.name == name
    assert getattr(sys.modules[f"keyspace.cli.{module}"], attribute) is command
    for limit in (30, 45, 80, 10**6):
        listed = click.Command(None, help=summary).get_short_help_str(limit)
        assert listed == command.get_short_help_str(limit)


def test_the_help_lists_every_command_as_an_eager_group_would() -> None:
    ctx = click.Context(cli)
    eager = click.Group(name="keyspace")
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        eager.add_command(command, name)
    lazy_text = click.HelpFormatter(width=100)
    eager_text = click.HelpFormatter(width=100)
    fresh = type(cli)(name="keyspace", lazy=COMMANDS)  # nothing imported into it yet
    fresh.format_commands(click.Context(fresh), lazy_text)
    eager.format_commands(click.Context(eager), eager_text)
    assert lazy_text.getvalue() == eager_text.getvalue()


def test_an_unknown_command_is_still_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "keyspace.cli", "no-such-command"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "No such command 'no-such-command'" in done.stderr
