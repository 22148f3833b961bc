"""The C encoder of the change log's parts (``keyspace._changes_accel.encode_part``)
against its pure-Python reference (``encode_part_py``): the same bytes for any
keys and values, which ``decode_part`` reads back; a key or value that is not
bytes is refused naming it; the C function holds no reference after its calls."""

from __future__ import annotations

import struct

import pytest
from _leaks import holds_nothing
from hypothesis import given
from hypothesis import strategies as st

from keyspace import _changes
from keyspace._changes import decode_part, encode_part_py

pytestmark = pytest.mark.skipif(
    _changes.encode_part is encode_part_py,
    reason="the optional C module keyspace._changes_accel is not built",
)

ENTRIES = st.lists(st.tuples(st.binary(max_size=40), st.none() | st.binary(max_size=60)), max_size=40)


@given(entries=ENTRIES, now=st.integers(0, 2**64 - 1))
def test_the_same_bytes_as_the_reference(entries: list[tuple[bytes, bytes | None]], now: int) -> None:
    puts = [(k, v) for k, v in entries if v is not None]
    keys = [k for k, _ in puts] + [k for k, v in entries if v is None]
    values = [v for _, v in puts]
    raw = _changes.encode_part(now, keys, values)
    assert raw == encode_part_py(now, keys, values)
    # a key held twice reads once: its last value in its first place
    assert decode_part(raw) == list(dict([*puts, *((k, None) for k, v in entries if v is None)]).items())
    assert _changes.part_time(raw) == now


def test_bytes_subclasses_are_bytes() -> None:
    class Key(bytes):
        pass

    assert _changes.encode_part(1, [Key(b"k")], [Key(b"v")]) == encode_part_py(1, [b"k"], [b"v"])


@pytest.mark.parametrize(
    ("keys", "values", "named"),
    [([b"k", "text"], [], r"keys\[1\] is str"), ([b"k"], [bytearray(b"v")], r"values\[0\] is bytearray")],
)
def test_an_entry_that_is_not_bytes_is_refused_by_name(
    keys: list[object], values: list[object], named: str
) -> None:
    with pytest.raises(TypeError, match=named):
        _changes.encode_part(1, keys, values)  # type: ignore[arg-type]


@pytest.mark.parametrize("now", [-1, 2**64])
def test_a_time_out_of_u64_is_refused(now: int) -> None:
    with pytest.raises(OverflowError):
        _changes.encode_part(now, [b"k"], [b"v"])
    with pytest.raises(struct.error):
        encode_part_py(now, [b"k"], [b"v"])


def test_not_lists_are_refused() -> None:
    with pytest.raises(TypeError, match="encode_part"):
        _changes.encode_part(1, (b"k",), [b"v"])  # type: ignore[arg-type]


def test_holds_no_reference() -> None:
    keys, values = [b"a" * 10, b"b" * 3000], [b"v" * 100]
    assert holds_nothing(lambda: _changes.encode_part(5, keys, values), *keys, *values)
