"""A layout transform's ``stored_pairs`` (``keyspace.schemes._layouts_accel``), the
one C call that encodes the pairs of ``scope.update``: for a list or tuple of
pairs or a dict whose values are all ``bytes`` it returns what the reference
comprehension (:func:`keyspace._bulk_writes.stored_pairs` without it) makes;
for anything else ``NotImplemented``, and ``update`` then stores and refuses
exactly as the reference does (values of other types, elements that are no
pair, keys the scheme refuses)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace._bulk_writes import stored_pairs
from keyspace.errors import InvalidArgument, InvalidKey, KeyspaceError
from keyspace.schemes import AsciiHex, LengthPrefixed, Sublevel, TupleScheme

try:
    from keyspace.schemes import _layouts_accel
except ImportError:  # pragma: no cover - built without a C compiler
    _layouts_accel = None

needs_accel = pytest.mark.skipif(_layouts_accel is None, reason="the C layouts module was not built")

SCHEMES = {
    "tuple": TupleScheme(),
    "length-prefixed": LengthPrefixed(),
    "asciihex": AsciiHex(),
    "sublevel": Sublevel(),
}


def _reference(stored: Any, pairs: Any) -> Any:
    try:
        return ("made", stored_pairs(lambda key: stored(key), pairs, None))  # a Python callable: no C
    except KeyspaceError as exc:
        return ("raised", type(exc), str(exc))


def _in_c(stored: Any, source: Any, pairs: Any) -> Any:
    try:
        return ("made", stored_pairs(stored, pairs, source))
    except KeyspaceError as exc:
        return ("raised", type(exc), str(exc))


def _transform(scheme_name: str) -> Any:
    ks = keyspace.open("memory:", scheme=SCHEMES[scheme_name])
    scope = ks.scope("t", "u")
    stored = scope._stored  # type: ignore[attr-defined]
    return stored


@needs_accel
@pytest.mark.parametrize("scheme_name", list(SCHEMES))
def test_the_scopes_of_the_byte_schemes_have_it(scheme_name: str) -> None:
    stored = _transform(scheme_name)
    assert type(stored).__name__ == "Transform"
    assert stored.stored_pairs([(b"k", b"v")]) == [(stored(b"k"), b"v")]


keys = st.binary(max_size=12)
values = st.one_of(st.binary(max_size=8), st.binary(max_size=8).map(bytearray), st.integers(), st.none())


@settings(max_examples=300, deadline=None)
@given(
    scheme_name=st.sampled_from(list(SCHEMES)),
    pairs=st.lists(st.tuples(keys, values), max_size=12),
    shape=st.sampled_from(["list", "tuple", "dict"]),
)
def test_it_makes_or_refuses_what_the_reference_does(scheme_name: str, pairs: list[Any], shape: str) -> None:
    stored = _transform(scheme_name)
    if shape == "dict":
        source: Any = dict(pairs)
        items: Any = source.items()
    else:
        source = items = pairs if shape == "list" else tuple(pairs)
    got = _in_c(stored, source, items)
    assert got == _reference(stored, items)
    if _layouts_accel is not None and got[0] == "made":
        made = stored.stored_pairs(source)
        all_bytes = all(type(v) is bytes for _, v in items)
        assert made == got[1] if all_bytes else made is NotImplemented


@needs_accel
@pytest.mark.parametrize(
    "source",
    [
        [(b"a", b"1"), [b"b", b"2"]],  # a list, not a tuple
        [(b"a", b"1"), (b"b", b"2", b"3")],
        [(b"a", b"1"), b"ab"],
        [(b"a", bytearray(b"1"))],
        (x for x in [(b"a", b"1")]),
        {b"a": b"1", b"b": 2},
    ],
)
def test_anything_else_is_handed_back(source: Any) -> None:
    assert _transform("tuple").stored_pairs(source) is NotImplemented


def test_update_stores_and_refuses_as_before() -> None:
    with keyspace.open("memory:", scheme=LengthPrefixed()) as ks:
        scope = ks.scope("t")
        scope.update([(b"a", b"1"), (b"b", bytearray(b"2"))])
        scope.update({b"c": b"3", b"d": memoryview(b"4")})
        scope.update(((b"e", b"5"),))
        assert dict(scope.items()) == {b"a": b"1", b"b": b"2", b"c": b"3", b"d": b"4", b"e": b"5"}
        with pytest.raises(InvalidArgument, match=r"element #1 is no \(key, value\) pair"):
            scope.update([(b"x", b"1"), (b"y",)])
        with pytest.raises(InvalidKey, match="value"):
            scope.update([(b"x", b"1"), (b"y", 5)])
        with pytest.raises(InvalidKey):
            scope.update([(b"x", b"1"), ("not bytes", b"2")])
        assert b"x" not in scope  # all or nothing


def test_a_key_whose_encoding_changes_the_input_is_read_again() -> None:
    """A list that changes while its pairs are encoded (a key object whose
    encoding, in the reference's fallback, mutates it) is handed back whole."""
    if _layouts_accel is None:
        pytest.skip("keyspace.schemes._layouts_accel was not built")
    calls: list[Any] = []

    def fallback(key: Any) -> bytes:
        source.append((b"z", b"9"))
        calls.append(key)
        return b"P" + bytes(key)

    transform = _layouts_accel.Transform(0, b"P", -1, 0, fallback, lambda items: items)
    source: list[Any] = [(b"a", b"1"), (bytearray(b"b"), b"2"), (b"c", b"3")]
    assert transform.stored_pairs(source) is NotImplemented and calls
