"""How the command line spells scope paths, keys and values, in and out.

Path components on the command line are text unless prefixed: ``hex:00ff`` (bytes
from hex), ``bytes:abc`` (bytes from UTF-8 text), ``int:12`` (an integer), and in
the tuple scheme the other typed spellings below (``none:``, ``bool:true``,
``float:1.5``, ``float32:1.5`` (a single-precision float, ``float32:0x7fc00001``
by its bit pattern, as a NaN is printed), ``uuid:…``,
``versionstamp:`` and the 24 hex digits of its 12 bytes (10 ``ff`` bytes first:
an incomplete one), ``(a, int:1)``, and ``"a, b"``, a JSON string, for
text in a tuple that holds its separators); ``str:hex:x`` is the text ``hex:x``
itself. Every component ``inspect`` prints names that component again. Keys and
values are UTF-8 text by default, hex with ``--hex``, JSON with ``--json``.

Typed keys of the tuple scheme are printed in text as ``str:…``, ``int:…``,
``float:…``, ``float32:…``, ``bool:…``, ``none:``, ``uuid:…``, ``versionstamp:…``
and ``(…, …)``, and a key given in
that spelling to ``--key`` is read back as the same typed key (a bytes key whose
text starts so is printed ``bytes:…``, in every scheme, and ``--key bytes:…``
is that bytes key). In JSON output a float that JSON cannot
hold (NaN, ±Infinity) is ``{"float": "NaN"}``, which ``--json --key`` reads back,
so every line is strict JSON; a single-precision float is ``{"float32": "1.5"}``
(``{"float32": "0x7fc00001"}`` for a NaN) and a versionstamp
``{"versionstamp": "<24 hex digits>"}``.

In the byte schemes (every scheme but the tuple scheme) a ``str`` component is its
UTF-8 bytes, so bytes components are shown as text when they are valid UTF-8; in
the tuple scheme ``str`` and ``bytes`` are different scopes and are shown apart.
Every function here is pure and O(size of its input).
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Sequence
from typing import Any

from ..errors import KeyspaceError
from ..tuples import SingleFloat, Versionstamp, pack

__all__ = [
    "FORMATS",
    "InputError",
    "component_json",
    "dumps",
    "escape_line",
    "key_from_text",
    "parse_component",
    "parse_path",
    "path_identity",
    "render_component",
    "render_key",
    "render_path",
    "render_value",
    "value_from_text",
    "value_json",
]


def path_identity(path: tuple[Any, ...]) -> Any:
    """What tells two scope paths apart exactly, as a dict key: their tuple-layer
    bytes. Python's ``==`` takes ``(1,)``, ``(True,)`` and ``(1.0,)``, or ``(0.0,)``
    and ``(-0.0,)``, for one path, which the tuple scheme stores apart, and a NaN
    for none but itself. A path the tuple layer cannot pack is told apart by the
    types and ``repr`` of its components. Cost: one ``pack``."""
    try:
        return pack(path)
    except KeyspaceError:
        return tuple((type(c).__name__, repr(c)) for c in path)


FORMATS = ("text", "hex", "json")
"""How keys and values are written on the command line and printed."""

_TYPED_PREFIXES = (
    "str:",
    "hex:",
    "int:",
    "bytes:",
    "float:",
    "float32:",
    "bool:",
    "none:",
    "uuid:",
    "versionstamp:",
    "(",
    '"',
)
"""How the spellings of components and keys that are not plain text begin."""

JSON = Any

MAX_NESTING = 100
"""Deepest nesting of tuple spellings ``(a, (b, …))`` a component or key may have."""


class InputError(KeyspaceError):
    """A command-line argument that cannot be turned into a component, key or value."""


def _shown(text: str) -> str:
    """``text`` for an error message: quoted, cut to 60 characters (with its length)
    when longer, so one bad argument gives one readable line."""
    if len(text) <= 60:
        return repr(text)
    return f"{text[:60]!r}… ({len(text):,} characters)"


def _integer(text: str, what: str, whole: str) -> int:
    """``int(text)``; :class:`InputError` naming ``what`` and ``whole`` (the
    argument) for text that is not an integer, and the limit Python sets on the
    digits of an integer read from text for one that is too long."""
    try:
        return int(text)
    except ValueError:
        digits = text.strip().lstrip("+-").replace("_", "")
        limit = sys.get_int_max_str_digits()
        if digits.isdigit() and limit and len(digits) > limit:
            raise InputError(
                f"{what} {_shown(whole)}: the integer has {len(digits):,} digits; the limit is {limit:,}"
            ) from None
        raise InputError(f"{what} {_shown(whole)}: {_shown(text)} is not an integer") from None


# -- path components ---------------------------------------------------------------


def parse_component(text: str, what: str = "path component") -> Any:
    """One path component, or a typed key, from its command-line spelling (see the
    module notes): every spelling :func:`render_component` prints is read back as
    the component it printed; other text is ``str``.

    Raises :class:`InputError` naming ``what`` for bad hex, a bad integer (or one
    of more digits than Python reads), number, bool or UUID, and for tuples nested
    deeper than :data:`MAX_NESTING`."""
    return _component(text, what, text, 0)


def _component(text: str, what: str, whole: str, depth: int) -> Any:
    """:func:`parse_component` of ``text``, an element ``depth`` tuples deep in
    the argument ``whole``."""
    if text.startswith("str:"):
        return text[4:]
    if text.startswith("bytes:"):
        return text[6:].encode("utf-8", "surrogateescape")
    if text.startswith("hex:"):
        try:
            return bytes.fromhex(text[4:])
        except ValueError:
            raise InputError(f"{what} {_shown(text)}: {_shown(text[4:])} is not hex") from None
    if text.startswith("int:"):
        return _integer(text[4:], what, text)
    if text.startswith("float:"):
        return _float(text[6:], what)
    if text.startswith("float32:"):
        return _single(text[8:], what)
    if text.startswith("versionstamp:"):
        return _versionstamp(text[13:], what)
    if text.startswith("bool:"):
        if text[5:] not in ("true", "false"):
            raise InputError(f"{what} {_shown(text)}: bool: is followed by true or false")
        return text[5:] == "true"
    if text == "none:":
        return None
    if text.startswith("uuid:"):
        try:
            return uuid.UUID(text[5:])
        except ValueError:
            raise InputError(f"{what} {_shown(text)}: {_shown(text[5:])} is not a UUID") from None
    if text.startswith("(") and text.endswith(")"):
        if depth >= MAX_NESTING:
            raise InputError(
                f"{what} {_shown(whole)}: tuples nest deeper than the limit, {MAX_NESTING} levels"
            )
        inner = text[1:-1]
        parts = _split_top(inner) if inner else []
        return tuple(_component(part, what, whole, depth + 1) for part in parts)
    if text.startswith('"'):
        doc = _load_json(text, what)
        if not isinstance(doc, str):
            raise InputError(f'{what} {_shown(text)}: "…" is a JSON string (text in a tuple)')
        return doc
    return text


def parse_path(texts: Sequence[str]) -> tuple[Any, ...]:
    """A scope path from command-line components."""
    return tuple(parse_component(t) for t in texts)


def _printable_text(raw: bytes) -> str | None:
    """``raw`` as text when it is valid UTF-8 without control characters."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() else None


