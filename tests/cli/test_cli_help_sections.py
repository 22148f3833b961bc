"""Each command's help lists the options most users need first; the scheme
options and the scoped-heed options follow under their own headings; no
option shows a range such as ``[0<=x<=9223372036854775807]``."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from keyspace.cli import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*prefix, name)))
    return found


def _help(*words: str) -> str:
    result = CliRunner().invoke(cli, [*words, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("words", _commands(cli), ids=" ".join)
def test_no_range_noise(words: tuple[str, ...]) -> None:
    text = _help(*words)
    assert not re.search(r"\[\S*<=?x|x>=?\S*\]", text), text


@pytest.mark.parametrize("command", ["get", "put", "delete", "scan", "inspect"])
def test_engine_options_come_after_the_common_ones(command: str) -> None:
    text = _help(command)
    options = text.index("Options:")
    schemes = text.index("Scheme options")
    heed = text.index("scoped-heed options")
    assert options < schemes < heed
    common = text[options:schemes]
    for engine_option in ("--scheme", "--separator", "--depth", "--scoped-heed", "--api", "--key-type"):
        assert engine_option not in common, engine_option
    assert "--api" in text[heed:] and "--scheme " in text[schemes:heed]
    assert "--help" in common


def test_a_count_out_of_range_names_the_least_value() -> None:
    result = CliRunner().invoke(cli, ["scan", "x", "--limit", "-1"])
    assert result.exit_code == 2
    assert "-1 is less than 0" in result.output
