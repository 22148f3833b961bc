"""The core of a scope: what sets the fields its point operations read.

:class:`ScopeCore` sets a scope's path, layout, key and value routes and codecs
(once, when the scope is made) and what binds it to a view of the store (the
engine callables, the read guard, the one-frame routes of the point operations:
again for each view, :meth:`ScopeCore._bind`). The fields themselves and the
point operations are :class:`~keyspace._scope_fields.ScopeFields`: the C type
``keyspace._scope_accel.ScopeFields`` (declared members, C methods) where it is
built, else its pure-Python twin; :class:`~keyspace.scope.Scope`, the mapping,
adds no field. The core also gives the point operations their hooks (the
guarded point read, the write routing: the first write through the catalog, the
bound put) and the scan plan its inputs (:mod:`keyspace._scan_plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

from ._bulk_writes import encode_value as _encode_value
from ._bulk_writes import not_bytes as _not_bytes
from ._bulk_writes import write_all as _write_all
from ._other_type import KeyOfOtherType
from ._other_type import other_type as _other_type
from ._scan_plan import Chunk as _Chunk
from ._scan_plan import Range as _Range
from ._scan_plan import chunks as _chunks
from ._scan_plan import scheme_keys as _scheme_keys
from ._scan_plan import stored_ranges as _stored_ranges
from ._scope_fields import NO_ROUTE, Route
from .catalog import SETTLED
from .codecs import Codec, native_type
from .errors import KeyspaceError, StoreError, show_bytes
from .schemes._base import Path, Scheme
from .schemes._layouts import Layout
from .stores._base import ReadView, WriteView

if TYPE_CHECKING:
    from ._scope_fields import ScopeFields
    from ._space import Space
    from .catalog import Catalog
else:
    try:  # the C twin of the fields (setup.py builds it when it can)
        from ._scope_accel import ScopeFields
    except ImportError:  # pragma: no cover - the pure-Python twin then holds them
        from ._scope_fields import ScopeFields

__all__ = ["NO_ROUTE", "Route", "ScopeCore"]


_second = itemgetter(1)


_Owner = TypeVar("_Owner")


class ScopeCore(ScopeFields, Generic[_Owner]):
    """What sets the fields of a scope and binds them to a view (module
    docstring), for a space owned by an ``_Owner`` (a keyspace). Not made alone:
    :class:`~keyspace.scope.Scope` is the class of every scope."""

    __slots__ = ()  # the fields are ScopeFields'

    def __init__(
        self,
        space: Space[_Owner],
        view: ReadView,
        state: Catalog,
        path: Path,
        key: Codec,
        value: Codec,
    ) -> None:
        layout: Layout = space.layouts.get(path)
        scheme = cast(Scheme, layout.scheme)  # a layout knows its scheme by a protocol
        self._space = space
        self._compiled = layout
        self.path = path
        self.scheme = scheme
        self.prefix = layout.prefix
        self._ranges, self._reserved = state.ranges(path, layout.ranges)
        # the data path (point operations, scans, counts, range deletes) runs on the
        # part of the view that holds every key under the prefix (a PrefixUnion's
        # database), with the layout compiled for the keys as that part stores them;
        # the catalog (guard, first write, children, subtree) keeps the whole view.
        # Not where records are reserved among the scope's keys: their refusal
        # compares the whole view's keys.
        narrowed = self._narrowed(view)
        data, self._cut = (view, 0) if narrowed is None else narrowed
        if self._cut:
            layout = layout.rebased(self._cut)
            self._ranges = layout.ranges
        self._layout = layout
        self._key_spec = key
        self._value_spec = value
        native_key = native_type(key)
        if native_key is bytes:  # the scheme's own keys: the layout's functions as they are
            self._stored, self._key_of, self._chunk = layout.stored, layout.key_of, layout.decode_chunk
        else:
            native = _scheme_keys(scheme, native_key)
            self._stored, self._key_of, self._chunk = layout.route(key, native, native_key is str)
        # scan bounds are clipped to the own ranges; keys are refused where they would
        # be stored among the keyspace's records (a scope whose ranges meet them)
        self._bound = self._stored
        if self._reserved:
            self._stored = state.refusing(path, self._stored, self._reserved)
        raw_values = native_type(value) is bytes
        if raw_values:
            self._venc = self._vdec = None
        else:
            self._venc, self._vdec = value.encode, value.decode
        # the one-frame route of the Python point operations: the layout's key
        # transform as one replace, applied inline to bytes keys where _stored is
        # the layout's own and values are bytes (None: the general route)
        self._escape = layout.escape if self._stored is layout.stored and raw_values else None
        self._bind(view, state, data)

    def _narrowed(self, view: ReadView) -> tuple[ReadView, int] | None:
        """``view.narrow`` of this scope's prefix (see ``ReadView.narrow``): ``None``
        where the scope meets reserved ranges (their refusal compares the whole
        view's keys) or the view narrows nothing (views outside ReadView included)."""
        narrow = None if self._reserved else getattr(view, "narrow", None)
        return None if narrow is None else narrow(self.prefix)

    def _bind(self, view: ReadView, state: Catalog, data: ReadView) -> None:
        """Set what this scope reads and writes through: ``view`` (the store, a
        snapshot or a transaction), the catalog ``state`` of its reads and writes,
        and ``data``, the part of ``view`` that holds its keys (``view`` itself
        unless it narrows): the engine callables, the read guard and the routes of
        the point operations. The layout, key routes and codecs set before are
        the view's to keep."""
        self._view = view
        self._state = state
        self._data = data = state.data_view(self.path, view, data, self.prefix[: self._cut])
        self._get = data.get
        self._put: Callable[[bytes, bytes], object] | None = None
        # the catalog's check before each read of own keys (ScopeHash names,
        # LengthPrefixed, Naive); None where reads need none
        self._guard = state.guard(self.path)
        # the one-frame routes themselves: (engine call, *escape, bytes) once no read
        # guard is left to run (reads) and once the put is bound (writes); until then
        # NO_ROUTE, whose exact type no key has
        self._read_route = self._route(self._get) if self._guard is None else NO_ROUTE
        self._write_route = NO_ROUTE
        # a put that checks the catalog's fact inside its own write (a directory's
        # node) takes []=, while _put stays unbound: every other write still takes
        # the catalog's first write. The route holds it also where no key takes the
        # route (no escape): _set reads it there
        checked = state.checked_put(data)
        if checked is not None:
            route = self._route(checked)
            self._write_route = (checked, *route[1:]) if route is NO_ROUTE else route

    def _on(self, view: ReadView, state: Catalog) -> Self:
        """This scope (path, codecs) on ``view``, another view of the same store (a
        snapshot, a transaction, the store), with the catalog state ``state`` of
        that view: what reads the view is bound anew (:meth:`_bind`); the layout,
        key routes and codecs are this scope's, where ``view`` holds the keys as
        this scope's view does (neither narrows to a part: every store but a
        union's). Cost: a copy of the fields and the binding, against a whole
        construction of the scope otherwise."""
        narrowed = self._narrowed(view)
        if narrowed is not None or self._cut:
            return type(self)(self._space, view, state, self.path, self._key_spec, self._value_spec)
        made = self._copy()
        made._bind(view, state, view)
        return made

    def _template_for(self, view: ReadView, state: Catalog) -> bool:
        """Whether this scope, made by :meth:`_on` on ``view`` with ``state``,
        can be :meth:`_rebound` to another view of ``view``'s type with the same
        state: what :meth:`_bind` set from ``view`` is the view itself and its
        point read (no part narrowed to, no other data view, no read guard, no
        checked put, no write bound yet), so that the binding of another such
        view differs in those fields alone. Not the store itself (its data view
        may be the catalog's)."""
        return (
            view is not state.store
            and self._cut == 0
            and self._view is view
            and self._data is view
            and self._state is state
            and self._guard is None
            and self._put is None
            and self._write_route is NO_ROUTE
        )

    def _unbound(self) -> Self:
        """A copy of this scope bound to no view: its view, data view and point
        read ``None``, its read route :data:`NO_ROUTE` (what
        ``Keyspace._scope_on`` keeps to :meth:`_rebound`: it holds no view that
        has ended)."""
        made = self._copy()
        made._view = made._data = made._get = None  # type: ignore[assignment]
        made._read_route = NO_ROUTE
        return made

    def _hidden(self) -> bool:
        """The catalog's check before a read of own keys (:meth:`Catalog.guard`):
        raises for a scope that may not be read (a ScopeHash name whose hash
        another name holds); True when the scope has no own keys (a branch in a
        scheme that cannot tell own keys from children's: the bytes under its
        prefix are its children's, never read, count or delete them; or nothing
        is stored at its path yet, so that a read never returns the keys of a
        scope another writer makes meanwhile under the same prefix)."""
        guard = self._guard
        if guard is None:
            return False
        seen = guard(self._view)
        if seen is SETTLED:  # readable for good: later reads call nothing
            self._guard = None
            self._read_route = self._route(self._get)
            return False
        return not seen

    @property
    def _unsettled(self) -> Path | None:
        """This scope's path while its read guard has not settled (a delete then
        asks the catalog to check it again inside the delete's batch), else
        ``None``."""
        return None if self._guard is None else self.path

    def _touch(self) -> None:
        """One point read of the view, its answer unused, so that a read asking
        for no key of the store (a limit of 0, an empty range) raises on a closed
        store or an ended snapshot as every read does. Cost: one point read."""
        self._get(self._layout.prefix or b"\x00")

    def _read(self, stored: bytes) -> bytes | None:
        if self._guard is not None and self._hidden():
            return None
        return self._get(stored)

    def _missing(self, key: Any) -> KeyError:
        """The :class:`KeyError` of a miss on ``key``. A ``bytes`` key whose UTF-8
        text is a ``str`` key of this scope (or the reverse) is another key in a
        scheme whose keys keep their type (tuple): the error names the key that
        exists. Cost, on the miss path only: one more point read."""
        other = _other_type(key)
        if other is not None:
            try:
                found = self._read(self._stored(other)) is not None
            except KeyspaceError:  # the scope's codec takes no key of the other type
                found = False
            if found:
                return KeyOfOtherType(key, other)
        return KeyError(key)

    def _stored_value(self, value: Any) -> bytes:
        """The stored bytes of ``value``: the value codec's encoding, or, with no
        codec, the bytes themselves (:func:`_not_bytes` refuses anything else).
        :meth:`_set` does the same inline, on the hot path."""
        venc = self._venc
        if venc is not None:
            return _encode_value(venc, value)
        return value if type(value) is bytes else _not_bytes(value)

    def _writer(self) -> WriteView:
        view = self._view
        if not isinstance(view, WriteView) or not isinstance(self._data, WriteView):
            raise StoreError(
                f"scope {show_bytes(self.path)} is read-only here (a snapshot view): write through the "
                "keyspace or a transaction"
            )
        return view

    def _part(self, view: WriteView) -> WriteView:
        """Where this scope's stored keys go in ``view`` (a write view of the whole
        keyspace store, this scope's or one the catalog opened): the part it
        narrows to (see ``ReadView.narrow``), else ``view`` itself."""
        if not self._cut:
            return view
        if view is self._view:
            return self._data  # type: ignore[return-value]  # writable where the view is
        got = self._narrowed(view)
        if got is None or got[1] != self._cut:
            raise KeyspaceError(
                f"scope {show_bytes(self.path)}: {view!r} does not hold its keys as {self._view!r}"
            )
        return got[0]  # type: ignore[return-value]  # writable where the view is

    def _whole_ops(self, ops: Sequence[tuple[bytes, bytes | None]]) -> Sequence[tuple[bytes, bytes | None]]:
        """``ops`` with their keys as the whole keyspace store holds them, for the
        catalog's checks: ``ops`` themselves where the scope's part is the whole
        store."""
        if not self._cut:
            return ops
        tag = self.prefix[: self._cut]
        return [(tag + k, v) for k, v in ops]

    def _first_write(self, ops: Sequence[tuple[bytes, bytes | None]], puts: bool = False) -> bool:
        """Before this scope's first write of ``ops`` (``puts``: the caller knows
        every op is a put): unless the catalog says the path is ready, run the
        write as the catalog's first write (the scheme accepts the path, the
        layout rule, the hash registry, the scheme record, checked and recorded
        in one atomic batch with ``ops``). True when ``ops`` were written here.
        Binds the view's put for the writes that follow, unless the catalog
        still says the path is not ready (it checks every write of it: a
        scoped-heed name outside a transaction)."""
        state = self._state
        view = self._writer()
        if state.write_ready(self.path):
            self._bind_put()
            return False
        puts = puts or None not in map(_second, ops)
        whole = self._whole_ops(ops)
        state.check_storable(whole if puts else [op for op in whole if op[1] is not None])
        k, v = ops[0]
        part = self._part
        if len(ops) == 1 and v is not None:
            state.first_write(view, self.path, lambda w: part(w).put(k, v), whole)
        else:
            state.first_write(view, self.path, lambda w: _write_all(part(w), ops, puts), whole)
        if state.write_ready(self.path):
            self._bind_put()
        return True

    def _bind_put(self) -> Callable[[bytes, bytes], object]:
        """Bind the view's put and return it."""
        put = self._put = self._part(self._writer()).put
        self._write_route = self._route(put)
        return put

    def _plan(
        self,
    ) -> tuple[
        Layout,
        tuple[_Range, ...],
        Callable[[Any], bytes],
        Scheme,
        Codec,
        object,
        Callable[[], bool],
        ReadView,
        Callable[[list[tuple[bytes, bytes]]], _Chunk],
        Callable[[], None],
    ]:
        """This scope's inputs of its scan plan (:mod:`keyspace._scan_plan`), in
        their order there."""
        return (
            self._layout,
            self._ranges,
            self._bound,
            self.scheme,
            self._key_spec,
            self._guard,
            self._hidden,
            self._data,
            self._chunk,
            self._touch,
        )

    def _stored_ranges(self, *args: Any) -> list[_Range]:
        """:func:`~keyspace._scan_plan.stored_ranges` of this scope for ``(start,
        stop, include_start, include_stop, prefix)``."""
        return _stored_ranges(*self._plan()[:8], *args)

    def _chunks(self, *args: Any, **kwargs: Any) -> Generator[_Chunk, None, None]:
        """:func:`~keyspace._scan_plan.chunks` of this scope."""
        return _chunks(*self._plan(), *args, **kwargs)
