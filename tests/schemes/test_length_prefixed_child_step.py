"""LengthPrefixed's child step (a skip scan's step from a stored key to the child
holding it and the end of that child's subtree: ``Scope.scopes()``) reads the
child off the stored key in one frame, and answers exactly as the default step
of every scheme (decode at the children's depth, width, range end) does, for
every stored key, those that end inside a length or a component and those of
another prefix included."""

from __future__ import annotations

from functools import partial
from typing import Any

from _frames import python_calls
from hypothesis import given
from hypothesis import strategies as st

from keyspace.schemes import LengthPrefixed
from keyspace.schemes._base import Scheme

_SCHEME = LengthPrefixed()
_paths = st.lists(st.binary(max_size=4) | st.text(max_size=3), max_size=3).map(tuple)
_tails = st.binary(max_size=8) | st.sampled_from(
    [b"\x00", b"\x00\x02a", b"\x00\x01\xff", b"\x00\x00", b"\xff\xff"]
)


@given(path=_paths, below=st.lists(st.binary(max_size=4), max_size=3), key=st.binary(max_size=4))
def test_the_step_of_an_encoded_key_agrees_with_the_default(
    path: tuple[Any, ...], below: list[bytes], key: bytes
) -> None:
    stored = _SCHEME.encode((*path, *below), key)
    assert _SCHEME.child_step(path)(stored) == Scheme.child_step(_SCHEME, path)(stored)


@given(path=_paths, tail=_tails, other=st.binary(max_size=8))
def test_the_step_of_any_key_agrees_with_the_default(
    path: tuple[Any, ...], tail: bytes, other: bytes
) -> None:
    step, default = _SCHEME.child_step(path), Scheme.child_step(_SCHEME, path)
    for stored in (_SCHEME.prefix(path) + tail, other):
        assert step(stored) == default(stored)


def test_a_child_of_ff_bytes_ends_where_its_prefix_does() -> None:
    stored = _SCHEME.encode(("t", b"\xff\xff"), b"k")
    child, end = _SCHEME.child_step(("t",))(stored) or (None, None)
    assert child == b"\xff\xff" and end == _SCHEME.prefix(("t",)) + b"\x00\x03"


def test_a_child_is_read_in_one_frame() -> None:
    step = _SCHEME.child_step(("tenant1",))
    stored = _SCHEME.encode(("tenant1", "u0000001"), b"k")
    got = step(stored)
    assert got == (b"u0000001", _SCHEME.prefix(("tenant1", "u0000001"))[:-1] + b"2")
    assert python_calls(partial(step, stored)) == ["step"]
