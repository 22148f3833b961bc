"""``keyspace quota URL [PATH…] [--keys N] [--bytes SIZE]``: set, lift and list
the quotas of scopes."""

from __future__ import annotations

import re

import click

from .._accounting import accounting_of
from ..errors import InvalidArgument
from ._console import out
from ._format import parse_path, render_path
from ._open import opened
from ._options import SectionedCommand, scheme_option
from ._tree import human_bytes

__all__ = ["parse_size", "quota"]

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str) -> int | None:
    """``SIZE`` as bytes: ``4096``, ``10kB``, ``64MiB``, ``2GB``, ``1.5GiB`` (powers
    of 1000, or 1024 with ``i``; worked out exactly, no float between); ``none``
    lifts the quota. :class:`InvalidArgument` otherwise, and for a size that is
    no whole number of bytes (``0.0004kB``).

    >>> parse_size("64MiB"), parse_size("1.5kB"), parse_size("9223372036854775807")
    (67108864, 1500, 9223372036854775807)
    """
    if text.strip().lower() == "none":
        return None
    found = re.fullmatch(r"\s*([0-9]+)(?:\.([0-9]+))?\s*([a-zA-Z]*)\s*", text, re.ASCII)
    unit = found.group(3).lower() if found else ""
    if found is None or unit not in _UNITS:
        raise InvalidArgument(
            f"--bytes {text!r} is no size: give bytes (4096), or 10kB, 64MiB, 2GB; none lifts it"
        )
    whole, fraction = found.group(1), found.group(2) or ""
    scaled = int(whole + fraction) * _UNITS[unit]
    size, rest = divmod(scaled, int(10 ** len(fraction)))
    if rest:
        raise InvalidArgument(
            f"--bytes {text!r} is no whole number of bytes ({scaled / 10 ** len(fraction)} B)"
        )
    return size


def _count(text: str) -> int | None:
    if text.strip().lower() == "none":
        return None
    if re.fullmatch(r"\s*[0-9]+\s*", text, re.ASCII) is None:
        raise InvalidArgument(
            f"--keys {text!r} is no count of keys: give an integer of 0 or more; none lifts it"
        )
    return int(text)


@click.command(
    cls=SectionedCommand,
    epilog="""\b
Examples:
  keyspace quota data.lmdb                         # list the quotas
  keyspace quota data.lmdb tenant1 --keys 100000 --bytes 64MiB
  keyspace quota data.lmdb tenant1 --bytes none    # lift the byte quota

\b
A write that would take a scope (or an ancestor) past its quota fails with
QuotaExceeded and writes nothing. Needs accounting (keyspace accounting enable).
""",
)
@click.argument("url")
@click.argument("path", nargs=-1)
@scheme_option()
@click.option("--keys", "keys", default=None, help="Most keys in the scope's subtree (none: no limit).")
@click.option(
    "--bytes", "size", default=None, help="Most stored bytes (key + value) in its subtree (none: no limit)."
)
def quota(url: str, path: tuple[str, ...], scheme: str | None, keys: str | None, size: str | None) -> None:
    """Set the quota of the scope at PATH (its components, as for `scan`) with
    --keys and --bytes; with neither, list every quota of the store at URL with
    the sizes now."""
    if keys is None and size is None:
        if path:
            raise click.UsageError("give --keys and/or --bytes to set a quota of PATH (none lifts one)")
        with opened(url, scheme) as op:
            ks = op.keyspace
            typed = ks.scheme.typed_keys
            quotas = ks.quotas()
            if not quotas:
                out().print("no quotas", markup=False)
            for where, (max_keys, max_bytes) in quotas.items():
                now = ks.scope(*where).stats()
                shown_keys = "-" if max_keys is None else f"{max_keys:,}"
                shown_bytes = "-" if max_bytes is None else human_bytes(max_bytes)
                out().print(
                    f"{render_path(where, typed=typed)}\tkeys {now.subtree_keys:,} / {shown_keys}\t"
                    f"bytes {human_bytes(now.subtree_bytes)} / {shown_bytes}",
                    markup=False,
                )
        return
    with opened(url, scheme, writing=True) as op:
        ks = op.keyspace
        where = parse_path(path)
        counts = accounting_of(ks.store)
        record = counts.record(ks.store, where) if counts is not None else [None] * 6
        new_keys = record[4] if keys is None else _count(keys)
        new_bytes = record[5] if size is None else parse_size(size)
        ks.set_quota(where, keys=new_keys, bytes=new_bytes)
        typed = ks.scheme.typed_keys
        out().print(
            f"quota of {render_path(where, typed=typed)}: keys "
            f"{'-' if new_keys is None else f'{new_keys:,}'}, bytes "
            f"{'-' if new_bytes is None else human_bytes(new_bytes)}",
            markup=False,
        )
