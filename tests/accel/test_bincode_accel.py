"""bincode ``String`` served in C (``keyspace._bincode_accel.LenText``): every value
encodes, decodes and fails as the pure-Python reference functions do, and the C
functions are the codec class's own, not set on its instance."""

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
    assert _outcome(bincode.STRING.encode, value) == _outcome(bincode._encode_string, value)


@settings(max_examples=300, deadline=None)
@given(raw=raw_values)
def test_c_decode_is_the_reference(raw: Any) -> None:
    assert type(bincode.STRING.decode).__name__ == "LenText"
    assert _outcome(bincode.STRING.decode, raw) == _outcome(bincode._decode_string, raw)


def test_the_c_functions_are_the_class_s_own() -> None:
    assert not {"encode", "decode"} & set(vars(bincode.STRING))
    assert type(vars(bincode._String)["encode"]) is staticmethod
    assert bincode._String().encode is bincode.STRING.encode
    assert bincode.STRING.encode.fallback is bincode._encode_string  # type: ignore[attr-defined]
    assert bincode.STRING.decode.fallback is bincode._decode_string  # type: ignore[attr-defined]
