"""Reading a whole store through a scheme, in one pass.

:class:`KeyReader` turns each stored key into ``(path, key)`` or tells that it is
reserved (a scheme record, a scope-name registry entry). It needs no scope objects
and no second scan: the scopehash registry entry of a scope (4 bytes) sorts before
the scope's keys, so names are known by the time their keys arrive.

:func:`walk` yields one item per stored key. :func:`tally` yields the same keys
counted per run: once a key decodes into a scope whose own range holds only its
own keys, the rest of that range in the chunk read is one :class:`Run` (its keys
checked by the scope layout's ``decode_chunk``, C where built; a chunk it refuses
is read key by key), so the keys of a scope cost no Python code each.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from .._metadata import reserved_ranges
from ..errors import DecodeError, KeyspaceError
from ..schemes import Scheme
from ..stores import ReadView
from ..stores._page_bytes import page_bytes

if TYPE_CHECKING:
    from ..keyspace import Keyspace
    from ..schemes._layouts import Layout

__all__ = ["RESERVED", "Entry", "KeyReader", "NeedsMore", "Run", "Skipped", "store_reader", "tally", "walk"]

RESERVED = None
"""What :meth:`KeyReader.read` returns for a key that belongs to no scope."""


class NeedsMore(KeyspaceError):
    """The scheme cannot decode this store's keys without more information."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored key: its scope, its key, and the stored bytes."""

    path: tuple[Any, ...]
    key: Any
    stored: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class Skipped:
    """A stored key outside every scope: reserved (``reason`` None) or one that
    does not decode (``reason`` says why)."""

    stored: bytes
    value: bytes
    reason: str | None


@dataclass(frozen=True, slots=True)
class Run:
    """``keys`` stored keys of scope ``path`` in a row, ``size`` bytes of keys and
    values together."""

    path: tuple[Any, ...]
    keys: int
    size: int


def store_reader(ks: Keyspace, depth: int | None, view: ReadView) -> KeyReader:
    """The :class:`KeyReader` of every key of ``ks``'s store read from ``view``:
    through the layout the store records where it records one (its leaves, of
    any depths; a ``depth`` they contradict raises
    :class:`~keyspace.errors.LayoutError`), else at ``depth``."""
    return KeyReader(
        ks.scheme,
        depth,
        view,
        ks.catalog.store_decoder(view),
        ks.catalog.reserved,
        ks.store.capabilities.key_tag,
    )


