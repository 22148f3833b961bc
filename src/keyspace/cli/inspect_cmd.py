"""``keyspace inspect``: the scope tree of a store with key and byte counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import click

from .._accounting import COUNTS, PROGRESS, accounting_of
from .._append import SEQUENCING_KEY
from .._changes import CHANGES_PREFIX
from .._expiry import BASE as DEADLINES
from .._metadata import DIRECTORY_RECORD
from ..errors import KeyspaceError, show_bytes
from ..keyspace import Keyspace
from ..schemes._layouts import LayoutCache
from ..stores import open_store
from ._console import Ticker, err, out
from ._directories import DirectoryCounts, directory_counts
from ._format import dumps
from ._heed import HEED_URL, heed_options
from ._html import page
from ._open import one_state, opened
from ._options import SectionedCommand, WholeNumber, depth_option, scheme_option, separator_option
from ._tree import ScopeTree, human_bytes
from ._walk import Run, store_reader, tally

__all__ = ["Outside", "counted_tree", "inspect", "kept_tree", "named_databases", "scope_tree"]

_LIST_DBS = 256
"""Named-database slots used to list an LMDB environment's databases."""


RECORDS: Final = "scheme record, name registry"
"""The area of the reserved keys no feature keeps (:data:`AREAS`)."""
AREAS: Final = (
    (CHANGES_PREFIX, "change log, feeds"),
    (COUNTS, "accounting counters"),
    (PROGRESS, "accounting counters"),
    (DEADLINES, "deadlines of expiring keys"),
    (SEQUENCING_KEY, "sequencing keys of appends"),
)
"""The reserved keys each feature keeps, by their prefix, and what ``inspect``
calls them: a store whose change log or counters grow shows it."""


def reserved_area(stored: bytes) -> str:
    """What the reserved key ``stored`` belongs to (:data:`AREAS`, else :data:`RECORDS`).

    >>> reserved_area(b"\\xffkeyspace-changes\\x00\\x01\\x00\\x02")
    'change log, feeds'
    """
    for prefix, area in AREAS:
        if stored.startswith(prefix):
            return area
    return RECORDS


@dataclass
class Outside:
    """Keys outside every scope: reserved ones, counted by area
    (:func:`reserved_area`: the scheme record and name registry, a feature's
    records), and ones that do not decode (the first few kept for the message)."""

    areas: dict[str, list[int]] = field(default_factory=dict)
    """Per area, its reserved keys and their bytes (keys and values)."""
    undecodable: int = 0
    examples: list[str] = field(default_factory=list)

    def count(self, stored: bytes, value: bytes, reason: str | None) -> None:
        """Count the key ``stored`` (holding ``value``): reserved when ``reason`` is
        ``None``, else undecodable for that reason."""
        if reason is None:
            counted = self.areas.setdefault(reserved_area(stored), [0, 0])
            counted[0] += 1
            counted[1] += len(stored) + len(value)
        else:
            self.undecodable += 1
            if len(self.examples) < 3:
                self.examples.append(f"{show_bytes(stored)}: {reason}")


def scope_tree(ks: Keyspace, depth: int | None = None) -> tuple[ScopeTree, Outside]:
    """:func:`counted_tree` without the directories."""
    tree, outside, _ = counted_tree(ks, depth)
    return tree, outside


def counted_tree(
    ks: Keyspace, depth: int | None = None, directories: bool = False
) -> tuple[ScopeTree, Outside, DirectoryCounts | None]:
    """Count every key of ``ks`` into a :class:`ScopeTree` with one scan of the
    store: each key is decoded once, except the keys that follow a decoded key in
    its scope's own range, which are counted as one run (see :func:`tally`). Shows
    a progress bar on stderr when the scan takes long. With ``directories``, the
    keys of the store's directory tree (read in the same state) are counted per
    directory, not as keys that do not decode."""
    tree = ScopeTree()
    outside = Outside()
    add = tree.add
    with one_state(ks.store) as view, Ticker("reading keys") as ticker:
        counts = directory_counts(view) if directories else None
        claim = None if counts is None else counts.claim
        reader = store_reader(ks, depth, view)
        for item in tally(view, reader, LayoutCache(ks.scheme).get):
            if isinstance(item, Run):
                add(item.path, item.size, item.keys)
                ticker.advance(item.keys)
                continue
            if claim is None or item.reason is None or not claim(item.stored, item.value):
                outside.count(item.stored[reader.key_tag :], item.value, item.reason)
            ticker.advance()
    return tree, outside, counts


