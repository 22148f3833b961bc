"""Structure reads: the children of a scope, the ranges of its subtree, and the
decoders from a stored key back to ``(path, key)``.

Each reads through the facts below it (the layout, the name registry, the
reserved ranges), so that it never lists a record as a scope or a key of one
scope as another's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._bytes import prefix_end
from .._metadata import LAYOUT_START, LAYOUT_STOP
from ..errors import DecodeError, LayoutError, show_bytes
from ..schemes._base import Key, Path
from ..stores._base import ReadView, keys_in
from .guards import ReadGuards
from .leaves import _LEAF, _layout_key, _split_lp
from .records import _less_reserved, _reserved_end


class StructureReads(ReadGuards):
    """The structure reads of one keyspace (module docstring)."""

    def children(self, view: ReadView, path: Path) -> list[Any]:
        """Direct children of ``path`` holding data: a skip scan on one seeker of
        ``view`` (one cursor and one read transaction where the engine has them),
        one seek per child and per own range."""
        self._structure_check(view)
        scheme = self.scheme
        lo, hi = scheme.subtree_range(path)
        if (self._hashed and path) or (self._layered and self._status(view, path) == _LEAF):
            # no children by the layout alone; the store is still read, so that a
            # closed one raises StoreClosed here as on every other read
            next(keys_in(view, lo, hi, limit=1), None)
            return []
        if self._hashed:
            return self._hash_children(view)
        own = scheme.own_ranges(path) if scheme.separates_own_keys else ()
        exact = scheme.own_range_is_exact()
        plen = len(scheme.prefix(path))
        step, is_own = scheme.child_step(path), scheme.is_own_remainder
        reserved = _less_reserved(((lo, hi),), self.reserved)[1]  # almost always none
        # past the last own range (the tuple scheme's lies before every child) a
        # key is never an own key
        own_stop = max((b"" if hi is None else hi for _, hi in own), default=b"") if own else b""
        open_end = any(hi is None for _, hi in own)
        out: list[Any] = []
        cursor: bytes | None = lo
        with view.seeker(hi) as seeker:
            seek = seeker.seek
            while cursor is not None:
                k = seek(cursor)
                if k is None:
                    break
                if reserved:
                    skip = _reserved_end(reserved, k)
                    if skip is not None:  # the keyspace's records, never a child
                        cursor = skip
                        continue
                if own and (open_end or k < own_stop):
                    if exact:  # an own range holds own keys only: past its end
                        found, own_end = _own_end(own, k)
                        if found:
                            cursor = own_end
                            continue
                    elif is_own(k[plen:]) and _own_end(own, k)[0]:  # the key itself, checked first
                        cursor = k + b"\x00"
                        continue
                got = step(k)
                if got is None:  # not a key of a child: the next key
                    cursor = k + b"\x00"
                    continue
                child, nxt = got
                out.append(child)
                cursor = nxt if nxt is not None and nxt > k else (None if nxt is None else k + b"\x00")
        return out

    def _hash_children(self, view: ReadView) -> list[str]:
        scheme = self.scheme
        names = [name for _, name in self._hash_registry(view)]
        out: list[str] = []
        with view.seeker() as seeker:
            for name in names:
                lo, hi = scheme.own_range((name,))
                k = seeker.seek(lo)
                if k is not None and (hi is None or k < hi):
                    out.append(name)
        return out

    def subtree_ranges(self, view: ReadView, path: Path) -> list[tuple[bytes, bytes | None]]:
        """The ranges holding ``path`` and every scope below it, in ascending order.
        One range, except for the root of hashed names (ScopeHash), whose named scopes lie beside it
        in hash order: their ranges come from the (checked) registry."""
        self._structure_check(view)
        scheme = self.scheme
        if self._hashed and not path:
            ranges = [scheme.own_range(())] + [scheme.own_range((n,)) for _, n in self._hash_registry(view)]
            return sorted(ranges)
        if self._layered:
            self._status(view, path)  # LayoutError below a leaf, or when nothing is known
        lo, hi = scheme.subtree_range(path)
        return list(_less_reserved(((lo, hi),), self.reserved)[0])

    def subtree_watch(
        self, view: ReadView, path: Path, later: ReadView
    ) -> tuple[list[tuple[bytes, bytes | None]], Callable[[bytes], tuple[Path, Key] | None]]:
        """The ranges a watch of ``path`` and every scope below it asks the store for,
        and the decoder of their keys (``None``: a key outside the subtree), names
        read from ``later`` (the store: a watch sees committed writes). As
        :meth:`subtree_ranges` and :meth:`decoder`, except at the root of hashed
        names (ScopeHash): its named scopes lie beside it, each in the block of its
        hash, and a name registered after the watch starts has a block no range
        known then covers; the watch takes the whole store, and its decoder passes
        over the keyspace's records (registry entries, the scheme record: shorter
        than a scope's key) and the keys of blocks no name holds."""
        decode = self.decoder(view, path, later)
        if not (self._hashed and not path):
            return self.subtree_ranges(view, path), decode
        size = self._entry_size
        shortest = len(self.scheme.encode((), b""))  # a scope key: hash, length, key
        default_key = self.scheme.prefix(())

        def decode_named(stored: bytes) -> tuple[Path, Key] | None:
            if len(stored) < shortest:
                return None
            block = stored[:size]
            if block != default_key and self._registered(block) is None and later.get(block) is None:
                return None
            return decode(stored)

        return [(b"", None)], decode_named

    def decoder(
        self, view: ReadView, path: Path, later: ReadView | None = None
    ) -> Callable[[bytes], tuple[Path, Key]]:
        """A function from a stored key below ``path`` to ``(path, key)``. In a
        scheme that records its leaves, a key below no leaf known to it reads the
        recorded leaves once more, from ``later`` (default: ``view``), before it
        raises :class:`LayoutError`: a long-lived decoder (a watch's) meets keys of
        leaves made since."""
        scheme = self.scheme
        if self._hashed:
            return self._hash_decoder(view if later is None else later)
        if scheme.separates_own_keys:
            return scheme.decode
        depth = self.leaf_depth
        if depth is not None:
            return lambda stored: scheme.decode(stored, depth)
        same = self._same(path)
        self._status(view, path)  # LayoutError when nothing is known

        def leaf_prefixes(view: ReadView) -> list[tuple[Path, bytes]]:
            if self._persist:  # every recorded leaf below path
                start = _layout_key(same)
                for key, _ in view.scan(start, prefix_end(start)):
                    self.layout[_split_lp(key[len(LAYOUT_START) :])] = _LEAF
            leaves = sorted(
                (p for p in self._all_layout() if self._layout_of(p) == _LEAF and p[: len(path)] == same),
                key=len,
                reverse=True,
            )
            return [(leaf, scheme.prefix(leaf)) for leaf in leaves]

        prefixes = leaf_prefixes(view)

        def decode(stored: bytes) -> tuple[Path, Key]:
            nonlocal prefixes
            for again in (False, True):
                if again:  # a leaf recorded since the decoder was made (a watch's)
                    if not self._persist:
                        break
                    prefixes = leaf_prefixes(view if later is None else later)
                for leaf, prefix in prefixes:
                    if stored.startswith(prefix):
                        return leaf, scheme.decode_key(stored[len(prefix) :])
            raise LayoutError(
                f"cannot tell which scope the stored key {show_bytes(stored)} belongs to: "
                f"{scheme.name} keys do not record their depth; open the leaf scope that holds it"
            )

        return decode

    def store_decoder(self, view: ReadView) -> Callable[[bytes], tuple[Path, Key]] | None:
        """How a reader of the whole store (the command line's ``inspect`` and
        ``migrate``) decodes a stored key where the scheme does not record a
        key's depth but the store records its layout (a LengthPrefixed keyspace's
        leaves, of any depths): by the recorded leaves (:meth:`decoder`; a key
        under none raises :class:`DecodeError`). ``None`` where nothing is
        recorded, or a declared ``leaf_depth`` that every recorded leaf has: the
        reader decodes at its depth. A declared depth the records contradict
        raises :class:`LayoutError`, as a scope of such a path does. Cost: one
        scan of the layout records."""
        if not (self._layered and self.scheme.records_layout):
            return None
        leaves = [_split_lp(key[len(LAYOUT_START) :]) for key, _ in view.scan(LAYOUT_START, LAYOUT_STOP)]
        if not leaves:
            return None
        depth = self.leaf_depth
        if depth is not None:
            other = next((leaf for leaf in leaves if len(leaf) != depth), None)
            if other is None:
                return None
            raise LayoutError(
                f"the store records scope {show_bytes(other)} as holding keys, at depth {len(other)}: the "
                f"declared leaf depth {depth} does not match the layout recorded in the store (give no "
                "depth: the recorded layout is read)"
            )
        decode = self.decoder(view, ())

        def checked(stored: bytes) -> tuple[Path, Key]:
            try:
                return decode(stored)
            except LayoutError:
                raise DecodeError(
                    f"{show_bytes(stored)} lies under no scope the store records as holding keys", 0
                ) from None

        return checked

    def _hash_decoder(self, view: ReadView) -> Callable[[bytes], tuple[Path, Key]]:
        scheme = self.scheme
        default_key = scheme.prefix(())

        def decode(stored: bytes) -> tuple[Path, Key]:
            _, key = scheme.decode(stored)
            block = stored[: self._entry_size]
            if block == default_key:
                return (), key
            name = self._registered(block)
            if name is None:
                raw = view.get(block)
                if raw is None:
                    raise DecodeError(f"no registered scope name for hash {show_bytes(block)}", 0)
                name = self._registry_name(block, raw)
            return (name,), key

        return decode


def _own_end(own: tuple[tuple[bytes, bytes | None], ...], key: bytes) -> tuple[bool, bytes | None]:
    """Whether an own range holds ``key``, and that range's end."""
    for lo, hi in own:
        if lo <= key and (hi is None or key < hi):
            return True, hi
    return False, None
