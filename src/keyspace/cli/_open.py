"""Opening a keyspace for a command: the scheme given, recorded, or detected.

Without ``--scheme``, the scheme recorded in the store is used; a store without a
record (data another system wrote) has its scheme detected by decoding a sample
of its keys with each scheme that can read keys on its own — for reading only,
reporting how sure it is, and refusing when two schemes decode the keys. A
command that writes into a store with keys but no record needs ``--scheme``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import click

from .. import _metadata
from .. import open as open_keyspace
from .._write_hooks import feature_options, hook_store
from ..errors import DecodeError, KeyspaceError, StoreError
from ..keyspace import Keyspace, open_existing_or_new
from ..keyspace import _scheme_of as scheme_of
from ..schemes import SCHEMES, AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from ..schemes.delimited import guess_delimited
from ..stores import ReadView
from ..stores._base import Store
from ._heed import HEED_URL, open_heed
from ._options import check_depth_applies
from ._sqlite_trace import no_trace
from ._walk import RESERVED, KeyReader

__all__ = ["Detection", "Opened", "detect", "make_scheme", "opened"]

SAMPLE = 1000
"""Keys read for detection: half from the start of the store, half from the end."""


def make_scheme(name: str, *, writing: bool = False, **options: Any) -> Scheme:
    """The scheme called ``name``, with the ``options`` it declares in
    :attr:`Scheme.parameters` (``None`` values and the others are left out: ``depth``
    is also a reading option) and defaults for the rest. A scheme whose keys collide
    (:attr:`Scheme.refuses_writes`: ``naive``) reads with ``allow_collisions=True``
    and refuses writes (``writing``), as the library does."""
    cls = SCHEMES.get(name)
    if cls is None:
        raise KeyspaceError(f"unknown scheme {name!r}; known schemes: {', '.join(SCHEMES)}")
    if cls.refuses_writes:
        return cls(allow_collisions=not writing)  # type: ignore[call-arg]
    return cls(**{k: v for k, v in options.items() if v is not None and k in cls.parameters})


@dataclass(frozen=True)
class Detection:
    """Which scheme decodes a store's keys, and how well: ``decoded`` of
    ``sampled`` keys decode, ``nested`` of them into a named scope."""

    scheme: Scheme
    sampled: int
    decoded: int
    nested: int

    @property
    def share(self) -> float:
        return self.decoded / self.sampled if self.sampled else 0.0

    def describe(self) -> str:
        pct = f"{self.share:.0%}"
        nested = f"{self.nested / self.sampled:.0%}" if self.sampled else "0%"
        params = self.scheme.params() if self.scheme.parameters else {}
        name = self.scheme.name + "".join(f" {k} {v!r}" for k, v in params.items())
        return f"{name}: {pct} of {self.sampled:,} sampled keys decode ({nested} in named scopes)"


def _sample(view: ReadView) -> list[tuple[bytes, bytes]]:
    half = SAMPLE // 2
    head = list(view.scan(b"", None, limit=half))
    if len(head) < half:
        return head
    tail = list(view.scan(b"", None, reverse=True, limit=half))
    seen = {k for k, _ in head}
    return head + [kv for kv in reversed(tail) if kv[0] not in seen]


# Stored keys that no format gives meaning to: a scheme that decodes all of them
# takes any bytes as a root key, so only its keys in named scopes are evidence.
_PROBES = (b"\x00\x03bar\x00\x04coolfoo", b"\xfe\x01\x00\x00zz", b"plain text key", b"\x13\x37")


def _permissive(scheme: Scheme, depth: int | None) -> bool:
    try:
        reader = KeyReader(scheme, depth)
        for probe in _PROBES:
            reader.read(probe, b"")
    except DecodeError:
        return False
    return True


def _score(scheme: Scheme, sample: list[tuple[bytes, bytes]], depth: int | None) -> Detection:
    reader = KeyReader(scheme, depth)
    decoded = nested = 0
    for stored, value in sample:
        try:
            found = reader.read(stored, value)
        except DecodeError:
            continue
        decoded += 1
        if found is not RESERVED and found[0]:
            nested += 1
    if not nested and _permissive(scheme, depth):
        decoded = 0  # every key read as a root key of a scheme that takes any bytes: no evidence
    return Detection(scheme, len(sample), decoded, nested)


def detect(view: ReadView, depth: int | None = None) -> list[Detection]:
    """Every candidate scheme scored on a sample of the store's keys, best first
    (most keys decoding, then most keys in named scopes, then the design's order).
    A scheme that reads any bytes as a root key (sublevel) is credited with
    nothing unless it finds keys in named scopes. A scheme that cannot decode without
    the depth (:attr:`Scheme.decode_needs_depth`: LengthPrefixed) is a candidate only
    with ``depth``. Cost: two short scans."""
    sample = _sample(view)
    formats: list[Scheme] = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash()]
    candidates = [s for s in formats if depth is not None or not s.decode_needs_depth]
    scores = [_score(s, sample, depth) for s in candidates]
    # hand-made delimited keys: a candidate only where no format puts every key in a scope
    delimited = guess_delimited((k for k, _ in sample), depth)
    if delimited is not None and not any(d.decoded == d.sampled and d.nested for d in scores):
        scores.append(_score(delimited, sample, depth))
    order = {id(d): i for i, d in enumerate(scores)}
    return sorted(scores, key=lambda d: (-d.decoded, -d.nested, order[id(d)]))


@dataclass
class Opened:
    """A keyspace opened for a command and how its scheme was chosen."""

    keyspace: Keyspace
    how: str


def _empty(view: ReadView) -> bool:
    return not _metadata.holds_data(view)


CONFIDENT = 0.9
"""Share of sampled keys the detected scheme must decode for a read to go ahead."""


def _choose(store: Store, depth: int | None, writing: bool) -> tuple[Scheme, str]:
    """The scheme for an unnamed one: recorded, else the default on an empty
    store, else (reading only) detected. Never guesses for a write, nor when the
    best scheme decodes too few keys or another decodes as many."""
    recorded = _metadata.read(store, None, store.url)
    if recorded is not None:
        return recorded, f"{recorded.name} (recorded in the store)"
    if _empty(store):
        return TupleScheme(), "tuple (empty store: the default)"
    if writing:
        raise KeyspaceError(
            f"{store.url} holds keys but no scheme record; its scheme is not guessed for a write: "
            "pass --scheme NAME (the scheme its keys were written with)"
        )
    ranked = detect(store, depth)
    best = ranked[0]
    untried = "" if depth is not None else " (length-prefixed needs --depth, not tried)"
    if best.share < CONFIDENT:
        raise KeyspaceError(
            f"cannot tell the scheme of {store.url}: the best, {best.describe()}{untried}; pass --scheme"
        )
    rivals = [d for d in ranked[1:] if d.decoded * 10 >= best.decoded * 9]
    if rivals:
        raise KeyspaceError(
            f"cannot tell the scheme of {store.url}: {best.describe()}, and "
            f"{'; '.join(d.describe() for d in rivals)}; pass --scheme"
        )
    runner = ranked[1].describe() if len(ranked) > 1 else "none"
    scheme = make_scheme(best.scheme.name, writing=writing, **best.scheme.params())
    return scheme, (
        f"{best.describe()} — detected (confidence {best.share:.0%}, read only); next best {runner}{untried}"
    )


@contextmanager
def opened(
    url: str,
    scheme_name: str | None,
    *,
    create: bool = False,
    depth: int | None = None,
    writing: bool = False,
    separator: str | None = None,
    names: tuple[str, str] = ("--depth", "--separator"),
    features: dict[str, Any] | None = None,
) -> Iterator[Opened]:
    """:func:`_opened`, with the errors of the store named after the command the
    user ran: a store's message begins with the call that failed (``get:``, a
    call of etcd's API, when ``inspect`` reads the store's records), which the
    command's name replaces (``inspect:``)."""
    try:
        with _opened(
            url,
            scheme_name,
            create=create,
            depth=depth,
            writing=writing,
            separator=separator,
            names=names,
            features=features,
        ) as op:
            yield op
    except StoreError as exc:
        _name_the_command(exc)
        raise


