"""Scope: the dict-like view of one namespace, where a path, a scheme and a store meet.

A :class:`Scope` is a :class:`~collections.abc.MutableMapping` over exactly the
scope's own keys — never a child scope's — in stored-key order (which is key order
for every scheme that declares property 3). Child scopes are reached with
:meth:`Scope.scope`; :meth:`Scope.scopes` lists the children that hold data,
:meth:`Scope.clear` removes own keys, :meth:`Scope.drop` removes the scope and
everything below it, :meth:`Scope.subtree` walks ``(path, key, value)`` below it.

A scope runs on its path's :class:`~keyspace.schemes._layouts.Layout`, compiled
once per path by the scheme and kept in the keyspace's
:class:`~keyspace._space.Space`, so making a scope of a known path costs a
dictionary lookup and writes nothing. A scope holds that space (store, catalog,
layouts), never the keyspace: every safety fact it consults is the catalog's. Every scheme takes the same
route: point operations build the stored key with the layout's ``stored`` (C where
the optional module is built) and call the store view's engine callables; scans,
``len``, ``clear`` and the views read the own ranges in chunks decoded by the
layout's ``decode_chunk``.
"""

from __future__ import annotations

from collections.abc import (
    Callable,
    Generator,
    ItemsView,
    Iterator,
    KeysView,
    MutableMapping,
    Sequence,
    ValuesView,
)
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol, cast

from . import _bulk_writes as _bulk
from . import _scope_structure as _structure
from ._accounting import ScopeStats, accounting_of
from ._bulk_writes import encode_value as _encode_value
from ._bulk_writes import not_bytes as _not_bytes
from ._bulk_writes import write_all as _write_all
from ._expiry import expired_own as _expired_own
from ._other_type import KeyOfOtherType
from ._other_type import other_type as _other_type
from ._retry import run_atomically
from ._scan_plan import RAW as _RAW
from ._scan_plan import Chunk as _Chunk
from ._scan_plan import Range as _Range
from ._scan_plan import check_range_arguments as check_range_arguments
from ._scan_plan import chunks as _chunks
from ._scan_plan import pairs as _pairs
from ._scan_plan import scheme_keys as _scheme_keys
from ._scan_plan import short as _short
from ._scan_plan import stored_ranges as _stored_ranges
from ._update_pairs import update_pairs
from .catalog import SETTLED
from .codecs import Codec, native_type
from .errors import AccountingUnavailable, KeyspaceError, show_bytes
from .schemes._base import Key, Path, Scheme
from .schemes._layouts import Layout
from .stores._base import ReadView, WriteView

_point_op: Callable[..., Callable[..., Any]] | None
_copy_slots: Callable[[Any], Any] | None
try:  # the optional C point operations (setup.py builds them when it can)
    from ._scope_accel import copy_slots as _copy_slots
    from ._scope_accel import point_op as _point_op
except ImportError:  # pragma: no cover - the pure-Python methods below then run
    _point_op = _copy_slots = None

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ._space import Space
    from ._watch import ScopeWatch
    from .catalog import Catalog
    from .stores._base import Store

__all__ = [
    "KeyspaceLike",
    "Scope",
    "ScopeItems",
    "ScopeKeys",
    "ScopeValues",
    "TransactionLike",
    "update_pairs",
]


class TransactionLike(Protocol):
    """What :meth:`KeyspaceLike.transaction` and :meth:`KeyspaceLike.snapshot`
    give (a :class:`~keyspace.Transaction`): scopes that read and write through it,
    its view of the store and the catalog state of that view."""

    view: ReadView
    catalog: Catalog

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path`` inside the transaction or snapshot."""
        ...


class KeyspaceLike(Protocol):
    """The type of :attr:`Scope.keyspace`: what a :class:`~keyspace.Keyspace`
    offers to the holder of one of its scopes (the object is that Keyspace).
    Described here so that this module needs no import of the keyspace module
    (which imports this one); the type checker proves at the keyspace's
    construction of its scopes that a Keyspace is one."""

    @property
    def store(self) -> Store:
        """The store the keyspace reads and writes."""
        ...

    @property
    def scheme(self) -> Scheme:
        """The keyspace's scheme."""
        ...

    @property
    def url(self) -> str:
        """The store's URL."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The facts that keep the keyspace's scopes apart."""
        ...

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path``."""
        ...

    def transaction(self) -> AbstractContextManager[TransactionLike]:
        """An atomic transaction across scopes."""
        ...

    def snapshot(self) -> AbstractContextManager[TransactionLike]:
        """A read-only consistent view."""
        ...

    def close(self) -> None:
        """Close the keyspace's store."""
        ...