class KeyReader:
    """Decodes the stored keys of one store under one scheme.

    ``depth`` is the scope depth for formats that do not record it (a scheme that
    declares :attr:`~Scheme.decode_needs_depth`, LengthPrefixed; Naive, whose
    :attr:`~Scheme.max_decode_depth` is 0, reads everything as the root scope);
    ``decode``, where given, decodes instead (the keyspace's decoder of a store
    that records its layout: :meth:`~keyspace.catalog.Catalog.store_decoder`);
    ``reserved``, where given, the ranges no scope key lies in (the catalog's,
    the store's own keys included), else the scheme's record ranges.
    :meth:`read` costs one ``scheme.decode``; hashed scope names
    (:attr:`~Scheme.hashed_names`, scopehash) are looked up in the registry
    entries seen so far, then with one point read on ``view`` when one is given.
    """

    def __init__(
        self,
        scheme: Scheme,
        depth: int | None = None,
        view: ReadView | None = None,
        decode: Callable[[bytes], tuple[tuple[Any, ...], Any]] | None = None,
        reserved: tuple[tuple[bytes, bytes], ...] | None = None,
        key_tag: int = 0,
    ) -> None:
        self.key_tag = key_tag
        """Bytes in front of each key read that the engine does not store (the
        store's :attr:`~keyspace.stores.Capabilities.key_tag`): left out of the
        sizes :func:`tally` gives."""
        if scheme.decode_needs_depth and depth is None and decode is None:
            raise NeedsMore(
                f"{scheme.name} keys do not record how many path components they hold; "
                "pass --depth N (the scope depth of the stored keys)"
            )
        deepest = scheme.max_decode_depth
        if deepest is not None and depth is not None and not 0 <= depth <= deepest:
            depths = "0" if deepest == 0 else f"0 to {deepest}"
            raise NeedsMore(
                f"{scheme.name} keys do not record where a component ends; only --depth {depths} reads them"
            )
        self.scheme = scheme
        self.depth = depth
        self._view = view
        self._decode = decode
        # where keyspaces keep their records and the store keeps its own keys (the
        # catalog refuses every scope key there): the catalog's, when given
        self._reserved = reserved_ranges(scheme) if reserved is None else reserved
        self._reserved_lows = [lo for lo, _ in self._reserved]
        # schemes that keep a name registry among their keys (scoped-heed) say how to read it
        self._entry = getattr(scheme, "registry_entry", None)
        self._registry_key = getattr(scheme, "registry_key", None)
        self._registry_name = getattr(scheme, "registry_name", None)
        # the hashed names a keyspace registers: the registry key is the hash alone (the prefix)
        self._entry_size = len(scheme.prefix(())) if scheme.hashed_names else None
        hashed = scheme.hashed_names or self._entry is not None
        self._hash_names: dict[int, str] | None = {} if hashed else None
        # runs of keys are counted by range where a decoded path says the whole range
        self.runs = not hashed and scheme.separates_own_keys and not scheme.ambiguous_splits

    def read(self, stored: bytes, value: bytes) -> tuple[tuple[Any, ...], Any] | None:
        """``(path, key)`` of a stored key, or :data:`RESERVED` for the scheme
        record and scopehash registry entries. Raises :class:`DecodeError`."""
        at = bisect_right(self._reserved_lows, stored) - 1
        if at >= 0 and stored < self._reserved[at][1]:
            return RESERVED
        names = self._hash_names
        if names is None:
            decode = self._decode
            return self.scheme.decode(stored, self.depth) if decode is None else decode(stored)
        if self._entry is not None:
            entry = self._entry(stored, value)
            if entry is not None:
                names[entry[0]] = entry[1]
                return RESERVED
        elif len(stored) == self._entry_size:
            scope_hash = int.from_bytes(stored, "little")
            names[scope_hash] = _registered_name(self.scheme, stored, value)
            return RESERVED
        path, key = self.scheme.decode(stored)
        if path:
            path = (self._hash_name(path[0]),)
        return path, key

    def _hash_name(self, scope_hash: int) -> Any:
        names = self._hash_names
        assert names is not None
        name = names.get(scope_hash)
        if name is None and self._view is not None:
            key = (
                scope_hash.to_bytes(self._entry_size or 0, "little")
                if self._registry_key is None
                else self._registry_key(scope_hash)
            )
            raw = self._view.get(key)
            if raw is not None:
                read = self._registry_name
                try:
                    name = names[scope_hash] = (
                        _registered_name(self.scheme, key, raw) if read is None else read(raw, scope_hash)
                    )
                except DecodeError:
                    return scope_hash
        return scope_hash if name is None else name

    def next_reserved(self, stored: bytes) -> bytes | None:
        """Where the first reserved range after ``stored`` begins (``None``: none)."""
        lows = self._reserved_lows
        at = bisect_right(lows, stored)
        return lows[at] if at < len(lows) else None

    def unnamed(self, path: tuple[Any, ...]) -> bool:
        """True for a scopehash path whose name is not in the registry (the path
        holds the int hash instead)."""
        return self._hash_names is not None and bool(path) and isinstance(path[0], int)


def _registered_name(scheme: Scheme, key: bytes, value: bytes) -> str:
    """The name of a hashed-name registry entry (scopehash); :class:`DecodeError`
    unless it is UTF-8 text whose hash (the scheme's prefix of its path) is the
    entry's key (a corrupt entry is never trusted)."""
    try:
        name = value.decode("utf-8")
    except UnicodeDecodeError:
        name = ""
    try:
        own = bool(name) and scheme.prefix((name,)) == key
    except KeyspaceError:
        own = False
    if not own:
        raise DecodeError(
            f"{scheme.name} registry entry {key.hex()} holds {value!r}, which is not a name with that hash "
            "(a corrupt registry: its scopes cannot be told apart)",
            0,
        )
    return name


def walk(view: ReadView, reader: KeyReader) -> Iterator[Entry | Skipped]:
    """Scan the whole store once, in stored order: an :class:`Entry` per scope key,
    a :class:`Skipped` per reserved key or key that does not decode."""
    read = reader.read
    for stored, value in view.scan(b"", None):
        try:
            found = read(stored, value)
        except DecodeError as exc:
            yield Skipped(stored, value, f"not a {reader.scheme.name} key: {exc}")
            continue
        if found is RESERVED:
            yield Skipped(stored, value, None)
        else:
            yield Entry(found[0], found[1], stored, value)


_CHUNK = 256
"""Items read at a time from a streamed page: small enough to stay in the CPU
caches (a page that is a list, at most 1,024 items, is taken whole)."""
_MIN_RUN = 16
"""Fewest keys ahead in the chunk that make a run worth compiling a layout for."""


