"""The scheme record a keyspace keeps in its store.

Schemes with reserved space (a key no user key can equal) record
``{"keyspace": 1, "scheme": name, "params": {...}}`` as JSON at their
``metadata_key``. Reopening compares the record with the scheme asked for.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import SchemeMismatch
from .schemes import AsciiHex, Scheme, ScopeHash, TupleScheme, scheme_from_name
from .stores._base import ReadView, WriteView

__all__ = ["check", "read", "record", "write"]

_FORMAT = 1


def record(scheme: Scheme) -> bytes:
    """The metadata value for ``scheme``."""
    return json.dumps(
        {"keyspace": _FORMAT, "scheme": scheme.name, "params": dict(scheme.params())},
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


def _parse(raw: bytes) -> Scheme | None:
    try:
        doc: Any = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("keyspace") != _FORMAT or not isinstance(doc.get("scheme"), str):
        return None
    params = doc.get("params") or {}
    if not isinstance(params, dict):
        return None
    return scheme_from_name(doc["scheme"], **params)


def _candidate_keys(scheme: Scheme | None) -> list[bytes]:
    keys: list[bytes] = []
    if scheme is not None and scheme.metadata_key is not None:
        keys.append(scheme.metadata_key)
    for default in (TupleScheme(), AsciiHex(), ScopeHash()):
        key = default.metadata_key
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def read(store: ReadView, scheme: Scheme | None) -> Scheme | None:
    """The scheme recorded in ``store`` (looked up where ``scheme`` and the default
    instances of the schemes with metadata keep it), or ``None``. Cost: up to
    four point reads."""
    for key in _candidate_keys(scheme):
        raw = store.get(key)
        if raw is not None:
            found = _parse(raw)
            if found is not None and found.metadata_key == key:
                return found
    return None


def check(recorded: Scheme, wanted: Scheme, url: str) -> None:
    """Raise :class:`SchemeMismatch` unless ``wanted`` is the recorded scheme."""
    if recorded != wanted:
        raise SchemeMismatch(
            f"the store at {url!r} records scheme {recorded!r}; it cannot be opened with {wanted!r} "
            "(open it without a scheme to use the recorded one)"
        )


def write(view: WriteView, scheme: Scheme) -> None:
    """Record ``scheme`` in the store (a no-op for schemes without reserved space)."""
    key = scheme.metadata_key
    if key is not None:
        view.put(key, record(scheme))
