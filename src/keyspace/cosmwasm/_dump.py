"""Contract-state dumps as wasmd prints them, JSON or YAML.

``wasmd query wasm contract-state all ADDR -o json`` prints
``{"models": [{"key": "<hex>", "value": "<base64>"}, …], "pagination": …}``;
``-o yaml`` prints the same as YAML, where a key made only of digits is quoted
(``key: "0123"``) so that YAML does not read it as a number. :func:`parse_dump`
reads both (the YAML subset of that output, parsed here: block mappings and
sequences, plain, single- and double-quoted scalars) into ``(key, value)``
byte pairs.

A leading byte-order mark (PowerShell's ``Out-File`` and Notepad write one) is
skipped. Text that is not such a dump (an empty file, wasmd's own error
message, a document without ``models``) raises :class:`DecodeError` saying what
was found, never reads as a dump of no entries; ``models: []`` is one. Every
entry needs a hex ``key`` and a base64 string ``value`` (``""`` for an empty
value): a missing, ``null`` or non-string value raises :class:`DecodeError`
naming the entry.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import DecodeError, InvalidArgument, bytes_argument, show_bytes

__all__ = ["models_from_dump", "parse_dump"]


def _scalar(text: str, line_no: int) -> str | None:
    text = text.strip()
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise DecodeError(f"YAML line {line_no}: unterminated single-quoted scalar {text!r}")
        return text[1:-1].replace("''", "'")
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            raise DecodeError(f"YAML line {line_no}: bad double-quoted scalar {text!r}") from None
        return str(value)
    if text in ("null", "~", ""):
        return None
    return text


def _yaml_models(text: str) -> list[dict[str, Any]]:
    """The ``models`` sequence of wasmd's YAML output; :class:`DecodeError` when
    the document has no top-level ``models``."""
    models: list[dict[str, Any]] = []
    in_models = False
    found: list[str] = []
    current: dict[str, Any] | None = None
    for line_no, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0 and not stripped.startswith("-"):
            name, sep, rest = stripped.partition(":")
            if not sep:
                raise DecodeError(f"YAML line {line_no}: expected 'name: value', got {stripped!r}")
            in_models = name.strip() == "models"
            found.append(name.strip())
            if in_models and rest.strip() not in ("", "[]"):
                raise DecodeError(f"YAML line {line_no}: 'models' must be a block sequence, got {rest!r}")
            current = None
            continue
        if not in_models:
            continue
        if stripped.startswith("-"):
            current = {}
            models.append(current)
            stripped = stripped[1:].strip()
            if not stripped:
                continue
        if current is None:
            raise DecodeError(f"YAML line {line_no}: a model entry must start with '- ', got {stripped!r}")
        name, sep, rest = stripped.partition(":")
        if not sep:
            raise DecodeError(f"YAML line {line_no}: expected 'key: value', got {stripped!r}")
        current[name.strip()] = _scalar(rest, line_no)
    if "models" not in found:
        raise _not_a_dump(text, f"YAML with top-level keys {found}")
    return models


_WANTED = "give the output of `wasmd query wasm contract-state all ADDR -o json` (or -o yaml)"


def _not_a_dump(text: str, what: str) -> DecodeError:
    """The error for text that is not a contract-state dump: ``what`` it holds,
    and its first line."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    shown = first if len(first) <= 120 else first[:117] + "..."
    return DecodeError(
        f"not a contract-state dump: no 'models' list ({what}; first line {shown!r}); {_WANTED}"
    )


def models_from_dump(text: str) -> list[Mapping[str, Any]]:
    """The ``models`` entries of a dump (JSON or YAML text), still encoded. A
    leading byte-order mark is skipped; :class:`DecodeError` for text that is
    not a dump (empty, an error message, a document without ``models``)."""
    if not isinstance(text, str):
        raise InvalidArgument(
            f"a contract-state dump is text (str), not {show_bytes(text)}: decode the bytes first"
        )
    text = text.removeprefix("\ufeff")
    body = text.lstrip()
    if not body:
        raise DecodeError(f"not a contract-state dump: the text is empty; {_WANTED}")
    if body.startswith(("{", "[")):
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past Python's limit
            raise DecodeError(
                f"contract-state dump is not valid JSON (or nested too deeply): {exc}"
            ) from None
        models = doc.get("models") if isinstance(doc, dict) else doc
        if not isinstance(models, list):
            what = f"a JSON object with keys {sorted(doc)}" if isinstance(doc, dict) else "a JSON array"
            raise _not_a_dump(body, what)
        return models
    return list(_yaml_models(text))


def decode_model(index: int, model: Any) -> tuple[bytes, bytes]:
    """``(key, value)`` bytes of one entry: a mapping with a hex ``key`` and a
    base64 ``value``, or a pair of bytes already."""
    if isinstance(model, tuple) and len(model) == 2:
        for what, part in zip(("key", "value"), model, strict=True):
            if not isinstance(part, (bytes, bytearray, memoryview)):
                raise DecodeError(
                    f"model {index}: {what} {show_bytes(part)} is {type(part).__name__}, not bytes "
                    "(a pair is (key bytes, value bytes))"
                )
        return bytes_argument(model[0], "a model's key"), bytes_argument(model[1], "a model's value")
    if not isinstance(model, Mapping):
        raise DecodeError(f"model {index} is {show_bytes(model)}, not a {{'key', 'value'}} object")
    try:
        key = bytes.fromhex(model["key"])
    except (KeyError, TypeError, ValueError):
        raise DecodeError(f"model {index}: key {show_bytes(model.get('key'))} is not hex") from None
    if "value" not in model:
        raise DecodeError(f"model {index} (key {key.hex()}) has no 'value' (an empty value is \"\")")
    text = model["value"]
    if not isinstance(text, str):
        raise DecodeError(
            f"model {index} (key {key.hex()}): value {show_bytes(text)} is not a base64 string "
            '(an empty value is "")'
        )
    try:
        value = base64.b64decode(text, validate=True)
    except (TypeError, ValueError, binascii.Error):
        raise DecodeError(
            f"model {index} (key {key.hex()}): value {show_bytes(text)} is not base64"
        ) from None
    return key, value


def parse_dump(text: str) -> list[tuple[bytes, bytes]]:
    """The ``(key, value)`` byte pairs of a contract-state dump (JSON or YAML);
    :class:`DecodeError` naming the entry for bad hex or base64."""
    return [decode_model(i, m) for i, m in enumerate(models_from_dump(text))]


def as_pairs(models: Iterable[Any]) -> Iterable[tuple[bytes, bytes]]:
    """Entries given as mappings or byte pairs, as byte pairs."""
    for i, m in enumerate(models):
        yield decode_model(i, m)
