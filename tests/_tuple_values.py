"""Tuple-layer values compared as the encoding sees them."""

from __future__ import annotations

import struct
from typing import Any

import fdb.tuple as fdbt

from keyspace.tuples import SingleFloat, Versionstamp


def canon(value: Any) -> Any:
    """A comparable form that keeps types apart (True vs 1, 0.0 vs -0.0, NaNs)."""
    if isinstance(value, tuple):
        return ("tuple", tuple(canon(v) for v in value))
    if isinstance(value, fdbt.SingleFloat):
        return ("float32", struct.pack(">f", value.value))
    if isinstance(value, SingleFloat):
        # through a float as fdb.tuple.SingleFloat holds it (which quiets a
        # signalling NaN), so that the two compare equal
        return ("float32", struct.pack(">f", value.value))
    if isinstance(value, (Versionstamp, fdbt.Versionstamp)):
        return ("versionstamp", value.tr_version, value.user_version)
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    return (type(value).__name__, value)