_CALL_LABEL = re.compile(r"[a-z_]+: ")


def _name_the_command(exc: StoreError) -> None:
    """Replace the call label that begins ``exc``'s message by the running
    command's name (``dir list`` for a subcommand)."""
    ctx = click.get_current_context(silent=True)
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else None
    if ctx is None or message is None:
        return
    command = " ".join(ctx.command_path.split()[1:])
    label = _CALL_LABEL.match(message)
    if command and label is not None and not message.startswith(f"{command}: "):
        exc.args = (f"{command}: {message[label.end() :]}", *exc.args[1:])


@contextmanager
def _opened(
    url: str,
    scheme_name: str | None,
    *,
    create: bool = False,
    depth: int | None = None,
    writing: bool = False,
    separator: str | None = None,
    names: tuple[str, str] = ("--depth", "--separator"),
    features: dict[str, Any] | None = None,
) -> Iterator[Opened]:
    """Open ``url`` with ``scheme_name``, or with the recorded scheme when it is
    ``None`` (an empty store: the default; a store with keys but no record: the
    scheme detected from its keys, for reading only), and close it on exit.
    ``create`` allows a new local store. A command that neither writes nor
    creates opens the store read-only: nothing is created or changed, and a path
    that is not a store fails. ``separator`` (and ``depth``) parametrise the
    delimited scheme; a separator with no scheme name means ``delimited``; a
    ``depth`` for a scheme whose keys record their depth raises
    :class:`click.UsageError` (:func:`~._options.check_depth_applies`);
    ``names`` are the options that gave them, for the messages. A
    read-only open of an SQLite store leaves no ``-wal``/``-shm`` files it
    created (:func:`~._sqlite_trace.no_trace`). ``features``: the keyspace
    features to turn on besides the recorded ones (``{"ttl": True}``), as
    :func:`keyspace.open` takes them.
    Raises :class:`KeyspaceError` (one line) when nothing fits; nothing is
    written before the command writes."""
    readonly = not writing and not create
    with ExitStack() as cleanup:  # closes in reverse: the store, then the SQLite files taken back
        if readonly:
            cleanup.enter_context(no_trace(url))
        if url.startswith(HEED_URL):  # a scoped-heed database: its own layout, no scheme to choose
            if scheme_name is not None or separator is not None:
                raise KeyspaceError(
                    f"{url} is a scoped-heed database with its own layout; --scheme does not apply"
                )
            if not readonly and not create:  # its databases must exist: a read-only open makes none
                open_heed(url, readonly=True)[0].close()
            heed, how = open_heed(url, readonly=readonly)
            cleanup.enter_context(heed)  # a close that fails after an error: a note on it
            yield Opened(heed, how)
            return
        if scheme_name is None and separator is not None:
            scheme_name = "delimited"
        if scheme_name is not None:
            if separator is not None and "separator" not in SCHEMES.get(scheme_name, Scheme).parameters:
                raise KeyspaceError(f"scheme {scheme_name} takes no {names[1]} (it is for: delimited)")
            scheme = make_scheme(scheme_name, writing=writing, separator=separator, depth=depth)
            check_depth_applies(scheme, depth, names[0])  # before a store is opened or made
            ks = open_keyspace(
                url, scheme=scheme, create=create, readonly=readonly, leaf_depth=depth, **(features or {})
            )
            how = f"{scheme_name} (given)"
        else:
            store = open_existing_or_new(url, create=create, readonly=readonly)
            try:
                scheme, how = _choose(store, depth, writing)
                chosen, recorded = scheme_of(store, scheme, url)
                # the features the store records (changes, accounting) run on the command's writes too
                asked = feature_options(dict(features or {}))
                store = hook_store(store, chosen, asked, _metadata.read_features(store, chosen, url))
            except BaseException:
                store.close()
                raise
            ks = Keyspace(store, chosen, recorded=recorded, leaf_depth=depth)
        # closed as a with block closes it: when the command failed, the close's own
        # failure (RocksDB repeats a failed write's error) is a note on that error
        cleanup.enter_context(ks)
        check_depth_applies(ks.scheme, depth, names[0])
        yield Opened(ks, how)


def one_state(store: Store) -> AbstractContextManager[ReadView]:
    """``store`` in one state for a command that reads all of it: a snapshot where
    the store has them, else the store itself."""
    if store.capabilities.snapshots:
        return store.snapshot()
    return nullcontext(store)
