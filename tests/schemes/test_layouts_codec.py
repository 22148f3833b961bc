"""Layouts composed with a key codec (``Layout.route``): the C transform that calls
the codec itself (text 3, and packs the ints of a codec that declares
``fixed_int``) builds the same stored keys, raises the same errors and decodes the
same keys as the pure-Python composition, on every scheme; and a layout
rebased for a part of a union (``Layout.rebased``) builds the same keys less the cut."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_layouts import _layouts, _outcome
from test_scheme_properties import SPECS, Spec

from keyspace import bincode
from keyspace.codecs import INT, JSON
from keyspace.schemes.scoped_heed import ScopedHeed

CODECS = [bincode.U8, bincode.U64, bincode.I16, bincode.I64, bincode.STRING, INT, JSON]
_KEYS = st.one_of(
    st.integers(-(1 << 65), 1 << 65),
    st.sampled_from([-(1 << 63) - 1, -(1 << 63), -32769, -32768, -129, -128, -1, 0, 255, 256, 32767, 32768]),
    st.sampled_from([(1 << 63) - 1, 1 << 63, (1 << 64) - 1, 1 << 64]),
    st.booleans(),
    st.text(max_size=4),
    st.binary(max_size=4),
    st.none(),
    st.lists(st.integers(0, 3), max_size=2),
)


@pytest.mark.parametrize("codec", CODECS, ids=["u8", "u64", "i16", "i64", "string", "int", "json"])
@pytest.mark.parametrize("spec", [pytest.param(spec, id=spec.id) for spec in SPECS])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_codec_keys_route_the_same_with_and_without_c(spec: Spec, codec: Any, data: st.DataObject) -> None:
    path = data.draw(spec.path(max_size=2))
    keys = data.draw(st.lists(_KEYS, min_size=1, max_size=4))
    seen = []
    for layout in _layouts(spec, path):
        stored, key_of, chunk = layout.route(codec, False, False)
        outcomes = [_outcome(stored, key) for key in keys]
        for key, (status, value) in zip(keys, outcomes, strict=True):
            if status == "ok":
                assert value == spec.scheme.encode(path, codec.encode(key))
                assert key_of(value) == codec.decode(codec.encode(key))
                assert chunk([(value, b"v")]) == [(key_of(value), b"v")]
        seen.append(outcomes)
    assert all(s == seen[0] for s in seen)


@pytest.mark.parametrize("api", ["raw_bytes", "types"])
@pytest.mark.parametrize("path", [(), ("t",), ("\u00e9t\u00e9",)])
@settings(max_examples=25, deadline=None)
@given(keys=st.lists(st.binary(min_size=1, max_size=9), min_size=1, max_size=5))
def test_a_rebased_layout_builds_the_keys_less_the_cut(
    api: str, path: tuple[str, ...], keys: list[bytes]
) -> None:
    scheme = ScopedHeed(api)
    for accelerate in (False, True):
        whole = scheme.scope_scheme(path).layout(path, accelerate=accelerate)
        part = whole.rebased(1)
        assert part is whole.rebased(1) and whole.rebased(0) is whole
        assert part.prefix == whole.prefix[1:] and part.kind == whole.kind
        for key in keys:
            assert part.stored(key) == whole.stored(key)[1:]
            assert part.key_of(part.stored(key)) == key
        items = [(part.stored(k), b"v") for k in sorted(set(keys))]
        assert part.decode_chunk(items) == whole.decode_chunk([(whole.prefix[:1] + k, v) for k, v in items])
        for lo, hi in part.ranges:
            assert all(lo <= k < hi if hi is not None else lo <= k for k, _ in items)