def render_component(component: Any, *, typed: bool, nested: bool = False) -> str:
    """The command-line spelling of a component, which :func:`parse_component`
    reads back (``typed``: the scheme tells ``str`` from ``bytes``; ``nested``: an
    element of a tuple component, where text holding ``(``, ``)`` or ``,``, which
    the tuple's spelling ``(a, b)`` uses, is spelled as a JSON string, bytes
    in hex; text holding characters that do not print, a newline, NUL or an
    escape sequence, is spelled as a JSON string, so that a printed path is one
    line that names the component and no other)."""
    if isinstance(component, bytes):
        text = _printable_text(component)
        if text is None or (nested and _SEPARATING.intersection(text)):
            return "hex:" + component.hex()
        return f"bytes:{text}" if typed else _plain(text)
    if isinstance(component, str):
        if not component.isprintable():  # a newline, NUL or escape would print as something else
            return _json_text(component)
        if nested and _SEPARATING.intersection(component):
            return json.dumps(component, ensure_ascii=False)
        return _plain(component)
    if isinstance(component, bool):
        return f"bool:{str(component).lower()}"
    if isinstance(component, int):
        return f"int:{component}"
    if isinstance(component, float):
        return f"float:{component!r}"
    if component is None:
        return "none:"
    if isinstance(component, uuid.UUID):
        return f"uuid:{component}"
    if isinstance(component, SingleFloat):
        return f"float32:{_single_text(component)}"
    if isinstance(component, Versionstamp):
        return f"versionstamp:{component.to_bytes().hex()}"
    if isinstance(component, tuple):
        return "(" + ", ".join(render_component(c, typed=typed, nested=True) for c in component) + ")"
    return repr(component)


_SEPARATING = frozenset("(),")


def _json_text(text: str) -> str:
    """``text`` as a JSON string on one printable line (control and other
    unprintable characters as ``\\uXXXX``), which :func:`parse_component` reads
    back as that text."""
    spelled = json.dumps(text, ensure_ascii=False)
    return spelled if spelled.isprintable() else json.dumps(text)


def _plain(text: str) -> str:
    return "str:" + text if text.startswith(_TYPED_PREFIXES) or not text else text


