"""cosmwasm-std's and cw-storage-plus's key functions take what their Rust
signatures take, and refuse the rest with a named error: a str or bytes where a
sequence of namespace components is meant (``namespace_with_key("balance",
key)`` would make seven one-character namespaces), and anything but bytes where
stored bytes are meant."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace import cosmwasm as cw
from keyspace.errors import InvalidArgument
from keyspace.schemes import length_prefixed as lp

COMPONENT = st.binary(max_size=6) | st.text(max_size=4)


@given(st.lists(COMPONENT, max_size=4), st.binary(max_size=6))
def test_namespace_with_key_of_a_sequence(components: list[Any], key: bytes) -> None:
    expected = b"".join(cw.to_length_prefixed(c) for c in components) + key
    assert cw.namespace_with_key(components, key) == expected
    assert cw.namespace_with_key(tuple(components), key) == expected
    assert cw.namespace_with_key(iter(components), key) == expected
    assert cw.to_length_prefixed_nested(components) + key == expected


@given(COMPONENT | st.binary(max_size=6).map(bytearray), st.binary(max_size=6))
def test_one_component_is_not_a_sequence(component: Any, key: bytes) -> None:
    for fn in (
        lambda: cw.namespace_with_key(component, key),
        lambda: cw.to_length_prefixed_nested(component),
        lambda: lp.namespace_with_key(component, key),
    ):
        with pytest.raises(InvalidArgument, match="not a sequence of components"):
            fn()


def test_the_reported_case() -> None:
    with pytest.raises(InvalidArgument, match=r"one str 'balance'.*pass \['balance'\]"):
        cw.namespace_with_key("balance", b"alice")
    with pytest.raises(InvalidArgument, match="one bytes b'balance'"):
        cw.namespace_with_key(b"balance", b"alice")
    with pytest.raises(InvalidArgument, match="not a sequence of components"):
        cw.to_length_prefixed_nested(5)  # type: ignore[arg-type]
    assert cw.namespace_with_key(["balance"], b"alice") == b"\x00\x07balancealice"


@pytest.mark.parametrize("bad", ["foo", 5, [1, 2], None, 1.5])
def test_stored_bytes_arguments_must_be_bytes(bad: Any) -> None:
    with pytest.raises(InvalidArgument, match="must be bytes"):
        cw.namespace_upper_bound(bad)
    with pytest.raises(InvalidArgument, match="must be bytes"):
        cw.from_slice("u8", bad)
    with pytest.raises(InvalidArgument, match="must be bytes"):
        cw.joined_extra_key("str", "a", bad)


def test_bytes_like_arguments_still_work() -> None:
    assert cw.namespace_upper_bound(bytearray(b"fo\xff")) == b"fp\x00"
    assert cw.from_slice("u8", memoryview(b"\x07")) == 7
    assert cw.joined_extra_key("str", "a", bytearray(b"pk")) == b"\x00\x01apk"
