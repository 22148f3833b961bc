"""bincode ``String`` served in C (``keyspace._bincode_accel.LenText``): every value
encodes, decodes and fails as the pure-Python reference methods do."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import bincode
from keyspace.errors import KeyspaceError

try:
    from keyspace._bincode_accel import LenText
except ImportError:  # pragma: no cover - built without a C compiler
    LenText = None

pytestmark = pytest.mark.skipif(LenText is None, reason="keyspace._bincode_accel was not built")
_reference = bincode._String()  # a String codec of the methods only
_LEN = struct.Struct("<Q").pack


def _outcome(call: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", call(value)
    except KeyspaceError as exc:
        return "error", (type(exc), str(exc))


class _Text(str):
    pass


values = st.one_of(
    st.text(max_size=6),
    st.text(max_size=6).map(_Text),
    st.sampled_from(["\ud800", "a\udfff", ""]),
    st.integers(),
    st.binary(max_size=4),
    st.none(),
)
raw_values = st.one_of(
    st.binary(max_size=14),
    st.text(max_size=6).map(lambda t: _LEN(len(t.encode())) + t.encode()),
    st.binary(max_size=6).map(lambda b: _LEN(len(b)) + b),
    st.binary(max_size=6).map(lambda b: _LEN(len(b) + 1) + b),
    st.just(bytearray(b"\x01" + b"\x00" * 7 + b"a")),
)


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_c_encode_is_the_reference(value: Any) -> None:
    assert type(bincode.STRING.encode).__name__ == "LenText"
    assert _outcome(bincode.STRING.encode, value) == _outcome(_reference.encode, value)


@settings(max_examples=300, deadline=None)
@given(raw=raw_values)
def test_c_decode_is_the_reference(raw: Any) -> None:
    assert type(bincode.STRING.decode).__name__ == "LenText"
    assert _outcome(bincode.STRING.decode, raw) == _outcome(_reference.decode, raw)
