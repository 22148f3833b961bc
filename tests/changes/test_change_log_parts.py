"""The change log's part format: a part of any entries decodes to them in order
(puts first, then deletes), and the one-entry part of a single write is the
very bytes :func:`encode_part` makes of that entry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace._changes import decode_part, encode_part, one_entry_part, part_time
from keyspace.errors import DecodeError

_TIME = st.integers(0, 2**64 - 1)


@given(now=_TIME, key=st.binary(max_size=40), value=st.none() | st.binary(max_size=40))
def test_a_single_writes_part_is_encode_parts_of_its_entry(now: int, key: bytes, value: bytes | None) -> None:
    raw = one_entry_part(now, key, value)
    assert raw == encode_part(now, [key], [] if value is None else [value])
    assert decode_part(raw) == [(key, value)] and part_time(raw) == now


@given(
    now=_TIME,
    puts=st.dictionaries(st.binary(max_size=12), st.binary(max_size=12), max_size=20),
    deletes=st.lists(st.binary(max_size=12), max_size=20),
)
def test_a_part_decodes_to_its_puts_then_its_deletes(
    now: int, puts: dict[bytes, bytes], deletes: list[bytes]
) -> None:
    raw = encode_part(now, [*puts, *deletes], list(puts.values()))
    # a key held twice (put again, or deleted twice) reads once: its last value in its first place
    assert decode_part(raw) == list(dict([*puts.items(), *((k, None) for k in deletes)]).items())
    assert part_time(raw) == now


@given(now=_TIME, key=st.binary(min_size=1, max_size=12), value=st.binary(max_size=12), cut=st.integers(1, 8))
def test_a_cut_or_padded_part_is_a_decode_error(now: int, key: bytes, value: bytes, cut: int) -> None:
    raw = one_entry_part(now, key, value)
    for spoilt in (raw[: max(0, len(raw) - cut)], raw + b"\x00" * cut):
        with pytest.raises(DecodeError, match="change log part"):
            decode_part(spoilt)
