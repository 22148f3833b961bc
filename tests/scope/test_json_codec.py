"""The JSON codecs (``keyspace.codecs.JSON`` and the collections' serde_json one)
decode exactly what ``json.loads`` of UTF-8 text decodes, through the C scanner
where one value fills the text, and raise ``DecodeError`` for everything
``json.loads`` refuses, for text that is not UTF-8 and for a byte-order mark."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace.codecs import JSON
from keyspace.collections._layouts import SERDE_JSON
from keyspace.errors import DecodeError, InvalidKey

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    )


def _reference(raw: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError
        return False, None


@pytest.mark.parametrize("codec", [JSON, SERDE_JSON], ids=["json", "serde-json"])
@given(value=_VALUES, before=st.sampled_from(["", " ", "\n\t"]), after=st.sampled_from(["", " ", "\r\n"]))
def test_encoded_values_round_trip_with_any_whitespace_around(
    codec: Any, value: Any, before: str, after: str
) -> None:
    raw = codec.encode(value)
    assert _same(codec.decode(raw), value)
    assert _same(codec.decode(before.encode() + raw + after.encode()), value)


@pytest.mark.parametrize("codec", [JSON, SERDE_JSON], ids=["json", "serde-json"])
@given(
    raw=st.binary(max_size=12)
    | st.text(alphabet='{}[]",:0123456789.eE+-tfnrulsaN \\', max_size=12).map(str.encode)
)
def test_decoding_agrees_with_json_loads_of_utf8_text(codec: Any, raw: bytes) -> None:
    ok, expected = _reference(raw)
    if ok:
        assert _same(codec.decode(raw), expected)
    else:
        with pytest.raises(DecodeError, match="is not JSON"):
            codec.decode(raw)


def test_other_encodings_and_a_byte_order_mark_are_refused() -> None:
    for raw in ('"x"'.encode("utf-16"), b"\xef\xbb\xbf1", "1".encode("utf-32-le")):
        with pytest.raises(DecodeError):
            JSON.decode(raw)


def test_serde_json_keeps_field_order_and_json_sorts_fields() -> None:
    assert SERDE_JSON.encode({"b": 1, "a": [2]}) == b'{"b":1,"a":[2]}'
    assert JSON.encode({"b": 1, "a": [2]}) == b'{"a":[2],"b":1}'
    with pytest.raises(InvalidKey, match="cannot be encoded as JSON"):
        SERDE_JSON.encode({1j})


@pytest.mark.parametrize("codec", [JSON, SERDE_JSON], ids=["json", "serde-json"])
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_float_json_cannot_hold_is_refused_and_read_where_python_wrote_it(
    codec: Any, number: float
) -> None:
    for value in (number, [1, number], {"x": {"y": number}}):
        with pytest.raises(InvalidKey, match="cannot be encoded as JSON"):
            codec.encode(value)
    assert _same(codec.decode(json.dumps(number).encode()), number)


def test_a_scope_refuses_a_nan_value_and_writes_nothing() -> None:
    import keyspace

    with keyspace.open("memory:") as ks:
        scope = ks.scope("s", value="json")
        scope["other"] = {"ratio": 0.5}
        before = list(ks.store.scan(b"", None))
        with pytest.raises(InvalidKey, match="cannot be encoded as JSON"):
            scope["k"] = {"ratio": math.nan}
        with pytest.raises(InvalidKey, match="cannot be encoded as JSON"):
            scope.update({"k2": 1.0, "k3": math.inf})
        assert list(ks.store.scan(b"", None)) == before
