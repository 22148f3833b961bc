"""Scope: the dict-like view of one namespace, where a path, a scheme and a store meet.

A :class:`Scope` is a :class:`~collections.abc.MutableMapping` over exactly the
scope's own keys — never a child scope's — in stored-key order (which is key order
for every scheme that declares property 3). Child scopes are reached with
:meth:`Scope.scope`; :meth:`Scope.scopes` lists the children that hold data,
:meth:`Scope.clear` removes own keys, :meth:`Scope.drop` removes the scope and
everything below it, :meth:`Scope.subtree` walks ``(path, key, value)`` below it.

Making a scope writes nothing and costs one prefix computation; every operation
after that reuses the precomputed prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from ._bytes import prefix_end
from .codecs import BYTES, INT, STR, Codec
from .errors import KeyspaceError
from .schemes._base import Key, Path, Scheme
from .schemes.tuple_scheme import TupleScheme
from .stores._base import ReadView, WriteView
from .tuples import _accel_decode_bytes_chunk

_point_op: Callable[..., Callable[..., Any]] | None
try:  # the optional C point operations (setup.py builds them when it can)
    from ._scope_accel import point_op as _point_op
except ImportError:  # pragma: no cover - the pure-Python methods below then run
    _point_op = None

if TYPE_CHECKING:
    from ._catalog import Catalog
    from ._watch import ScopeWatch
    from .keyspace import Keyspace

__all__ = ["Scope"]

_Range = tuple[bytes, bytes | None]


def _intersect(ranges: tuple[_Range, ...], lo: bytes, hi: bytes | None) -> list[_Range]:
    """Clip each half-open range to ``[lo, hi)``, dropping the empty ones."""
    out: list[_Range] = []
    for start, stop in ranges:
        a = start if start >= lo else lo
        if hi is None:
            b = stop
        elif stop is None:
            b = hi
        else:
            b = stop if stop <= hi else hi
        if b is None or a < b:
            out.append((a, b))
    return out


def _native_in_tuples(codec: Codec) -> bool:
    """Built-in bytes/str/int codecs map onto tuple-layer elements directly."""
    return codec is BYTES or codec is STR or codec is INT


def _key_codec(scheme: Scheme, codec: Codec) -> tuple[Callable[[Any], bytes], Callable[[bytes], Any]]:
    """Compose the scope's key codec with the scheme's key encoding into one
    encode and one decode function, resolved once when the scope is made."""
    enc_key, dec_key = scheme.encode_key, scheme.decode_key
    if scheme.typed_keys and _native_in_tuples(codec):
        if codec is BYTES:
            # a tuple-scheme scope takes any tuple element (or composite key) by default
            return enc_key, dec_key
        check = codec.encode

        def encode_checked(key: Any) -> bytes:
            check(key)  # raises InvalidKey for a key of the wrong type
            return enc_key(key)

        return encode_checked, dec_key
    if codec is BYTES:
        return enc_key, dec_key
    c_enc, c_dec = codec.encode, codec.decode
    if scheme.key_is_raw:
        return c_enc, c_dec
    return (lambda k: enc_key(c_enc(k))), (lambda raw: c_dec(dec_key(raw)))


def _decoded_key_codec(scheme: Scheme, codec: Codec) -> Callable[[Any], Any] | None:
    """What turns a key as the scheme decodes it into the scope's key type
    (``None``: nothing to do)."""
    if codec is BYTES or (scheme.typed_keys and _native_in_tuples(codec)):
        return None
    return codec.decode


class Scope(MutableMapping[Any, Any]):
    """One namespace of a keyspace, as a mutable mapping of its own keys.

    Do not instantiate directly; use :meth:`Keyspace.scope`, :meth:`Scope.scope` or
    ``tx.scope`` inside :meth:`Keyspace.transaction`.

    Mapping methods (``s[k]``, ``s[k] = v``, ``del s[k]``, ``k in s``, ``get``) cost
    one point operation on the store. ``len(s)`` and iteration scan the scope's own
    range: O(own keys). Ranged views take plyvel's words: ``items(start=, stop=,
    include_start=True, include_stop=False, reverse=False, limit=None, prefix=)``.

    Attributes: ``path`` (tuple of components), ``prefix`` (the stored bytes every
    own key starts with), ``keyspace``, ``scheme``.
    """

    __slots__ = (
        "_dec",
        "_enc",
        "_exact",
        "_guard",
        "_key_spec",
        "_ks",
        "_plen",
        "_ranges",
        "_state",
        "_value_spec",
        "_vdec",
        "_venc",
        "_view",
        "_write_ready",
        "path",
        "prefix",
        "scheme",
    )

    def __new__(
        cls,
        keyspace: Keyspace,
        view: ReadView,
        state: Catalog,
        path: Path,
        key: Codec,
        value: Codec,
    ) -> Scope:
        """Pick the implementation once, when the scope is made: bytes keys and
        values in the default tuple scheme get :class:`_TupleBytesScope`, whose point
        operations and scans skip the general codec dispatch (same behaviour)."""
        if cls is Scope and key is BYTES and value is BYTES and type(keyspace.scheme) is TupleScheme:
            cls = _TupleBytesScope
        return super().__new__(cls)

    def __init__(
        self,
        keyspace: Keyspace,
        view: ReadView,
        state: Catalog,
        path: Path,
        key: Codec,
        value: Codec,
    ) -> None:
        scheme = keyspace.scheme.scope_scheme(path)
        scheme.validate_path(path)
        self._ks = keyspace
        self._view = view
        self._state = state
        self.path = path
        self.scheme = scheme
        self.prefix = scheme.prefix(path)
        self._plen = len(self.prefix)
        self._ranges = state.own_ranges(path)
        self._exact = scheme.own_range_is_exact()
        # run before each read of own keys (ScopeHash names, LengthPrefixed, Naive)
        self._guard = state.guard(path)
        self._key_spec = key
        self._value_spec = value
        self._enc, self._dec = _key_codec(scheme, key)
        self._venc: Callable[[Any], bytes] | None = None if value is BYTES else value.encode
        self._vdec: Callable[[bytes], Any] | None = None if value is BYTES else value.decode
        self._write_ready = False

    # -- navigation ------------------------------------------------------------

    @property
    def keyspace(self) -> Keyspace:
        return self._ks

    def scope(self, *more: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The child scope at ``path + more`` (nothing is written). Codecs default to
        this scope's codecs."""
        from .codecs import resolve_codec

        return Scope(
            self._ks,
            self._view,
            self._state,
            self.path + more,
            self._key_spec if key is None else resolve_codec(key),
            self._value_spec if value is None else resolve_codec(value),
        )

    def __repr__(self) -> str:
        return f"<Scope {self.path!r} of {self._ks!r}>"

    # -- point operations --------------------------------------------------------

    def _hidden(self) -> bool:
        """The catalog's check before a read of own keys (:meth:`Catalog.guard`):
        raises for a scope that may not be read (a ScopeHash name whose hash
        another name holds); True when the scope has no own keys (a branch in a
        scheme that cannot tell own keys from children's: the bytes under its
        prefix are its children's, never read, count or delete them)."""
        guard = self._guard
        return guard is not None and not guard(self._view)

    def __getitem__(self, key: Key) -> Any:
        stored = self.prefix + self._enc(key)
        if self._guard is not None and self._hidden():
            raise KeyError(key)
        raw = self._view.get(stored)
        if raw is None:
            raise KeyError(key)
        return raw if self._vdec is None else self._vdec(raw)

    def get(self, key: Key, default: Any = None) -> Any:
        """Return the value of ``key``, or ``default``. Cost: one point read."""
        stored = self.prefix + self._enc(key)
        if self._guard is not None and self._hidden():
            return default
        raw = self._view.get(stored)
        if raw is None:
            return default
        return raw if self._vdec is None else self._vdec(raw)

    def __contains__(self, key: object) -> bool:
        stored = self.prefix + self._enc(key)
        if self._guard is not None and self._hidden():
            return False
        return self._view.get(stored) is not None

    def __setitem__(self, key: Key, value: Any) -> None:
        stored = self.prefix + self._enc(key)
        raw = value if self._venc is None else self._venc(value)
        if type(raw) is not bytes:
            raw = BYTES.encode(raw)
        if not self._write_ready and self._prepare_write([(stored, raw)]):
            return
        self._writer().put(stored, raw)

    def __delitem__(self, key: Key) -> None:
        stored = self.prefix + self._enc(key)
        view = self._writer()
        if (self._guard is not None and self._hidden()) or view.get(stored) is None:
            raise KeyError(key)
        self._state.destructive(view, lambda v: v.delete(stored))

    def discard(self, key: Key) -> None:
        """Remove ``key`` if present; no error when it is missing. Cost: one delete."""
        stored = self.prefix + self._enc(key)
        view = self._writer()
        if not (self._guard is not None and self._hidden()):
            self._state.destructive(view, lambda v: v.delete(stored))

    def _writer(self) -> WriteView:
        view = self._view
        if not isinstance(view, WriteView):
            raise KeyspaceError(f"scope {self.path!r} is read-only here (a snapshot view)")
        return view

    def _prepare_write(self, ops: Sequence[tuple[bytes, bytes | None]]) -> bool:
        """Before this scope's first write of ``ops``: unless the catalog says the
        path is ready, run the write as the catalog's first write (the scheme
        accepts the path, the layout rule, the hash registry, the scheme record,
        checked and recorded in one atomic batch with ``ops``). True when ``ops``
        were written here."""
        state = self._state
        view = self._writer()
        if state.write_ready(self.path):
            self._write_ready = True
            return False
        state.check_storable(k for k, v in ops if v is not None)
        k, v = ops[0]
        if len(ops) == 1 and v is not None:
            state.first_write(view, self.path, lambda w: w.put(k, v))
        else:
            state.first_write(view, self.path, lambda w: _write_all(w, ops), len(ops))
        self._write_ready = True
        return True

    # -- ranged views --------------------------------------------------------------

    def _stored_ranges(
        self,
        start: Key | None,
        stop: Key | None,
        include_start: bool,
        include_stop: bool,
        prefix: Key | None,
    ) -> list[_Range]:
        if prefix is not None:
            if start is not None or stop is not None:
                raise TypeError("'prefix' cannot be combined with 'start' or 'stop'")
            lo, hi = self._prefix_range(prefix)
        else:
            lo = self.prefix
            hi = None
            if start is not None:
                lo = self.prefix + self._enc(start)
                if not include_start:
                    lo += b"\x00"
            if stop is not None:
                hi = self.prefix + self._enc(stop)
                if include_stop:
                    hi += b"\x00"
        if self._guard is not None and self._hidden():
            return []
        return _intersect(self._ranges, lo, hi)

    def _prefix_range(self, prefix: Key) -> _Range:
        key_prefix_range = getattr(self.scheme, "key_prefix_range", None)
        if self.scheme.typed_keys and key_prefix_range is not None:
            kp = prefix if isinstance(prefix, tuple) else (prefix,)
            lo, hi = key_prefix_range(self.path, kp)
            return lo, hi
        lo = self.prefix + self._enc(prefix)
        return lo, prefix_end(lo)

    def _scan(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Yield ``(remainder, raw value)`` of own keys in the requested range."""
        ranges = self._stored_ranges(start, stop, include_start, include_stop, prefix)
        if reverse:
            ranges.reverse()
        if limit is not None and limit <= 0:
            return
        plen = self._plen
        scan = self._view.scan
        if self._exact and len(ranges) == 1:
            lo, hi = ranges[0]
            for k, v in scan(lo, hi, reverse=reverse, limit=limit):
                yield k[plen:], v
            return
        is_own = self.scheme.is_own_remainder
        exact = self._exact
        left = limit
        for lo, hi in ranges:
            for k, v in scan(lo, hi, reverse=reverse, limit=left if exact else None):
                rem = k[plen:]
                if exact or is_own(rem):
                    yield rem, v
                    if left is not None:
                        left -= 1
                        if left == 0:
                            return

    def items(  # type: ignore[override]
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield ``(key, value)`` of own keys in key order (descending when
        ``reverse``), bounded by ``start``/``stop`` (``include_*`` decide the ends)
        or by ``prefix`` (leading elements of composite keys in the tuple scheme,
        leading bytes elsewhere), at most ``limit`` items.

        Cost: one range scan of the requested part of the scope."""
        dec, vdec = self._dec, self._vdec
        it = self._scan(start, stop, include_start, include_stop, reverse, limit, prefix)
        if vdec is None:
            for rem, v in it:
                yield dec(rem), v
        else:
            for rem, v in it:
                yield dec(rem), vdec(v)

    def keys(  # type: ignore[override]
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Iterator[Any]:
        """Like :meth:`items`, keys only."""
        dec = self._dec
        for rem, _ in self._scan(start, stop, include_start, include_stop, reverse, limit, prefix):
            yield dec(rem)

    def values(  # type: ignore[override]
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Iterator[Any]:
        """Like :meth:`items`, values only."""
        vdec = self._vdec
        for _, v in self._scan(start, stop, include_start, include_stop, reverse, limit, prefix):
            yield v if vdec is None else vdec(v)

    def __iter__(self) -> Iterator[Any]:
        return self.keys()

    def __len__(self) -> int:
        """Number of own keys. Cost: one scan of the scope's own range."""
        return sum(1 for _ in self._scan())

    def __bool__(self) -> bool:
        return next(self._scan(limit=1), None) is not None

    # -- bulk changes ----------------------------------------------------------------

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Put many items. Inside a transaction they commit with it; outside, they
        are written as one atomic batch (engines with a per-batch operation limit
        raise :class:`TransactionTooLarge` rather than split it)."""
        if kwargs:
            raise TypeError("Scope.update takes a mapping or an iterable of pairs, not keyword keys")
        if len(args) != 1:
            raise TypeError(f"update expected 1 argument, got {len(args)}")
        source = args[0]
        ops = self._encode_items(source.items() if hasattr(source, "items") else source)
        if not ops:
            return
        if not self._write_ready and self._prepare_write(ops):
            return
        _write_all(self._writer(), ops)

    def _encode_items(self, pairs: Iterable[tuple[Any, Any]]) -> list[tuple[bytes, bytes]]:
        """``(stored key, stored value)`` of each pair, in order."""
        prefix, enc, venc = self.prefix, self._enc, self._venc
        ops: list[tuple[bytes, bytes]] = []
        for k, v in pairs:
            raw = v if venc is None else venc(v)
            if type(raw) is not bytes:
                raw = BYTES.encode(raw)
            ops.append((prefix + enc(k), raw))
        return ops

    def clear(self) -> None:
        """Remove every own key; child scopes stay. Cost: one range delete per own
        range where the scheme keeps own keys contiguous, else a scan."""
        self.clear_range()

    def clear_range(
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        prefix: Key | None = None,
    ) -> None:
        """Remove the own keys that :meth:`items` with the same arguments would
        yield. Cost: one range delete per own range (native where the engine has
        one) where the scheme keeps own keys contiguous, else a scan and a batch."""
        view = self._writer()
        if self._exact:
            ranges = self._stored_ranges(start, stop, include_start, include_stop, prefix)

            def delete_ranges(w: WriteView) -> None:
                for lo, hi in ranges:
                    w.delete_range(lo, hi)

            self._state.destructive(view, delete_ranges)
            return
        prefix_bytes = self.prefix
        own = self._scan(start, stop, include_start, include_stop, prefix=prefix)
        doomed = [prefix_bytes + rem for rem, _ in own]
        limit = self._state.batch_limit

        def delete_keys(w: WriteView) -> None:
            write = getattr(w, "write", None)
            if write is not None and len(doomed) <= limit:
                write([(k, None) for k in doomed])
            else:
                for k in doomed:
                    w.delete(k)

        self._state.destructive(view, delete_keys)

    def drop(self) -> None:
        """Remove the scope and every scope below it. Cost: one range delete
        (native where the engine has one); the ScopeHash root, whose named scopes
        lie beside it, takes one per registered name."""
        view = self._writer()
        if self._guard is not None:
            self._hidden()  # a ScopeHash name whose hash another name holds raises

        def delete_subtree(w: WriteView) -> None:
            for lo, hi in self._state.subtree_ranges(w, self.path):
                w.delete_range(lo, hi)

        self._state.destructive(view, delete_subtree)

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
        Cost: one scan of the subtree range (the ScopeHash root: one per name)."""
        view = self._view
        if self._guard is not None:
            self._hidden()
        decode_stored = self._state.decoder(view, self.path)
        vdec = self._vdec
        kdec = _decoded_key_codec(self.scheme, self._key_spec)
        for lo, hi in self._state.subtree_ranges(view, self.path):
            for k, v in view.scan(lo, hi):
                path, key = decode_stored(k)
                if kdec is not None:
                    key = kdec(key)
                yield path, key, (v if vdec is None else vdec(v))

    # -- changes -----------------------------------------------------------------------

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
        :class:`~keyspace.errors.WatchUnsupported` here. Cost: one stream (etcd: and
        one thread) per watch."""
        from ._watch import watch_scope

        if self._guard is not None:
            self._hidden()
        scheme, vdec, view = self.scheme, self._vdec, self._view
        kdec = _decoded_key_codec(scheme, self._key_spec)
        decode = self._state.decoder(view, self.path)

        def subtree_decode(stored: bytes) -> tuple[Path, Any]:
            path, key = decode(stored)
            return path, key if kdec is None else kdec(key)

        return watch_scope(
            self._ks.store,
            self.path,
            own_ranges=scheme.own_ranges(self.path),
            own_exact=scheme.own_range_is_exact(),
            is_own=scheme.is_own_remainder,
            prefix=self.prefix,
            key_decode=self._dec,
            subtree_ranges=self._state.subtree_ranges(view, self.path) if subtree else None,
            subtree_decode=subtree_decode,
            value=vdec,
            start_revision=start_revision,
        )


def _write_all(view: WriteView, ops: Sequence[tuple[bytes, bytes | None]]) -> None:
    """Write ``ops`` (puts, and deletes as ``(key, None)``) as one atomic batch:
    ``write`` where the view has it (the store: engines with a per-batch
    operation limit raise :class:`TransactionTooLarge` rather than split it), else
    in the transaction the view is, which commits them with everything else."""
    write = getattr(view, "write", None)
    if write is not None:
        write(ops)
    elif all(v is not None for _, v in ops):
        view.put_many(ops)  # type: ignore[arg-type]  # no None values: checked above
    else:
        for k, v in ops:
            if v is None:
                view.delete(k)
            else:
                view.put(k, v)


_Z, _ZF = b"\x00", b"\x00\xff"
_RAW: tuple[type[Exception], ...] = (Exception,)
"""What a fast path of a store view raises for the view's ``translate``."""


class _TupleBytesScope(Scope):
    """A :class:`Scope` of bytes keys and bytes values in :class:`TupleScheme`: the
    common case, specialised when the scope is made (``Scope.__new__``).

    A bytes key is stored as ``prefix 01 key(00 -> 00 ff) 00``; here that is one
    ``replace`` and two concatenations inline, and the view's engine callables
    (``fast_get``/``fast_put``, else its ``get``/``put``) are bound once, so a point
    operation costs one Python frame (this method) over the engine's own call;
    engine errors are translated by the view on the error path only. With the
    optional C module, ``[]``, ``get`` and ``[]=`` on bytes keys are C methods
    (``keyspace._scope_accel``) that build the stored key in one allocation and call
    the engine with no Python frame at all; every other case goes to the Python
    method, their ``__wrapped__``. A scan reads
    the view's ``fast_scan`` (else ``scan``) in chunks, each decoded by one C call
    when the optional C module is built and every key of the chunk is a bytes key,
    else by one list comprehension (see :meth:`items`), where keys other than plain
    bytes (composite, typed, escaped zero bytes) take the general decoder.
    ``update`` encodes bytes pairs in one list comprehension and hands them to the
    view's ``put_many`` inside a transaction. Any other argument type takes the general path of
    :class:`Scope`. Measured by ``python -m benchmarks --only lmdb --only bulk``.
    """

    __slots__ = ("_get", "_get_raw", "_p1", "_put", "_put_raw")

    def __init__(
        self,
        keyspace: Keyspace,
        view: ReadView,
        state: Catalog,
        path: Path,
        key: Codec,
        value: Codec,
    ) -> None:
        super().__init__(keyspace, view, state, path, key, value)
        self._p1 = self.prefix + b"\x01"
        fast = view.fast_get
        self._get = view.get if fast is None else fast
        # what a point operation catches to translate: nothing through the view's
        # translating methods; anything but a keyspace error through its fast paths
        self._get_raw: tuple[type[Exception], ...] = () if fast is None else _RAW
        self._put: Callable[[bytes, bytes], object] | None = None
        self._put_raw: tuple[type[Exception], ...] = ()

    def __getitem__(self, key: Key) -> Any:
        stored = self._p1 + key.replace(_Z, _ZF) + _Z if type(key) is bytes else self.prefix + self._enc(key)
        try:
            raw = self._get(stored)
        except self._get_raw as exc:  # only with the view's fast_get: its errors are raw
            raise self._view.translate(exc, stored) from exc
        if raw is None:
            raise KeyError(key)
        return raw

    def get(self, key: Key, default: Any = None) -> Any:
        """Return the value of ``key``, or ``default``. Cost: one point read."""
        stored = self._p1 + key.replace(_Z, _ZF) + _Z if type(key) is bytes else self.prefix + self._enc(key)
        try:
            raw = self._get(stored)
        except self._get_raw as exc:
            raise self._view.translate(exc, stored) from exc
        return default if raw is None else raw

    def __setitem__(self, key: Key, value: Any) -> None:
        put = self._put
        if put is not None and type(key) is bytes and type(value) is bytes:
            stored = self._p1 + key.replace(_Z, _ZF) + _Z
            try:
                put(stored, value)
            except self._put_raw as exc:  # only with the view's fast_put
                raise self._view.translate(exc, stored) from exc
        else:
            super().__setitem__(key, value)

    def _raise_raw(self, exc: BaseException, stored: bytes) -> None:
        """Raise what the view makes of ``exc``, an error of a fast engine call for
        the stored key ``stored`` (called by the C point operations)."""
        raise self._view.translate(exc, stored) from exc

    def _encode_items(self, pairs: Iterable[tuple[Any, Any]]) -> list[tuple[bytes, bytes]]:
        """One list comprehension when every key and value is ``bytes``; else (or on
        a malformed pair) the general loop, which raises the usual errors."""
        items = pairs if type(pairs) is list else list(pairs)
        p1 = self._p1
        try:
            ops = [(p1 + k.replace(_Z, _ZF) + _Z, v) for k, v in items if type(k) is bytes is type(v)]
        except (TypeError, ValueError):
            ops = []
        return ops if len(ops) == len(items) else super()._encode_items(items)

    def _prepare_write(self, ops: Sequence[tuple[bytes, bytes | None]]) -> bool:
        wrote = super()._prepare_write(ops)
        view = self._writer()
        fast = view.fast_put
        self._put = view.put if fast is None else fast
        self._put_raw = () if fast is None else _RAW
        return wrote

    def items(  # type: ignore[override]
        self,
        start: Key | None = None,
        stop: Key | None = None,
        *,
        include_start: bool = True,
        include_stop: bool = False,
        reverse: bool = False,
        limit: int | None = None,
        prefix: Key | None = None,
    ) -> Iterator[tuple[Any, Any]]:
        """See :meth:`Scope.items`. Cost: one range scan, read in chunks (16 items,
        then up to 1024; so it reads up to one chunk ahead) and decoded by one list
        comprehension per chunk — one slice and a memchr per plain bytes key, the
        general decoder for any other — handed out through ``itertools.chain``:
        no generator is resumed per item. With the optional C module a chunk whose
        keys are all bytes keys (zero bytes escaped or not) is decoded by one C call
        (``decode_bytes_chunk``); a chunk holding any other key takes the list
        comprehension, with the same results."""
        return chain.from_iterable(
            self._decoded_chunks(start, stop, include_start, include_stop, reverse, limit, prefix)
        )

    def _own_scan(
        self,
        start: Key | None,
        stop: Key | None,
        include_start: bool,
        include_stop: bool,
        reverse: bool,
        limit: int | None,
        prefix: Key | None,
    ) -> Iterator[tuple[bytes, bytes]] | None:
        """The store scan of the one own range asked for (``None``: nothing to read):
        the view's ``fast_scan`` where it has one (its items come with no Python
        code in the store layer, its errors raw), else its ``scan``."""
        ranges = self._stored_ranges(start, stop, include_start, include_stop, prefix)
        if not ranges or (limit is not None and limit <= 0):
            return None
        (lo, hi) = ranges[0]  # the tuple scheme keeps own keys in one range
        view = self._view
        fast = view.fast_scan
        if fast is not None:
            return fast(lo, hi, reverse, limit)
        return view.scan(lo, hi, reverse=reverse, limit=limit)

    def _decode_other(self, stored: bytes) -> Any:
        """The key of an own stored key that is not a plain bytes key without zero
        bytes: a bytes key whose zero bytes are all escaped (``00 ff``) is one
        ``replace``; anything else (typed, composite) takes the general decoder."""
        plen = self._plen
        # the empty composite key () is stored as the bare prefix: no type code
        if len(stored) > plen and stored[plen] == 1 and stored[-1] == 0:
            body = stored[plen + 1 : -1]
            if body.count(0) == body.count(_ZF):
                return body.replace(_ZF, _Z)
        return self._dec(stored[plen:])

    def _decoded_chunks(self, *args: Any) -> Iterator[list[tuple[Any, bytes]]]:
        """The own items asked for, decoded, as a series of lists (see :meth:`items`)."""
        items = self._own_scan(*args)
        if items is None:
            return
        raw = () if self._view.fast_scan is None else _RAW
        plen = self._plen
        body_at = plen + 1
        other = self._decode_other
        accel = _accel_decode_bytes_chunk
        size = 16
        try:
            while True:
                chunk = list(islice(items, size))
                if not chunk:
                    return
                # C: every key a bytes key (zero bytes escaped or not), else None
                decoded = None if accel is None else accel(chunk, plen)
                yield (
                    decoded
                    if decoded is not None
                    else [
                        (
                            body
                            if k[-1] == 0
                            and len(k) > plen
                            and k[plen] == 1
                            and 0 not in (body := k[body_at:-1])
                            else other(k),
                            v,
                        )
                        for k, v in chunk
                    ]
                )
                if size < 1024:
                    size *= 4
        except KeyspaceError:  # the decoder's, or a translated one: as they are
            raise
        except raw as exc:  # the fast scan's engine errors
            raise self._view.translate(exc) from exc


def _install_point_ops(cls: type[_TupleBytesScope]) -> None:
    """Replace ``[]``, ``get`` and ``[]=`` of ``cls`` by their C versions, which read
    the slots ``_p1``, ``_get``/``_put`` and ``_get_raw``/``_put_raw`` and fall back
    to the Python methods for everything but bytes keys and values."""
    if _point_op is None:
        return
    slot = cls.__dict__  # the member descriptors of the slots
    for name, kind, call, raw in (
        ("__getitem__", "getitem", "_get", "_get_raw"),
        ("get", "get", "_get", "_get_raw"),
        ("__setitem__", "setitem", "_put", "_put_raw"),
    ):
        op = _point_op(kind, cls, slot[name], cls._raise_raw, slot["_p1"], slot[call], slot[raw])
        setattr(cls, name, op)


_install_point_ops(_TupleBytesScope)
