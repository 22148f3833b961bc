"""AsciiHex's child step (a skip scan's step from a stored key to the child
holding it and the end of that child's subtree: ``Scope.scopes()``) reads the
child off the stored key in one frame (none, in C, when the C module is built),
and answers exactly as the default step of every scheme (decode, width, range
end) does, for every stored key; the C step answers as its reference, the
Python step, for every argument."""

from __future__ import annotations

from functools import partial
from typing import Any

from _frames import python_calls
from hypothesis import given
from hypothesis import strategies as st

from keyspace.schemes import AsciiHex
from keyspace.schemes._base import Scheme

try:
    from keyspace.schemes._layouts_accel import hex_child_step
except ImportError:  # pragma: no cover - built without a C compiler
    hex_child_step = None  # type: ignore[assignment]

_SCHEME = AsciiHex()
_paths = st.lists(st.binary(max_size=4) | st.text(max_size=3), max_size=3).map(tuple)
_digits = st.text("0123456789abcdefABz\x00", max_size=12).map(lambda s: s.encode("latin-1"))


@given(path=_paths, below=st.lists(st.binary(max_size=4), min_size=0, max_size=3), key=st.binary(max_size=4))
def test_the_step_of_an_encoded_key_agrees_with_the_default(
    path: tuple[Any, ...], below: list[bytes], key: bytes
) -> None:
    stored = _SCHEME.encode((*path, *below), key)
    assert _SCHEME.child_step(path)(stored) == Scheme.child_step(_SCHEME, path)(stored)


@given(path=_paths, tail=_digits)
def test_the_step_of_any_key_under_the_prefix_agrees_with_the_default(
    path: tuple[Any, ...], tail: bytes
) -> None:
    stored = _SCHEME.prefix(path) + tail
    assert _SCHEME.child_step(path)(stored) == Scheme.child_step(_SCHEME, path)(stored)


def test_a_child_is_read_in_one_frame() -> None:
    step = _SCHEME.child_step(("tenant1",))
    stored = _SCHEME.encode(("tenant1", "u0000001"), b"k")
    got = step(stored)
    assert got == (b"u0000001", _SCHEME.prefix(("tenant1", "u0000001"))[:-1] + b"\x01")
    assert python_calls(partial(step, stored)) == ([] if hex_child_step is not None else ["step"])


@given(
    path=_paths, stored=_digits | st.binary(max_size=12) | _digits.map(lambda d: _SCHEME.prefix(("t",)) + d)
)
def test_the_c_step_answers_as_its_reference(path: tuple[Any, ...], stored: bytes) -> None:
    step = _SCHEME.child_step(path)
    reference = getattr(step, "__wrapped__", step)
    assert (type(step).__name__ == "HexChild") == (hex_child_step is not None)
    assert step(stored) == reference(stored)


def test_the_c_step_hands_other_calls_to_its_reference_and_checks_its_arguments() -> None:
    if hex_child_step is None:
        return
    calls: list[tuple[object, ...]] = []

    def reference(*args: object, **kw: object) -> None:
        calls.append((*args, *kw.values()))

    step = hex_child_step(0, 0, reference)
    step(bytearray(b"61\x00"))  # type: ignore[arg-type]
    step(b"6\x00", 1)  # type: ignore[call-arg]
    step(stored=b"61\x00")  # type: ignore[call-arg]
    assert step(b"61\x0062") == (b"a", b"61\x01") and len(calls) == 3
    for bad, error in (
        ((-1, 0, reference), ValueError),
        ((0, 0, 1), TypeError),
        ((0, "0", reference), TypeError),
    ):
        try:
            hex_child_step(*bad)  # type: ignore[arg-type]
        except error:
            continue
        raise AssertionError(f"{bad} accepted")
