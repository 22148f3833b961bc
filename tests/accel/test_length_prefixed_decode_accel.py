"""The C form of ``LengthPrefixed.decode`` (``keyspace.schemes._layouts_accel.lp_decode``)
returns what its Python method returns and raises the same errors, with the
same messages, for every stored key and depth: well-formed keys, keys that end
inside a length field or a component, depths out of range, and arguments of
other types, keyword arguments included. A subclass that defines ``decode``
overrides it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.schemes import LengthPrefixed
from keyspace.schemes.length_prefixed import namespace_with_key

try:
    from keyspace.schemes import _layouts_accel as accel
except ImportError:  # built without a C compiler: the Python method is the only one
    accel = None

needs_accel = pytest.mark.skipif(accel is None, reason="keyspace.schemes._layouts_accel was not built")

DECODE = LengthPrefixed.__dict__["decode"]
PY_DECODE = getattr(DECODE, "__wrapped__", DECODE)
SCHEME = LengthPrefixed()


class _Depth(int):
    """An int subclass: the reference reads it as its int."""


def _outcome(call: Any) -> Any:
    try:
        return ("returned", call())
    except Exception as exc:
        return ("raised", type(exc), str(exc))


def _same(stored: Any, depth: Any) -> None:
    c = _outcome(lambda: SCHEME.decode(stored, depth))
    py = _outcome(lambda: PY_DECODE(SCHEME, stored, depth))
    assert c == py, (stored, depth)


@needs_accel
def test_the_method_is_the_c_form_with_its_reference() -> None:
    assert type(DECODE).__name__ == "LPDecode"
    assert PY_DECODE.__name__ == "decode" and DECODE.__doc__ == PY_DECODE.__doc__
    stored = SCHEME.encode((b"a", b"bc"), b"key")
    assert SCHEME.decode(stored, 2) == LengthPrefixed.decode(SCHEME, stored, 2) == ((b"a", b"bc"), b"key")


@settings(max_examples=400, deadline=None)
@given(
    components=st.lists(st.binary(max_size=300), max_size=6),
    key=st.binary(max_size=20),
    depth=st.integers(-3, 8),
    cut=st.integers(0, 40),
)
def test_well_formed_and_cut_keys_decode_as_the_reference(
    components: list[bytes], key: bytes, depth: int, cut: int
) -> None:
    stored = namespace_with_key(components, key)
    _same(stored, depth)
    _same(stored[: max(0, len(stored) - cut)], depth)


@settings(max_examples=400, deadline=None)
@given(stored=st.binary(max_size=64), depth=st.integers(-2, 40))
def test_any_bytes_decode_as_the_reference(stored: bytes, depth: int) -> None:
    _same(stored, depth)


@pytest.mark.parametrize(
    ("stored", "depth"),
    [
        (b"\x00\x01a", None),
        (b"\x00\x01a", True),
        (b"\x00\x01a", _Depth(1)),
        (b"\x00\x01a", 1.0),
        (b"\x00\x01a", 10**30),
        (b"\x00\x01a", -(10**30)),
        (bytearray(b"\x00\x01a"), 1),
        (memoryview(b"\x00\x01ab"), 1),
        ("\x00\x01a", 1),
        (None, 1),
        (b"", 0),
        (b"", 1),
        (b"\xff\xff" + b"x" * 70000, 1),
        (b"\xff\xff" + b"x" * 65535, 1),
    ],
)
def test_other_arguments_decode_as_the_reference(stored: Any, depth: Any) -> None:
    _same(stored, depth)


def test_keyword_and_positional_calls_agree() -> None:
    stored = SCHEME.encode((b"t",), b"k")
    assert SCHEME.decode(stored, depth=1) == SCHEME.decode(stored, 1) == ((b"t",), b"k")
    assert _outcome(lambda: SCHEME.decode(stored=stored, depth=1)) == _outcome(
        lambda: PY_DECODE(SCHEME, stored=stored, depth=1)
    )


def test_a_subclass_decode_overrides_it() -> None:
    class Counting(LengthPrefixed):
        calls = 0

        def decode(self, stored: bytes, depth: int | None = None) -> Any:
            Counting.calls += 1
            return super().decode(stored, depth)

    scheme = Counting()
    stored = scheme.encode((b"t",), b"k")
    assert scheme.decode(stored, 1) == ((b"t",), b"k") and Counting.calls == 1
