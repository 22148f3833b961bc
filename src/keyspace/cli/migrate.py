"""``keyspace migrate``: copy every scope and key to another store or scheme."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

import click

from .._expiry import Expiry, expiry_of, put_until
from .._metadata import DIRECTORY_RECORD
from ..errors import DecodeError, InvalidName, KeyspaceError, KeyTooLarge, show_bytes
from ..keyspace import Keyspace, attach
from ..scope import Scope
from ..stores import OverlayTransaction, ReadOnlyStore, ReadView, WriteView, parse_url
from ._console import Ticker, err, out
from ._created import local_path, removed_on_failure
from ._format import path_identity
from ._heed import HEED_URL, heed_location
from ._open import one_state, opened
from ._options import (
    SectionedCommand,
    WholeNumber,
    depth_option,
    parse_separator,
    scheme_option,
    separator_option,
)
from ._walk import Entry, KeyReader, store_reader, walk

__all__ = [
    "CONFLICT_CHOICES",
    "Conflicts",
    "Splits",
    "Tally",
    "check_no_merge",
    "copy_all",
    "migrate",
    "refuse_ambiguous",
    "refuse_directories",
]

_SHOWN = 5
"""Keys named in a message (all are counted)."""

CONFLICT_CHOICES = ("fail", "keep", "overwrite")
"""What ``--on-conflict`` may say to do with a destination key that holds
another value than the source's: refuse the copy before anything is written
(the default), keep the destination's value, or write the source's."""


def _named(path: tuple[Any, ...], key: Any) -> str:
    return f"scope {path!r} key {show_bytes(key)}"


def _some(names: list[str], count: int) -> str:
    more = f" and {count - len(names):,} more" if count > len(names) else ""
    return f"{'; '.join(names)}{more}"


@dataclass
class Tally:
    """What a migration did: keys written new, overwritten with the source's
    value, kept with the destination's other value (``--on-conflict keep``), or
    left alone (already equal); batches committed. ``conflicts`` names the first
    keys overwritten or kept (all are counted)."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0
    batches: int = 0
    conflicts: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.new + self.updated + self.unchanged + self.kept


@dataclass
class Conflicts:
    """What copying would do to each source key, read before anything is written:
    ``new`` keys absent from the destination, ``same`` ones it holds with the
    source's value, ``differ`` ones it holds with another value (the first
    :data:`_SHOWN` named in ``names``)."""

    new: int = 0
    same: int = 0
    differ: int = 0
    names: list[str] = field(default_factory=list)

    def add(self, current: bytes | None, entry: Entry, path: tuple[Any, ...]) -> None:
        if current is None:
            self.new += 1
        elif current == entry.value:
            self.same += 1
        else:
            self.differ += 1
            if len(self.names) < _SHOWN:
                self.names.append(_named(path, entry.key))

    def named(self) -> str:
        return _some(self.names, self.differ)


@dataclass
class Splits:
    """Source keys that decode although they hold more separators than the depth
    (a delimited key whose key part holds the separator): split as the scheme
    reads them, at the first ``depth`` separators. ``count`` of them, the first
    :data:`_SHOWN` shown with their split."""

    scheme: Any = None
    count: int = 0
    shown: list[str] = field(default_factory=list)

    def note(self) -> str | None:
        """One line for the report, or ``None`` when no key held the separator."""
        if not self.count:
            return None
        return (
            f"{self.count:,} source key(s) hold the separator in their key part and were split as "
            f"{self.scheme!r} reads them (at the first separators, the rest is the key): "
            f"{_some(self.shown, self.count)}. --strict-separators refuses them instead"
        )


