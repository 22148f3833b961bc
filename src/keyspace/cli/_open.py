"""Opening a keyspace for a command: the scheme given, recorded, or detected.

Without ``--scheme``, the scheme recorded in the store is used; a store without a
record (data another system wrote) has its scheme detected by decoding a sample
of its keys with each scheme that can read keys on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .. import _metadata
from .. import open as open_keyspace
from ..errors import DecodeError, KeyspaceError
from ..keyspace import Keyspace
from ..schemes import SCHEMES, AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from ..stores import ReadView
from ._heed import HEED_URL, open_heed
from ._walk import RESERVED, KeyReader

__all__ = ["Detection", "Opened", "detect", "make_scheme", "opened"]

SAMPLE = 1000
"""Keys read for detection: half from the start of the store, half from the end."""


def make_scheme(name: str, *, writing: bool = False) -> Scheme:
    """The scheme called ``name`` with default parameters. ``naive`` reads with
    ``allow_collisions=True`` and refuses writes (``writing``), as the library does."""
    if name == Naive.name:
        return Naive(allow_collisions=not writing)
    cls = SCHEMES.get(name)
    if cls is None:
        raise KeyspaceError(f"unknown scheme {name!r}; known schemes: {', '.join(SCHEMES)}")
    return cls()


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
        return f"{self.scheme.name}: {pct} of {self.sampled:,} sampled keys decode ({nested} in named scopes)"


def _sample(view: ReadView) -> list[tuple[bytes, bytes]]:
    half = SAMPLE // 2
    head = list(view.scan(b"", None, limit=half))
    if len(head) < half:
        return head
    tail = list(view.scan(b"", None, reverse=True, limit=half))
    seen = {k for k, _ in head}
    return head + [kv for kv in reversed(tail) if kv[0] not in seen]


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
    return Detection(scheme, len(sample), decoded, nested)


def detect(view: ReadView, depth: int | None = None) -> list[Detection]:
    """Every candidate scheme scored on a sample of the store's keys, best first
    (most keys decoding, then most keys in named scopes, then the design's order).
    LengthPrefixed is a candidate only with ``depth``. Cost: two short scans."""
    sample = _sample(view)
    candidates: list[Scheme] = [TupleScheme(), AsciiHex(), Sublevel(), ScopeHash()]
    if depth is not None:
        candidates.insert(1, LengthPrefixed())
    scores = [_score(s, sample, depth) for s in candidates]
    order = {id(d): i for i, d in enumerate(scores)}
    return sorted(scores, key=lambda d: (-d.decoded, -d.nested, order[id(d)]))


@dataclass
class Opened:
    """A keyspace opened for a command and how its scheme was chosen."""

    keyspace: Keyspace
    how: str


def _empty(view: ReadView) -> bool:
    return next(iter(view.scan(b"", None, limit=1)), None) is None


def _choose(ks: Keyspace, scheme_name: str | None, depth: int | None, writing: bool) -> tuple[Scheme, str]:
    """The scheme for an open keyspace: recorded, else detected (or the default
    on an empty store)."""
    recorded = _metadata.read(ks.store, None)
    if recorded is not None:
        return recorded, f"{recorded.name} (recorded in the store)"
    if _empty(ks.store):
        return ks.scheme, f"{ks.scheme.name} (empty store: the default)"
    ranked = detect(ks.store, depth)
    best = ranked[0]
    if best.share < 0.5:
        raise KeyspaceError(f"cannot tell the scheme of {ks.url}: the best, {best.describe()}; pass --scheme")
    runner = ranked[1].describe() if len(ranked) > 1 else "none"
    scheme = make_scheme(best.scheme.name, writing=writing)
    untried = "" if depth is not None else "; length-prefixed needs --depth, not tried"
    return scheme, f"{best.describe()} — detected; next best {runner}{untried}"


@contextmanager
def opened(
    url: str,
    scheme_name: str | None,
    *,
    create: bool = False,
    depth: int | None = None,
    writing: bool = False,
) -> Iterator[Opened]:
    """Open ``url`` with ``scheme_name``, or with the recorded or detected scheme
    when it is ``None``, and close it on exit. ``create`` allows a new local store.
    A command that neither writes nor creates opens the store read-only: nothing
    is created or changed, and a path that is not a store fails.
    Raises :class:`KeyspaceError` (one line) when nothing fits."""
    readonly = not writing and not create
    if url.startswith(HEED_URL):  # a scoped-heed database: its own layout, no scheme to choose
        if scheme_name is not None:
            raise KeyspaceError(
                f"{url} is a scoped-heed database with its own layout; --scheme does not apply"
            )
        heed, how = open_heed(url, readonly=readonly)
        try:
            yield Opened(heed, how)
        finally:
            heed.close()
        return
    if scheme_name is not None:
        ks = open_keyspace(
            url, scheme=make_scheme(scheme_name, writing=writing), create=create, readonly=readonly
        )
        how = f"{scheme_name} (given)"
    else:
        ks = open_keyspace(url, create=create, readonly=readonly)
        try:
            scheme, how = _choose(ks, scheme_name, depth, writing)
        except BaseException:
            ks.close()
            raise
        if scheme != ks.scheme:
            ks.close()
            ks = open_keyspace(url, scheme=scheme, create=False, readonly=readonly)
    try:
        yield Opened(ks, how)
    finally:
        ks.close()
