"""``child_step`` reads a child's subtree end off the stored key where the scheme
says how many bytes a component takes (``component_width``): the width is the
length its prefix grows by, and each step answers what decoding the key and
encoding the child's range answers, for every stored key (valid ones of any
depth, and bytes that do not decode), in every scheme."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import DecodeError
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, Sublevel, TupleScheme

NAMES = st.lists(st.integers(0x23, 0x7E), min_size=1, max_size=5).map(bytes)
SCHEMES: list[Scheme] = [Sublevel(), AsciiHex(), LengthPrefixed(), TupleScheme(), Naive(True)]


def _reference(scheme: Scheme, path: tuple[Any, ...], stored: bytes) -> tuple[Any, bytes | None] | None:
    want = None if scheme.separates_own_keys else len(path) + 1
    try:
        child_path, _ = scheme.decode(stored, want)
    except DecodeError:
        return None
    if len(child_path) <= len(path):
        return None
    child = child_path[len(path)]
    return child, scheme.subtree_range((*path, child))[1]


@pytest.mark.parametrize("scheme", [Sublevel(), AsciiHex(), LengthPrefixed()], ids=lambda s: s.name)
@settings(max_examples=100, deadline=None)
@given(path=st.lists(NAMES, max_size=3).map(tuple), child=NAMES)
def test_the_width_is_what_the_prefix_grows_by(scheme: Scheme, path: tuple[bytes, ...], child: bytes) -> None:
    width = scheme.component_width(child)
    assert width == len(scheme.prefix((*path, child))) - len(scheme.prefix(path))
    assert width == scheme.component_width(child.decode())  # str and bytes names alike


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@settings(max_examples=150, deadline=None)
@given(
    path=st.lists(NAMES, max_size=2).map(tuple),
    below=st.lists(NAMES, max_size=3).map(tuple),
    key=NAMES,
    noise=st.binary(max_size=8),
    cut=st.integers(0, 12),
)
def test_each_step_answers_what_decoding_and_encoding_the_range_answer(
    scheme: Scheme, path: tuple[bytes, ...], below: tuple[bytes, ...], key: bytes, noise: bytes, cut: int
) -> None:
    step = scheme.child_step(path)
    stored = scheme.encode((*path, *below), key)
    candidates = [stored, stored[: max(len(stored) - cut, 0)] + noise, scheme.prefix(path) + noise]
    for candidate in candidates:
        assert step(candidate) == _reference(scheme, path, candidate), candidate


def test_schemes_that_do_not_say_keep_encoding_the_range() -> None:
    assert TupleScheme().component_width("a") is None
    assert Naive(True).component_width(b"a") is None


TUPLE_NAMES = st.one_of(st.text(max_size=6), st.binary(max_size=6), st.integers(-300, 300))


@settings(max_examples=300, deadline=None)
@given(
    path=st.lists(TUPLE_NAMES, max_size=2).map(tuple),
    child=TUPLE_NAMES,
    below=st.lists(TUPLE_NAMES, max_size=2).map(tuple),
    key=st.binary(max_size=6),
    cut=st.integers(0, 8),
)
def test_tuple_steps_over_names_holding_nul_and_any_type_as_decoding_does(
    path: tuple[Any, ...], child: Any, below: tuple[Any, ...], key: bytes, cut: int
) -> None:
    """The tuple scheme cuts a str or bytes child's element at its terminator
    without packing it again: names holding NUL (escaped as ``00 ff``), empty
    names, other types and truncated keys answer what decoding answers."""
    scheme = TupleScheme()
    step = scheme.child_step(path)
    stored = scheme.encode((*path, child, *below), key)
    for candidate in (stored, stored[: max(len(stored) - cut, 0)], stored[: len(scheme.prefix(path)) + 2]):
        assert step(candidate) == _reference(scheme, path, candidate), candidate