def render_path(path: Sequence[Any], *, typed: bool) -> str:
    """A path as ``a / b / c`` (``(root)`` for the empty path)."""
    if not path:
        return "(root)"
    return " / ".join(render_component(c, typed=typed) for c in path)


def component_json(component: Any, *, typed: bool) -> JSON:
    """A component (or key) as JSON: str as a string, int as a number, bytes as
    ``{"hex": ...}`` (as a string in the byte schemes when valid UTF-8), tuples as
    lists, UUIDs as ``{"uuid": ...}``; None, bool and float as themselves."""
    if isinstance(component, bytes):
        if not typed:
            try:
                return component.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return {"hex": component.hex()}
    if isinstance(component, tuple):
        return [component_json(c, typed=typed) for c in component]
    if isinstance(component, uuid.UUID):
        return {"uuid": str(component)}
    if isinstance(component, SingleFloat):
        return {"float32": _single_text(component)}
    if isinstance(component, Versionstamp):
        return {"versionstamp": component.to_bytes().hex()}
    if (isinstance(component, float) and component != component) or component in (_INF, -_INF):
        return {"float": repr(component).replace("nan", "NaN").replace("inf", "Infinity")}
    if component is None or isinstance(component, (str, int, float)):
        return component
    return {"repr": repr(component)}


_INF = float("inf")


def dumps(doc: JSON) -> str:
    """One line of strict JSON (no NaN or Infinity literals: :func:`component_json`
    writes those floats as ``{"float": ...}``)."""
    return json.dumps(doc, ensure_ascii=False, allow_nan=False)


def value_json(value: bytes) -> JSON:
    """A stored value as JSON: a string when valid UTF-8, else ``{"hex": ...}``."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": value.hex()}


# -- keys and values ----------------------------------------------------------------


def _hex(text: str, what: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise InputError(f"{what} {_shown(text)} is not hex (--hex expects pairs of hex digits)") from None


def _from_json(doc: JSON, *, typed: bool, what: str, depth: int = 0) -> Any:
    if isinstance(doc, dict):
        if set(doc) == {"hex"} and isinstance(doc["hex"], str):
            return _hex(doc["hex"], what)
        if set(doc) == {"uuid"} and isinstance(doc["uuid"], str):
            try:
                return uuid.UUID(doc["uuid"])
            except ValueError:
                raise InputError(f"{what}: {doc['uuid']!r} is not a UUID") from None
        if set(doc) == {"float"} and isinstance(doc["float"], str):
            return _float(doc["float"], what)
        if set(doc) == {"float32"} and isinstance(doc["float32"], str):
            return _single(doc["float32"], what)
        if set(doc) == {"versionstamp"} and isinstance(doc["versionstamp"], str):
            return _versionstamp(doc["versionstamp"], what)
        raise InputError(
            f'{what}: a JSON object must be {{"hex": ...}}, {{"uuid": ...}}, {{"float": ...}}, '
            f'{{"float32": ...}} or {{"versionstamp": ...}}, not {doc!r}'
        )
    if isinstance(doc, list):
        if depth >= MAX_NESTING:
            raise InputError(f"{what}: JSON lists nest deeper than the limit, {MAX_NESTING} levels")
        return tuple(_from_json(d, typed=typed, what=what, depth=depth + 1) for d in doc)
    if isinstance(doc, str) and not typed:
        return _utf8(doc, what)
    return doc


def _utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8; :class:`InputError` for a JSON string holding a lone
    surrogate (``"\\ud800"``), which no UTF-8 bytes spell."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"{what}: the JSON string {_shown(text)} holds {text[exc.start]!r} at index {exc.start}, a lone "
            'surrogate, which is not UTF-8 text (give bytes as {"hex": ...})'
        ) from None


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(
            f"{what}: {_shown(text)} is not a number (NaN, Infinity, -Infinity or digits)"
        ) from None


def _single_text(value: SingleFloat) -> str:
    """A single-precision float's spelling after ``float32:``: its number, or for
    a NaN its bit pattern as ``0x`` and 8 hex digits (which keep its payload)."""
    number = value.value
    return f"0x{value.bits:08x}" if number != number else repr(number)


def _single(text: str, what: str) -> SingleFloat:
    """The single-precision float spelled ``text`` (a number, rounded to the
    nearest single, or ``0x`` and 8 hex digits, its bit pattern)."""
    if text.startswith("0x"):
        digits = text[2:]
        if len(digits) != 8 or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise InputError(f"{what}: {_shown(text)} is not 0x and 8 hex digits (a float32 bit pattern)")
        return SingleFloat.from_bits(int(digits, 16))
    return SingleFloat(_float(text, what))


def _versionstamp(text: str, what: str) -> Versionstamp:
    """The versionstamp whose 12 bytes are the 24 hex digits ``text``."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 12 or len(text) != 24:
        raise InputError(
            f"{what}: {_shown(text)} is not a versionstamp: 24 hex digits (10 bytes of transaction "
            "version, 2 of user version) are expected"
        )
    return Versionstamp.from_bytes(raw)


