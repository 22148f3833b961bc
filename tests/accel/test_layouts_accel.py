"""The C chunk decoder of the tuple layout (``keyspace.schemes._layouts_accel.Transform``, kind
1): a chunk whose keys are all one bytes or str element after the prefix decodes as
the general tuple decoder decodes it; any other chunk goes whole to the reference
(here a sentinel), so results never depend on the C module."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tuples_accel import mixed_tuples

from keyspace import tuples
from keyspace.errors import DecodeError

try:
    from keyspace.schemes._layouts_accel import Transform
except ImportError:  # pragma: no cover - built without a C compiler
    Transform = None

needs_accel = pytest.mark.skipif(Transform is None, reason="keyspace.schemes._layouts_accel was not built")
HANDED_OVER: Any = object()


def _transform(prefix: bytes) -> Any:
    assert Transform is not None
    return Transform(1, prefix, -1, 0, lambda key: b"", lambda items: HANDED_OVER)


def single_key(key: bytes, plen: int) -> bytes | str | None:
    """What the general decoder makes of key[plen:] if it is one bytes or str element."""
    try:
        got = tuples._unpack_exact(key, plen)
    except DecodeError:
        return None
    return got[0] if len(got) == 1 and type(got[0]) in (bytes, str) else None


def check_chunk(items: list[tuple[bytes, Any]], prefix: bytes) -> Any:
    """The C result; asserts it is the general decoder's, and handed over exactly when
    some key is not a single bytes or str element after the prefix."""
    got = _transform(prefix).decode_chunk(items)
    plen = len(prefix)
    expected = [(single_key(k, plen), v) for k, v in items]
    if any(k is None for k, _ in expected):
        assert got is HANDED_OVER, items
        return got
    assert got is not HANDED_OVER, items
    assert type(got) is list and all(type(pair) is tuple for pair in got)
    assert got == expected
    assert all(g[1] is e[1] for g, e in zip(got, items, strict=True))  # values handed through as they are
    return got


bytes_keys = st.one_of(
    st.binary(max_size=12), st.sampled_from([b"", b"\x00", b"\x00\xff", b"\xff\x00", b"\x00\x00"])
)
stored_keys = st.one_of(
    bytes_keys.map(lambda k: tuples.pack((k,))),
    st.text(max_size=5).map(lambda k: tuples.pack((k,))),
    mixed_tuples.map(tuples.pack),
    st.binary(max_size=12),
)


@needs_accel
@settings(max_examples=1000)
@given(st.binary(max_size=3), st.lists(stored_keys, max_size=8), st.data())
def test_chunk_decoder_matches_the_general_decoder(
    prefix: bytes, keys: list[bytes], data: st.DataObject
) -> None:
    items = [(prefix + k, data.draw(st.one_of(st.binary(max_size=4), st.none()))) for k in keys]
    check_chunk(items, prefix)


@needs_accel
@settings(max_examples=500)
@given(st.lists(st.binary(max_size=30), max_size=6))
def test_chunk_decoder_on_arbitrary_keys(keys: list[bytes]) -> None:
    check_chunk([(k, b"v") for k in keys], b"")


@needs_accel
def test_chunk_decoder_edges() -> None:
    p = b"\x15\x07"
    for body in [b"", b"\x00", b"\x00\xff", b"\xff", b"a\x00b", b"\x00" * 1000, bytes(range(256)) * 10]:
        assert check_chunk([(p + tuples.pack((body,)), b"v")], p) == [(body, b"v")]
    assert check_chunk([(p + tuples.pack(("t\x00é",)), b"v")], p) == [("t\x00é", b"v")]
    for key in [
        p,
        p + b"\x01",
        p + b"\x01\x00\x00",
        p + b"\x01a\x00\x00",
        p + b"\x01\x00\xff",
        p + b"\x02\xff\x00",  # not UTF-8
        p + b"\x01a\x00\x01b\x00",
        p + b"\x01\x00\xfe\x00",
        b"\x01",
    ]:
        assert _transform(p).decode_chunk([(p + b"\x01ok\x00", b"v"), (key, b"w")]) is HANDED_OVER, key
    assert check_chunk([], b"") == []
    for items in [
        (b"\x01a\x00", b"v"),  # not a list
        [[b"\x01a\x00", b"v"]],  # not a tuple pair
        [(b"\x01a\x00",)],
        [(b"\x01a\x00", b"v", b"w")],
        [(bytearray(b"\x01a\x00"), b"v")],
        [(memoryview(b"\x01a\x00"), b"v")],
        [("\x01a\x00", b"v")],
    ]:
        assert _transform(b"").decode_chunk(items) is HANDED_OVER
    with pytest.raises(TypeError):
        _transform(b"").decode_chunk()
