"""Sublevel reads a direct child's own key off its bytes in the skip scan of
``scopes()``: for every stored key of a scope's subtree it gives what the
decoding step of every scheme gives (the child and the end of its subtree, or
nothing for a key that does not decode); its C form answers as its Python
reference for every argument."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidName
from keyspace.schemes import Scheme, Sublevel
from keyspace.schemes._layouts import sep_child_step

_NAME = st.binary(max_size=4).map(lambda b: bytes(0x23 + x % 0x5C for x in b))  # '#'..'~'
_PIECE = st.sampled_from([b"!", b"!!", b"\x00", b"\xff", b"\x22", b"a", b"~", b"!a!", b"!!x!"])


@settings(max_examples=300, deadline=None)
@given(
    separator=st.sampled_from(["!", "#"]),
    path=st.lists(_NAME, max_size=3).map(tuple),
    tail=st.lists(_NAME | _PIECE | st.binary(max_size=3), max_size=6).map(b"".join),
)
def test_the_child_read_off_the_bytes_is_the_decoded_one(
    separator: str, path: tuple[bytes, ...], tail: bytes
) -> None:
    scheme = Sublevel(separator=separator)
    try:
        scheme.validate_path(path)
    except InvalidName:
        return
    stored = scheme.prefix(path) + tail
    assert scheme.child_step(path)(stored) == Scheme.child_step(scheme, path)(stored)


def test_a_direct_childs_key_and_a_grandchilds() -> None:
    scheme = Sublevel()
    step = scheme.child_step(("t",))
    assert step(b"!t!!users!k") == (b"users", b"!t!!users\x22")
    assert step(b"!t!!users!!deep!k") == (b"users", b"!t!!users\x22")
    assert step(b"!t!!us\x01rs!k") is None  # a byte no name holds: no child


def test_scopes_decodes_no_key_of_a_direct_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """``scopes()`` of children that each hold own keys reads each child's name
    off its first key, with no decode of the key (which matched a regular
    expression over the whole key, the larger part of the skip scan's cost)."""
    with keyspace.open("memory:", scheme="sublevel") as ks:
        for name in ("a", "b", "c"):
            ks.scope("t", name)[b"k"] = b"v"
        ks.scope("t", "d", "deep")[b"k"] = b"v"
        decoded: list[bytes] = []
        decode = Sublevel.decode

        def counted(self: Sublevel, stored: bytes, depth: int | None = None) -> Any:
            decoded.append(stored)
            return decode(self, stored, depth)

        monkeypatch.setattr(Sublevel, "decode", counted)
        assert ks.scope("t").scopes() == [b"a", b"b", b"c", b"d"]
        assert decoded == [b"!t!!d!!deep!k"]  # the grandchild's key alone


@settings(max_examples=300, deadline=None)
@given(
    separator=st.sampled_from(["!", "#", "\x00"]),
    path=st.lists(_NAME, max_size=3).map(tuple),
    tail=st.lists(_NAME | _PIECE | st.binary(max_size=3), max_size=6).map(b"".join),
    other=st.binary(max_size=10),
)
def test_the_c_step_answers_as_its_reference(
    separator: str, path: tuple[bytes, ...], tail: bytes, other: bytes
) -> None:
    scheme = Sublevel(separator=separator)
    try:
        scheme.validate_path(path)
    except InvalidName:
        return
    step = scheme.child_step(path)
    reference = getattr(step, "__wrapped__", step)
    assert (type(step).__name__ == "SepChild") == (sep_child_step is not None)
    for stored in (scheme.prefix(path) + tail, other):
        assert step(stored) == reference(stored)


def test_the_c_step_hands_other_calls_to_its_reference_and_checks_its_arguments() -> None:
    if sep_child_step is None:
        return
    calls: list[object] = []

    def reference(*args: object, **kw: object) -> None:
        calls.append(args)

    step = sep_child_step(0, ord("!"), b"abc", reference)
    step(bytearray(b"!a!"))
    step(b"!a!", 1)
    step(stored=b"!a!")
    step(b"!d!")  # a byte no name holds
    assert step(b"!ab!k") == (b"ab", b'!ab"') and len(calls) == 4
    for bad, error in (
        ((-1, 33, b"", reference), ValueError),
        ((0, 255, b"", reference), ValueError),
        ((0, 33, "abc", reference), TypeError),
        ((0, 33, b"", 1), TypeError),
    ):
        with pytest.raises(error):
            sep_child_step(*bad)
