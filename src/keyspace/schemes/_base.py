"""The scheme interface: a namespace path and a key <-> one stored key.

A scheme is a pure function family (no I/O, no store). Every scheme offers::

    scheme.encode(path, key) -> bytes            stored key of `key` in scope `path`
    scheme.decode(stored, depth=None) -> (path, key)
    scheme.own_range(path) -> (start, stop)      half-open range of the scope's own keys
    scheme.subtree_range(path) -> (start, stop)  the scope and everything below it
    scheme.properties                            which of the guarantees 1-6 hold

A ``stop`` of ``None`` means "to the end of the keyspace". A path is a tuple of
components; in the byte schemes a component is ``bytes`` or ``str`` (UTF-8).

Scopes use three more members to stay fast: :meth:`Scheme.prefix` (bytes every own
key of a scope starts with, computed once per scope), :meth:`Scheme.encode_key` /
:meth:`Scheme.decode_key` (the part after the prefix) and :attr:`key_is_raw` (the
key part is the key itself, so a scope skips the call).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, cast

from .._bytes import buffer_bytes, prefix_end
from ..errors import bytes_argument
from ._layouts import Layout
from ._paths import Component, Key, Path, checked_path, exact_path, remember
from ._paths import _exact_path as _exact_path  # the pure-Python reference, as before

__all__ = [
    "Component",
    "Key",
    "Path",
    "Property",
    "Scheme",
    "checked_path",
    "component_bytes",
    "decode_arguments",
    "exact_path",
    "in_c",
    "key_bytes",
    "remember",
]

_MEMO_SIZE = 1024
"""Paths whose compiled ``stored`` a scheme object keeps for :meth:`Scheme.encode`."""


class Property(enum.IntEnum):
    """The guarantees of DESIGN.md, numbered as there."""

    ANY_BYTES = 1
    """Namespaces and keys may be any bytes (or typed values), any length."""
    COLLISION_FREE = 2
    """Two different (path, key) pairs never share a stored key."""
    ORDER_WITHIN = 3
    """Byte order of stored keys in one scope equals the order of the keys."""
    NAMESPACE_ORDER = 4
    """Scopes sort lexicographically by their path."""
    NESTING = 5
    """Scopes nest to any depth."""
    DECODABLE = 6
    """A stored key decodes back into (path, key) without outside information."""

    @property
    def title(self) -> str:
        return _TITLES[self]


_TITLES = {
    Property.ANY_BYTES: "any bytes",
    Property.COLLISION_FREE: "collision-free",
    Property.ORDER_WITHIN: "order within scope",
    Property.NAMESPACE_ORDER: "scopes sorted",
    Property.NESTING: "nesting",
    Property.DECODABLE: "decodable",
}


_accel: Any
try:  # the C forms of scheme methods (see in_c)
    from . import _layouts_accel as _accel
except ImportError:  # pragma: no cover - the optional C module is not built
    _accel = None

_F = TypeVar("_F", bound=Callable[..., Any])


def in_c(form: str) -> Callable[[_F], _F]:
    """The decorator of a scheme method served by its C form, made from the
    method by ``keyspace.schemes._layouts_accel.<form>`` (the method is its
    reference: its ``__wrapped__``) where the optional C module is built, else
    the method itself: :meth:`Scheme.encode` (``memo_encode``),
    :meth:`LengthPrefixed.decode <keyspace.schemes.LengthPrefixed.decode>`
    (``lp_decode``)."""
    make = None if _accel is None else getattr(_accel, form)

    def served(method: _F) -> _F:
        return method if make is None else cast(_F, make(method))

    return served


def decode_arguments(scheme: Scheme, stored: Any, depth: Any) -> tuple[bytes, int | None]:
    """``(stored, depth)`` as :meth:`Scheme.decode` takes them, for arguments that
    are not exactly ``bytes`` and ``None`` or an ``int`` (every decode tests
    that first, and calls this only then): a bytes-like ``stored`` as its bytes,
    an int subclass ``depth`` as its int. Raises
    :class:`~keyspace.errors.InvalidArgument` naming the argument, the type and
    the value for anything else (a ``bool`` depth included)."""
    name = f"{type(scheme).__name__}.decode()"
    stored = bytes_argument(stored, f"{name} stored")
    if depth is None or type(depth) is int:
        return stored, depth
    if issubclass(type(depth), int) and type(depth) is not bool:
        return stored, int.__int__(depth)
    from ..errors import InvalidArgument, show_bytes

    raise InvalidArgument(
        f"{name} depth must be None or an int (a path length), not {type(depth).__name__}: "
        f"{show_bytes(depth)}"
    )


def component_bytes(component: Component) -> bytes:
    """Return a byte-scheme path component as bytes (``str`` is UTF-8 encoded).

    Raises :class:`~keyspace.errors.InvalidName` for any other type, for a str
    that cannot be UTF-8 encoded (lone surrogates: the message names the index
    of the first), or for a released ``memoryview``. A str subclass is encoded
    by ``str.encode`` itself, a ``bytearray`` or ``memoryview`` read through the
    buffer protocol: none of the component's own methods runs.
    """
    if type(component) is bytes:
        return component
    kind = type(component)
    if issubclass(kind, str):
        try:
            return str.encode(component, "utf-8")
        except UnicodeEncodeError as exc:
            from ..errors import InvalidName, show_bytes

            raise InvalidName(
                f"scope name {show_bytes(component)} is not valid UTF-8 text: {exc.reason} at index "
                f"{exc.start}"
            ) from None
    from ..errors import InvalidName, show_bytes

    if issubclass(kind, (bytearray, memoryview)):
        raw = buffer_bytes(component)
        if raw is not None:
            return raw
        raise InvalidName(f"scope name {show_bytes(component)} holds no bytes (a released memoryview)")
    raise InvalidName(
        f"scope name {show_bytes(component)} has type {kind.__name__}; this scheme takes bytes or str"
    )


def key_bytes(key: Key) -> bytes:
    """Return a byte-scheme key as bytes, unchanged when it already is ``bytes``.

    Raises :class:`~keyspace.errors.InvalidKey` for any other type: the byte schemes
    take bytes keys (a scope's key codec turns str or int keys into bytes first).
    Cost: one type check.
    """
    if type(key) is bytes:
        return key
    from ..errors import InvalidKey, show_bytes

    raise InvalidKey(f"key {show_bytes(key)} has type {type(key).__name__}; this scheme takes bytes keys")


class Scheme(ABC):
    """Base class of every key scheme. Subclasses are immutable and hashable."""

    name: ClassVar[str]
    """Short name used in metadata, URLs and the command line (e.g. ``"tuple"``)."""

    properties: ClassVar[frozenset[Property]]
    """The guarantees this scheme declares; the test suite proves each one."""

    separates_own_keys: ClassVar[bool] = True
    """False where a scope's own keys cannot be told from its children's keys
    (LengthPrefixed, Naive): a scope then holds keys or child scopes, not both."""

    max_depth: ClassVar[int | None] = None
    """Deepest path the scheme can encode (ScopeHash: 1), ``None`` for unlimited."""

    typed_keys: ClassVar[bool] = False
    """True when keys are typed values (the tuple layer), not only bytes."""

    _memo: dict[Path, tuple[Path, Callable[[Key], bytes]]]
    """Set by :meth:`_compiled` on first use (so reading it first may raise
    AttributeError): path -> ``(path as kept, the stored of its layout)``, which
    :meth:`encode` calls (one lookup, one call, no layout attribute)."""

    key_is_raw: ClassVar[bool] = False
    """True when ``encode(path, key) == prefix(path) + key`` for every bytes key."""

    parameters: ClassVar[tuple[str, ...]] = ()
    """Constructor parameters that may be given by name where a scheme is chosen by
    name (``scheme_from_name``, the command line's ``--separator``/``--depth``)."""

    ambiguous_splits: ClassVar[bool] = False
    """True when a stored key can decode without error yet not into the path its
    writer meant (hand-made Delimited keys whose key holds the separator);
    :meth:`ambiguity` then tells which keys."""

    table_label: ClassVar[str | None] = None
    """How the property table names this class (default: the class name)."""

    variants: ClassVar[tuple[type[Scheme], ...]] = ()
    """Subclasses that a parameter selects and that declare other properties
    (``Delimited("\\x00")`` is a :class:`NulDelimited`): the property table gives
    each a row of its own."""

    # -- what a keyspace and a reader of the scheme's keys must do (declared here, so
    # that the layers above consult the declaration, never the class) ----------------

    decode_needs_depth: ClassVar[bool] = False
    """True when :meth:`decode` can split a stored key only when told the depth of
    its path, which the format does not record and the scheme does not fix (scopes
    of any depth may hold keys): a reader of a whole store must be given that depth
    (LengthPrefixed). A scheme that reads back one depth only declares it with
    :attr:`max_decode_depth` instead."""

    max_decode_depth: ClassVar[int | None] = None
    """Deepest path :meth:`decode` splits a stored key into; ``None`` for no limit
    (beyond :attr:`max_depth`). Naive: 0, since nothing marks where a name ends,
    every stored key reads as a key of the root scope (``decode(stored, 0)``); a
    reader asked for a deeper one refuses."""

    hashed_names: ClassVar[bool] = False
    """True when the scheme stores a scope name as a fixed-width hash of its UTF-8
    text and a keyspace of the scheme keeps the name registry (ScopeHash). The
    contract the keyspace relies on: paths are ``()`` or ``(name,)`` with a
    non-empty ``str`` name; :meth:`prefix` of every path is the hash alone, of one
    width (little-endian), and the key made of exactly those bytes is where the
    keyspace records the name that owns the hash (UTF-8), so that a second name
    with the same hash is refused (:class:`~keyspace.errors.HashCollision`) on
    every access; no stored key of a scope is that short, and keys shorter still
    are the scheme's records; :meth:`decode` gives ``((hash,), key)``, the hash as
    an int, for a named scope (``()`` for the root, whose hash no name may own)."""

    refuses_writes: ClassVar[bool] = False
    """True when the scheme's keys collide across scopes, so that it refuses to
    encode (:class:`~keyspace.errors.LayoutError`) unless built with
    ``allow_collisions=True``, a parameter its constructor then takes (Naive).
    Where a scheme is chosen by name (the command line), such a scheme is built to
    read (``allow_collisions=True``) and, for a command that writes, to refuse
    every write."""

    def refuse_change(self, what: str) -> None:
        """Raise :class:`~keyspace.errors.LayoutError` (saying it refuses to
        ``what``) when the scheme, as built, refuses to change the store: one whose
        keys collide across scopes (:attr:`refuses_writes`) without
        ``allow_collisions=True``. Its encode refuses so (a put); the keyspace asks
        this before a delete, whose ranges would hold other scopes' keys. Every
        other scheme returns."""
        return None

    records_layout: ClassVar[bool] = False
    """True when a keyspace of the scheme records its leaf/branch layout in the
    store (which scopes hold keys, for a scheme that cannot tell a scope's own keys
    from its children's), unless it is opened with a declared ``leaf_depth``
    (LengthPrefixed). The records lie under ``ff ff "keyspace-layout" 00``, which
    the keyspace reserves, and stand for the scheme record such a scheme has no
    room for: a keyspace of another scheme finding them refuses the store. Their
    keys do not name the scheme that wrote them, so at most one registered scheme
    declares this (the test suite checks it)."""

    # -- the public interface of DESIGN.md ---------------------------------------

    @in_c("memo_encode")
    def encode(self, path: Path, key: Key) -> bytes:
        """Return the stored key of ``key`` in scope ``path``.

        One body for every scheme: the ``stored`` of the path's layout, compiled
        once by :meth:`_compiled` and kept in the scheme's bounded memo, builds the
        key, so a scheme says how it encodes through :meth:`layout` (its
        :meth:`prefix` and :meth:`encode_key`), and its refusals (bad names, bad
        keys) are those of its layout, or of :meth:`_encode_new`. Cost: one dict
        lookup and one call of the compiled function (and, for a path object other
        than the one kept, a type test per component); a path not yet seen (or
        not memoised: not all ``str``/``bytes`` components, :func:`exact_path`)
        goes through :meth:`_encode_new` first, and so does one whose lookup
        raises anything but ``MemoryError`` (an unhashable path; a component
        whose ``__hash__`` or ``__eq__`` raises), which the scheme then refuses
        by name.

        Where the optional C module is built this method is its C form (made by
        the decorator :func:`in_c`; this one is its ``__wrapped__``), which does the
        same with no Python frame: 15-20 ns less per call, about a quarter of the
        cost on a memoised path. A subclass that defines ``encode`` overrides
        either."""
        try:
            kept, stored = self._memo[path]
        except MemoryError:
            raise
        except Exception:  # no memo yet, a new path, an unhashable one, or one whose parts' __hash__ or
            return self._encode_new(path, key)  # __eq__ raise: _encode_new compiles it, or names the fault
        # the kept path itself, or one of the same component types: an equal path of
        # other types (memoryview(b"a") == b"a") is compiled (and refused) as itself
        if kept is path or exact_path(path):
            return stored(key)
        return self._encode_new(path, key)

    def _encode_new(self, path: Path, key: Key) -> bytes:
        """:meth:`encode` of a path its memo does not hold: compile the path
        (:meth:`_compiled`, which memoises it) and build the key. A scheme that
        refuses to encode before compiling anything (Naive without
        ``allow_collisions``) overrides this, never :meth:`encode`."""
        return self._compiled(path)(key)

    @abstractmethod
    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Split a stored key into ``(path, key)``; ``depth`` is the path length where
        the format does not record it. Raises :class:`DecodeError` on bytes that
        are not such a key, and :class:`~keyspace.errors.InvalidArgument` for a
        ``stored`` that is not bytes-like or a ``depth`` that is neither ``None``
        nor an int (:func:`decode_arguments`)."""

    @abstractmethod
    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Half-open byte range that holds the scope's own keys (and, where
        :meth:`own_range_is_exact` is False, some children's keys as well)."""

    @abstractmethod
    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Half-open byte range holding the scope's keys and every descendant's."""

    # -- what scopes use to stay fast --------------------------------------------

    @abstractmethod
    def prefix(self, path: Path) -> bytes:
        """Bytes that every stored own key of ``path`` starts with, such that
        ``encode(path, key) == prefix(path) + encode_key(key)``."""

    def encode_key(self, key: Key) -> bytes:
        """Encode the key part that follows :meth:`prefix` (identity for bytes keys by
        default; other types raise :class:`~keyspace.errors.InvalidKey`)."""
        return key_bytes(key)

    def decode_key(self, raw: bytes) -> Key:
        """Inverse of :meth:`encode_key` (identity by default)."""
        return raw

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """Compile ``path`` into the :class:`~keyspace.schemes._layouts.Layout` a
        scope runs on (``stored(key) == encode(path, key)``). The default is the
        ``general`` transform, through :meth:`encode_key`/:meth:`decode_key`;
        schemes with a simpler transform name it. ``accelerate=False`` keeps the
        pure-Python functions. Cost: one :meth:`prefix` and :meth:`own_ranges`."""
        return Layout(self, path, accelerate=accelerate)

    def _compiled(self, path: Path) -> Callable[[Key], bytes]:
        """The ``stored`` of ``path``'s layout, compiled here and kept in a bounded
        memo of this scheme object (``self._memo``, read first by :meth:`encode`;
        at most :data:`_MEMO_SIZE` paths, the oldest dropped first).

        Only paths of ``str`` and ``bytes`` components are kept: ``(1,)``,
        ``(True,)`` and ``(1.0,)`` are equal tuples but different tuple-scheme
        paths, so a hit must be the path asked for. Raises
        :class:`~keyspace.errors.InvalidName` for a path that is not a tuple
        (:func:`checked_path`), and what :meth:`layout` raises for a path the
        scheme cannot represent."""
        path = checked_path(path)
        stored = self.scope_scheme(path).layout(path).stored
        if exact_path(path):
            try:
                memo = self._memo
            except AttributeError:
                # set as an ordinary attribute: encode's lookup of it stays fast
                memo = self._memo = {}
            remember(memo, path, (path, stored), _MEMO_SIZE)
        return stored

    def scope_scheme(self, path: Path) -> Scheme:
        """The scheme whose :meth:`encode_key`/:meth:`decode_key` apply to the keys
        of scope ``path``: ``self``, unless the key layout differs per scope (in
        scoped-heed's bytes databases default-scope keys are raw and named-scope
        keys length-prefixed)."""
        return self

    def own_range_is_exact(self) -> bool:
        """True when :meth:`own_ranges` hold only own keys (no filtering needed)."""
        return True

    def own_ranges(self, path: Path) -> tuple[tuple[bytes, bytes | None], ...]:
        """Half-open ranges, in ascending order, that together hold the scope's own
        keys. Default: ``(own_range(path),)``. Sublevel splits its own range in two
        around its children's keys, so its own keys need no filtering."""
        return (self.own_range(path),)

    def is_own_remainder(self, remainder: bytes) -> bool:
        """For schemes whose own range also holds children's keys: True when the
        bytes after :meth:`prefix` are an own key (not a child's)."""
        return True

    def child_step(self, path: Path) -> Callable[[bytes], tuple[Component, bytes | None] | None]:
        """A function from a stored key of ``path``'s subtree that is not an own key
        to ``(child, end)``: the direct child of ``path`` whose subtree holds it and
        the end of that subtree (``subtree_range(path + (child,))[1]``), or ``None``
        for a key that does not decode at that depth. A skip scan of the children
        of ``path`` (:meth:`Scope.scopes`) calls it once per child. This default
        decodes the key; the child's subtree ends where the stored key's bytes up
        to the child's component end (the child's prefix) do, for a scheme that
        tells how many bytes a component takes (:meth:`component_width`: the
        prefix is read off the key, which the decode checked), else it encodes
        the child's range. Schemes that can read the child off the stored bytes
        do that instead."""
        from ..errors import DecodeError

        depth = len(path)
        # formats that do not record the depth are decoded at the children's depth
        want = None if self.separates_own_keys else depth + 1
        decode, subtree_range, width = self.decode, self.subtree_range, self.component_width
        at = len(self.prefix(path))

        def step(stored: bytes) -> tuple[Component, bytes | None] | None:
            try:
                child_path, _ = decode(stored, want)
            except DecodeError:
                return None
            if len(child_path) <= depth:
                return None
            child = child_path[depth]
            size = width(child)
            if size is None:
                return child, subtree_range((*path, child))[1]
            return child, prefix_end(stored[: at + size])

        return step

    def component_width(self, component: Component) -> int | None:
        """How many bytes ``component`` (as :meth:`decode` returns it) takes in a
        stored key after its parent's prefix: ``len(prefix(path + (component,)))
        - len(prefix(path))`` for every path, where the child's subtree range is
        its prefix's (``subtree_range(p)[1] == prefix_end(prefix(p))``); ``None``
        (this default) where a scheme does not say. Cost: O(1)."""
        return None

    def validate_path(self, path: Path) -> None:  # noqa: B027 - an optional hook, not abstract
        """Raise :class:`InvalidName` if the scheme cannot represent ``path``.
        Called once when a scope is made; :meth:`prefix` calls it too. The default
        accepts every path."""

    def ambiguity(self, stored: bytes) -> str | None:
        """Why ``stored`` may not decode into the path its writer meant, ``None``
        when it decodes unambiguously (always, unless :attr:`ambiguous_splits`)."""
        return None

    @property
    def metadata_key(self) -> bytes | None:
        """A reserved stored key that no ``encode`` result can equal, where the
        keyspace records its scheme; ``None`` for schemes without free space."""
        return None

    @property
    def raw_prefix(self) -> bytes:
        """Bytes in front of every key a keyspace of this scheme writes (its stored
        keys, its :attr:`metadata_key`), chosen by the user so that keyspaces under
        different raw prefixes share a store; ``b""`` (the default) for none. A
        keyspace with a raw prefix lists itself in the store's footprint registry
        under that prefix, where every keyspace whose :meth:`footprint` could meet
        its own finds it; two schemes with one raw prefix have one entry there, so
        they must also have one footprint."""
        return b""

    def footprint(self) -> tuple[tuple[bytes, bytes | None], ...]:
        """Half-open byte ranges, ascending and disjoint, that hold every key
        :meth:`encode` can return for any path and key (not :attr:`metadata_key`):
        a keyspace of this scheme stores its scopes' keys nowhere else, so two
        keyspaces whose footprints (and records) are disjoint can share a store.
        The default, ``((b"", None),)``, says "anywhere"; a scheme that declares
        less is trusted to keep to it (the test suite checks it with Hypothesis).
        Cost: a few concatenations."""
        return ((b"", None),)

    def params(self) -> Mapping[str, Any]:
        """Constructor parameters, JSON-serialisable, recorded in the metadata."""
        return {}

    # -- value semantics -----------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return False
        assert isinstance(other, Scheme)
        return dict(self.params()) == dict(other.params())

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in self.params().items()))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"
