"""Scope layouts: a scope path compiled once by its scheme.

``scheme.layout(path)`` returns a :class:`Layout`, the small immutable object a
scope runs on: the stored ``prefix`` of its own keys, the key ``kind`` (how a key
becomes the rest of the stored key), the ``ranges`` that hold the own keys and
whether they are ``exact`` (no filtering), and three functions:

``stored(key) -> bytes``
    the stored key of ``key``; equal to ``scheme.encode(path, key)`` for every key
    the scheme accepts, and the scheme's own error for every key it refuses;
``key_of(stored) -> key``
    the inverse, for a stored own key;
``decode_chunk(items) -> list``
    ``[(key, value), ...]`` of a list of ``(stored key, value)`` pairs read from the
    own ranges, dropping the pairs that are not own keys where ``exact`` is False.

Kinds: ``raw`` (``prefix + key``; a first byte the key may not start with, for
Sublevel), ``tuple`` (bytes keys as ``01 key(00 -> 00 ff) 00``, str keys as
``02 utf8 00``, other tuple-layer keys packed), ``hex`` (lower-case hex digits;
own keys are those without ``00``), ``u64len`` (``u64le(len key) key``) and
``general`` (the scheme's ``encode_key``/``decode_key``/``is_own_remainder``).

The functions here are the pure-Python reference. When the optional C module
``keyspace.schemes._layouts_accel`` is built, ``stored`` and ``decode_chunk`` of every kind
but ``general`` are its callables, which return the same bytes and keys and raise
the same errors (they call the reference for every case they do not handle).

:meth:`Layout.route` composes a layout with a scope's key codec (str keys in a
byte scheme, typed keys in the tuple scheme) once per codec, so that making a
scope of a known path and codec costs dictionary lookups only.

Cost: building a layout costs one ``scheme.prefix(path)`` and its ranges;
:class:`LayoutCache` keeps up to ``size`` of them per keyspace.
"""

from __future__ import annotations

import binascii
import struct
from collections.abc import Callable
from typing import Any, Protocol

from .._bytes import prefix_end
from ..errors import InvalidKey, show_bytes
from ._paths import Key, Path, checked_path, exact_path, remember

__all__ = [
    "GENERAL",
    "HEX",
    "KINDS",
    "RAW",
    "ROUTE_MEMO_SIZE",
    "TUPLE",
    "U64LEN",
    "Layout",
    "LayoutCache",
    "LayoutScheme",
    "LengthFirstFilter",
]

RAW, TUPLE, HEX, U64LEN, GENERAL = "raw", "tuple", "hex", "u64len", "general"
KINDS = (RAW, TUPLE, HEX, U64LEN, GENERAL)
"""Every key transform a layout can have."""

_Range = tuple[bytes, bytes | None]
Stored = Callable[[Any], bytes]
Chunk = Callable[[list[tuple[bytes, bytes]]], list[tuple[Any, bytes]]]

_Z, _ZF = b"\x00", b"\x00\xff"
_HEX_DIGITS = b"0123456789abcdef"
_U64 = struct.Struct("<Q")
_hexlify, _unhexlify = binascii.hexlify, binascii.unhexlify

_accel: Any
try:  # the optional C transforms (setup.py builds them when it can)
    from . import _layouts_accel as _accel

    _accel.Transform  # noqa: B018 - a build of this version of the module
except (ImportError, AttributeError):  # pragma: no cover - the reference functions below then run
    _accel = None

hex_child_step: Callable[[int, int, Callable[[bytes], Any]], Callable[[bytes], Any]] | None = getattr(
    _accel, "hex_child_step", None
)
"""The C child step of the hex layout (``keyspace.schemes._layouts_accel.hex_child_step``;
``None`` without the C module): what :meth:`AsciiHex.child_step` returns around its
Python step."""
sep_child_step: Callable[[int, int, bytes, Callable[[bytes], Any]], Callable[[bytes], Any]] | None = getattr(
    _accel, "sep_child_step", None
)
"""The C child step of separated names (``keyspace.schemes._layouts_accel.sep_child_step``;
``None`` without the C module): what :meth:`Sublevel.child_step` returns around
its Python step."""


