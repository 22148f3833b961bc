"""A snapshot collection's history reads back the values it held, whatever the
value codec: ``changes(key)`` and ``may_load_at_height`` agree with a model of
the writes, for values with a JSON form (kept as ``{"old": value}``, as
cw-storage-plus writes them) and for values without one (bytes, kept as
``{"old_bytes": base64}``)."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.collections import IndexedSnapshotMap, SnapshotItem, SnapshotMap
from keyspace.schemes import LengthPrefixed, TupleScheme

SCHEMES = [TupleScheme(), LengthPrefixed()]

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "bytes": st.binary(max_size=8),
    "str": st.text(max_size=6),
    "int": st.integers(-(2**63), 2**63 - 1),
    "json": st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=6,
    ),
    "bincode:Vec<u8>": st.binary(max_size=8),
    "bincode:String": st.text(max_size=6),
    "bincode:bool": st.booleans(),
    "bincode:u64": st.integers(0, 2**64 - 1),
}


def _scope(ks: keyspace.Keyspace) -> keyspace.Scope:
    return ks.scope() if isinstance(ks.scheme, LengthPrefixed) else ks.scope("app")


def _check_map(scheme: Any, codec: Any, writes: list[tuple[int, Any]]) -> None:
    with keyspace.open("memory:", scheme=scheme) as ks:
        sm = SnapshotMap(_scope(ks), "sm", "sm__cp", "sm__cl", key="str", value=codec)
        current: Any = None
        expected: list[tuple[int, Any]] = []
        at: dict[int, Any] = {}
        for height, value in writes:
            expected.append((height, current))
            at[height] = current
            if value is None:
                sm.remove("k", height)
            else:
                sm.save("k", value, height)
            current = value
        changes = list(sm.changes("k"))
        assert changes == expected
        assert [type(v) for _, v in changes] == [type(v) for _, v in expected]
        for height, old in at.items():
            assert sm.may_load_at_height("k", height) == old
        assert sm.may_load_at_height("k", len(writes) + 1) == current


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@pytest.mark.parametrize("codec", sorted(VALUES))
def test_changes_read_every_old_value(scheme: Any, codec: str) -> None:
    @settings(max_examples=30)
    @given(st.lists(st.one_of(st.none(), VALUES[codec]), min_size=1, max_size=6))
    def check(values: list[Any]) -> None:
        _check_map(scheme, codec, list(enumerate(values, 1)))

    check()


def test_bytes_history_reads_the_stored_bytes() -> None:
    """The case of the report: value="bytes", three changes."""
    with keyspace.open("memory:", scheme=TupleScheme()) as ks:
        sm = SnapshotMap(ks.scope("app"), "sm", "sm__cp", "sm__cl", key="str", value="bytes")
        sm.save("k", b"\x00\xff", 1)
        sm.save("k", b"", 2)
        sm.save("k", b"abc", 3)
        sm.remove("k", 4)
        assert list(sm.changes("k")) == [(1, None), (2, b"\x00\xff"), (3, b""), (4, b"abc")]
        at = [sm.may_load_at_height("k", h) for h in (1, 2, 3, 4, 5)]
        assert at == [None, b"\x00\xff", b"", b"abc", None]


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@pytest.mark.parametrize("codec", sorted(VALUES))
def test_snapshot_item_reads_every_old_value(scheme: Any, codec: str) -> None:
    @settings(max_examples=30)
    @given(st.lists(VALUES[codec], min_size=1, max_size=5))
    def check(values: list[Any]) -> None:
        with keyspace.open("memory:", scheme=scheme) as ks:
            item = SnapshotItem(_scope(ks), "si", "si__cp", "si__cl", value=codec)
            for height, value in enumerate(values, 1):
                item.save(value, height)
            assert [item.may_load_at_height(h) for h in range(1, len(values) + 1)] == [None, *values[:-1]]

    check()


class _TupleCodec:
    """Tuples as JSON arrays: a value whose JSON form reads back as a list."""

    def encode(self, value: Any) -> bytes:
        return json.dumps(list(value)).encode()

    def decode(self, raw: bytes) -> Any:
        return tuple(json.loads(raw))


class _IntKeysCodec:
    """Dicts with int keys: a JSON form whose keys read back as str."""

    def encode(self, value: Any) -> bytes:
        return json.dumps({str(k): v for k, v in value.items()}).encode()

    def decode(self, raw: bytes) -> Any:
        return {int(k): v for k, v in json.loads(raw).items()}


class _Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class _EnumCodec:
    """An ``IntEnum``: a JSON form that reads back as a plain int."""

    def encode(self, value: Any) -> bytes:
        return bytes([value])

    def decode(self, raw: bytes) -> Any:
        return _Level(raw[0])


CUSTOM: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (_TupleCodec(), st.tuples(st.integers(), st.text(max_size=3))),
    (_IntKeysCodec(), st.dictionaries(st.integers(-5, 5), st.integers(), max_size=3)),
    (_EnumCodec(), st.sampled_from(list(_Level))),
]


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@pytest.mark.parametrize("case", range(len(CUSTOM)))
def test_custom_codec_history_keeps_the_values_type(scheme: Any, case: int) -> None:
    """A value whose JSON form is another value (a tuple, int dict keys, an
    IntEnum) reads back from the history as the codec decodes it."""
    codec, values = CUSTOM[case]

    @settings(max_examples=30)
    @given(st.lists(values, min_size=1, max_size=5))
    def check(written: list[Any]) -> None:
        _check_map(scheme, codec, list(enumerate(written, 1)))
        with keyspace.open("memory:", scheme=scheme) as ks:
            item = SnapshotItem(_scope(ks), "si", "si__cp", "si__cl", value=codec)
            for height, value in enumerate(written, 1):
                item.save(value, height)
            got = [item.may_load_at_height(h) for h in range(1, len(written) + 1)]
            assert got == [None, *written[:-1]]
            assert [type(v) for v in got] == [type(None), *(type(v) for v in written[:-1])]

    check()


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@pytest.mark.parametrize("case", ["bytes", "bincode:Vec<u8>", "tuple", "int keys", "enum"])
def test_indexed_snapshot_map_history_reads_every_old_value(scheme: Any, case: str) -> None:
    """The indexed snapshot map reads its change sets through the same reader."""
    codec: Any
    if case in VALUES:
        codec, values = case, VALUES[case]
    else:
        codec, values = CUSTOM[["tuple", "int keys", "enum"].index(case)]

    @settings(max_examples=30)
    @given(st.lists(st.one_of(st.none(), values), min_size=1, max_size=5))
    def check(written: list[Any]) -> None:
        with keyspace.open("memory:", scheme=scheme) as ks:
            m = IndexedSnapshotMap(_scope(ks), "ism", "ism__cp", "ism__cl", key="str", value=codec)
            current: Any = None
            expected: list[tuple[int, Any]] = []
            for height, value in enumerate(written, 1):
                expected.append((height, current))
                if value is None:
                    m.remove("k", height)
                else:
                    m.save("k", value, height)
                current = value
            changes = list(m.changes("k"))
            assert changes == expected
            assert [type(v) for _, v in changes] == [type(v) for _, v in expected]
            assert [m.may_load_at_height("k", h) for h, _ in expected] == [v for _, v in expected]

    check()