def _path_converter(src: Keyspace, dst: Keyspace, keep_bytes: bool) -> Any:
    """Byte schemes give bytes names; a typed destination gets them as ``str`` when
    they are valid UTF-8 (text names, as the source system meant them), unless
    ``keep_bytes``."""
    if keep_bytes or src.scheme.typed_keys or not dst.scheme.typed_keys:
        return lambda path: path

    def text(component: Any) -> Any:
        if isinstance(component, bytes):
            try:
                return component.decode("utf-8")
            except UnicodeDecodeError:
                return component
        return component

    def convert(path: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(text(c) for c in path)

    return convert


def _stored_form(dst: Keyspace, tx: Any, path: Any) -> Scope:
    """The scope ``path`` of the transaction ``tx`` of ``dst``, taking keys and
    values as the source's walk gives them: the scheme's own keys (bytes, but in
    a scheme of typed keys) and stored value bytes, whatever codecs ``dst`` gives
    its scopes by default (a scoped-heed database's types would encode them
    again)."""
    scope: Scope = tx.scope(*path, key=None if dst.scheme.typed_keys else "bytes", value="bytes")
    return scope


def _write_batch(
    dst: Keyspace,
    batch: list[Entry],
    convert: Any,
    tally: Tally,
    on_conflict: str = "overwrite",
    deadlines: Deadlines | None = None,
) -> None:
    """Put ``batch`` in one transaction of ``dst``, skipping keys that already hold
    the same value (and deadline). A key that holds another value is overwritten, kept
    (``on_conflict``: ``"overwrite"``, ``"keep"``), or (``"fail"``) ends the
    copy with :class:`KeyspaceError` naming it, this batch not committed.
    ``deadlines``: where the source's keys expire, each key's deadline goes with
    it. Cost: one point read and at most one write per key (and two point
    reads of deadlines)."""
    counts = Tally()  # this batch's, added to ``tally`` once it commits
    with dst.transaction() as tx:
        scopes: dict[Any, Scope] = {}  # by path_identity: (1,) and (True,) are two scopes
        for entry in batch:
            path = convert(entry.path)
            same = path_identity(path)
            scope = scopes.get(same)
            if scope is None:
                scope = scopes[same] = _stored_form(dst, tx, path)
            current = scope.get(entry.key)
            deadline = None if deadlines is None else deadlines.of(entry.stored)
            if current == entry.value and (
                deadline is None or deadlines is None or deadlines.kept(tx, scope, entry.key) == deadline
            ):
                counts.unchanged += 1
                continue
            if current is not None:
                if on_conflict == "fail":
                    raise KeyspaceError(
                        f"the destination holds another value at {_named(path, entry.key)} (written there "
                        "while the copy ran); this batch was not written, the batches before it were. "
                        "--on-conflict keep or overwrite chooses"
                    )
                if len(tally.conflicts) + len(counts.conflicts) < _SHOWN:
                    counts.conflicts.append(_named(path, entry.key))
                if on_conflict == "keep":
                    counts.kept += 1
                    continue
            if deadline is None:
                scope[entry.key] = entry.value
            else:
                put_until(scope, entry.key, entry.value, partial(int, deadline), "a copied deadline")
            if current is None:
                counts.new += 1
            else:
                counts.updated += 1
    tally.new += counts.new
    tally.updated += counts.updated
    tally.unchanged += counts.unchanged
    tally.kept += counts.kept
    tally.conflicts.extend(counts.conflicts)
    tally.batches += 1


@dataclass
class Deadlines:
    """The deadlines of a copy whose source holds keys that expire: ``of(stored)``
    the source key's (one point read of ``view``, the source's), ``kept`` the
    destination's of a key, read in its transaction."""

    source: Expiry
    view: ReadView
    destination: Expiry

    def of(self, stored: bytes) -> int | None:
        return self.source.deadline(self.view, stored)

    def kept(self, tx: Any, scope: Scope, key: Any) -> int | None:
        return self.destination.deadline(tx.view, scope._stored(key))


def copy_deadlines(src: Keyspace, dst: Keyspace, view: ReadView) -> Deadlines | None:
    """The :class:`Deadlines` of a copy from ``src`` (read in ``view``) to ``dst``,
    or ``None`` where no source key expires. :class:`KeyspaceError` where some
    do and ``dst`` keeps no deadlines (its keys would never expire), before
    anything is written."""
    source = expiry_of(src.store)
    if source is None or not source.holds_deadlines(view):
        return None
    destination = expiry_of(dst.store)
    if destination is None:
        raise KeyspaceError(
            f"{src.url} holds keys that expire (ttl) and {dst.url} keeps no deadlines: copied there they "
            "would never expire; nothing was written. Open the destination with ttl=True "
            "(keyspace migrate does so itself)"
        )
    return Deadlines(source, view, destination)


_TREE = (b"\xfe", b"\xff")
"""Where the directory layer keeps its nodes, its version and its allocator."""


def _uncopyable(item: Any, reader: KeyReader, tree: bool = False) -> str | None:
    """Why a walked source key cannot be copied (it does not decode, or its
    scopehash scope has no name in the source's registry), or ``None``. With
    ``tree`` (the source records that directories were made), a key of the
    directory layer's own subspace is left behind: migrate copies no directory
    (:func:`refuse_directories`), and a tree all of whose directories were
    removed keeps only its version and allocator there."""
    if not isinstance(item, Entry):
        if tree and _TREE[0] <= item.stored < _TREE[1]:
            return None
        return None if item.reason is None else f"source key {show_bytes(item.stored)} is {item.reason}"
    if reader.unnamed(item.path):
        return (
            f"scopehash scope {item.path[0]:#010x} has no name in the source's registry: "
            "its keys hold only a hash of the name, so they cannot be copied into another scheme"
        )
    return None


def check_no_merge(
    src: Keyspace,
    dst: Keyspace,
    reader: KeyReader,
    convert: Any,
    view: ReadView | None = None,
    *,
    conflicts: Conflicts | None = None,
    rehearsal: Keyspace | None = None,
) -> int:
    """Raise :class:`KeyspaceError`, before anything is written, when two source
    keys would become one destination key (tuple scopes ``("a",)`` and
    ``(b"a",)`` into a byte scheme; names a scheme cannot tell apart), naming both
    source paths, for a source key that does not decode or a scopehash scope
    whose name the source's registry does not hold (which :func:`copy_all` would
    meet only after writing the batches before it), or when the destination's
    engine cannot store a key
    (:class:`KeyTooLarge`, :class:`InvalidName` for an empty key). Returns the
    number of stored keys of ``src`` (as ``view``, a snapshot of its store, holds
    them). With ``conflicts``, counts there what the copy would do to each key
    (one point read of ``dst``'s store per key). The scopes are rehearsed on
    ``rehearsal`` when given (a stand-in of ``dst``'s scheme), else on ``dst``.
    Cost: one scan of ``src`` and one ``encode`` per key; memory: one entry per
    source key."""
    seen: dict[bytes, Entry] = {}
    encode = dst.scheme.encode
    read_dst = dst.store.get
    count = 0
    source = src.store if view is None else view
    tree = source.get(DIRECTORY_RECORD) is not None
    for item in walk(source, reader):
        count += 1
        why = _uncopyable(item, reader, tree)
        if why is not None:
            raise KeyspaceError(f"{why}; nothing was written")
        if not isinstance(item, Entry):
            continue
        path = convert(item.path)
        target = encode(path, item.key)
        first = seen.setdefault(target, item)
        if first is not item:
            raise KeyspaceError(
                f"source keys {show_bytes(first.key)} in scope {first.path!r} and {show_bytes(item.key)} in "
                f"scope {item.path!r} would both become the destination key {show_bytes(target)} under "
                f"{dst.scheme!r}: migrate does not merge keys; nothing was written"
            )
        if conflicts is not None:
            conflicts.add(read_dst(target), item, path)
    try:
        dst.catalog.check_storable(list(seen))
    except (KeyTooLarge, InvalidName) as exc:
        raise type(exc)(f"{exc}: the destination cannot store this source key; nothing was written") from None
    firsts: dict[Any, Entry] = {}
    # one key of every destination path (by path_identity: (1,) and (True,) are two;
    # not per stored prefix: names whose scopehash hashes collide share one)
    for entry in seen.values():
        firsts.setdefault(path_identity(convert(entry.path)), entry)
    _rehearse(dst if rehearsal is None else rehearsal, list(firsts.values()), convert)
    return count


class _Rehearsed(Exception):
    """Ends the transaction of :func:`_rehearse`, which is never committed."""


def _rehearse(dst: Keyspace, entries: list[Entry], convert: Any) -> None:
    """Write ``entries`` (one key of each destination scope) in a transaction of
    ``dst`` that is then discarded, so that what the destination refuses for a
    scope, whichever batch its keys come in (a LengthPrefixed scope that would
    hold keys and child scopes, a scope name whose hash another name holds), is
    refused before anything is written. Cost: one write per scope, in memory."""
    try:
        with dst.transaction() as tx:
            for entry in entries:
                _stored_form(dst, tx, convert(entry.path))[entry.key] = entry.value
            raise _Rehearsed
    except _Rehearsed:
        return
    except KeyspaceError as exc:
        raise type(exc)(f"{exc}; the destination refuses this source scope, so nothing was written") from None


def refuse_directories(src: Keyspace, view: ReadView) -> None:
    """Raise :class:`KeyspaceError`, before anything is written, when the source
    holds directories (``ks.directory``): their keys lie under allocated
    prefixes that no scope decodes, so a copy of the scopes would leave them
    behind. Cost: one point read; where directories were ever made, a list of
    the top-level ones."""
    if view.get(DIRECTORY_RECORD) is None:
        return
    names = src.directories.list()
    if names:
        shown = ", ".join(f"/{name}" for name in names[:_SHOWN])
        more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
        raise KeyspaceError(
            f"the source holds directories ({shown}{more}; see keyspace dir ls): migrate copies the "
            "scopes of a keyspace, and a directory's keys lie under an allocated prefix no scope "
            "decodes, so they would be left behind; nothing was written"
        )


def refuse_ambiguous(src: Keyspace, view: ReadView | None = None, *, strict: bool = True) -> Splits:
    """Check, before anything is written, the source keys whose split into (path,
    key) may be ambiguous (a scheme with :attr:`Scheme.ambiguous_splits`:
    delimited keys with more or fewer separators than the depth). A key that
    does not decode (fewer separators) raises :class:`KeyspaceError` naming it;
    so does one that decodes at the scheme's split although it holds more
    separators (its key part holds one) where ``strict``, else it is counted and
    shown with its split in the :class:`Splits` returned (a store written
    through :class:`~keyspace.schemes.Delimited` holds such keys: that is how it
    reads them back). Cost: one scan of the source (``view``: a snapshot of its
    store), for those schemes only."""
    scheme = src.scheme
    splits = Splits(scheme)
    if not scheme.ambiguous_splits:
        return splits
    found: list[str] = []
    count = 0
    for stored, _ in (src.store if view is None else view).scan(b"", None):
        reason = scheme.ambiguity(stored)
        if reason is None:
            continue
        try:
            path, key = scheme.decode(stored)
        except DecodeError:
            pass
        else:
            if not strict:
                splits.count += 1
                if len(splits.shown) < _SHOWN:
                    splits.shown.append(f"{show_bytes(stored)} -> {_named(path, key)}")
                continue
        count += 1
        if len(found) < _SHOWN:
            found.append(f"{show_bytes(stored)} ({reason})")
    if count:
        hint = (
            "Give the depth their writer used (--depth), or rename those keys first"
            if strict
            else "They do not decode at this depth: give the depth their writer used (--depth)"
        )
        raise KeyspaceError(
            f"{count:,} source key(s) do not split unambiguously with {scheme!r}, so nothing was copied: "
            f"{_some(found, count)}. {hint}"
        )
    return splits


def copy_all(
    src: Keyspace,
    dst: Keyspace,
    *,
    batch: int,
    depth: int | None = None,
    keep_bytes: bool = False,
    view: ReadView | None = None,
    tally: Tally | None = None,
    on_conflict: str = "overwrite",
) -> Tally:
    """Copy every scope key of ``src`` into ``dst`` in batches of at most ``batch``
    keys, each one transaction of ``dst``. Two scans of ``src`` (of ``view``, a
    snapshot of its store, when given: both then read the same keys, however
    ``src`` is written meanwhile): the first checks that no two source keys become
    one destination key (:func:`check_no_merge`) and counts them for the progress
    bar. Reserved keys (scheme records, name registries) are not copied; ``dst``
    writes its own.

    Raises :class:`KeyspaceError`, before anything is written, for a source key
    that does not decode or a scopehash scope whose name the source's registry
    does not hold (:func:`check_no_merge`); a failure of a later batch's write
    keeps the batches written before, and a re-run continues from them. ``tally`` (a new one
    when not given) counts as the batches commit, so a caller sees what was
    written also when the copy fails part way.

    ``on_conflict`` says what to do with a destination key that holds another
    value than the source's (:data:`CONFLICT_CHOICES`): ``"overwrite"`` writes
    the source's, ``"keep"`` leaves it (both name the first such keys in the
    tally), ``"fail"`` raises :class:`KeyspaceError` naming them before anything
    is written (the first scan then reads the destination's value of every key:
    one point read each), and from a batch that meets one written meanwhile."""
    if on_conflict not in CONFLICT_CHOICES:
        raise KeyspaceError(f"on_conflict {on_conflict!r} is not one of {', '.join(CONFLICT_CHOICES)}")
    source = src.store if view is None else view
    reader = store_reader(src, depth, source)
    convert = _path_converter(src, dst, keep_bytes)
    size = max(1, min(batch, dst.batch_limit - 2))
    found = Conflicts() if on_conflict == "fail" else None
    total = check_no_merge(src, dst, store_reader(src, depth, source), convert, source, conflicts=found)
    if found is not None and found.differ:
        raise KeyspaceError(
            f"{found.differ:,} destination key(s) hold another value than the source's: {found.named()}; "
            "nothing was written. --on-conflict keep leaves them, --on-conflict overwrite writes the "
            "source's (--dry-run shows what a copy would do)"
        )
    deadlines = copy_deadlines(src, dst, source)
    tally = Tally() if tally is None else tally
    tree = source.get(DIRECTORY_RECORD) is not None
    pending: list[Entry] = []
    with Ticker("copying keys", total if err().is_terminal else None) as ticker:
        for item in walk(source, reader):
            ticker.advance()
            why = _uncopyable(
                item, reader, tree
            )  # as check_no_merge: again for a source read without a snapshot
            if why is not None:
                raise KeyspaceError(why)
            if not isinstance(item, Entry):
                continue
            pending.append(item)
            if len(pending) >= size:
                _write_batch(dst, pending, convert, tally, on_conflict, deadlines)
                pending = []
        if pending:
            _write_batch(dst, pending, convert, tally, on_conflict, deadlines)
    return tally


def _expires(src: Keyspace, view: ReadView) -> bool:
    """Whether a key of ``src`` (read in ``view``) has a deadline."""
    hook = expiry_of(src.store)
    return hook is not None and hook.holds_deadlines(view)


def _same_store(src: str, dst: str) -> bool:
    """Whether the URLs ``src`` and ``dst`` name one local store, however spelled
    (a bare path and an ``lmdb://`` URL, a relative and an absolute path, a
    symbolic link, options such as ``timeout=`` or ``sync=`` that do not choose
    what is read): the same path, and the same part of it where an option
    chooses one (an LMDB ``db=``, a scoped-heed ``name=``)."""
    if src == dst:
        return True
    paths = local_path(src), local_path(dst)
    if paths[0] is None or paths[1] is None:
        return False
    same_path = os.path.realpath(paths[0]) == os.path.realpath(paths[1])
    return same_path and _part(src) == _part(dst)


def _part(url: str) -> tuple[str, str]:
    """Which part of its file a local store URL names: a scoped-heed database by
    its name, an LMDB named database (``""``: the unnamed one), else the whole
    store."""
    if url.startswith(HEED_URL):
        return "scoped-heed", dict(parse_qsl(heed_location(url)[1])).get("name", "")
    engine, _, options = parse_url(url)
    return engine, dict(options).get("db", "") if engine == "lmdb" else ""


class _Rehearsal(ReadOnlyStore):
    """``inner`` read-only, whose transactions hold their writes in memory over a
    snapshot of it and can never commit: the dry run rehearses the destination's
    scopes on it (:func:`_rehearse` discards its transaction), so what the
    destination holds refuses a scope there as it refuses it in the copy. Cost:
    a snapshot per transaction; the writes, in memory."""

    def transaction(self) -> AbstractContextManager[WriteView]:
        state = one_state(self.inner)
        view = state.__enter__()

        def release() -> None:
            state.__exit__(None, None, None)

        return OverlayTransaction(view, _never_applied, release)


def _never_applied(*_: object) -> None:
    raise KeyspaceError("a rehearsal of the destination's scopes is never committed")


def _dry_run(
    source: Keyspace,
    view: ReadView,
    dst: str,
    to_scheme: str | None,
    *,
    depth: int | None,
    to_depth: int | None,
    to_separator: str | None,
    keep_bytes: bool,
) -> Conflicts:
    """What a copy of ``source`` into ``dst`` would do, with nothing written
    anywhere: an existing ``dst`` is opened read-only and each source key's
    value there read; a ``dst`` that does not exist yet is empty (a store of its
    scheme in memory stands in; its engine's own limits are then not checked).
    The destination's scopes are rehearsed as the copy rehearses them, over what
    ``dst`` holds, their writes kept in memory (:class:`_Rehearsal`). Raises what
    the copy would raise before writing (merged keys, undecodable source keys,
    scopes the destination refuses)."""
    where = local_path(dst)
    missing = where is not None and not os.path.lexists(where)
    conflicts = Conflicts()
    with opened(
        "memory:" if missing else dst,
        to_scheme,
        depth=to_depth,
        separator=to_separator,
        names=("--to-depth", "--to-separator"),
    ) as target:
        dst_ks = target.keyspace
        shown = dst if missing else dst_ks.url  # the URL the copy would open, as the copy prints it
        err().print(
            f"to   {shown}: {target.how}" + (" (does not exist yet)" if missing else ""), markup=False
        )
        convert = _path_converter(source, dst_ks, keep_bytes)
        stand_in = _Rehearsal(dst_ks.store)
        with attach(stand_in, scheme=dst_ks.scheme, close_store=False, leaf_depth=to_depth) as rehearsal:
            check_no_merge(
                source,
                dst_ks,
                store_reader(source, depth, view),
                convert,
                view,
                conflicts=conflicts,
                rehearsal=rehearsal,
            )
    return conflicts


@click.command(
    cls=SectionedCommand,
    epilog="""\b
Examples:
  keyspace migrate leveldb:///srv/node-db data.lmdb --from-scheme sublevel --to-scheme tuple
  keyspace migrate lmdb:///cw sqlite:///cw.db --from-scheme length-prefixed --depth 2 \\
      --to-scheme asciihex
  keyspace migrate leveldb:///sessions data.lmdb --from-scheme delimited --separator : \\
      --depth 1 --to-scheme tuple
  keyspace migrate data.lmdb leveldb:///sessions2 --to-scheme delimited --to-separator '|'
  keyspace migrate data.lmdb backup.lmdb --dry-run
  keyspace inspect leveldb:///srv/node-db --json > before.json    # then compare with
  keyspace inspect data.lmdb --json > after.json                  # the same tree and counts

\b
Resuming: every batch is one atomic transaction on DST and a key already in
DST with the same value is skipped, so after an interruption run the same
command again: it re-reads SRC, writes only what is missing, and reports
how many keys it left unchanged. Nothing is deleted from DST. A DST the
command created is removed again when the command fails before its first
batch commits (a refused copy leaves no empty store behind).

\b
Conflicts: a DST key that holds another value than SRC's is refused by
default (--on-conflict fail): the copy stops before writing anything and
names the keys. --on-conflict keep leaves DST's value, --on-conflict
overwrite writes SRC's; both name the keys concerned. --dry-run writes
nothing anywhere (a DST that does not exist is not made) and reports what
the copy would do: keys to copy, keys already present, conflicts by name.

\b
Needs more information: length-prefixed and naive keys do not record their
depth (give --depth; naive reads only depth 0); scopehash keys hold only a
hash of the scope name, resolved through the name registry that keyspace keeps
in the store (scopes without a registered name are refused). --depth and
--separator describe SRC; --to-depth and --to-separator describe DST
(--to-separator alone means --to-scheme delimited, at depth 1 unless
--to-depth says otherwise). --depth is refused for a scheme whose keys record
their depth. Delimited SRC keys are split as the scheme reads them, at their
first --depth separators: a key with more (its key part holds the separator,
as keyspace's own Delimited scopes allow) is copied with the rest as its key,
and the report counts and shows them; --strict-separators refuses them
instead. A key with fewer separators does not decode: the copy is refused
before anything is written, naming the keys. Names that are bytes in the
byte schemes become text in the tuple scheme when they are valid UTF-8
(--keep-bytes-names keeps them bytes).
""",
)
@click.argument("src")
@click.argument("dst")
@scheme_option(name="--from-scheme", help_text="Scheme of SRC; default: recorded, else detected.")
@scheme_option(name="--to-scheme", help_text="Scheme of DST; default: recorded, else tuple for a new store.")
@click.option(
    "--batch",
    type=WholeNumber(1),
    default=1000,
    show_default=True,
    help="Keys per transaction.",
)
@depth_option
@separator_option
@click.option(
    "--to-depth",
    type=WholeNumber(0),
    default=None,
    help="Scope depth of DST's keys, for schemes that take one (delimited: default 1; length-prefixed).",
)
@click.option(
    "--to-separator",
    default=None,
    callback=lambda _ctx, _param, value: None if value is None else parse_separator(value),
    help="Separator byte of DST's delimited keys; implies --to-scheme delimited when no scheme is given.",
)
@click.option(
    "--strict-separators",
    is_flag=True,
    help="Refuse delimited SRC keys that hold more separators than --depth (default: split at the first).",
)
@click.option(
    "--on-conflict",
    type=click.Choice(CONFLICT_CHOICES),
    default="fail",
    show_default=True,
    help="A DST key holding another value: refuse the copy before writing, keep DST's, or overwrite it.",
)
@click.option(
    "--dry-run", is_flag=True, help="Write nothing; report what would be copied, skipped, in conflict."
)
@click.option("--keep-bytes-names", is_flag=True, help="Keep bytes scope names bytes in the tuple scheme.")
def migrate(
    src: str,
    dst: str,
    from_scheme: str | None,
    to_scheme: str | None,
    batch: int,
    depth: int | None,
    separator: str | None,
    to_depth: int | None,
    to_separator: str | None,
    strict_separators: bool,
    on_conflict: str,
    dry_run: bool,
    keep_bytes_names: bool,
) -> None:
    """Copy every scope and key of the store SRC into the store DST, decoding
    with SRC's scheme and encoding with DST's, in batches of --batch keys
    (each one atomic transaction on DST), with a progress bar on stderr. SRC is
    read in one snapshot where it has them: writes to it meanwhile are not
    copied, and the check that no two keys merge holds for what is copied."""
    if _same_store(src, dst):
        raise KeyspaceError(f"source and destination are the same store ({src}, {dst}); nothing was written")
    with (
        opened(src, from_scheme, depth=depth, separator=separator) as source,
        one_state(source.keyspace.store) as view,
    ):
        # before DST is opened (and perhaps created)
        splits = refuse_ambiguous(source.keyspace, view, strict=strict_separators)
        refuse_directories(source.keyspace, view)
        if dry_run:
            err().print(f"from {source.keyspace.url}: {source.how}", markup=False)
            found = _dry_run(
                source.keyspace,
                view,
                dst,
                to_scheme,
                depth=depth,
                to_depth=to_depth,
                to_separator=to_separator,
                keep_bytes=keep_bytes_names,
            )
            total = found.new + found.same + found.differ
            out().print(
                f"dry run, nothing written: {total:,} keys read: {found.new:,} would be copied, "
                f"{found.same:,} already present, {found.differ:,} conflict(s) (DST holds another value)",
                markup=False,
            )
            if found.differ:
                then = {"fail": "refused", "keep": "kept", "overwrite": "overwritten"}[on_conflict]
                out().print(
                    f"conflicts ({then} with --on-conflict {on_conflict}): {found.named()}", markup=False
                )
            note = splits.note()
            if note is not None:
                out().print(note, markup=False)
            return
        tally = Tally()
        # A copy that fails before its first batch commits leaves no store it created.
        with (
            removed_on_failure(dst, wrote=lambda: tally.batches > 0),
            opened(
                dst,
                to_scheme,
                create=True,
                writing=True,
                depth=to_depth,
                separator=to_separator,
                names=("--to-depth", "--to-separator"),
                # keys that expire keep their deadlines: the destination keeps them too
                features={"ttl": True} if _expires(source.keyspace, view) else None,
            ) as target,
        ):
            err().print(f"from {source.keyspace.url}: {source.how}", markup=False)
            err().print(f"to   {target.keyspace.url}: {target.how}", markup=False)
            copy_all(
                source.keyspace,
                target.keyspace,
                batch=batch,
                depth=depth,
                keep_bytes=keep_bytes_names,
                view=view,
                tally=tally,
                on_conflict=on_conflict,
            )
    kept = f", {tally.kept:,} kept (DST holds another value)" if tally.kept else ""
    out().print(
        f"{tally.total:,} keys read: {tally.new:,} copied, {tally.updated:,} overwritten, "
        f"{tally.unchanged:,} already present{kept}; {tally.batches:,} transaction(s)",
        markup=False,
    )
    if tally.updated or tally.kept:
        what = "overwritten" if tally.updated else "kept"
        out().print(
            f"{what} (DST held another value): {_some(tally.conflicts, tally.updated + tally.kept)}",
            markup=False,
        )
    note = splits.note()
    if note is not None:
        out().print(note, markup=False)