_MISSING: Any = object()


class _NoKey(bytes):
    """A type no key or value has (never instantiated): the exact type a route
    without an engine call takes, so every key goes the general route."""


_Route = tuple[Any, bytes, bytes, bytes, bytes, type[bytes]]
_NO_ROUTE: _Route = (None, b"", b"", b"", b"", _NoKey)
_first, _second = itemgetter(0), itemgetter(1)


def _whole(
    start: Any, stop: Any, include_start: bool, include_stop: bool, reverse: bool, limit: Any, prefix: Any
) -> bool:
    """Whether range arguments ask for the whole scope in key order: ``items``,
    ``keys`` and ``values`` then return views instead of iterators."""
    return (
        start is None
        and stop is None
        and prefix is None
        and limit is None
        and not reverse
        and include_start
        and not include_stop
    )


def _copy_slots_py(scope: Scope) -> Scope:
    """The pure-Python reference of the C ``copy_slots``: a new instance of the
    scope's class whose slots hold what the scope's hold."""
    made: Scope = object.__new__(type(scope))
    for name in Scope.__slots__:
        setattr(made, name, getattr(scope, name))
    return made


class Scope(MutableMapping[Any, Any]):
    """One namespace of a keyspace, as a mutable mapping of its own keys.

    Do not instantiate directly; use :meth:`Keyspace.scope`, :meth:`Scope.scope` or
    ``tx.scope`` inside :meth:`Keyspace.transaction`.

    Mapping methods (``s[k]``, ``s[k] = v``, ``del s[k]``, ``k in s``, ``get``,
    ``setdefault``, ``pop``) cost one or two point operations on the store.
    ``len(s)``, iteration and ``==`` scan the scope's own range: O(own keys).
    ``keys()``, ``values()`` and ``items()`` without arguments are views (``len``,
    ``in``, ``==`` with a dict's views, iterable again and again); with range
    arguments they are iterators and take plyvel's words: ``items(start=, stop=,
    include_start=True, include_stop=False, reverse=False, limit=None, prefix=)``.

    Attributes: ``path`` (tuple of components), ``prefix`` (the stored bytes every
    own key starts with), ``keyspace``, ``scheme``, ``layout``.
    """

    __slots__ = (
        "_bound",
        "_chunk",
        "_compiled",
        "_cut",
        "_data",
        "_escape",
        "_get",
        "_get_raw",
        "_guard",
        "_key_of",
        "_key_spec",
        "_layout",
        "_put",
        "_put_raw",
        "_ranges",
        "_read_route",
        "_reserved",
        "_space",
        "_state",
        "_stored",
        "_value_spec",
        "_vdec",
        "_venc",
        "_view",
        "_write_route",
        "path",
        "prefix",
        "scheme",
    )

    def __init__(
        self,
        space: Space[KeyspaceLike],
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
        fast = data.fast_get
        self._get = data.get if fast is None else fast
        # what a point operation catches to translate: nothing through the view's
        # translating methods; anything but a keyspace error through its fast paths
        self._get_raw = () if fast is None else _RAW
        self._put: Callable[[bytes, bytes], object] | None = None
        self._put_raw: tuple[type[Exception], ...] = ()
        # the catalog's check before each read of own keys (ScopeHash names,
        # LengthPrefixed, Naive); None where reads need none
        self._guard = state.guard(self.path)
        # the one-frame routes themselves: (engine call, *escape, bytes) once no read
        # guard is left to run (reads) and once the put is bound (writes); until then
        # _NO_ROUTE, whose exact type no key has
        self._read_route = self._route(self._get) if self._guard is None else _NO_ROUTE
        self._write_route = _NO_ROUTE
        # a view whose puts check the catalog's fact inside their own write (a
        # directory's node: CheckedReads.checked_put) routes []= there, while _put
        # stays unbound: every other write still takes the catalog's first write
        checked = getattr(data, "checked_put", None)
        if checked is not None:
            self._put_raw = _RAW
            self._write_route = self._route(checked)

    def _on(self, view: ReadView, state: Catalog) -> Scope:
        """This scope (path, codecs) on ``view``, another view of the same store (a
        snapshot, a transaction, the store), with the catalog state ``state`` of
        that view: what reads the view is bound anew (:meth:`_bind`); the layout,
        key routes and codecs are this scope's, where ``view`` holds the keys as
        this scope's view does (neither narrows to a part: every store but a
        union's). Cost: a copy of the slots and the binding, against a whole
        construction of the scope otherwise."""
        narrowed = self._narrowed(view)
        if narrowed is not None or self._cut:
            return Scope(self._space, view, state, self.path, self._key_spec, self._value_spec)
        made: Scope = _copy_slots(self) if _copy_slots is not None else _copy_slots_py(self)
        made._bind(view, state, view)
        return made

    # -- navigation ------------------------------------------------------------

    @property
    def keyspace(self) -> KeyspaceLike:
        """The :class:`~keyspace.Keyspace` this scope belongs to (its space's
        owner; the scope itself runs on its space and catalog alone), typed as
        :class:`KeyspaceLike`. A scope of a transaction or a snapshot answers
        the keyspace they were taken from."""
        return self._space.owner

    @property
    def layout(self) -> Layout:
        """The compiled layout of this scope's path (stored keys as the keyspace's
        store holds them)."""
        return self._compiled

    def scope(self, *more: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The child scope at ``path + more`` (nothing is written). Codecs default to
        this scope's codecs."""
        from .codecs import resolve_codec

        return Scope(
            self._space,
            self._view,
            self._state,
            self.path + more,
            self._key_spec if key is None else resolve_codec(key),
            self._value_spec if value is None else resolve_codec(value),
        )

    def __repr__(self) -> str:
        return f"<Scope {self.path!r} of {self._space.owner!r}>"

    # -- point operations --------------------------------------------------------

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

    def _route(self, call: Any) -> _Route:
        """The one-frame route of a point operation: ``call`` (the engine's get or
        put), the escape and the exact type of the keys (and values) it takes,
        ``bytes``; :data:`_NO_ROUTE` where the scope has no escape. One unpack and
        one type test choose the route: no test for a missing route comes first."""
        escape = self._escape
        return _NO_ROUTE if escape is None else (call, *escape, bytes)

    def _touch(self) -> None:
        """One point read of the view, its answer unused, so that a read asking
        for no key of the store (a limit of 0, an empty range) raises on a closed
        store or an ended snapshot as every read does. Cost: one point read."""
        probe = self._layout.prefix or b"\x00"
        try:
            self._get(probe)
        except self._get_raw as exc:
            raise self._data.translate(exc, probe) from exc

    def _read(self, stored: bytes) -> bytes | None:
        if self._guard is not None and self._hidden():
            return None
        try:
            raw = self._get(stored)
        except self._get_raw as exc:  # only with the view's fast_get: its errors are raw
            raise self._data.translate(exc, stored) from exc
        return raw

    # The three point operations below take one Python frame for a bytes key where
    # the scope has an escape (see __init__): its route, the engine call, the escape
    # and bytes in one tuple; reads take it once no read guard is left to run, when
    # _read reduces to the engine call, writes once the put is bound.

    def __getitem__(self, key: Key) -> Any:
        get, head, old, new, tail, exact = self._read_route
        if type(key) is exact:
            try:
                raw = get(head + key.replace(old, new) + tail)
            except self._get_raw as exc:  # only with the view's fast_get: its errors are raw
                raise self._data.translate(exc, head + key.replace(old, new) + tail) from exc
            if raw is None:
                raise self._missing(key)
            return raw
        raw = self._read(self._stored(key))
        if raw is None:
            raise self._missing(key)
        return raw if self._vdec is None else self._vdec(raw)

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

    def get(self, key: Key, default: Any = None) -> Any:
        """Return the value of ``key``, or ``default``. Cost: one point read."""
        get, head, old, new, tail, exact = self._read_route
        if type(key) is exact:
            try:
                raw = get(head + key.replace(old, new) + tail)
            except self._get_raw as exc:  # only with the view's fast_get: its errors are raw
                raise self._data.translate(exc, head + key.replace(old, new) + tail) from exc
            return default if raw is None else raw
        raw = self._read(self._stored(key))
        if raw is None:
            return default
        return raw if self._vdec is None else self._vdec(raw)

    def __contains__(self, key: object) -> bool:
        return self._read(self._stored(key)) is not None

    def __setitem__(self, key: Key, value: Any) -> None:
        put, head, old, new, tail, exact = self._write_route
        if type(key) is exact is type(value):  # bytes both (no value codec); one load less
            try:
                put(head + key.replace(old, new) + tail, value)
            except self._put_raw as exc:  # only with the view's fast_put
                raise self._data.translate(exc, head + key.replace(old, new) + tail) from exc
        else:
            self._set(key, value)

    def _stored_value(self, value: Any) -> bytes:
        """The stored bytes of ``value``: the value codec's encoding, or, with no
        codec, the bytes themselves (:func:`_not_bytes` refuses anything else).
        :meth:`_set` does the same inline, on the hot path."""
        venc = self._venc
        if venc is not None:
            return _encode_value(venc, value)
        return value if type(value) is bytes else _not_bytes(value)

    def _set(self, key: Key, value: Any) -> None:
        """``self[key] = value`` on the general route: the layout's key transform,
        the value codec, and the scope's first write (its records) when no put is
        bound yet."""
        stored = self._stored(key)
        venc = self._venc
        if venc is not None:
            raw = _encode_value(venc, value)
        else:
            raw = value if type(value) is bytes else _not_bytes(value)
        put = self._put
        if put is None:
            put = getattr(self._data, "checked_put", None)  # see _bind
        if put is None:
            if self._first_write(((stored, raw),), puts=True):
                return
            put = self._bind_put()
        try:
            put(stored, raw)
        except self._put_raw as exc:  # only with the view's fast_put
            raise self._data.translate(exc, stored) from exc

    def __delitem__(self, key: Key) -> None:
        stored = self._stored(key)
        view = self._writer()
        if self._read(stored) is None:
            raise self._missing(key)
        self._state.destructive(
            view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
        )

    def discard(self, key: Key) -> None:
        """Remove ``key`` if present; no error when it is missing. Cost: one delete."""
        stored = self._stored(key)
        view = self._writer()
        if self._guard is None or not self._hidden():
            self._state.destructive(
                view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
            )

    def pop(self, key: Key, default: Any = _MISSING) -> Any:
        """Remove ``key`` and return its value; ``default`` when it is missing, else
        :class:`KeyError`. Outside a transaction a found key is read again and
        deleted in one transaction of the store, so that two callers never both
        get one value; that transaction is the scope's own, so when it loses a
        race to another writer (``TransactionConflict``, nothing changed: etcd's
        optimistic commit, LMDB growing a small map while another process
        commits) it is run again, at most 8 times in all. Cost: one point read,
        and for a found key one transaction of one read and one delete."""
        stored = self._stored(key)
        view = self._writer()
        raw = self._read(stored)
        if raw is None:
            if default is _MISSING:
                raise self._missing(key)
            return default
        if view is self._state.store:
            return self._in_one(self._space.transaction, "pop", key, default)
        self._state.destructive(
            view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
        )
        return raw if self._vdec is None else self._vdec(raw)

    def _in_one(
        self, begin: Callable[[], AbstractContextManager[tuple[ReadView, Catalog]]], method: str, *args: Any
    ) -> Any:
        """Run ``method`` on the scope of this path inside what ``begin()`` opens,
        a transaction of the store (a read then a write, as one atomic step) or a
        snapshot (several reads, of one state of the store). The step is this
        scope's own, so one that loses a race (:class:`TransactionConflict`,
        nothing written) is run again from its first read, at most
        :data:`~keyspace._retry.ATTEMPTS` times (:func:`~keyspace._retry.run_atomically`)."""
        return run_atomically(
            begin, lambda pair: getattr(self._on(*pair), method)(*args), f"Scope.{method.strip('_')}"
        )

    def popitem(self) -> tuple[Any, Any]:
        """Remove and return the last ``(key, value)`` in key order (``dict`` takes
        the last inserted); :class:`KeyError` when the scope is empty. Outside a
        transaction it runs in one transaction of the store (two callers never
        both get one item), run again when it loses a race, as :meth:`pop`'s.
        The item goes by the stored key it was read at: a key codec may read
        several stored forms as one key (JSON that another program wrote with
        its fields in another order), and the key it would write for the decoded
        key may be another one, or none. Cost: one one-item reverse
        scan and one delete."""
        view = self._writer()
        if view is self._state.store:
            return self._in_one(self._space.transaction, "popitem")  # type: ignore[no-any-return]
        chunks = self._chunks(reverse=True, limit=1, decode=False)
        try:
            last = next(chunks, None)
        finally:
            chunks.close()  # no read left open across the delete
        if last is None:
            raise KeyError("popitem(): scope is empty")
        stored, raw = last[0]
        key = self._key_of(stored)
        self._state.destructive(
            view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
        )
        return key, (raw if self._vdec is None else self._vdec(raw))

    def setdefault(self, key: Key, default: Any = None) -> Any:
        """Return the value of ``key``; when missing, store ``default`` first (as
        ``dict.setdefault``). Outside a transaction a missing key is read again and
        written in one transaction of the store, so that every caller gets the
        value stored (run again when it loses a race, as :meth:`pop`'s). Cost:
        one point read, and when missing one transaction of one read and one
        write."""
        raw = self._read(self._stored(key))
        if raw is not None:
            return raw if self._vdec is None else self._vdec(raw)
        if self._writer() is self._state.store:
            return self._in_one(self._space.transaction, "setdefault", key, default)
        self[key] = default
        return default

    def _writer(self) -> WriteView:
        view = self._view
        if not isinstance(view, WriteView) or not isinstance(self._data, WriteView):
            raise KeyspaceError(f"scope {show_bytes(self.path)} is read-only here (a snapshot view)")
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

    def check_key(self, key: Key) -> None:
        """Raise what ``self[key] = value`` would raise for ``key`` alone (the key
        codec, the scheme, the engine's key size limit), writing nothing: how an
        operation of several writes refuses bad input before it writes any, even
        in a caller's transaction that goes on after the error. Cost: one key
        transform."""
        self._state.check_storable(self._whole_ops([(self._stored(key), None)]))

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
        """Bind the view's put (its ``fast_put`` where it has one) and return it."""
        view = self._part(self._writer())
        fast = view.fast_put
        self._put_raw = () if fast is None else _RAW
        put = self._put = view.put if fast is None else fast
        self._write_route = self._route(put)
        return put

    def _raise_raw(self, exc: BaseException, stored: bytes) -> None:
        """Raise what the view makes of ``exc``, an error of a fast engine call for
        the stored key ``stored`` (called by the C point operations)."""
        raise self._data.translate(exc, stored) from exc

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

    def _iter_items(self, *args: Any) -> Iterator[tuple[Any, Any]]:
        pairs = _pairs(*self._plan(), *args)
        vdec = self._vdec
        if vdec is None:
            return pairs
        return ((k, vdec(v)) for k, v in pairs)

    def items(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Any:
        """Without arguments, a view of the own ``(key, value)`` pairs
        (:class:`ScopeItems`). With any, an iterator of them in key order (descending
        when ``reverse``), bounded by ``start``/``stop`` (``include_*`` decide the
        ends) or by ``prefix``, at most ``limit`` items.

        ``prefix`` is what the scheme's keys start with: leading elements of
        composite keys in the tuple scheme, leading bytes in the byte schemes (in
        ScopeHash, whose keys are stored after their length, the scope's range is
        read and filtered, so the result is exact at O(scope) cost). Under a key
        codec that turns keys into bytes (``json``, a custom codec; ``str`` and
        ``int`` in the byte schemes) the prefix is a key of the codec, encoded by
        it as every key is: the keys whose bytes start with the prefix's bytes,
        or in the tuple scheme, where those bytes are one element, the key equal
        to the prefix.

        Cost: one range scan of the requested part of the scope, read in chunks, each
        decoded by one call of the layout (C where built); no generator is resumed
        per item for bytes values."""
        if limit is not None:  # a short scan is read at once
            short = _short(
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
                start,
                stop,
                include_start,
                include_stop,
                reverse,
                limit,
                prefix,
            )
            if short is not None:
                vdec = self._vdec
                return iter(short) if vdec is None else ((k, vdec(v)) for k, v in short)
        elif _whole(start, stop, include_start, include_stop, reverse, limit, prefix):
            return ScopeItems(self)
        return self._iter_items(start, stop, include_start, include_stop, reverse, limit, prefix)

    def keys(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Any:
        """Like :meth:`items`, keys only (a :class:`ScopeKeys` view without arguments);
        beyond a short scan (``limit`` up to 1024) no value is read."""
        if _whole(start, stop, include_start, include_stop, reverse, limit, prefix):
            return ScopeKeys(self)
        args = (start, stop, include_start, include_stop, reverse, limit, prefix)
        short = _short(*self._plan(), *args)
        if short is not None:
            return map(_first, iter(short))
        return map(_first, chain.from_iterable(_chunks(*self._plan(), *args, keys=True)))

    def values(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Any:
        """Like :meth:`items`, values only (a :class:`ScopeValues` view without
        arguments)."""
        if _whole(start, stop, include_start, include_stop, reverse, limit, prefix):
            return ScopeValues(self)
        return self._iter_values(start, stop, include_start, include_stop, reverse, limit, prefix)

    def _iter_values(self, *args: Any) -> Iterator[Any]:
        short = _short(*self._plan(), *args) if args and args[5] is not None else None
        values = map(_second, iter(short) if short is not None else _pairs(*self._plan(), *args))
        return values if self._vdec is None else map(self._vdec, values)

    def __iter__(self) -> Iterator[Any]:
        """The own keys in order, read without their values (``scan_keys``)."""
        return map(_first, chain.from_iterable(_chunks(*self._plan(), keys=True)))

    def __len__(self) -> int:
        """Number of own keys, counted without decoding them. Cost: one ``count``
        of the store view per own range where the ranges hold only own keys
        (LMDB: keys read without values, no Python code per key; SQLite, etcd:
        one query; memory: two bisections); where one byte tells own keys from
        the others in the ranges (the layout's ``lacks``: AsciiHex), one
        ``count_without`` per range, which filters as it counts (SQLite: one
        query; LMDB: one C pass per chunk of keys); else a keys-only scan whose
        chunks the layout's ``decode_chunk`` (C where built) cuts to the own
        keys. Outside a transaction or snapshot, a count of several reads
        (several own ranges, or a scan read in pages) reads one snapshot of the
        store, so it never counts part of a batch."""
        store = self._state.store
        counts = accounting_of(store)
        if counts is not None and counts.counts_scope(self.path, self.prefix):  # the counter record, O(1)
            expired = _expired_own(self)  # keys whose ttl has passed, not swept yet
            if expired is not None:
                return counts.stats(self._view, self.path).keys - expired
        if self._counted_in_pieces() and self._view is store and store.capabilities.snapshots:
            return self._in_one(self._space.snapshot, "__len__")  # type: ignore[no-any-return]
        layout = self._layout
        lacks = layout.lacks
        if not layout.exact and lacks < 0:
            return sum(map(len, self._chunks(keys=True)))
        ranges = self._stored_ranges(None, None, True, False, None)
        view = self._data
        if lacks < 0:
            return sum(view.count(lo, hi) for lo, hi in ranges)
        at = len(layout.prefix)
        return sum(view.count_without(lo, hi, lacks, at) for lo, hi in ranges)

    def stats(self) -> ScopeStats:
        """``(keys, bytes, subtree_keys, subtree_bytes)``: the scope's own keys and
        their stored bytes (stored key + value), and those of its subtree (the
        scope and every scope below it), read from the keyspace's counters
        (``accounting=True``): one point read, whatever the sizes; inside a
        transaction, plus one pass over its uncommitted writes.
        :class:`~keyspace.errors.AccountingUnavailable` when accounting is off."""
        counts = accounting_of(self._state.store)
        if counts is None:
            raise AccountingUnavailable(
                f"stats() of the scope {self.path!r} needs accounting, which {self._state.store.url} does "
                "not keep: open it with accounting=True on a new store, or run "
                "'keyspace accounting enable URL'"
            )
        if not counts.counts_scope(self.path, self.prefix):
            raise AccountingUnavailable(
                f"stats() of {self.path!r}: its keys lie under the prefix {show_bytes(self.prefix)}, not "
                "where the scheme keeps that scope's keys (a directory's contents): no counter counts them"
            )
        return counts.stats(self._view, self.path)

    def _counted_in_pieces(self) -> bool:
        """Whether ``len`` reads the store more than once: several own ranges, or a
        layout whose range holds other scopes' keys too (a scan, read in pages)."""
        return not self._layout.exact or len(self._ranges) > 1

    def __bool__(self) -> bool:
        return next(_chunks(*self._plan(), limit=1, decode=False, keys=True), None) is not None

    # -- bulk changes ----------------------------------------------------------------

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Put the pairs of a mapping (or of an iterable of pairs) and of keyword
        arguments, as ``dict.update``. All or nothing: inside a transaction they
        commit with it; outside, they are written in one atomic transaction of the
        store (engines with a per-batch operation limit: one atomic batch, and
        :class:`TransactionTooLarge` rather than a split).

        Memory: outside a transaction, on engines without a batch limit, the pairs
        are encoded as they are read and handed to the store 4096 at a time, so an
        iterator of any length is written in bounded memory; otherwise they are
        read once into the one list of encoded pairs the batch takes."""
        _bulk.update(self, other, kwargs)

    def clear(self) -> None:
        """Remove every own key; child scopes stay. Cost: one range delete per own
        range where the scheme keeps own keys contiguous, else a scan."""
        _bulk.clear(self, None, None, True, False, False, None, None, False)

    def clear_range(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> int:
        """Remove the own keys that :meth:`items` with the same arguments would
        yield (with ``limit``, the first ``limit`` of them in key order, or from
        the end when ``reverse``), in one atomic write, and return how many were
        removed. A negative ``limit`` raises :class:`InvalidArgument`.

        Cost: without ``limit``, one count and one range delete per own range
        (native where the engine has them) where the scheme keeps own keys
        contiguous; with ``limit`` (or where own keys are not contiguous), a
        keys-only scan of at most ``limit`` own keys and one batch of deletes."""
        check_range_arguments(include_start, include_stop, reverse, limit)
        return _bulk.clear(self, start, stop, include_start, include_stop, reverse, limit, prefix, True)

    def drop(self) -> None:
        """Remove the scope and every scope below it. Cost: one range delete
        (native where the engine has one); the ScopeHash root, whose named scopes
        lie beside it, takes one per registered name."""
        _bulk.drop(self)

    # -- structure -------------------------------------------------------------------

    def scopes(self) -> list[Any]:
        """The direct children of this scope that hold data, in stored order (name
        order for schemes with property 4). Cost: one seek per child and per own
        range, not a scan of their keys."""
        if self._guard is not None:
            self._hidden()
        return self._state.children(self._view, self.path)

    def subtree(self) -> Iterator[tuple[Path, Any, Any]]:
        """Yield ``(path, key, value)`` for every key of this scope and the scopes
        below it, with absolute paths, in stored order. Keys and values are decoded
        with this scope's codecs. Covers exactly the keys :meth:`drop` removes.
        Cost: one scan of the subtree range (the ScopeHash root: one per name).
        A scope whose reads its catalog checks (a read guard) reads the committed
        store's subtree in one snapshot, where the check and the scan read one
        state."""
        return _structure.subtree(self)

    # -- changes -----------------------------------------------------------------------

    def append(self, value: Any) -> Any:
        """Store ``value`` under a new key that the commit fills in with its place
        in the commit order (a :class:`~keyspace.tuples.Versionstamp`: the commit's
        number in the change log, then this append's place in the commit), and
        return that key: complete outside a transaction, incomplete (its user
        version set) inside one. The scope's appended keys sort in commit order:
        an append-only log, on every engine of a keyspace opened with
        ``changes=True``, and on etcd with or without it (its revisions number
        the commits; a commit that appends also rewrites a sequencing key, so
        transactions that append at once conflict); else
        :class:`~keyspace.errors.InvalidArgument`. See :mod:`keyspace._append`.
        Cost: a put; outside a transaction, one commit."""
        from ._append import append

        return append(self, value)

    def put(self, key: Key, value: Any, *, ttl: float | None = None) -> None:
        """``self[key] = value``; with ``ttl`` (seconds, over 0), the key expires
        then: from its deadline on no read returns it, and a sweep deletes it
        (``ks.expire``, and writers' small sweeps). Needs a keyspace opened with
        ``ttl=True`` (else :class:`~keyspace.errors.InvalidArgument`, as for a bad
        ``ttl``, nothing written). A later put without ``ttl`` keeps the key for
        good. See :mod:`keyspace._expiry`. Cost: a put; with ``ttl``, its deadline
        records in the same commit (outside a transaction, one of its own)."""
        if ttl is None:
            self[key] = value
            return
        from ._expiry import put_expiring

        put_expiring(self, key, value, ttl)

    def expiring(self, ttl: float) -> Any:
        """This scope with a default ``ttl``: its ``[]=``, ``put`` and ``update``
        put with it (:class:`~keyspace._expiry.ExpiringScope`); reads are the scope's."""
        from ._expiry import ExpiringScope

        return ExpiringScope(self, ttl)

    def watch(self, *, subtree: bool = False, start_revision: int | None = None) -> ScopeWatch:
        """A stream of :class:`~keyspace.WatchEvent` (put or delete, ``path``, decoded
        ``key`` and ``value``, store ``revision``) for exactly this scope's own keys,
        or with ``subtree=True`` for the scope and every scope below it. From now on,
        or from ``start_revision``. Iterate it (sync or ``async for``), or ``get(timeout)``;
        ``close()`` it (or use ``with``). See :mod:`keyspace._watch`.

        On etcd: one native Watch, resumed after a member failure with no event lost
        or repeated; a compacted ``start_revision`` raises
        :class:`~keyspace.errors.WatchCompacted`. The memory store sees every write
        (they all go through it) but keeps no history: from now only. LMDB, SQLite,
        LevelDB and RocksDB files may be written by other processes unseen
        (``capabilities.watch`` is ``None``): they raise
        :class:`~keyspace.errors.WatchUnsupported` here. A scope of a transaction or
        a snapshot watches the store's committed writes, as the keyspace's scope of
        the same path does: a watch outlives the block. Cost: one stream (etcd: and
        one thread) per watch."""
        return _structure.watch(self, subtree, start_revision)


class ScopeKeys(KeysView[Any]):
    """``scope.keys()``: a set-like, re-iterable view of the own keys (``len``,
    ``in`` and ``==`` as ``dict.keys()``), read from the store at each use."""

    __slots__ = ()
    _mapping: Scope

    def __iter__(self) -> Iterator[Any]:
        return iter(self._mapping)


class ScopeItems(ItemsView[Any, Any]):
    """``scope.items()``: a set-like, re-iterable view of the own ``(key, value)``
    pairs, read from the store at each use (one scan per iteration)."""

    __slots__ = ()
    _mapping: Scope

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self._mapping._iter_items()


class ScopeValues(ValuesView[Any]):
    """``scope.values()``: a re-iterable view of the own values, read from the store
    at each use."""

    __slots__ = ()
    _mapping: Scope

    def __iter__(self) -> Iterator[Any]:
        return self._mapping._iter_values()


def _install_point_ops(cls: type[Scope]) -> None:
    """Replace ``[]``, ``get`` and ``[]=`` of ``cls`` by their C versions, which read
    the slots ``_stored``, ``_get``/``_put``, ``_get_raw``/``_put_raw``, ``_vdec``/
    ``_venc``, ``_guard`` and ``_view`` (a guard answering :data:`SETTLED` is
    dropped from ``_guard``, as :meth:`Scope._hidden` does), and fall back to the
    Python methods (their ``__wrapped__``) for everything they do not handle."""
    if _point_op is None:
        return
    slot = cls.__dict__  # the member descriptors of the slots
    for name, kind, call, raw, codec in (
        ("__getitem__", "getitem", "_get", "_get_raw", "_vdec"),
        ("get", "get", "_get", "_get_raw", "_vdec"),
        ("__setitem__", "setitem", "_put", "_put_raw", "_venc"),
    ):
        op = _point_op(
            kind,
            cls,
            slot[name],
            cls._raise_raw,
            slot["_stored"],
            slot[call],
            slot[raw],
            slot[codec],
            slot["_guard"],
            slot["_view"],
            SETTLED,
        )
        setattr(cls, name, op)


_install_point_ops(Scope)