def kept_tree(ks: Keyspace) -> ScopeTree | None:
    """The scope tree of ``ks`` from the counts accounting keeps (one scan of the
    counter records, one per non-empty scope: no key is read), or ``None`` when
    accounting is off, or when the store holds directories (whose keys only a
    scan counts apart)."""
    counts = accounting_of(ks.store)
    if counts is None:
        return None
    with one_state(ks.store) as view:
        if view.get(DIRECTORY_RECORD) is not None:
            return None
        tree = ScopeTree()
        for path, record in counts.records(view):
            node = tree.root
            for component in path:  # one dict lookup per level (records: one per scope)
                node = node.child(component)
            node.keys, node.bytes, node.sub_keys, node.sub_bytes = record[0], record[1], record[2], record[3]
    return tree


def _is_lmdb_environment(url: str) -> bool:
    scheme, sep, _ = url.partition(":")
    if "?db=" in url or "&db=" in url:
        return False  # one named database, not the environment
    return not sep or not scheme.isidentifier() or len(scheme) == 1 or scheme.lower() == "lmdb"


def named_databases(url: str) -> tuple[list[str], bool]:
    """The named databases of the LMDB environment at ``url`` (none for other
    stores), and whether its unnamed database holds nothing but their records
    (which the store's reads leave out: no data). Opens the environment
    read-only."""
    if not _is_lmdb_environment(url):
        return [], False
    store = open_store(url, readonly=True, max_dbs=_LIST_DBS)
    try:
        engine = getattr(store, "inner", store)  # the engine under a read-only face
        lister = getattr(engine, "databases", None)
        names: list[str] = lister() if callable(lister) else []
        only_records = next(iter(store.scan(b"", None, limit=1)), None) is None
    finally:
        store.close()
    return names, only_records


def _heed_databases(names: list[str]) -> list[str]:
    """How to open each scoped-heed database among ``names`` (a ``NAME_scoped`` beside it)."""
    out: list[str] = []
    present = set(names)
    for name in names:
        if not name.endswith("_scoped"):
            continue
        base = name[: -len("_scoped")]
        if base in present:
            out.append(f"--scoped-heed {base}")
        elif f"{base}_default" in present:
            out.append(f"--scoped-heed {base} (default scope in {base}_default)")
        else:
            out.append(f"--scoped-heed {base} --unnamed-default")
    return out


@click.command(
    cls=SectionedCommand,
    epilog="""\b
Examples:
  keyspace inspect demo-data/keyspace.lmdb
  keyspace inspect leveldb:///srv/node-db            # scheme detected from the keys
  keyspace inspect sqlite:///app.db --levels 2
  keyspace inspect data.lmdb --json | jq '.children[].path'
  keyspace inspect lmdb:///cw --scheme length-prefixed --depth 2
  keyspace inspect lmdb:///srv/env                   # lists its named databases
  keyspace inspect lmdb:///srv/env --scoped-heed cache
  keyspace inspect leveldb:///sessions --scheme delimited --separator : --depth 1

\b
JSON: one object for the root scope,
  {"path": [...], "keys": N, "bytes": M, "children": [...]}
with the children nested the same way; "keys" and "bytes" count the scope's
own keys (stored key + value bytes). Path components: strings, numbers,
{"hex": "..."} for bytes (strings in the byte schemes when valid UTF-8).
An LMDB environment with named databases adds "databases": [names] to the root
object; when its unnamed database holds nothing else, that is all it shows.
""",
)
@click.argument("url")
@scheme_option()
@depth_option
@separator_option
@click.option("--json", "as_json", is_flag=True, help="Print the tree as one JSON object, nothing else.")
@click.option(
    "--html",
    "html",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write a self-contained page with a zoomable treemap of the scopes to FILE.",
)
@click.option(
    "--levels",
    type=WholeNumber(0),
    default=None,
    help="Show only N levels below the root.",
)
@heed_options
def inspect(
    url: str,
    scheme: str | None,
    depth: int | None,
    separator: str | None,
    as_json: bool,
    html: str | None,
    levels: int | None,
) -> None:
    """Show the scope tree of the store at URL: per scope, its own keys and bytes
    (stored keys + values) and the totals of its subtree.

    The scheme is the one given, else the one recorded in the store, else
    detected by decoding a sample of keys with each scheme (the choice and its
    certainty are printed on stderr). One scan of the store; a progress bar on
    stderr when it takes long; with accounting on (keyspace accounting enable),
    the kept counts are read instead of the keys. --html FILE writes a page
    (no network needed) with a treemap of the scopes by bytes or keys: hover
    for a scope's path and counts, click to zoom into it. On an LMDB environment
    it first lists the named databases (scoped-heed databases with the options
    that open them): LMDB keeps their records among the keys of its unnamed
    database, so that listing reads those keys once, with accounting on too.
    """
    if html is not None and as_json:
        raise click.UsageError("--html writes the tree as a page and --json prints it: give one of them")
    databases, only_records = ([], False) if url.startswith(HEED_URL) else named_databases(url)
    if databases:
        if as_json:
            if only_records:
                click.echo(dumps({"path": [], "keys": 0, "bytes": 0, "children": [], "databases": databases}))
                return
        else:
            out().print(f"named databases (lmdb://…?db=NAME): {', '.join(databases)}", markup=False)
            for line in _heed_databases(databases):
                out().print(f"  scoped-heed: {line}", markup=False)
            if only_records:
                return
    try:
        _show(url, scheme, depth, separator, as_json, levels, databases, html)
    except KeyspaceError as exc:
        if not databases or scheme is not None:
            raise
        # the environment's databases are listed; its unnamed database cannot be read
        if as_json:
            click.echo(dumps({"path": [], "keys": 0, "bytes": 0, "children": [], "databases": databases}))
        err().print(f"warning: the unnamed database is not shown: {exc}", markup=False)