class LayoutScheme(Protocol):
    """What a layout asks of the scheme that compiles it: every
    :class:`~keyspace.schemes.Scheme` offers it (the schemes sit above this
    module and build their layouts from it, so a layout knows the scheme by
    these methods alone)."""

    def validate_path(self, path: Path) -> None: ...
    def prefix(self, path: Path) -> bytes: ...
    def own_ranges(self, path: Path) -> tuple[tuple[bytes, bytes | None], ...]: ...
    def own_range_is_exact(self) -> bool: ...
    def is_own_remainder(self, remainder: bytes) -> bool: ...
    def encode_key(self, key: Key) -> bytes: ...
    def decode_key(self, raw: bytes) -> Key: ...
    def scope_scheme(self, path: Path) -> LayoutScheme: ...
    def layout(self, path: Path, *, accelerate: bool = True) -> Layout: ...


ROUTE_MEMO_SIZE = 16
"""Key codec objects whose routes a layout keeps (:meth:`Layout.route`)."""

_KIND_CODES = {RAW: 0, TUPLE: 1, HEX: 2, U64LEN: 3}
_TEXT_CODES = {"bytes": 0, "text": 1, "native": 2}


_LENGTH_FIELD = 8
"""The width of the length field before each key of the ``u64len`` kind."""


class LengthFirstFilter:
    """The own stored keys of a ``u64len`` layout (``prefix + u64le(len key) +
    key``: ScopeHash, scoped-heed) whose key starts with ``head``, the layout's
    own ranges beginning at ``start``. Called with a stored key, it says whether
    that key is one of them (one comparison).

    :meth:`runs` gives their exact stored ranges instead: the keys of one length
    are contiguous and in key order, so the keys that start with ``head`` are one
    range per length stored that is at least ``len(head)``. Cost: one seek per
    length stored (and per stored key too short to hold a length field), not a
    read of every key of the scope.

    >>> f = LengthFirstFilter(b"P", b"ab", b"P" + bytes(8))
    >>> f(b"P" + (3).to_bytes(8, "little") + b"abc"), f(b"P" + (3).to_bytes(8, "little") + b"xbc")
    (True, False)
    >>> keys = (b"a", b"ab", b"abc", b"xyz", b"abcd")
    >>> stored = sorted(b"P" + len(k).to_bytes(8, "little") + k for k in keys)
    >>> def seek(start: bytes) -> bytes | None:
    ...     return next((k for k in stored if k >= start), None)
    >>> [[k[9:] for k in stored if lo <= k < hi] for lo, hi in f.runs(seek)]
    [[b'ab'], [b'abc'], [b'abcd']]
    """

    __slots__ = ("_at", "_start", "head", "prefix")

    def __init__(self, prefix: bytes, head: bytes, start: bytes) -> None:
        self.prefix = prefix
        self.head = head
        self._at = len(prefix) + _LENGTH_FIELD
        # where the first seek goes: a reader may hold no right to read below the
        # own ranges (etcd's per-user key ranges)
        self._start = start

    def __call__(self, stored: bytes) -> bool:
        return stored.startswith(self.head, self._at)

    def runs(self, seek: Callable[[bytes], bytes | None]) -> list[tuple[bytes, bytes | None]]:
        """The stored ranges of the keys kept, in stored order: for each length
        field stored from the start of the own ranges on (found with
        ``seek(start)``, the first stored key at or after ``start`` in the
        layout's own ranges, or ``None``), ``[prefix + field + head,
        prefix_end(prefix + field + head))`` where the field's length is at least
        ``len(head)``."""
        prefix, head = self.prefix, self.head
        at, end, least = len(prefix), self._at, len(head)
        head_end = prefix_end(head)  # None: the run's end is the field's own end
        out: list[tuple[bytes, bytes | None]] = []
        found = seek(self._start)
        while found is not None and found.startswith(prefix):  # each seek goes past the last
            run = found[:end]
            if len(run) < end:  # too short to be a key of this layout
                after: bytes | None = found + b"\x00"
            else:
                after = prefix_end(run)
                if int.from_bytes(run[at:], "little") >= least:
                    out.append((run + head, after if head_end is None else run + head_end))
            if after is None:
                break
            found = seek(after)
        return out


