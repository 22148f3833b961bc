"""Scopes behave like the mappings Python users know, in every scheme: views without
range arguments (``len``, ``in``, ``==`` with a dict's views, iterable again),
iterators with them; ``setdefault``, ``pop``, ``popitem``, ``update`` with keyword
arguments or none, ``==`` with dicts; ``prefix=`` returns exactly the keys with that
prefix (ScopeHash too, whose stored keys lead with the key's length)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidArgument, InvalidKey, KeyspaceError
from keyspace.schemes import (
    AsciiHex,
    Delimited,
    LengthPrefixed,
    Naive,
    Scheme,
    ScopeHash,
    Sublevel,
    TupleScheme,
)
from keyspace.scope import ScopeItems, ScopeKeys, ScopeValues

SCHEMES: list[Scheme] = [
    TupleScheme(),
    LengthPrefixed(),
    AsciiHex(),
    Sublevel(),
    ScopeHash(),
    Naive(True),
    Delimited(":"),
]
_IDS = [s.name for s in SCHEMES]


@pytest.fixture(params=SCHEMES, ids=_IDS)
def scheme(request: pytest.FixtureRequest) -> Scheme:
    scheme: Scheme = request.param
    return scheme


@pytest.fixture
def ks(scheme: Scheme) -> Iterator[keyspace.Keyspace]:
    with keyspace.open("memory:", scheme=scheme) as opened:
        yield opened


def test_views_without_arguments(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("s")
    data = {b"a": b"1", b"b": b"2", b"c\x00": b"3"}
    scope.update(data)
    keys, items, values = scope.keys(), scope.items(), scope.values()
    assert isinstance(keys, ScopeKeys) and isinstance(items, ScopeItems) and isinstance(values, ScopeValues)
    assert len(keys) == len(items) == len(values) == 3
    assert keys == data.keys() and data.keys() == keys
    assert items == data.items() and data.items() == items
    assert b"a" in keys and b"z" not in keys
    assert (b"a", b"1") in items and (b"a", b"2") not in items
    assert b"3" in values
    assert sorted(values) == sorted(data.values())
    assert list(keys) == list(keys)  # iterable again
    scope[b"d"] = b"4"
    assert len(keys) == 4  # a view: read at each use
    assert keys & {b"a", b"x"} == {b"a"}


def test_range_arguments_give_iterators(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("s")
    scope.update({b"a": b"1", b"b": b"2"})
    it = scope.items(limit=1)
    assert iter(it) is it
    assert next(it) in {(b"a", b"1"), (b"b", b"2")}
    assert next(iter(scope.keys(reverse=True))) in {b"a", b"b"}


def test_dict_methods(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("s")
    assert scope == {}
    assert scope.setdefault(b"k", b"v") == b"v"
    assert scope.setdefault(b"k", b"other") == b"v"
    assert scope.pop(b"k") == b"v"
    assert scope.pop(b"k", None) is None
    with pytest.raises(KeyError):
        scope.pop(b"k")
    with pytest.raises(KeyError):
        scope.popitem()
    scope.update()
    scope.update([(b"x", b"1")])
    scope.update({b"y": b"2"})
    scope.update(iter([(b"z", b"3")]))
    data = {b"x": b"1", b"y": b"2", b"z": b"3"}
    assert scope == data
    assert scope != {b"x": b"1"}
    assert data == scope  # dict.__eq__ hands over to the scope
    last = max(scope.keys(), key=ks.scheme.layout(("s",)).stored)  # the last in stored order
    assert scope.popitem() == (last, data[last])
    assert len(scope) == 2
    other = ks.scope("t")
    other.update(scope)
    assert other == scope


def test_update_with_keyword_arguments() -> None:
    with keyspace.open("memory:") as ks:  # str keys are tuple-scheme keys
        scope = ks.scope("s")
        scope.update({b"a": b"1"}, b=b"2", c=b"3")
        assert dict(scope) == {b"a": b"1", "b": b"2", "c": b"3"}
        typed = ks.scope("typed", key="str", value="json")
        typed.update(x=1, y=[2])
        assert typed == {"x": 1, "y": [2]}
    with keyspace.open("memory:", scheme=AsciiHex()) as ks:
        with pytest.raises(InvalidKey):
            ks.scope("s").update(k=b"v")  # a byte scheme takes bytes keys only
        texts = ks.scope("s", key="str")
        texts.update(k=b"v")
        assert dict(texts) == {"k": b"v"}


class _KeysAndItem:
    """An object ``dict.update`` reads through ``keys()`` and ``[]``; it has no
    ``items()``, and iterating it gives its keys."""

    def __init__(self, data: dict[Any, Any]) -> None:
        self._data = data

    def keys(self) -> list[Any]:
        return list(self._data)

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)


@pytest.mark.parametrize("in_transaction", [False, True])
def test_update_reads_an_object_with_keys_as_dict_update_does(
    ks: keyspace.Keyspace, in_transaction: bool
) -> None:
    """Such an object was taken for an iterable of pairs: the two-byte key
    ``b"ab"`` was written as the key 97 with the value 98, or refused."""
    rows = sqlite3.connect(":memory:")
    rows.row_factory = sqlite3.Row
    row = rows.execute("select 'v1' as name, 'v2' as role").fetchone()
    for other, codec in ((_KeysAndItem({b"ab": b"1", b"cd": b"2"}), "bytes"), (row, "str")):
        expected: dict[Any, Any] = {}
        expected.update(other)
        if in_transaction:
            with ks.transaction() as tx:
                tx.scope("u", key=codec, value=codec).update(other)
        else:
            ks.scope("u", key=codec, value=codec).update(other)
        scope = ks.scope("u", key=codec, value=codec)
        assert dict(scope.items()) == expected
        scope.clear()


@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_value_the_codec_refuses_is_named_as_the_value(ks: keyspace.Keyspace, in_transaction: bool) -> None:
    """The codecs' messages serve keys and values alike; a refused value said
    "'admin' has type str; this scope takes bytes" in a scope of str keys."""
    cases: list[tuple[str, str, Any, Any]] = [("str", "bytes", "alice", "admin"), ("int", "str", 1, 2)]
    for key_codec, value_codec, key, value in cases:
        for write in ("set", "update", "update kwargs"):
            if write == "update kwargs" and key_codec != "str":
                continue
            with pytest.raises(InvalidKey, match=rf"^value {value!r} has type {type(value).__name__}"):
                if in_transaction:
                    with ks.transaction() as tx:
                        _write(tx.scope("v", key=key_codec, value=value_codec), write, key, value)
                else:
                    _write(ks.scope("v", key=key_codec, value=value_codec), write, key, value)
            assert len(ks.scope("v", key=key_codec, value=value_codec)) == 0
    with pytest.raises(InvalidKey, match=r"^value <object object at 0x[0-9a-f]+> has type object"):
        ks.scope("v")[b"k"] = object()  # bytes values: the bytes codec's refusal


def _write(scope: keyspace.Scope, how: str, key: Any, value: Any) -> None:
    if how == "set":
        scope[key] = value
    elif how == "update":
        scope.update([(key, value)])
    else:
        scope.update(**{key: value})


def test_snapshot_scopes_refuse_writes(ks: keyspace.Keyspace) -> None:
    ks.scope("s")[b"k"] = b"v"
    with ks.snapshot() as snap:
        scope = snap.scope("s")
        assert scope == {b"k": b"v"}
        for change in (lambda: scope.pop(b"k"), scope.popitem, lambda: scope.update(k=b"v")):
            with pytest.raises(KeyspaceError, match="read-only"):
                change()


@pytest.mark.parametrize("scheme", SCHEMES[1:], ids=_IDS[1:])  # the byte schemes
@settings(max_examples=40, deadline=None)
@given(
    keys=st.sets(st.binary(max_size=4) | st.sampled_from([b"ab", b"abc", b"ab\x00", b"b"]), max_size=12),
    prefix=st.binary(max_size=2) | st.sampled_from([b"a", b"ab"]),
)
def test_prefix_returns_exactly_the_keys_with_it(scheme: Scheme, keys: set[bytes], prefix: bytes) -> None:
    if isinstance(scheme, Sublevel):
        keys = {k for k in keys if k[:1] != b"!"}
        prefix = prefix.lstrip(b"!")
    with keyspace.open("memory:", scheme=scheme) as ks:
        scope = ks.scope("s")
        scope.update({k: k for k in keys})
        if scheme.separates_own_keys and scheme.max_depth is None and not isinstance(scheme, Delimited):
            ks.scope("s", "a")[b"child"] = b"not own"  # Delimited: one depth, no children
        stored = scheme.layout(("s",)).stored
        want = sorted((k for k in keys if k.startswith(prefix)), key=stored)
        assert list(scope.keys(prefix=prefix)) == want
        assert list(scope.items(prefix=prefix, reverse=True)) == [(k, k) for k in reversed(want)]
        assert list(scope.keys(prefix=prefix, limit=1)) == want[:1]
        scope.clear_range(prefix=prefix)
        assert set(scope.keys()) == {k for k in keys if not k.startswith(prefix)}


def test_prefix_in_the_tuple_scheme_is_leading_elements() -> None:
    with keyspace.open("memory:") as ks:
        scope = ks.scope("s")
        rows: dict[Any, bytes] = {("a", 1): b"1", ("a", 2): b"2", ("ab", 1): b"3", "a": b"4"}
        scope.update(rows)
        assert list(scope.keys(prefix="a")) == ["a", ("a", 1), ("a", 2)]
        assert list(scope.keys(prefix=("a", 2))) == [("a", 2)]


@pytest.mark.parametrize(
    ("other", "words"),
    [
        ([(b"ok", b"1"), b"abc"], "element #1 is no (key, value) pair"),
        ([(b"k", b"v", b"x")], "element #0 is no (key, value) pair"),
        ([5], "element #0 is no (key, value) pair"),
        (5, "update takes a mapping or an iterable of (key, value) pairs, not 5"),
    ],
)
@pytest.mark.parametrize("url", ["memory:", "lmdb"])
def test_update_names_what_is_no_pair_and_writes_nothing(
    tmp_path: Any, url: str, other: Any, words: str
) -> None:
    """``dict.update`` raises a bare ValueError or TypeError here."""
    with keyspace.open(url if url == "memory:" else f"lmdb://{tmp_path}/db") as ks:
        s = ks.scope("t")
        s[b"a"] = b"1"
        with pytest.raises(InvalidArgument) as refused:
            s.update(other)
        assert words in str(refused.value)
        assert dict(s.items()) == {b"a": b"1"}
        s.update([[b"b", b"2"]])  # a list of two is a pair, as for dict.update
        assert dict(s.items()) == {b"a": b"1", b"b": b"2"}


def test_an_items_view_holds_no_value_that_is_no_pair() -> None:
    with keyspace.open("memory:") as ks:
        s = ks.scope("t")
        s[b"a"] = b"1"
        d = {b"a": b"1"}
        for item in ((1, 2, 3), 5, (b"a",), (b"a", b"1")):
            assert (item in s.items()) == (item in d.items())


def test_every_update_names_what_is_no_pair() -> None:
    """A scope with a default ttl and the asyncio face read their pairs in one
    list first: the same refusal, nothing written."""
    import asyncio

    import keyspace.aio

    with keyspace.open("memory:", ttl=True) as ks:
        with pytest.raises(InvalidArgument, match="element #1 is no"):
            ks.scope("t").expiring(5).update([(b"a", b"1"), (b"b",)])
        assert list(ks.scope("t").keys()) == []

    async def run() -> list[Any]:
        aks = await keyspace.aio.open("memory:")
        try:
            with pytest.raises(InvalidArgument, match="element #0 is no"):
                await aks.scope("t").update([b"abc"])
            return [k async for k in aks.scope("t")]
        finally:
            await aks.close()

    assert asyncio.run(run()) == []
