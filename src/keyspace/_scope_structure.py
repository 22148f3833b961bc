"""The structure reads of a scope: its subtree walk and its watch.

Each function takes the scope as its first argument and reads of it only what
:class:`StructureScope` names; the scope's methods ``subtree`` and ``watch`` call
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from ._scan_plan import scheme_keys
from .codecs import Codec, native_type
from .errors import InvalidArgument
from .schemes._base import Path, Scheme
from .schemes._layouts import Layout

if TYPE_CHECKING:
    from ._watch import ScopeWatch

__all__ = ["StructureScope", "decoded_key_codec", "subtree", "watch"]


class StructureScope(Protocol):
    """What the structure reads read of a scope (:class:`~keyspace.scope.Scope`)."""

    path: Path
    prefix: bytes
    scheme: Scheme

    @property
    def _state(self) -> Any: ...
    @property
    def _space(self) -> Any: ...
    @property
    def _view(self) -> Any: ...
    @property
    def _guard(self) -> object: ...
    @property
    def _vdec(self) -> Callable[[Any], Any] | None: ...
    @property
    def _key_spec(self) -> Codec: ...
    @property
    def _layout(self) -> Layout: ...
    @property
    def _compiled(self) -> Layout: ...
    @property
    def _key_of(self) -> Callable[[bytes], Any]: ...
    def _hidden(self) -> bool: ...
    def _on(self, view: Any, state: Any) -> StructureScope: ...


def decoded_key_codec(scheme: Scheme, codec: Codec) -> Callable[[Any], Any] | None:
    """What turns a key as the scheme decodes it into the scope's key type
    (``None``: nothing to do)."""
    if scheme_keys(scheme, native_type(codec)):
        return None
    return codec.decode


def subtree(scope: StructureScope) -> Iterator[tuple[Path, Any, Any]]:
    """The walk of :meth:`~keyspace.scope.Scope.subtree`: ``(path, key, value)`` of
    every key of ``scope`` and the scopes below it, in stored order. Cost: one scan
    of the subtree range; a scope with a read guard reads the committed store in
    one snapshot."""
    view = scope._view
    if scope._guard is not None:
        store = scope._state.store
        if view is store and store.capabilities.snapshots:
            with scope._space.snapshot() as (snap, state):
                yield from subtree(scope._on(snap, state))
            return
        scope._hidden()
    decode_stored = scope._state.decoder(view, scope.path)
    vdec = scope._vdec
    kdec = decoded_key_codec(scope.scheme, scope._key_spec)
    for lo, hi in scope._state.subtree_ranges(view, scope.path):
        for k, v in view.scan(lo, hi):
            path, key = decode_stored(k)
            if kdec is not None:
                key = kdec(key)
            yield path, key, (v if vdec is None else vdec(v))


def watch(scope: StructureScope, subtree: bool, start_revision: int | None) -> ScopeWatch:
    """The stream of :meth:`~keyspace.scope.Scope.watch` for ``scope``: its own keys,
    or with ``subtree`` every key below it, from now or from ``start_revision``.
    Cost: one stream of the store per watch."""
    from ._watch import watch_scope  # asyncio and threads: loaded by the first watch

    if type(subtree) is not bool:
        raise InvalidArgument(f"subtree must be True or False, not {subtree!r}")
    if scope._guard is not None:
        scope._hidden()
    scope._state.record_now()  # every process opening the store later writes the log this watch reads
    scheme, vdec, view, layout = scope.scheme, scope._vdec, scope._view, scope._layout
    kdec = decoded_key_codec(scheme, scope._key_spec)
    committed = scope._space.committed  # events come later: read the committed store then
    decode = scope._state.decoder(view, scope.path, later=committed)
    key_of, prefix, part_prefix = scope._key_of, scope.prefix, layout.prefix
    # the subtree: its ranges, and whose each key is (None: no scope's of it)
    ranges, decode_below = (
        scope._state.subtree_watch(view, scope.path, committed) if subtree else (None, decode)
    )

    def subtree_decode(stored: bytes) -> tuple[Path, Any] | None:
        found = decode_below(stored)
        if found is None:
            return None
        path, key = found
        return path, key if kdec is None else kdec(key)

    is_own: Callable[[bytes], bool] = scheme.is_own_remainder
    if not scheme.separates_own_keys:
        # A leaf's keys and its children's look alike (a branch has no own keys,
        # and a scope of no layout yet may become either): the catalog tells
        # whose each key is when it comes, as subtree() does.
        depth = len(scope.path)

        def is_own_key(rem: bytes) -> bool:
            return len(decode(prefix + rem)[0]) == depth

        is_own = is_own_key

    return watch_scope(
        scope._space.store,
        scope.path,
        own_ranges=scope._state.ranges(scope.path, scope._compiled.ranges)[0],
        own_exact=layout.exact and scheme.separates_own_keys,
        is_own=is_own,
        prefix=prefix,
        key_decode=lambda rem: key_of(part_prefix + rem),
        subtree_ranges=ranges,
        subtree_decode=subtree_decode,
        value=vdec,
        start_revision=start_revision,
    )