class Layout:
    """One scope path compiled by its scheme (see the module notes).

    Attributes: ``scheme``, ``path``, ``prefix``, ``kind``, ``ranges`` (half-open,
    ascending), ``exact``, ``forbidden`` (the first byte a raw key may not have, or
    -1), ``lacks`` (where ``exact`` is False, a byte that tells own keys from the
    others: a stored key of the ranges is an own key exactly when it holds no
    ``lacks`` after the prefix, so a count of own keys is a store's
    ``count(..., without)``; -1 where no byte tells them), ``stored``, ``key_of``,
    ``decode_chunk``, ``accelerated`` (the C functions serve ``stored`` and
    ``decode_chunk``), ``plain`` (every stored key of the ranges is an own key,
    and its bytes key is the stored key without the prefix: a scan may read the
    keys without it, ``ReadView.read_pages(..., cut=len(prefix))``, and decode
    nothing). Immutable, apart from the memo of
    :meth:`route`.
    """

    __slots__ = (
        "_rebased",
        "_routes",
        "accelerated",
        "decode_chunk",
        "escape",
        "exact",
        "forbidden",
        "key_of",
        "kind",
        "lacks",
        "path",
        "plain",
        "prefix",
        "ranges",
        "scheme",
        "stored",
        "strip",
    )

    scheme: LayoutScheme
    path: Path
    prefix: bytes
    kind: str
    ranges: tuple[_Range, ...]
    exact: bool
    forbidden: int
    lacks: int
    stored: Stored
    key_of: Callable[[bytes], Any]
    decode_chunk: Chunk
    accelerated: bool
    escape: tuple[bytes, bytes, bytes, bytes] | None
    plain: bool
    strip: int
    _routes: dict[int, tuple[Any, tuple[Stored, Callable[[bytes], Any], Chunk]]]
    _rebased: dict[int, Layout]

    def __init__(
        self,
        scheme: LayoutScheme,
        path: Path,
        *,
        kind: str = GENERAL,
        forbidden: int = -1,
        accelerate: bool = True,
        strip: int = 0,
        lacks: int = -1,
    ) -> None:
        """Compile ``path`` for ``scheme`` with the key transform ``kind``.
        ``accelerate=False`` keeps the pure-Python reference functions. ``strip``:
        compile for a store view that holds the keys of this path without their
        first ``strip`` bytes (see :meth:`rebased`). ``lacks``: the byte own keys
        lack where the scheme's own ranges are not exact (see the class notes).
        Raises
        :class:`~keyspace.errors.InvalidName` for a ``path`` that is not a tuple
        (a tuple subclass is compiled as the exact tuple of its elements), and
        what the scheme raises for one it cannot represent."""
        if kind not in KINDS:
            raise ValueError(f"layout kind {kind!r} is not one of {KINDS}")
        path = checked_path(path)
        scheme.validate_path(path)
        prefix = scheme.prefix(path)
        ranges = tuple(scheme.own_ranges(path))
        if strip:
            if strip < 0 or strip > len(prefix):
                raise ValueError(f"strip={strip} is not within the {len(prefix)}-byte prefix of {path!r}")
            tag = prefix[:strip]
            ranges = tuple(r for r in (_cut_range(tag, lo, hi) for lo, hi in ranges) if r is not None)
            prefix = prefix[strip:]
        sets = object.__setattr__
        sets(self, "scheme", scheme)
        sets(self, "path", path)
        sets(self, "prefix", prefix)
        sets(self, "kind", kind)
        sets(self, "ranges", ranges)
        sets(self, "exact", scheme.own_range_is_exact())
        sets(self, "forbidden", forbidden)
        sets(self, "lacks", -1 if self.exact else lacks)
        sets(self, "strip", strip)
        sets(self, "_routes", {})
        sets(self, "_rebased", {})
        sets(self, "escape", _escape(kind, prefix, forbidden))
        sets(self, "plain", kind == RAW and self.exact)
        stored, key_of, chunk = _reference(self)
        sets(self, "key_of", key_of)
        fast = accelerate and _accel is not None and kind != GENERAL
        if fast:
            c = _accel.Transform(_KIND_CODES[kind], prefix, forbidden, 0, stored, chunk)
            stored, chunk = c, c.decode_chunk
        sets(self, "stored", stored)
        sets(self, "decode_chunk", chunk)
        sets(self, "accelerated", fast)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Layout is immutable (tried to set {name!r})")

    def __repr__(self) -> str:
        return f"<Layout {self.kind} {self.path!r} of {self.scheme!r}>"

    def rebased(self, cut: int) -> Layout:
        """This layout compiled for a store view that holds every key under the
        first ``cut`` bytes of :attr:`prefix` without those bytes (a part of a
        :class:`~keyspace.stores._union.PrefixUnion`, see ``ReadView.narrow``):
        ``rebased(cut).stored(k) == stored(k)[cut:]``, ranges and key decoding to
        match, the same kind (so the C transform builds the shorter keys itself).
        ``rebased(0)`` is this layout. Memoised per ``cut``. Raises
        :class:`ValueError` for a ``cut`` longer than the prefix."""
        if cut == 0:
            return self
        got = self._rebased.get(cut)
        if got is None:
            got = Layout(
                self.scheme,
                self.path,
                kind=self.kind,
                forbidden=self.forbidden,
                accelerate=self.accelerated,
                strip=self.strip + cut,
                lacks=self.lacks,
            )
            self._rebased[cut] = got
        return got

    def is_own(self, stored: bytes) -> bool:
        """True when ``stored``, a key in one of :attr:`ranges`, is an own key (always
        True where :attr:`exact`)."""
        return self.exact or self.scheme.is_own_remainder(stored[len(self.prefix) :])

    def prefix_range(
        self, key_prefix: Key, stored: Stored | None = None
    ) -> tuple[bytes, bytes | None, LengthFirstFilter | None]:
        """The stored range of the own keys that start with ``key_prefix``, and a
        filter on stored keys where one range cannot say it (``None`` where it can).

        ``key_prefix`` is what the scheme's keys start with: leading elements of
        composite keys in the tuple scheme (a non-tuple is one element), leading
        bytes in the byte schemes, turned into a stored key by ``stored`` (a
        check of the scope's key type composed with :attr:`stored`; :attr:`stored`
        by default), which a scheme of typed keys does not call: its elements are
        the scheme's own keys. A key codec that turns keys into bytes is applied
        by the caller, which passes those bytes (see ``Scope.items``). ScopeHash
        stores a key's length before it, so no range holds the keys with a byte
        prefix: the range is the scope's own and the filter keeps the stored keys
        whose key starts with the prefix; that filter also offers ``runs(seek)``,
        the exact ranges of those keys, one per length stored (see
        :class:`LengthFirstFilter`)."""
        key_prefix_range = getattr(self.scheme, "key_prefix_range", None)
        if key_prefix_range is not None:
            lo, hi = key_prefix_range(self.path, key_prefix)
            if self.strip:
                tag = self.scheme.prefix(self.path)[: self.strip]
                cut = _cut_range(tag, lo, hi)
                lo, hi = (self.prefix, self.prefix) if cut is None else cut
            return lo, hi, None
        lo = (self.stored if stored is None else stored)(key_prefix)
        if self.kind == U64LEN:
            prefix = self.prefix
            keep = LengthFirstFilter(prefix, lo[len(prefix) + _LENGTH_FIELD :], self.ranges[0][0])
            return self.ranges[0][0], self.ranges[-1][1], keep
        return lo, prefix_end(lo), None

    def route(self, codec: Any, native: bool, text: bool) -> tuple[Stored, Callable[[bytes], Any], Chunk]:
        """``(stored, key_of, decode_chunk)`` for scope keys of ``codec`` (an object
        with ``encode``/``decode``; ``None`` for the scheme's own keys): the layout's
        own functions composed with the codec, or, where ``native``, with
        ``codec.encode`` as a type check only (typed keys of the tuple scheme).
        ``text``: the codec is the UTF-8 str codec, which the C transforms apply
        themselves.

        Memoised per codec object, by identity: any object with ``encode`` and
        ``decode`` is a codec (an unhashable one too), and codecs that compare
        equal may still encode differently, so each gets the route of its own
        functions. Up to :data:`ROUTE_MEMO_SIZE` codec objects are kept per
        layout (the oldest dropped first), so that codecs made per request are
        not kept alive."""
        routes = self._routes
        got = routes.get(id(codec))
        if got is not None and got[0] is codec:  # held by the entry: its id is its own
            return got[1]
        route = _compose(self, codec, native, text)
        remember(routes, id(codec), (codec, route), ROUTE_MEMO_SIZE)
        return route


