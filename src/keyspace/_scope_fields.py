"""The fields of a scope and its point operations, in pure Python.

:class:`ScopeFields` declares, once, the fields a scope holds (:data:`FIELDS`):
its path, layout, key and value routes and codecs, and what binds it to a view
of the store. Its C twin, ``keyspace._scope_accel.ScopeFields`` (built where a
compiler is found), is a C type with the same fields as declared members and
the point operations (``[]``, ``get``, ``[]=``, ``del``) as C methods; it checks
at import that its members are :data:`FIELDS`, in order. The core of a scope
(:class:`keyspace._scope_core.ScopeCore`) subclasses whichever is built; every
class above adds no field.

:class:`PointOps` holds the point operations in Python: the methods of the pure
twin, and the reference the C methods hand every case they do not take (a key
or value their route does not cover, keyword arguments, an unbound engine
call). They read the fields below and the core's hooks (``_read``, ``_stored``,
``_missing``, ``_first_write``, ...), declared here for the type checker.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Self

from ._bulk_writes import encode_value as _encode_value
from ._bulk_writes import not_bytes as _not_bytes
from .catalog import SETTLED

if TYPE_CHECKING:
    from .catalog import Catalog
    from .schemes._base import Key, Path
    from .stores._base import ReadView, WriteView

__all__ = ["FIELDS", "NO_ROUTE", "SETTLED", "PointOps", "Route", "ScopeFields"]


class _NoKey(bytes):
    """A type no key or value has (never instantiated): the exact type a route
    without an engine call takes, so every key goes the general route."""


Route = tuple[Any, bytes, bytes, bytes, bytes, type[bytes]]
"""A one-frame route of a point operation: the engine call, the escape (head,
old, new, tail) and the exact type of the keys it takes."""
NO_ROUTE: Route = (None, b"", b"", b"", b"", _NoKey)
"""The route of a scope with none: its exact type is no key's."""

FIELDS = (
    "_bound",
    "_chunk",
    "_compiled",
    "_cut",
    "_data",
    "_escape",
    "_get",
    "_guard",
    "_key_of",
    "_key_spec",
    "_layout",
    "_put",
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
"""The fields of a scope, in the order the C twin declares them."""


class PointOps:
    """The point operations of a scope in Python (module docstring). They take one
    Python frame for a bytes key where the scope has an escape: its route (the
    engine call, the escape and ``bytes`` in one tuple) and one type test; reads
    take it once no read guard is left to run, writes once the put is bound."""

    __slots__ = ()

    if TYPE_CHECKING:
        _data: ReadView
        _escape: tuple[bytes, bytes, bytes, bytes] | None
        _get: Callable[[bytes], bytes | None]
        _put: Callable[[bytes, bytes], object] | None
        _read_route: tuple[Any, bytes, bytes, bytes, bytes, type[bytes]]
        _state: Catalog
        _stored: Callable[[Any], bytes]
        _vdec: Callable[[bytes], Any] | None
        _venc: Callable[[Any], Any] | None
        _view: ReadView
        _write_route: tuple[Any, bytes, bytes, bytes, bytes, type[bytes]]

        def _read(self, stored: bytes) -> bytes | None: ...
        def _missing(self, key: Any) -> KeyError: ...
        def _writer(self) -> WriteView: ...
        def _part(self, view: WriteView) -> WriteView: ...
        def _first_write(self, ops: Any, puts: bool = False) -> bool: ...
        def _bind_put(self) -> Callable[[bytes, bytes], object]: ...
        @property
        def _unsettled(self) -> Path | None: ...

    def _route(self, call: Any) -> Route:
        """The one-frame route of a point operation: ``call`` (the engine's get or
        put), the escape and the exact type of the keys (and values) it takes,
        ``bytes``; :data:`NO_ROUTE` where the scope has no escape. One unpack and
        one type test choose the route: no test for a missing route comes first."""
        escape = self._escape
        return NO_ROUTE if escape is None else (call, *escape, bytes)

    def __getitem__(self, key: Key) -> Any:
        get, head, old, new, tail, exact = self._read_route
        if type(key) is exact:
            raw = get(head + key.replace(old, new) + tail)
            if raw is None:
                raise self._missing(key)
            return raw
        raw = self._read(self._stored(key))
        if raw is None:
            raise self._missing(key)
        return raw if self._vdec is None else self._vdec(raw)

    def get(self, key: Key, default: Any = None) -> Any:
        """Return the value of ``key``, or ``default``. Cost: one point read."""
        get, head, old, new, tail, exact = self._read_route
        if type(key) is exact:
            raw = get(head + key.replace(old, new) + tail)
            return default if raw is None else raw
        raw = self._read(self._stored(key))
        if raw is None:
            return default
        return raw if self._vdec is None else self._vdec(raw)

    def __setitem__(self, key: Key, value: Any) -> None:
        put, head, old, new, tail, exact = self._write_route
        if type(key) is exact is type(value):  # bytes both (no value codec); one load less
            put(head + key.replace(old, new) + tail, value)
        else:
            self._set(key, value)

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
            put = self._write_route[0]  # a put that checks the catalog's fact, or None (ScopeCore._bind)
        if put is None:
            if self._first_write(((stored, raw),), puts=True):
                return
            put = self._bind_put()
        put(stored, raw)

    def __delitem__(self, key: Key) -> None:
        stored = self._stored(key)
        view = self._writer()
        if self._read(stored) is None:
            raise self._missing(key)
        self._state.destructive(
            view, lambda v: self._part(v).delete(stored), single=True, path=self._unsettled
        )


class ScopeFields(PointOps):
    """The fields of a scope (:data:`FIELDS`) and its point operations, in pure
    Python: the twin of ``keyspace._scope_accel.ScopeFields``."""

    __slots__ = FIELDS

    def _copy(self) -> Self:
        """A new instance of this object's class whose fields hold what this one's
        hold (the objects themselves), made without ``__init__``: how a scope made
        once is bound to another view. Raises :class:`TypeError` for a class that
        holds more than the fields. Cost: one allocation and a store per field."""
        cls = type(self)
        if cls.__basicsize__ != ScopeFields.__basicsize__ or cls.__dictoffset__:
            raise TypeError(f"_copy() copies the fields of a scope; {cls.__name__} holds more")
        made = cls.__new__(cls)
        for name in FIELDS:
            with suppress(AttributeError):  # unset here: unset in the copy too
                setattr(made, name, getattr(self, name))
        return made

    def _rebound(self, view: ReadView) -> Self:
        """A :meth:`_copy` of this scope on ``view``: its view and data view are
        ``view``, its point read ``view.get``, and its read route the one of that read;
        every other field is this scope's. How a scope bound once to a view is
        bound to another view of the same type of the store with the same
        catalog state, whose binding differs in those fields alone (see
        ``Keyspace._scope_on``). Cost: one copy and four stores."""
        made = self._copy()
        made._view = made._data = view
        made._get = get = view.get
        made._read_route = made._route(get)
        return made
