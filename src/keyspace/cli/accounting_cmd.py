"""``keyspace accounting enable|check``: turn per-scope counting on for an
existing store, and compare the counts with a recount."""

from __future__ import annotations

import click

from .._accounting import accounting_of, check_countable, counted_ranges, enable, enabled
from ..errors import AccountingUnavailable
from ._console import Ticker, out
from ._format import render_path
from ._open import one_state, opened
from ._options import SectionedCommand, WholeNumber, scheme_option
from ._tree import human_bytes

__all__ = ["accounting_group"]


@click.group("accounting")
def accounting_group() -> None:
    """Per-scope key and byte counts kept in the store (accounting=True)."""


@accounting_group.command(
    "enable",
    cls=SectionedCommand,
    epilog="""\b
Examples:
  keyspace accounting enable data.lmdb
  keyspace accounting enable sqlite:///app.db --chunk 5000
""",
)
@click.argument("url")
@scheme_option()
@click.option(
    "--chunk",
    type=WholeNumber(1),
    default=20_000,
    show_default=True,
    help="Keys counted per transaction.",
)
def enable_cmd(url: str, scheme: str | None, chunk: int) -> None:
    """Count the keys of the store at URL by scope once, and keep the counts
    from then on (every later opener of the store keeps them). Resumable: an
    interrupted count goes on where it stopped when run again. Run it while no
    other program writes to the store. A progress bar on stderr when it takes
    long."""
    with opened(url, scheme, writing=True) as op:
        ks = op.keyspace
        store = getattr(ks.store, "inner", ks.store)  # the engine's store, under any feature's hooks
        check_countable(ks.scheme, url)
        if enabled(store, ks.scheme, url):
            out().print(f"accounting is on already for {url}", markup=False)
            return
        with one_state(store) as view:
            total = sum(view.count(lo, hi) for lo, hi in counted_ranges(ks.scheme, store))
        with Ticker("counting keys", total=total) as ticker:
            enable(store, ks.scheme, chunk=chunk, progress=ticker.advance)
    out().print(f"accounting is on for {url}: {total:,} keys counted", markup=False)


@accounting_group.command(
    "check",
    cls=SectionedCommand,
    epilog="""\b
Examples:
  keyspace accounting check data.lmdb
""",
)
@click.argument("url")
@scheme_option()
def check_cmd(url: str, scheme: str | None) -> None:
    """Recount the keys of the store at URL and compare the counts with the kept
    ones; prints every scope whose counts differ and exits with 1 when any does
    (there must be none). Opens the store read-only; reads one state of it."""
    with opened(url, scheme) as op:
        ks = op.keyspace
        counts = accounting_of(ks.store)
        if counts is None:
            raise AccountingUnavailable(
                f"{url} keeps no counts: turn accounting on with 'keyspace accounting enable {url}'"
            )
        # the engine's store: the counts hold every stored key, those reads hide (expired) too
        with one_state(counts.store) as view:
            found = counts.differences(view)
            total = counts.stats(view, ())
        typed = ks.scheme.typed_keys
        for path, have, want in found:
            out().print(
                f"{render_path(path, typed=typed)}: kept keys={have[0]:,} bytes={have[1]:,} "
                f"subtree_keys={have[2]:,} subtree_bytes={have[3]:,}; counted keys={want[0]:,} "
                f"bytes={want[1]:,} subtree_keys={want[2]:,} subtree_bytes={want[3]:,}",
                markup=False,
            )
        if found:
            raise click.ClickException(f"{len(found)} scopes' counts differ from the recount")
        out().print(
            f"counts match the recount: {total.subtree_keys:,} keys, {human_bytes(total.subtree_bytes)}",
            markup=False,
        )
