"""``keyspace schemes``: which guarantees each key scheme gives."""

from __future__ import annotations

import click
from rich.table import Table

from ..schemes import property_table
from ._console import out

__all__ = ["markdown_table", "schemes"]


def markdown_table(markdown: str) -> tuple[Table, list[str]]:
    """A compact rich table from the Markdown property table, and its legend.

    Columns whose title starts with a number ("1 any bytes") get the number as
    header and their title in the legend; a first cell like "`Cls` (name)" is
    split into the scheme name and the class name; ✔/✘ cells are coloured."""
    lines = [line.strip().strip("|") for line in markdown.strip().splitlines()]
    titles = [t.strip() for t in lines[0].split("|")]
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("scheme")
    table.add_column("class")
    legend: list[str] = []
    for title in titles[1:]:
        number = title.partition(" ")[0]
        table.add_column(number if number.isdigit() else title, justify="center")
        if number.isdigit():
            legend.append(title)
    for row in lines[2:]:
        cells = [c.strip().replace("`", "") for c in row.split("|")]
        cls, _, name = cells[0].partition(" ")
        table.add_row(name.strip("()") or cls, cls, *(_colour(c) for c in cells[1:]))
    return table, legend


def _colour(cell: str) -> str:
    if cell == "✔":
        return "[green]✔[/green]"
    if cell == "✘":
        return "[red]✘[/red]"
    return cell


@click.command(
    epilog="""\b
Properties: 1 names and keys may be any bytes; 2 collision-free; 3 key order
kept within a scope; 4 scopes sort by name; 5 scopes nest; 6 a stored key
decodes back into (path, key) on its own.

\b
Examples:
  keyspace schemes
  keyspace schemes --markdown >> notes.md
"""
)
@click.option("--markdown", is_flag=True, help="Print the Markdown table as is.")
def schemes(markdown: bool) -> None:
    """Print the key schemes and which of the six properties each guarantees."""
    table = property_table()
    if markdown:
        click.echo(table)
    else:
        rendered, legend = markdown_table(table)
        out().print(rendered)
        out().print("\n" + "   ".join(legend))