def tally(
    view: ReadView, reader: KeyReader, layout: Callable[[tuple[Any, ...]], Layout]
) -> Iterator[Run | Skipped]:
    """The keys of :func:`walk`, in the same order and with the same outcome per
    key, as :class:`Run` s of a scope's keys and :class:`Skipped` keys. ``layout``
    gives a path's compiled layout (a keyspace's cache). A key that decodes into a
    scope whose own ranges are exact, followed in the chunk (256 items) by at
    least 16 more keys of its own range (one bisection), starts a run over the
    rest of that range: checked by one ``decode_chunk`` call per chunk, counted and
    sized with no Python code per key. Keys of smaller scopes are read one by one,
    at the cost of one :meth:`Scheme.own_ranges` per scope of two keys or more
    and chunk. Reads the view's pages (``read_pages``) of the whole store, each
    page a chunk as it is (a streamed page in chunks of 256 items)."""
    yield from _tally(_chunks(view.read_pages([(b"", None)])), reader, layout)


def _chunks(pages: Iterable[Iterable[tuple[bytes, bytes]]]) -> Iterator[list[tuple[bytes, bytes]]]:
    """The non-empty pages that are lists as they are (no item copied), the
    others (streamed) read :data:`_CHUNK` items at a time."""
    for page in pages:
        if type(page) is list:
            if page:
                yield page
            continue
        items = iter(page)
        while chunk := list(islice(items, _CHUNK)):
            yield chunk


def _tally(
    chunks: Iterable[list[tuple[bytes, bytes]]],
    reader: KeyReader,
    layout: Callable[[tuple[Any, ...]], Layout],
) -> Iterator[Run | Skipped]:
    read = reader.read
    scheme = reader.scheme
    tag = reader.key_tag
    runs = reader.runs and scheme.own_range_is_exact()
    path: tuple[Any, ...] = ()
    decode: Callable[[list[tuple[bytes, bytes]]], object] | None = None  # set while a run lasts
    stop: bytes | None = None
    known: tuple[bytes, bytes | None] | None = None  # the own range of the last scope decoded
    last: tuple[Any, ...] | None = None  # the path of the last key read on its own
    for chunk in chunks:
        at, end = 0, len(chunk)
        short = False  # the known range has fewer than _MIN_RUN keys left in this chunk
        while at < end:
            if decode is not None:
                upto = end if stop is None else bisect_left(chunk, (stop,), at)
                if upto > at:
                    part = chunk if upto - at == end else chunk[at:upto]
                    try:
                        decode(part)
                    except DecodeError:  # some key does not decode: read them one by one
                        yield from _singles(part, reader)
                    else:
                        yield Run(path, len(part), page_bytes(part) - tag * len(part))
                    at = upto
                if at < end:
                    decode = None
                continue
            stored, value = chunk[at]
            at += 1
            found = _single(stored, value, reader, read)
            yield found
            if not runs or not isinstance(found, Run):
                continue
            if known is not None and known[0] <= stored and (known[1] is None or stored < known[1]):
                if short:
                    continue
            else:
                last, previous = found.path, last
                if last != previous:  # the first key of a scope: the next may be another's
                    continue
                known = _own_range(scheme, found.path, stored, reader.next_reserved(stored))
                short = False
                if known is None:
                    continue
            hi = known[1]
            upto = end if hi is None else bisect_left(chunk, (hi,), at)
            if upto - at < _MIN_RUN:
                short = True
                continue
            try:
                decode = layout(found.path).decode_chunk
            except KeyspaceError:  # a path the scheme decodes but cannot compile: key by key
                known = None
                continue
            path, stop = found.path, hi


def _own_range(
    scheme: Scheme, path: tuple[Any, ...], stored: bytes, reserved: bytes | None
) -> tuple[bytes, bytes | None] | None:
    """The own range of ``path`` that holds ``stored``, cut where the next reserved
    range (``reserved``, after ``stored``) begins inside it; ``None`` when the
    scheme cannot say."""
    try:
        ranges = scheme.own_ranges(path)
    except KeyspaceError:
        return None
    for lo, hi in ranges:
        if lo <= stored and (hi is None or stored < hi):
            if reserved is not None and (hi is None or reserved < hi):
                hi = reserved
            return lo, hi
    return None


def _single(
    stored: bytes,
    value: bytes,
    reader: KeyReader,
    read: Callable[[bytes, bytes], tuple[tuple[Any, ...], Any] | None],
) -> Run | Skipped:
    try:
        found = read(stored, value)
    except DecodeError as exc:
        return Skipped(stored, value, f"not a {reader.scheme.name} key: {exc}")
    if found is RESERVED:
        return Skipped(stored, value, None)
    return Run(found[0], 1, len(stored) - reader.key_tag + len(value))


def _singles(part: list[tuple[bytes, bytes]], reader: KeyReader) -> Iterator[Run | Skipped]:
    read = reader.read
    for stored, value in part:
        yield _single(stored, value, reader, read)
