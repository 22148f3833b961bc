"""LengthPrefixed keeps the prefixes it made (a scope bound to each new snapshot
asks its prefix again): a path asked again is not encoded again, and every
answer, kept or not, is ``to_length_prefixed_nested`` of the path, errors
included."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keyspace.schemes.length_prefixed as lp
from keyspace.errors import KeyspaceError
from keyspace.schemes import LengthPrefixed


def test_a_path_asked_again_is_not_encoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    scheme = LengthPrefixed()
    calls: list[Any] = []
    encode = lp.to_length_prefixed_nested

    def counted(path: Any) -> bytes:
        calls.append(path)
        return encode(path)

    monkeypatch.setattr(lp, "to_length_prefixed_nested", counted)
    for _ in range(3):
        assert scheme.prefix(("t001", "users")) == b"\x00\x04t001\x00\x05users"
        scheme.validate_path(("t001", "users"))
    assert len(calls) == 1
    assert scheme.prefix((bytearray(b"t001"), "users")) == b"\x00\x04t001\x00\x05users"  # unhashable: made
    assert len(calls) == 2


_components = st.one_of(st.binary(max_size=3), st.text(max_size=2), st.integers(), st.none())


@given(paths=st.lists(st.lists(_components, max_size=3).map(tuple), max_size=6))
def test_every_prefix_is_the_nested_encoding(paths: list[tuple[Any, ...]]) -> None:
    scheme = LengthPrefixed()
    for path in paths + paths:
        try:
            expected: bytes | type = lp.to_length_prefixed_nested(path)
        except KeyspaceError as exc:
            expected = type(exc)
        try:
            got: bytes | type = scheme.prefix(path)
        except KeyspaceError as exc:
            got = type(exc)
        assert got == expected
