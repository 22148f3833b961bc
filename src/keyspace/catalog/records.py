"""The scheme record and the reserved ranges: which keyspace a store holds, and
where no scope key may be.

A keyspace that has not seen its record reads and writes it inside the atomic
batch of its first write (:meth:`SchemeRecords._claim_record`), together with
the records of the keyspaces whose footprint could overlap its own
(raw-prefixed tuple keyspaces, listed in the footprint registry), so two
keyspaces racing on a fresh store, or one opened before the other wrote, never
mix their keys. A scope's own ranges leave out the ranges where the keyspace
keeps its records (:meth:`SchemeRecords.ranges`), and a key stored there is
refused (:meth:`SchemeRecords.refusing`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from .. import _metadata
from .._accounting import accounting_of, refuse_written_without
from ..errors import ReservedKey, SchemeMismatch, show_bytes
from ..schemes._base import Key, Path, Scheme, exact_path, remember
from ..stores._base import ReadView, WriteView
from .state import CatalogState, _first, _Range, _Reserved

_RANGES_MEMO = 4096
"""Paths whose own and reserved ranges a catalog keeps (oldest dropped first)."""


class SchemeRecords(CatalogState):
    """The scheme record, the footprints of the other keyspaces, and the reserved
    ranges of one keyspace (module docstring)."""

    def own_ranges(self, path: Path) -> tuple[_Range, ...]:
        """The ranges a scope at ``path`` reads as its own keys: the scheme's, less
        the :attr:`reserved` ranges where they lie inside them (the root of a scheme
        whose root keys are any bytes: LengthPrefixed, Sublevel, Naive)."""
        return self.ranges(path)[0]

    def reserved_in(self, path: Path) -> _Reserved:
        """The :attr:`reserved` ranges that meet the scheme's own ranges of ``path``:
        a key of that scope whose stored key lies in one of them is refused
        (:meth:`refusing`). Empty for almost every scope (nothing to check)."""
        return self.ranges(path)[1]

    def ranges(
        self, path: Path, own: tuple[_Range, ...] | None = None
    ) -> tuple[tuple[_Range, ...], _Reserved]:
        """``(own ranges less the reserved ones, reserved ranges that met them)`` of
        ``path`` (``own``: the scheme's own ranges of it, when known). Cost: one
        dictionary lookup for a path seen before (str and bytes paths are kept:
        in the tuple scheme ``(1,)`` and ``(True,)`` are equal keys but other paths)."""
        memo = self._ranges
        try:
            got = memo.get(path)
        except MemoryError:
            raise
        except Exception:  # unhashable, or a component's __hash__/__eq__ raises: none kept
            got = None
        if got is not None and exact_path(path):  # not an equal path of other types
            return got
        if own is None:
            own = self.scheme.own_ranges(path)
        got = _less_reserved(own, self.reserved)
        if exact_path(path):
            remember(memo, path, got, _RANGES_MEMO)  # safe when threads fill it at once
        return got

    def refusing(
        self, path: Path, stored: Callable[[Any], bytes], reserved: _Reserved
    ) -> Callable[[Any], bytes]:
        """``stored`` (a scope's key -> stored key) that raises :class:`ReservedKey`
        for a key whose stored key lies in one of ``reserved`` (from
        :meth:`reserved_in`), before anything is read or written. A C transform
        checks in C (``with_reserved``); any other function is wrapped. Cost: one
        comparison per reserved range (the scopes that meet none do not call it)."""
        refuse = self._refuse

        def refused(key: Any, out: bytes, lo: bytes, hi: bytes) -> None:
            refuse(path, key, out, lo, hi)

        with_reserved = getattr(stored, "with_reserved", None)
        if with_reserved is not None:
            return with_reserved(reserved, refused)  # type: ignore[no-any-return]

        def checked(key: Any) -> bytes:
            out = stored(key)
            for lo, hi in reserved:
                if lo <= out < hi:
                    refuse(path, key, out, lo, hi)
            return out

        return checked

    def _refuse(self, path: Path, key: Key, stored: bytes, lo: bytes, hi: bytes) -> NoReturn:
        raise ReservedKey(
            f"key {show_bytes(key)} of scope {show_bytes(path)} would be stored as {show_bytes(stored)}, in "
            "the range "
            f"[{show_bytes(lo)}, {show_bytes(hi)}) that {self.url} reserves for the records keeping its "
            "keyspaces apart, or for the store's own use (etcd's revision probe key); a key of this "
            "scope may be stored anywhere but there"
        )

    def _check_records(self, view: ReadView) -> Scheme | None:
        """This keyspace's record in ``view`` (``None``: there is none). Raises
        :class:`SchemeMismatch` when it names another scheme or when another
        keyspace whose keys would overlap this one's is recorded."""
        scheme = self.scheme
        found = _metadata.read(view, scheme, self.url)
        if found is not None:
            _metadata.check(found, scheme, self.url)
        other = _metadata.overlapping(view, scheme, self.url)
        if other is not None:
            raise SchemeMismatch(
                f"the store at {self.url!r} holds the keyspace {show_bytes(other)}, whose keys would overlap "
                f"those of {scheme!r}; refusing to change it"
            )
        if found is None and _metadata.directories_overlap(view, scheme):
            raise SchemeMismatch(
                f"the store at {self.url!r} holds directories whose nodes or prefixes would overlap the keys "
                f"of {scheme!r}; refusing to change it"
            )
        return found

    def _claim_record(self, view: WriteView) -> None:
        """Inside the write: read the records this keyspace depends on (a compare on
        etcd) and write its own when there is none."""
        if self._check_records(view) is None:
            if self.found_empty and self.scheme.metadata_key is not None:
                self._refuse_unrecorded_keys(view)
            _metadata.write(view, self.scheme)
        else:  # a keyspace wrote the record: one without accounting, where none is recorded
            refuse_written_without(view, accounting_of(self.store), self.scheme, self.url)
        _metadata.refuse_features_off(view, self.store, self.scheme, self.url)
        self.mark_recorded()

    def _features_kept(self, view: ReadView) -> bool:
        """Whether this keyspace runs every feature ``view`` records (a keyspace
        opened before another turned one on does not). Cost: a point read, made
        only until the keyspace has seen its record."""
        return not _metadata.features_recorded_but_off(view, self.store, self.scheme, self.url)

    def _refuse_unrecorded_keys(self, view: ReadView) -> None:
        """Inside the first write of a keyspace that found the store empty and
        keeps a record: :class:`SchemeMismatch` when the store now holds keys that
        no record accounts for (outside the records and the footprints of the
        keyspaces recorded): a program writing a scheme that keeps no record, such
        as Sublevel, wrote first, and its scopes would take this keyspace's keys
        for their own. Cost: the reads of the records and one short scan per gap
        between the recorded footprints."""
        spans = [*_metadata.recorded_footprints(view, self.url), *self.reserved]
        for lo, hi in _gaps(spans):
            found = _first(view, lo, hi)
            if found is not None:
                raise SchemeMismatch(
                    f"the store at {self.url!r} was empty when this keyspace opened it and now holds "
                    f"keys with no scheme record ({show_bytes(found[0])} …), written by another program "
                    f"or keyspace meanwhile; refusing to mix {self.scheme!r} keys with them"
                )

    def _records_hold(self, view: ReadView) -> None:
        """The records check of :class:`WatchedReads`: ``view`` is the committed
        store in one state; finding this keyspace's own record there settles it."""
        if self._check_records(view) is not None and self._features_kept(view):
            self.mark_recorded()


def _less_reserved(
    ranges: tuple[_Range, ...], reserved: tuple[tuple[bytes, bytes], ...]
) -> tuple[tuple[_Range, ...], tuple[tuple[bytes, bytes], ...]]:
    """``ranges`` (ascending, disjoint) less ``reserved`` (ascending, disjoint, each
    with an end), and the reserved ranges that met them."""
    out: list[_Range] = []
    met: list[tuple[bytes, bytes]] = []
    for lo, hi in ranges:
        for r_lo, r_hi in reserved:
            if hi is not None and lo >= hi:
                break
            if r_hi <= lo or (hi is not None and r_lo >= hi):
                continue  # apart
            if (r_lo, r_hi) not in met:
                met.append((r_lo, r_hi))
            if lo < r_lo:
                out.append((lo, r_lo))
            lo = r_hi
        if hi is None or lo < hi:
            out.append((lo, hi))
    return tuple(out), tuple(met)


def _reserved_end(reserved: tuple[tuple[bytes, bytes], ...], key: bytes) -> bytes | None:
    """The end of the reserved range holding ``key``, ``None`` when none does."""
    for lo, hi in reserved:
        if lo <= key and (hi is None or key < hi):
            return hi
    return None


def _gaps(spans: list[tuple[bytes, bytes | None]]) -> list[tuple[bytes, bytes | None]]:
    """The byte ranges that none of ``spans`` (half-open, any order, overlapping or
    not; ``None``: to the end) covers, ascending.

    >>> _gaps([(b"b", b"c"), (b"a", b"b"), (b"x", None)])
    [(b'', b'a'), (b'c', b'x')]
    """
    gaps: list[tuple[bytes, bytes | None]] = []
    at = b""
    for lo, hi in sorted(spans, key=lambda span: span[0]):
        if lo > at:
            gaps.append((at, lo))
        if hi is None:
            return gaps
        at = max(at, hi)
    gaps.append((at, None))
    return gaps