def _cut_range(tag: bytes, lo: bytes, hi: bytes | None) -> _Range | None:
    """The part of ``[lo, hi)`` under ``tag``, as keys without ``tag`` (``None``:
    no key under ``tag`` is in it)."""
    end = prefix_end(tag)
    if (end is not None and lo >= end) or (hi is not None and hi <= tag):
        return None
    return (lo[len(tag) :] if lo.startswith(tag) else b""), (
        hi[len(tag) :] if hi is not None and hi.startswith(tag) else None
    )


def _compose(
    layout: Layout, codec: Any, native: bool, text: bool
) -> tuple[Stored, Callable[[bytes], Any], Chunk]:
    stored, key_of, chunk = layout.stored, layout.key_of, layout.decode_chunk
    if codec is None:
        return stored, key_of, chunk
    enc, dec = codec.encode, codec.decode
    if native:
        if layout.accelerated and text:
            # the C transform takes str keys only, and refuses others through enc
            c = _accel.Transform(
                _KIND_CODES[layout.kind], layout.prefix, layout.forbidden, 2, _checked(enc, stored), chunk
            )
            return c, key_of, chunk

        return _checked(enc, stored), key_of, chunk  # enc raises InvalidKey for a key of the wrong type
    if layout.accelerated and text:
        c = _accel.Transform(
            _KIND_CODES[layout.kind],
            layout.prefix,
            layout.forbidden,
            1,
            _encoding(enc, stored),
            _decoded(chunk, dec),
        )
        return c, lambda raw: dec(key_of(raw)), c.decode_chunk
    if layout.accelerated:
        # the C transform calls enc itself and builds the stored key from its bytes; an answer
        # that is no bytes takes the fallback, which refuses it
        decoded = _decoded(chunk, dec)
        kind, fallback = _KIND_CODES[layout.kind], _encoding(enc, stored)
        # a codec that declares fixed-width little-endian ints has them packed in C
        size, signed = getattr(codec, "fixed_int", None) or (0, False)
        if size not in (1, 2, 4, 8):
            size, signed = 0, False
        c = _accel.Transform(kind, layout.prefix, layout.forbidden, 3, fallback, decoded, enc, size, signed)
        return c, lambda raw: dec(key_of(raw)), decoded
    return _encoding(enc, stored), (lambda raw: dec(key_of(raw))), _decoded(chunk, dec)