def _show(
    url: str,
    scheme: str | None,
    depth: int | None,
    separator: str | None,
    as_json: bool,
    levels: int | None,
    databases: list[str],
    html: str | None = None,
) -> None:
    """The scope tree of the keyspace at ``url`` on stdout (or, with ``html``, as a page in that file)."""
    with opened(url, scheme, depth=depth, separator=separator) as op:
        ks = op.keyspace
        err().print(f"scheme: {op.how}", markup=False)
        kept = kept_tree(ks)
        if kept is not None:
            tree, outside, counts = kept, Outside(), None
            source = "counts kept by accounting"
        else:
            tree, outside, counts = counted_tree(ks, depth, directories=ks.scheme.typed_keys)
            source = "counted in one scan"
        typed = ks.scheme.typed_keys
        if html is not None:
            with open(html, "w", encoding="utf-8") as file:
                file.write(page(tree, f"{ks.url}  ({ks.scheme!r})", typed=typed, source=source))
            err().print(f"wrote {html}: {len(list(tree.nodes()))} scopes ({source})", markup=False)
        elif as_json:
            doc = tree.to_json(typed=typed)
            if databases:
                doc["databases"] = databases
            if counts is not None:
                doc.update(counts.to_json())
            if outside.areas:
                doc["reserved"] = {area: {"keys": k, "bytes": b} for area, (k, b) in outside.areas.items()}
            click.echo(dumps(doc))
        else:
            title = f"{ks.url}  ({ks.scheme!r})"
            console = out()
            plain = None
            if not console.is_terminal and console.color_system is None:
                plain = tree.plain_lines(title, typed=typed, levels=levels)
            if plain is not None:  # what the table prints below, drawn without rich
                console.file.write("\n".join(plain) + "\n")
            elif console.is_terminal:  # long names fold to the terminal's width
                console.print(tree.table(title, typed=typed, levels=levels))
            else:  # into a pipe or a file each name stays whole, to be given back as a PATH
                table = tree.table(title, typed=typed, levels=levels)
                width = console.width
                wide = console.options.update_width(1 << 20)
                console.width = max(width, console.measure(table, options=wide).maximum)
                try:
                    console.print(table)
                finally:
                    console.width = width
            if counts is not None:
                out().print(counts.table())
                out().print(
                    f"directory nodes: {counts.node_keys:,} keys, {human_bytes(counts.node_bytes)}",
                    markup=False,
                )
            for area in (RECORDS, *dict.fromkeys(area for _, area in AREAS)):
                if area in outside.areas:
                    keys, size = outside.areas[area]
                    out().print(f"reserved ({area}): {keys:,} keys, {human_bytes(size)}", markup=False)
    if outside.undecodable:
        err().print(
            f"warning: {outside.undecodable:,} keys do not decode as {ks.scheme.name} and are not counted; "
            f"first: {outside.examples[0]}",
            markup=False,
        )
