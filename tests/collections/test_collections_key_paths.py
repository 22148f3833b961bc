"""The per-collection key paths (``Namespace.key_writer`` and ``key_reader``, made
once per collection or scan) give exactly what the general path gives
(``key(spec.elements(k))`` and ``key_of(elements(stored)[skip:])``): the same
stored bytes for every key type and both layouts (the tuple scheme stores ``x``
as it stores ``(x,)``), and the same error class for a key of the wrong type."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace.collections import COSMWASM, TUPLE, KeySpec
from keyspace.errors import KeyspaceError
from keyspace.schemes import TupleScheme

_TUPLE_SCHEME = TupleScheme()

_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "str": st.text(max_size=6),
    "bytes": st.binary(max_size=6),
    "u8": st.integers(0, 255),
    "u64": st.integers(0, 2**64 - 1),
    "i32": st.integers(-(2**31), 2**31 - 1),
    "i128": st.integers(-(2**127), 2**127 - 1),
}
_WRONG = st.none() | st.floats() | st.integers() | st.text(max_size=3) | st.binary(max_size=3)


def _bytes(layout: Any, key: Any) -> Any:
    """A scope key as its layout's scheme stores it after the scope's prefix (a
    cosmwasm-layout key is those bytes)."""
    return _TUPLE_SCHEME.encode_key(key) if layout is TUPLE else key


def _general(layout: Any, ns: Any, key: Any) -> tuple[str, Any]:
    try:
        return "ok", _bytes(layout, ns.key(ns.spec.elements(key)))
    except KeyspaceError as exc:
        return type(exc).__name__, None


def _fast(layout: Any, ns: Any, key: Any) -> tuple[str, Any]:
    try:
        return "ok", _bytes(layout, ns.key_writer()(key))
    except KeyspaceError as exc:
        return type(exc).__name__, None


@pytest.mark.parametrize("layout", [COSMWASM, TUPLE], ids=["cosmwasm", "tuple"])
@pytest.mark.parametrize("kind", sorted(_VALUES))
@given(data=st.data())
def test_a_key_is_written_and_read_as_the_general_path_does(layout: Any, kind: str, data: Any) -> None:
    ns = layout.namespace("ns", KeySpec(kind))
    key = data.draw(_VALUES[kind] | _WRONG)
    written = _fast(layout, ns, key)
    assert written == _general(layout, ns, key)
    if written[0] == "ok":
        stored = ns.key_writer()(key)
        assert ns.key_reader((), ns.spec)(stored) == ns.spec.key_of(ns.elements(stored))


@pytest.mark.parametrize("layout", [COSMWASM, TUPLE], ids=["cosmwasm", "tuple"])
@given(who=st.text(max_size=4), n=st.integers(0, 2**32 - 1))
def test_composite_keys_take_the_general_path_with_the_same_result(layout: Any, who: str, n: int) -> None:
    ns = layout.namespace("ns", KeySpec(("str", "u32")))
    stored = ns.key_writer()((who, n))
    assert _bytes(layout, stored) == _general(layout, ns, (who, n))[1]
    assert ns.key_reader((), ns.spec)(stored) == (who, n)
    assert ns.key_reader((who,), KeySpec("u32"))(stored) == n


@pytest.mark.parametrize("kind", sorted(_VALUES))
@given(data=st.data())
def test_checked_bytes_is_to_bytes_of_check(kind: str, data: Any) -> None:
    key_type = KeySpec(kind).types[0]
    value = data.draw(_VALUES[kind] | _WRONG | st.just("\ud800"))
    try:
        expected: tuple[str, Any] = ("ok", key_type.to_bytes(key_type.check(value)))
    except KeyspaceError as exc:
        expected = (type(exc).__name__, str(exc))
    try:
        got: tuple[str, Any] = ("ok", key_type.checked_bytes(value))
    except KeyspaceError as exc:
        got = (type(exc).__name__, str(exc))
    assert got == expected