def _encoding(enc: Callable[[Any], Any], stored: Stored) -> Stored:
    """The stored key of a key of a codec (``enc``, its encode): ``stored(enc(key))``,
    with :class:`~keyspace.errors.InvalidKey` where ``enc`` answers anything but
    bytes (the tuple layout would store a str or an int as it is)."""

    def encoding(key: Any) -> bytes:
        return stored(_encoded(enc, key))

    return encoding


def _encoded(enc: Callable[[Any], Any], key: Any) -> bytes:
    """``enc(key)``, a key codec's bytes: :class:`~keyspace.errors.InvalidKey` for
    any other answer."""
    raw = enc(key)
    if not isinstance(raw, bytes):
        raise InvalidKey(
            f"the key codec's encode gave {type(raw).__name__} {show_bytes(raw)} for the key "
            f"{show_bytes(key)}; a codec's encode(obj) must return bytes"
        )
    return raw


def _checked(enc: Callable[[Any], Any], stored: Stored) -> Stored:
    def checked(key: Any) -> bytes:
        enc(key)
        return stored(key)

    return checked


def _decoded(chunk: Chunk, dec: Callable[[bytes], Any]) -> Chunk:
    def decode(items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
        return [(dec(k), v) for k, v in chunk(items)]

    return decode


# -- the pure-Python reference of each kind ------------------------------------------


def _escape(kind: str, prefix: bytes, forbidden: int) -> tuple[bytes, bytes, bytes, bytes] | None:
    """``(head, old, new, tail)`` with ``stored(k) == head + k.replace(old, new) +
    tail`` for every bytes key ``k`` (see :class:`Layout`): the tuple kind's
    framing, and the raw kind without a forbidden first byte (``replace(b"", b"")``
    returns the key itself). ``None`` for every other transform."""
    if kind == TUPLE:
        return prefix + b"\x01", _Z, _ZF, _Z
    if kind == RAW and forbidden < 0:
        return prefix, b"", b"", b""
    return None


def _reference(layout: Layout) -> tuple[Stored, Callable[[bytes], Any], Chunk]:
    scheme = layout.scheme
    prefix = layout.prefix
    plen = len(prefix)
    encode_key, decode_key = scheme.encode_key, scheme.decode_key
    kind = layout.kind

    def general_stored(key: Key) -> bytes:
        return prefix + encode_key(key)

    def general_key_of(stored: bytes) -> Any:
        return decode_key(stored[plen:])

    if kind == RAW:
        forbidden = layout.forbidden

        def raw_stored(key: Key) -> bytes:
            if type(key) is bytes and (not key or key[0] != forbidden):
                return prefix + key
            return prefix + encode_key(key)

        def raw_key_of(stored: bytes) -> Any:
            return stored[plen:]

        def raw_chunk(items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
            return [(k[plen:], v) for k, v in items]

        return raw_stored, raw_key_of, raw_chunk

    if kind == TUPLE:
        p1, p2 = prefix + b"\x01", prefix + b"\x02"
        body_at = plen + 1

        def tuple_stored(key: Key) -> bytes:
            if type(key) is bytes:
                raw: bytes = key
                return p1 + raw.replace(_Z, _ZF) + _Z
            if type(key) is str and key.isascii():
                text: str = key
                return p2 + text.encode().replace(_Z, _ZF) + _Z
            return prefix + encode_key(key)

        def tuple_key_of(stored: bytes) -> Any:
            # the empty composite key () is stored as the bare prefix: no type code
            if len(stored) > plen and stored[-1] == 0 and stored[plen] == 1:
                body = stored[body_at:-1]
                if body.count(0) == body.count(_ZF):
                    return body.replace(_ZF, _Z)
            return decode_key(stored[plen:])

        def tuple_chunk(items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
            return [
                (
                    body
                    if k[-1] == 0 and len(k) > plen and k[plen] == 1 and 0 not in (body := k[body_at:-1])
                    else tuple_key_of(k),
                    v,
                )
                for k, v in items
            ]

        return tuple_stored, tuple_key_of, tuple_chunk

    if kind == HEX:

        def hex_stored(key: Key) -> bytes:
            if type(key) is bytes:
                return prefix + _hexlify(key)
            return prefix + encode_key(key)

        def hex_chunk(items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
            try:
                return [(_hex_key(rem), v) for k, v in items if _Z not in (rem := k[plen:])]
            except (binascii.Error, ValueError):
                return [(decode_key(rem), v) for k, v in items if _Z not in (rem := k[plen:])]

        return hex_stored, general_key_of, hex_chunk

    if kind == U64LEN:
        body_at = plen + 8
        pack_len = _U64.pack

        def len_stored(key: Key) -> bytes:
            if type(key) is bytes:
                return prefix + pack_len(len(key)) + key
            return prefix + encode_key(key)

        def len_key_of(stored: bytes) -> Any:
            return decode_key(stored[plen:])

        def len_chunk(items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
            out = [(k[body_at:], v) for k, v in items]
            for (k, _), (key, _) in zip(items, out, strict=True):
                if len(k) < body_at or int.from_bytes(k[plen:body_at], "little") != len(key):
                    decode_key(k[plen:])  # raises the DecodeError that names the fault
            return out

        return len_stored, len_key_of, len_chunk

    exact = layout.exact
    is_own = scheme.is_own_remainder

    def general_chunk(items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
        if exact:
            return [(decode_key(k[plen:]), v) for k, v in items]
        return [(decode_key(rem), v) for k, v in items if is_own(rem := k[plen:])]

    return general_stored, general_key_of, general_chunk


def _hex_key(rem: bytes) -> bytes:
    """The key of hex digits ``rem``; ValueError for anything but lower-case digits."""
    if rem.translate(None, _HEX_DIGITS):
        raise ValueError("not lower-case hex digits")
    return _unhexlify(rem)


class LayoutCache:
    """A bounded memo ``path -> Layout`` of one scheme (kept per keyspace).

    Only paths whose components are all ``str`` or ``bytes`` are kept, and only
    such paths are answered from the memo (:func:`~keyspace.schemes._paths.exact_path`):
    a path of other types that compares equal to a kept one (``(1,)``,
    ``(True,)`` and ``(1.0,)``; ``(memoryview(b"a"),)`` and ``(b"a",)``) is
    compiled as itself, so a hit is the layout of exactly the path asked for
    and a path the scheme refuses is refused whatever was compiled before. When full, the oldest entry
    goes (threads may fill it at once: see :func:`~keyspace.schemes._paths.remember`;
    ``size`` 0 keeps nothing). Cost of a hit: one dictionary lookup.
    """

    __slots__ = ("_accelerate", "_layouts", "_scheme", "size")

    def __init__(self, scheme: LayoutScheme, size: int = 4096, *, accelerate: bool = True) -> None:
        """``accelerate=False`` compiles pure-Python layouts (see :meth:`Scheme.layout`)."""
        self._scheme = scheme
        self._layouts: dict[Path, Layout] = {}
        self._accelerate = accelerate
        self.size = size

    def get(self, path: Path) -> Layout:
        """The layout of ``path`` (by the scheme's :meth:`Scheme.scope_scheme` of
        it), compiled on the first request.

        Raises what ``scheme.layout(path)`` raises for a path the scheme cannot
        represent (:class:`InvalidName`, :class:`KeyTooLarge`)."""
        try:
            layout = self._layouts.get(path)
        except MemoryError:
            raise
        except Exception:  # unhashable, or a component's __hash__/__eq__ raises: the scheme names the fault
            path = checked_path(path)
            return self._scheme.scope_scheme(path).layout(path, accelerate=self._accelerate)
        if layout is not None and exact_path(path):  # not an equal path of other types
            return layout
        layout = self._scheme.scope_scheme(path).layout(path, accelerate=self._accelerate)
        if exact_path(path):
            remember(self._layouts, path, layout, self.size)
        return layout

    def __len__(self) -> int:
        return len(self._layouts)

    @property
    def layouts(self) -> dict[Path, Layout]:
        """The memo itself, for lookups that must cost one dictionary access (a miss
        goes through :meth:`get`)."""
        return self._layouts
