"""Sublevels of Node's abstract-level (and subleveldown): ``!a!!b!key``.

Each path component becomes ``separator name separator``; the key follows raw. A
name's bytes must lie strictly between ``separator + 1`` and 127 (35–126 for ``!``),
abstract-level's rule: names never contain the separator, and the separator sorts
below every name byte, so scopes sort like their names and nested scopes sort
inside their parent (``!a!`` < ``!a!!a!`` < ``!a"`` < ``!aa!`` < ``!b!``).

Where abstract-level trims separators from a name, keyspace refuses them
(:class:`InvalidName`): a trimmed name would silently address another scope. A user
key that starts with the separator would have the bytes of a key in a child scope
(key ``!b!x`` of ``a`` is key ``x`` of ``a/b``), so keyspace refuses such keys as well;
with that rule the format is collision-free and every stored key decodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..errors import DecodeError, InvalidName, show_bytes
from ._base import (
    Component,
    Key,
    Path,
    Property,
    Scheme,
    checked_path,
    component_bytes,
    decode_arguments,
    key_bytes,
)
from ._layouts import RAW, Layout, sep_child_step

__all__ = ["Sublevel"]

_NAME_LIMIT = 127
"""Name bytes must be below this (abstract-level keeps names ASCII)."""
_SPLIT_DEPTHS = 32
"""Deepest ``depth`` for which :meth:`Sublevel.decode` compiles a pattern of its own."""


class Sublevel(Scheme):
    """abstract-level / subleveldown sublevels: ``!c1!!c2!key``.

    * ``separator`` is one ASCII character (default ``"!"``) up to ``|``, so that
      some name byte is left between ``separator + 1`` and 127.
    * Names: bytes or str whose UTF-8 bytes all lie in ``separator+2 … 126``
      (``#``–``~`` for ``!``); the empty name is allowed (prefix ``!!``). Anything
      else raises :class:`InvalidName` naming the allowed range.
    * Keys: any bytes that do not start with the separator (:class:`InvalidName`).
    * Declared properties: 2, 3, 4, 5, 6; not 1 (restricted names and keys).
    * :meth:`own_range` is abstract-level's range, ``[prefix, prefix[:-1] +
      chr(separator + 1))``, which also holds the children's keys; :meth:`own_ranges`
      gives the two ranges around the children, which hold exactly the own keys.
    * No metadata key: root keys are stored raw, as abstract-level does.

    Cost: ``prefix`` checks every name byte with one ``bytes.translate`` in C and
    joins once; ``encode_key`` is one comparison.
    """

    name: ClassVar[str] = "sublevel"
    properties: ClassVar[frozenset[Property]] = frozenset(
        {
            Property.COLLISION_FREE,
            Property.ORDER_WITHIN,
            Property.NAMESPACE_ORDER,
            Property.NESTING,
            Property.DECODABLE,
        }
    )

    def __init__(self, separator: str = "!") -> None:
        if not isinstance(separator, str) or len(separator) != 1 or ord(separator) + 2 >= _NAME_LIMIT:
            raise InvalidName(
                f"sublevel separator {separator!r} must be one ASCII character up to '|' "
                f"(code {_NAME_LIMIT - 3}), so that names have bytes left to use"
            )
        self._separator = separator
        code = ord(separator)
        self._sep_byte = code
        self._sep = bytes((code,))
        self._ceiling = bytes((code + 1,))
        self._name_bytes = bytes(range(code + 2, _NAME_LIMIT))
        self._name_re = re.compile(b"[^" + re.escape(self._name_bytes) + b"]")
        # decode's patterns: a group is the separator, a valid name, the separator;
        # the key follows the last group and does not start with the separator
        sep, name = re.escape(self._sep), b"[" + re.escape(bytes((code + 2,))) + b"-~]*"
        self._group = sep + b"(" + name + b")" + sep
        self._key = b"(?!" + sep + b")(.*)"
        self._groups = re.compile(self._group)
        self._any_depth = re.compile(b"((?:" + sep + name + sep + b")*)" + self._key, re.S)
        self._depths: dict[int, re.Pattern[bytes]] = {}

    @property
    def separator(self) -> str:
        """The separator character."""
        return self._separator

    # -- names and keys ---------------------------------------------------------

    def _name(self, component: Any) -> bytes:
        raw = component_bytes(component)
        if raw.translate(None, self._name_bytes):
            bad = self._name_re.search(raw)
            assert bad is not None
            offset = bad.start()
            raise InvalidName(
                f"sublevel name {show_bytes(raw)} has byte {raw[offset : offset + 1]!r} at offset {offset}; "
                f"names use bytes {self._sep_byte + 2}..{_NAME_LIMIT - 1} "
                f"({chr(self._sep_byte + 2)!r}..{chr(_NAME_LIMIT - 1)!r}) with separator {self._separator!r}"
            )
        return raw

    def encode_key(self, key: Key) -> bytes:
        """Return ``key``; :class:`InvalidName` if it starts with the separator."""
        raw = key_bytes(key)
        if raw[:1] == self._sep:
            raise InvalidName(
                f"key {show_bytes(raw)} starts with the separator {self._separator!r}: it would be the "
                "stored key of a key in a child scope"
            )
        return raw

    # -- the scheme interface ---------------------------------------------------

    def prefix(self, path: Path) -> bytes:
        """Return ``!c1!!c2!…`` (``b""`` for the root), checking every name."""
        path = checked_path(path)
        if not path:
            return b""
        sep = self._sep
        return sep + (sep + sep).join([self._name(c) for c in path]) + sep

    def component_width(self, component: Any) -> int:
        """``!name!``: the name's bytes and two separators."""
        return len(component_bytes(component)) + 2

    def child_step(self, path: Path) -> Callable[[bytes], tuple[Component, bytes | None] | None]:
        """:meth:`Scheme.child_step`, reading a direct child's own key off its bytes
        (``prefix !name! key``, the key not beginning with the separator, every
        name byte allowed: what the decode accepts) and decoding only the keys
        of deeper scopes, whose every group it checks. Cost: one ``find`` and one
        ``translate`` per child, where the decode matched a regular expression
        over the whole key. Built with the C module, the step is its C form
        (:func:`keyspace.schemes._layouts_accel.sep_child_step`), this one its reference."""
        general = super().child_step(path)
        sep, allowed = self._sep, self._name_bytes
        after = bytes((sep[0] + 1,))  # the group ends with the separator: its prefix_end
        at = len(self.prefix(path))

        def step(stored: bytes) -> tuple[Component, bytes | None] | None:
            if stored[at : at + 1] == sep:
                end = stored.find(sep, at + 1)
                if end > at and stored[end + 1 : end + 2] != sep:
                    name = stored[at + 1 : end]
                    if not name.translate(None, allowed):  # no byte outside the allowed ones
                        return name, stored[:end] + after
            return general(stored)

        if sep_child_step is not None and sep[0] < 0xFF:
            return sep_child_step(at, sep[0], allowed, step)
        return step

    def validate_path(self, path: Path) -> None:
        """Raise :class:`InvalidName` for a path that is not a tuple or a name
        outside the allowed bytes."""
        for component in checked_path(path):
            self._name(component)

    def decode(self, stored: bytes, depth: int | None = None) -> tuple[Path, Key]:
        """Read ``!name!`` groups while the rest starts with the separator; the rest
        is the key. Returns bytes names.

        ``depth``, when given, must match. Raises :class:`DecodeError` with the offset
        for a group without its closing separator or a name with a byte outside
        the allowed range. Cost: one match of a regular expression compiled once
        per depth (up to depth 32; deeper, and without ``depth``, one more to
        split the names), which also checks every name byte; a key that does not
        match is read again group by group to name the fault.
        """
        if type(stored) is not bytes or (depth is not None and type(depth) is not int):
            stored, depth = decode_arguments(self, stored, depth)
        if depth is None:
            m = self._any_depth.match(stored)
            if m is not None:
                return tuple(self._groups.findall(m.group(1))), m.group(2)
            return self._decode_groups(stored, depth)
        split = self._depths.get(depth)
        if split is None:
            if not 0 <= depth <= _SPLIT_DEPTHS:
                return self._decode_groups(stored, depth)
            split = self._depths[depth] = re.compile(self._group * depth + self._key, re.S)
        m = split.match(stored)
        if m is None:
            return self._decode_groups(stored, depth)
        groups = m.groups()
        return groups[:-1], groups[-1]

    def _decode_groups(self, stored: bytes, depth: int | None) -> tuple[Path, Key]:
        """:meth:`decode` group by group: the reference, which names the fault."""
        sep = self._sep_byte
        end = len(stored)
        names: list[bytes] = []
        offset = 0
        while offset < end and stored[offset] == sep:
            close = stored.find(self._sep, offset + 1)
            if close < 0:
                raise DecodeError(
                    f"stored key {show_bytes(stored)} opens a sublevel name at offset {offset} "
                    f"that no separator {self._separator!r} closes",
                    offset,
                )
            raw = stored[offset + 1 : close]
            try:
                names.append(self._name(raw))
            except InvalidName as exc:
                raise DecodeError(
                    f"stored key {show_bytes(stored)} has an invalid name at offset {offset + 1}: {exc}",
                    offset + 1,
                ) from None
            offset = close + 1
        if depth is not None and depth != len(names):
            raise DecodeError(
                f"stored key {show_bytes(stored)} has {len(names)} sublevel names, not {show_bytes(depth)}"
            )
        return tuple(names), stored[offset:]

    def own_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """abstract-level's range of a sublevel, ``[!a!, !a")`` (children included);
        the root gives ``(b"", None)``."""
        start = self.prefix(path)
        if not start:
            return b"", None
        return start, start[:-1] + self._ceiling

    def own_ranges(self, path: Path) -> tuple[tuple[bytes, bytes | None], ...]:
        """The own range minus the children: ``[prefix, prefix + sep)`` and
        ``[prefix + chr(sep + 1), end)``. Together they hold exactly the own keys."""
        start, stop = self.own_range(path)
        return (start, start + self._sep), (start + self._ceiling, stop)

    def subtree_range(self, path: Path) -> tuple[bytes, bytes | None]:
        """Same as :meth:`own_range`: the sublevel and all its nested sublevels."""
        return self.own_range(path)

    def layout(self, path: Path, *, accelerate: bool = True) -> Layout:
        """The ``raw`` transform; a key may not start with the separator."""
        return Layout(self, path, kind=RAW, forbidden=self._sep_byte, accelerate=accelerate)

    def params(self) -> Mapping[str, Any]:
        return {"separator": self._separator}