def _load_json(text: str, what: str) -> JSON:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        shown = text if len(text) <= 60 else text[:60] + "…"
        raise InputError(f"{what} {shown!r} is not JSON (or nested too deeply): {exc}") from None


def _split_top(text: str) -> list[str]:
    """``text`` split at the ``", "`` separators that are not inside parentheses
    or inside a JSON string that begins an element."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    element = True  # at the beginning of an element
    while i < len(text):
        ch = text[i]
        if element and ch == '"':
            i = _string_end(text, i)
            element = False
            continue
        element = False
        if ch == "(":
            depth += 1
            element = True
        elif ch == ")":
            depth -= 1
        elif text.startswith(", ", i):
            if depth == 0:
                parts.append(text[start:i])
                start = i + 2
            i += 2
            element = True
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _string_end(text: str, i: int) -> int:
    """The index after the JSON string that begins at ``text[i]`` (the end of
    ``text`` when it does not end)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    return len(text)


def key_from_text(text: str, fmt: str, *, typed: bool) -> Any:
    """A key from the command line: UTF-8 bytes (``text``), bytes from hex
    (``hex``), or a JSON value (``json``: a string, number, list for a composite
    key, ``{"hex": ...}`` for bytes; strings are UTF-8 bytes in the byte schemes).
    As text, every key :func:`render_key` prints reads back: ``bytes:…`` is the
    text after it, ``hex:…`` bytes from hex, in every scheme (a key whose text
    starts so is printed after ``bytes:``)."""
    if fmt == "hex":
        return _hex(text, "key")
    if fmt == "json":
        return _from_json(_load_json(text, "key"), typed=typed, what=f"key {_shown(text)}")
    if text.startswith("bytes:"):
        return text[6:].encode("utf-8", "surrogateescape")
    if not typed and text.startswith("hex:"):
        return _hex(text[4:], f"key {_shown(text)}: after hex:, the key")
    if typed and text.startswith(_TYPED_PREFIXES):
        return parse_component(text, "key")
    return text.encode("utf-8", "surrogateescape")


def value_from_text(text: str, fmt: str) -> bytes:
    """A value from the command line: UTF-8 bytes, hex, or a JSON string /
    ``{"hex": ...}``."""
    if fmt == "hex":
        return _hex(text, "value")
    if fmt == "json":
        doc = _load_json(text, "value")
        if isinstance(doc, str):
            return _utf8(doc, f"value {_shown(text)}")
        value = _from_json(doc, typed=True, what="value") if isinstance(doc, dict) else None
        if not isinstance(value, bytes):
            raise InputError(f'value {_shown(text)}: with --json a value is a JSON string or {{"hex": ...}}')
        return value
    return text.encode("utf-8", "surrogateescape")


def escape_line(text: str) -> str:
    r"""``text`` on one line: backslash, tab, newline and other control characters
    escaped (``\\``, ``\t``, ``\n``, ``\x00``); bytes that were not UTF-8
    (decoded with ``surrogateescape``) as ``\xNN``."""
    if text.isprintable() and "\\" not in text:
        return text
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif not ch.isprintable():
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def _line(raw: bytes) -> str:
    return escape_line(raw.decode("utf-8", "surrogateescape"))


def render_key(key: Any, fmt: str) -> str:
    r"""A key for one output line, which :func:`key_from_text` reads back as it is
    printed (a typed key, and any key in ``hex``): printable UTF-8 text as it is
    (``bytes:…`` where it starts with a typed prefix), other bytes as ``hex:…``;
    typed keys of the tuple scheme as ``str:…`` (a JSON string where the text
    holds a character that does not print), ``int:…``, ``float:…``,
    ``float32:…``, ``versionstamp:…`` or ``(…, …)``.
    Nothing is escaped: an escaped key would read back as another."""
    if isinstance(key, bytes):
        if fmt == "hex":
            return key.hex()
        text = _printable_text(key)
        if text is None:  # escaped onto one line it would read back as another key
            return "hex:" + key.hex()
        return "bytes:" + text if text.startswith(_TYPED_PREFIXES) else text
    if isinstance(key, str):
        return "str:" + key if key.isprintable() else _json_text(key)
    return render_component(key, typed=True)  # one printable line, read back as it is


def render_value(value: bytes, fmt: str, *, one_line: bool = False) -> str:
    r"""A value as hex, or as UTF-8 text: escaped onto one line with ``one_line``,
    else as is with invalid bytes as ``\xNN``."""
    if fmt == "hex":
        return value.hex()
    return _line(value) if one_line else value.decode("utf-8", "backslashreplace")
