"""Contract-state dumps as wasmd prints them, JSON or YAML.

``wasmd query wasm contract-state all ADDR -o json`` prints
``{"models": [{"key": "<hex>", "value": "<base64>"}, …], "pagination": …}``;
``-o yaml`` prints the same as YAML, where a key made only of digits is quoted
(``key: "0123"``) so that YAML does not read it as a number. :func:`parse_dump`
reads both (the YAML subset of that output, parsed here: block mappings and
sequences, plain, single- and double-quoted scalars) into ``(key, value)``
byte pairs.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import DecodeError, show_bytes

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
    """The ``models`` sequence of wasmd's YAML output."""
    models: list[dict[str, Any]] = []
    in_models = False
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
    return models


def models_from_dump(text: str) -> list[Mapping[str, Any]]:
    """The ``models`` entries of a dump (JSON or YAML text), still encoded."""
    body = text.lstrip()
    if body.startswith(("{", "[")):
        try:
            doc = json.loads(body)
        except ValueError as exc:
            raise DecodeError(f"contract-state dump is not valid JSON: {exc}") from None
        models = doc.get("models") if isinstance(doc, dict) else doc
        if not isinstance(models, list):
            raise DecodeError("contract-state dump has no 'models' list")
        return models
    return list(_yaml_models(text))


def decode_model(index: int, model: Any) -> tuple[bytes, bytes]:
    """``(key, value)`` bytes of one entry: a mapping with a hex ``key`` and a
    base64 ``value``, or a pair of bytes already."""
    if isinstance(model, tuple) and len(model) == 2:
        return bytes(model[0]), bytes(model[1])
    if not isinstance(model, Mapping):
        raise DecodeError(f"model {index} is {show_bytes(model)}, not a {{'key', 'value'}} object")
    try:
        key = bytes.fromhex(model["key"])
    except (KeyError, TypeError, ValueError):
        raise DecodeError(f"model {index}: key {show_bytes(model.get('key'))} is not hex") from None
    try:
        value = base64.b64decode(model.get("value") or "", validate=True)
    except (TypeError, ValueError, binascii.Error):
        raise DecodeError(f"model {index}: value {show_bytes(model.get('value'))} is not base64") from None
    return key, value


def parse_dump(text: str) -> list[tuple[bytes, bytes]]:
    """The ``(key, value)`` byte pairs of a contract-state dump (JSON or YAML);
    :class:`DecodeError` naming the entry for bad hex or base64."""
    return [decode_model(i, m) for i, m in enumerate(models_from_dump(text))]


def as_pairs(models: Iterable[Any]) -> Iterable[tuple[bytes, bytes]]:
    """Entries given as mappings or byte pairs, as byte pairs."""
    for i, m in enumerate(models):
        yield decode_model(i, m)
