"""Hand-made delimited keys: ``c1 SEP c2 SEP … SEP key`` (``rod:last_login``,
``user:42:name``, ``tenant\\x00key``).

The most common namespacing in the wild: scope names and a key joined with one
separator byte. The LevelDB namespacing note shows its two dangers. Order: ``:``
(58) sorts after ``.`` (46) and ``1`` (49), so the scopes ``rod``, ``rod.vagg``,
``rod1977``, ``roderick`` are stored as ``rod.vagg:``, ``rod1977:``, ``rod:``,
``roderick:``; only ``\\x00`` keeps scopes in name order. Injection: a user named
``acme|users`` would write into tenant ``acme``'s ``users`` data under ``|``.

keyspace makes both explicit:

* A scope name that contains the separator is refused (:class:`InvalidName`), so no
  name can reach another scope's keys. Keys may contain the separator.
* A keyspace declares one depth ``D``: every scope that holds keys has exactly ``D``
  names, and ``decode`` splits a stored key at its first ``D`` separators. A
  scope of fewer names is a branch: it lists its children and drops its
  subtree, and holds no keys (a key read or written there raises
  :class:`LayoutError`); a deeper path is refused (:class:`LayoutError`), so a
  scope's own keys and another scope's keys are never confused. Among paths of
  depth ``D`` the encoding is collision-free and every stored key decodes.
* Property 4 (scopes sort by name) holds only with the separator ``\\x00``, which
  sorts below every byte a name can hold; :class:`Delimited` with ``"\\x00"`` is
  an instance of :class:`NulDelimited`, which declares it.

Existing data is read in place (no metadata key is written, as for other
systems' formats); :func:`guess_separator` proposes the separator of a sample of
keys when exactly one common delimiter fits them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from .._bytes import prefix_end
from ..errors import DecodeError, InvalidName, LayoutError, show_bytes
from ._base import Key, Path, Property, Scheme, checked_path, component_bytes, decode_arguments
from ._layouts import GENERAL, RAW, Layout

__all__ = ["COMMON_SEPARATORS", "Delimited", "NulDelimited", "guess_delimited", "guess_separator"]

COMMON_SEPARATORS = (":", "!", "~", "\x00", "|", "/", "#", ";")
"""Separators :func:`guess_separator` considers: the delimiters hand-made keys use
(``.``, ``-`` and ``_`` are left out: they are common inside names)."""


def _separator_byte(separator: Any) -> int:
    """The byte value of a one-byte separator given as ``str`` (code 0–255) or
    ``bytes``; :class:`InvalidName` otherwise."""
    if isinstance(separator, (bytes, bytearray)) and len(separator) == 1:
        return separator[0]
    if isinstance(separator, str) and len(separator) == 1 and ord(separator) <= 0xFF:
        return ord(separator)
    raise InvalidName(
        f"delimited separator {separator!r} must be one byte: a str of one character with code 0..255 "
        "or bytes of length 1"
    )


class Delimited(Scheme):
    """Hand-made delimited keys: ``c1 SEP c2 SEP … SEP key``, a fixed depth per keyspace.

    * ``separator``: any single byte, as a one-character ``str`` (code 0–255, e.g.
      ``":"``, ``"!"``, ``"~"``, ``"|"``, ``"\\x00"``) or 1-byte ``bytes``.
    * ``depth``: the number of names of every scope that holds keys (1 or more).
      ``Delimited(":")`` reads ``rod:last_login`` as scope ``rod``, key ``last_login``;
      ``Delimited(":", depth=2)`` reads ``user:42:name`` as scope ``user/42``, key ``name``.
    * Names: bytes or str (UTF-8) without the separator byte, the empty name
      included; a name with it raises :class:`InvalidName` naming the name, the
      offset and the separator. Keys: any bytes, stored raw (they may contain the
      separator: only the first ``depth`` separators split).
    * A path of fewer names than the depth is a branch: its scope lists its
      children (``ks.scope().scopes()``) and :meth:`subtree_range` covers them,
      but it has no own range and refuses every key (:class:`LayoutError`, from
      ``encode`` and from its scope's point operations and key bounds). A deeper
      path raises :class:`LayoutError` when a scope is made. :meth:`decode` with
      a ``depth`` other than the declared one raises :class:`DecodeError`.
    * Declared properties: 2 (collision-free: names hold no separator and the
      depth is fixed), 3 (the key is appended raw), 6 (``decode`` needs only the
      scheme: separator and depth are its parameters). Not 1 (names may not hold
      the separator), not 4 (with a separator above ``00`` a name byte below it
      sorts the longer name first: ``rod.vagg:`` < ``rod:``; see
      :class:`NulDelimited`), not 5 (one depth per keyspace).
    * A scope's own range is exact and holds no other scope's keys (scopes of the
      declared depth have no children); no metadata key: other programs' data is
      read and written in place.

    Cost: ``prefix`` checks each name with one ``bytes.find`` and joins once;
    ``decode`` is one ``bytes.split``.
    """

    name: ClassVar[str] = "delimited"
    properties: ClassVar[frozenset[Property]] = frozenset(
        {Property.COLLISION_FREE, Property.ORDER_WITHIN, Property.DECODABLE}
    )
    key_is_raw: ClassVar[bool] = True
    parameters: ClassVar[tuple[str, ...]] = ("separator", "depth")
    ambiguous_splits: ClassVar[bool] = True
    table_label: ClassVar[str | None] = 'Delimited(":")'

    def __new__(cls, separator: Any = ":", depth: int = 1) -> Delimited:
        """``Delimited("\\x00", …)`` makes a :class:`NulDelimited` (property 4)."""
        if cls is Delimited and _separator_byte(separator) == 0:
            cls = NulDelimited
        return super().__new__(cls)

    def __init__(self, separator: Any = ":", depth: int = 1) -> None:
        code = _separator_byte(separator)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise LayoutError(f"delimited depth {depth!r} must be an int of 1 or more (the names per scope)")
        self._sep = bytes((code,))
        self._separator = chr(code)
        self._depth = depth

    @property
    def separator(self) -> str:
        """The separator as a one-character str (code 0–255)."""
        return self._separator

    @property
    def separator_byte(self) -> bytes:
        """The separator as one byte."""
        return self._sep

    @property
    def depth(self) -> int:
        """The number of names of every scope that holds keys."""
        return self._depth

    # -- names and paths -------------------------------------------------------------

    def _name(self, component: Any) -> bytes:
        raw = component_bytes(component)
        offset = raw.find(self._sep)
        if offset >= 0:
            raise InvalidName(
                f"scope name {show_bytes(raw)} contains the separator {self._separator!r} at offset "
                f"{offset}; delimited scope names may not contain the separator (such a name would address "
                "the keys of another scope)"
            )
        return raw

    def _check_depth(self, path: Path) -> None:
        if len(path) != self._depth:
            raise LayoutError(
                f"scope path {show_bytes(path)} has depth {len(path)}; this delimited keyspace (separator "
                f"{self._separator!r}) keeps keys only in scopes of depth {self._depth}, so that a scope's "
                "keys are never confused with another scope's"
            )

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` for a name holding the separator, then
        :class:`LayoutError` for a path deeper than the declared depth
        (:class:`InvalidName` too for a path that is not a tuple). A shallower
        path is a branch (see :meth:`layout`)."""
        path = checked_path(path)
        for component in path:
            self._name(component)
        if len(path) > self._depth:
            self._check_depth(path)

    def prefix(self, path: Path) -> bytes:
        """Return ``c1 SEP … cn SEP`` (``b""`` for the root), checking every name.
        Any depth up to the declared one is encoded: the bytes a subtree starts with."""
        path = checked_path(path)
        if not path:
            return b""
        sep = self._sep
        names = [self._name(c) for c in path]
        if len(path) > self._depth:
            self._check_depth(path)
        return sep.join(names) + sep

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``raw`` transform: the key follows ``c1 SEP … cD SEP`` as it is. A
        path of fewer names compiles to a branch layout (no own range; every key
        refused with :class:`LayoutError`); a deeper one raises
        :class:`LayoutError`."""
        if len(checked_path(path)) < self._depth:
            return _BranchLayout(self, path)
        return Layout(self, path, kind=RAW, accelerate=accelerate)

    # -- the scheme interface ----------------------------------------------------------
    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Split ``stored`` at its first ``depth`` separators: ``(names, key)``, names
        as bytes. ``depth``, when given, must be the declared one.

        Raises :class:`DecodeError` when ``stored`` has fewer separators than the
        depth (with the offset of the last name, where the search ended) or
        ``depth`` differs. Cost: one ``bytes.split``."""
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        want = self._depth
        if depth is not None and depth != want:
            raise DecodeError(
                f"this delimited scheme has depth {want}; cannot decode {show_bytes(stored)} at depth "
                f"{show_bytes(depth)}"
            )
        parts = stored.split(self._sep, want)
        if len(parts) <= want:
            found = len(parts) - 1
            offset = len(stored) - len(parts[-1])
            raise DecodeError(
                f"stored key {show_bytes(stored)} has {found} separator(s) {self._separator!r}; "
                f"depth {want} needs {want}",
                offset,
            )
        key = parts.pop()
        return tuple(parts), key

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Every stored key that starts with ``prefix(path)``: exactly the scope's
        keys (scopes of the declared depth have no children). A path of another
        depth raises :class:`LayoutError` (a branch has no own keys: see
        :meth:`own_ranges`)."""
        start = self.prefix(path)
        self._check_depth(checked_path(path))
        return start, prefix_end(start)

    def own_ranges(self, path: Path) -> tuple[tuple[bytes, bytes | None], ...]:
        """``(own_range(path),)`` for a path of the declared depth; ``()`` for a
        branch (a shallower path), which holds no keys."""
        if len(checked_path(path)) < self._depth:
            self.prefix(path)  # checks the names
            return ()
        return (self.own_range(path),)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Every stored key that starts with ``prefix(path)``: the scope's own keys
        at the declared depth, every key of the scopes below it for a branch
        (the root's is the whole store: ``(b"", None)``)."""
        start = self.prefix(path)
        return start, prefix_end(start)

    def component_width(self, component: Any) -> int | None:
        """A name takes its bytes and one separator after its parent's prefix."""
        return len(component_bytes(component)) + 1

    def ambiguity(self, stored: bytes) -> str | None:
        """Why splitting ``stored`` at the declared depth may not give the path its
        writer meant (``None`` when it is unambiguous): it holds fewer separators
        than the depth (it does not decode), or more (its key holds the separator,
        so a deeper path reads the same bytes)."""
        count = stored.count(self._sep)
        if count == self._depth:
            return None
        if count < self._depth:
            return f"{count} separator(s) {self._separator!r}, fewer than the depth {self._depth}"
        return (
            f"{count} separators {self._separator!r}: its key holds the separator, so the split at depth "
            f"{self._depth} is one of {count - self._depth + 1} possible"
        )

    def params(self) -> Mapping[str, Any]:
        return {"separator": self._separator, "depth": self._depth}

    def __repr__(self) -> str:
        return f"Delimited(separator={self._separator!r}, depth={self._depth})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Delimited, (self._separator, self._depth))


class _BranchLayout(Layout):
    """The layout of a delimited path shallower than the declared depth: the
    prefix of its subtree, no own range, and every key refused with
    :class:`LayoutError` (a key there would read as a deeper scope's)."""

    __slots__ = ()

    def __init__(self, scheme: Delimited, path: Path, *, strip: int = 0) -> None:
        super().__init__(scheme, path, kind=GENERAL, accelerate=False, strip=strip)
        checked = checked_path(path)

        def refuse(_key: Any) -> Any:
            scheme._check_depth(checked)
            raise AssertionError("unreachable: a branch path is shallower than the depth")

        def nothing(_items: list[tuple[bytes, bytes]]) -> list[tuple[Any, bytes]]:
            return []

        sets = object.__setattr__
        sets(self, "stored", refuse)
        sets(self, "key_of", refuse)
        sets(self, "decode_chunk", nothing)

    def rebased(self, cut: int) -> Layout:
        """A branch layout still: it refuses keys whatever view holds them."""
        if cut == 0:
            return self
        scheme = self.scheme
        assert isinstance(scheme, Delimited)
        return _BranchLayout(scheme, self.path, strip=self.strip + cut)


class NulDelimited(Delimited):
    """:class:`Delimited` with the separator ``\\x00`` (made by ``Delimited("\\x00")``).

    ``00`` sorts below every byte a name can hold, so a name sorts before every
    longer name it starts (``rod\\x00`` < ``rod.vagg\\x00``) and scopes sort like
    their paths: property 4 holds besides 2, 3 and 6.
    """

    properties: ClassVar[frozenset[Property]] = Delimited.properties | {Property.NAMESPACE_ORDER}
    table_label: ClassVar[str | None] = 'Delimited("\\x00")'

    def __init__(self, separator: Any = "\x00", depth: int = 1) -> None:
        if _separator_byte(separator) != 0:
            raise InvalidName(f"NulDelimited separator {separator!r} must be '\\x00'")
        super().__init__(separator, depth)


Delimited.variants = (NulDelimited,)


def guess_separator(keys: Iterable[bytes], candidates: Iterable[str] = COMMON_SEPARATORS) -> str | None:
    """The one separator of ``candidates`` that every key holds after a text name,
    or ``None`` when none or several fit (ambiguous) or ``keys`` is empty.

    "A text name": the bytes before the first separator are non-empty, valid UTF-8
    and printable, as hand-made names are (tuple-layer, length-prefixed and hash
    keys start otherwise). Cost: one pass over the keys per candidate.
    """
    sample = list(keys)
    if not sample:
        return None
    fitting: list[str] = []
    for candidate in candidates:
        sep = bytes((_separator_byte(candidate),))
        if all(_text_names(key, sep, 1) for key in sample):
            fitting.append(candidate)
    return fitting[0] if len(fitting) == 1 else None


def guess_delimited(keys: Iterable[bytes], depth: int | None = None) -> Delimited | None:
    """A :class:`Delimited` scheme for ``keys``: the separator of
    :func:`guess_separator` (``None`` when it finds none) and ``depth``, else the
    largest depth at which every key starts with that many text names (keys may
    hold more separators: their key holds it)."""
    sample = list(keys)
    separator = guess_separator(sample)
    if separator is None:
        return None
    if depth:
        return Delimited(separator, depth)
    sep = separator.encode("latin-1")
    found = min(key.count(sep) for key in sample)
    while found > 1 and not all(_text_names(key, sep, found) for key in sample):
        found -= 1
    return Delimited(separator, found)


def _text_names(key: bytes, sep: bytes, depth: int) -> bool:
    """Whether ``key`` starts with ``depth`` non-empty printable names, each
    followed by ``sep``."""
    names = key.split(sep, depth)
    if len(names) <= depth:
        return False
    for name in names[:depth]:
        try:
            text = name.decode("utf-8")
        except UnicodeDecodeError:
            return False
        if not text or not text.isprintable():
            return False
    return True
