"""The scheme record a keyspace keeps in its store.

Schemes with reserved space (a key no user key can equal) record
``{"keyspace": 1, "scheme": name, "params": {...}}`` as JSON at their
``metadata_key``. Reopening compares the record with the scheme asked for.

A ``TupleScheme`` with a ``raw_prefix`` owns only the keys that start with that
prefix, so several of them (and one at the root) can share a store: a record
found elsewhere counts only when the two keyspaces' footprints overlap.
"""

from __future__ import annotations

import json
from typing import Any

from ._bytes import prefix_end
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


_Range = tuple[bytes, bytes | None]


def _footprint(scheme: Scheme) -> list[_Range]:
    """The byte ranges a keyspace of ``scheme`` may write. Only a tuple scheme is
    bounded: its stored keys continue ``raw_prefix`` with ``05``, and its record
    is one key beside them. Every other scheme may write anywhere."""
    if isinstance(scheme, TupleScheme) and scheme.metadata_key is not None:
        start, _ = scheme.subtree_range(())
        record_key = scheme.metadata_key
        return [(start, prefix_end(start)), (record_key, record_key + b"\x00")]
    return [(b"", None)]


def _overlaps(a: _Range, b: _Range) -> bool:
    (a_start, a_stop), (b_start, b_stop) = a, b
    return (a_stop is None or b_start < a_stop) and (b_stop is None or a_start < b_stop)


def _shares_space(found: Scheme, wanted: Scheme) -> bool:
    return any(_overlaps(a, b) for a in _footprint(found) for b in _footprint(wanted))


def read(store: ReadView, scheme: Scheme | None) -> Scheme | None:
    """The scheme recorded in ``store`` (looked up where ``scheme`` and the default
    instances of the schemes with metadata keep it), or ``None``. A record of
    another keyspace whose keys cannot meet those of ``scheme`` (tuple schemes
    under disjoint raw prefixes) is passed over. Cost: up to four point reads."""
    for key in _candidate_keys(scheme):
        raw = store.get(key)
        if raw is not None:
            found = _parse(raw)
            if found is None or found.metadata_key != key:
                continue
            if scheme is None or key == scheme.metadata_key or _shares_space(found, scheme):
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
