"""Collections refuse bad input with named errors on every scheme, never run a
key's own methods, and their iterators end with the view they read.

Found wanting: a collection key's check ran the key's own ``__int__``,
``__len__`` or ``__iter__`` (an ``int`` subclass could store a key under another
value; a released ``memoryview`` raised a bare ``ValueError``); range arguments
went unchecked on ScopeHash and on tuple-layout prefix ranges (``limit=True``
gave one item, ``reverse="no"`` read in reverse); ``Deque.get`` took a float
index, truncated where the key is encoded; and a ScopeHash range begun in a
transaction handed out every item after the block ended, rolled back or not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import keyspace
from keyspace.collections import COSMWASM, TUPLE, Deque, Layout, Map
from keyspace.errors import InvalidArgument, InvalidKey, StoreClosed
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme

SCHEMES: dict[str, tuple[Scheme, Layout]] = {
    "tuple": (TupleScheme(), TUPLE),
    "tuple, cosmwasm layout": (TupleScheme(), COSMWASM),
    "length-prefixed": (LengthPrefixed(), COSMWASM),
    "asciihex": (AsciiHex(), COSMWASM),
    "sublevel": (Sublevel(), COSMWASM),
    "scopehash": (ScopeHash(), COSMWASM),
}


@pytest.fixture(params=list(SCHEMES))
def map_of(request: pytest.FixtureRequest) -> Iterator[Any]:
    scheme, layout = SCHEMES[request.param]
    ks = keyspace.open("memory:", scheme=scheme, leaf_depth=1 if isinstance(scheme, LengthPrefixed) else None)
    yield lambda key: Map(ks.scope("app"), f"m{key}", key=key, layout=layout)
    ks.close()


class _Liar(int):
    def __int__(self) -> int:
        return 99

    def __index__(self) -> int:
        return 99


class _Raising(tuple[Any, ...]):
    def __len__(self) -> int:
        raise RuntimeError("the key's own __len__ ran")

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("the key's own __iter__ ran")


def test_a_key_is_read_without_running_its_own_methods(map_of: Any) -> None:
    ints = map_of("u8")
    ints.save(_Liar(3), "three")
    assert list(ints.keys()) == [3] and ints.may_load(3) == "three"
    pairs = map_of(("str", "u8"))
    pairs.save(_Raising(("a", 1)), "a1")
    assert pairs.may_load(("a", 1)) == "a1"
    assert list(pairs.prefix(_Raising(("a",))).keys()) == [1]
    released = memoryview(b"k")
    released.release()
    with pytest.raises(InvalidKey, match="bytes"):
        map_of("bytes").save(released, "v")


@pytest.mark.parametrize(
    "arguments",
    [
        {"limit": True},
        {"limit": 1.5},
        {"limit": "3"},
        {"reverse": 1},
        {"reverse": "no"},
        {"include_start": 1},
        {"include_stop": None},
    ],
    ids=str,
)
def test_range_arguments_of_the_wrong_type_are_refused(map_of: Any, arguments: dict[str, Any]) -> None:
    m = map_of(("str", "u8"))
    for i in range(3):
        m.save(("a", i), i)
    name = next(iter(arguments))
    for ranged in (m, m.prefix("a")):
        with pytest.raises(InvalidArgument, match=name):
            list(ranged.items(**arguments))
        with pytest.raises(InvalidArgument, match=name):
            list(ranged.items(start=1 if ranged is not m else ("a", 1), **arguments))


@pytest.mark.parametrize("layout", [TUPLE, COSMWASM], ids=["tuple", "cosmwasm"])
def test_a_deque_index_that_is_not_an_int_is_refused(layout: Layout) -> None:
    with keyspace.open("memory:") as ks:
        deque = Deque(ks.scope("app"), "d", layout=layout)
        deque.push_back("first")
        deque.push_back("second")
        for index in (0.5, 1.9, "0", None, True):
            with pytest.raises(InvalidArgument, match="index"):
                deque.get(index)  # type: ignore[arg-type]
        assert deque.get(_Liar(1)) == "second" and deque.get(-1) == "second"


@pytest.mark.parametrize("scheme", [ScopeHash(), Sublevel()], ids=["scopehash", "sublevel"])
@pytest.mark.parametrize("block", ["transaction", "snapshot"])
def test_a_range_begun_in_a_block_ends_with_it(scheme: Scheme, block: str) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    m = Map(ks.scope("app"), "m", key="u32")
    for i in range(3000):
        m.save(i, "committed")
    handed = 0
    with pytest.raises(StoreClosed):
        with ks.transaction() if block == "transaction" else ks.snapshot() as view:
            items = m.using(view).items()
            next(items)
        for _ in items:
            handed += 1
    assert handed < 1024  # at most what the page read before the end held
    ks.close()


@pytest.mark.parametrize("scheme", [LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash()], ids=repr)
@pytest.mark.parametrize(
    "make",
    [lambda scope, **kw: Map(scope, "m", key="str", **kw), lambda scope, **kw: Deque(scope, "d", **kw)],
    ids=["Map", "Deque"],
)
def test_the_tuple_layout_on_a_scheme_of_bytes_keys_is_refused_when_made(scheme: Scheme, make: Any) -> None:
    """Before, the collection was made, its writes blamed the key's type, and its
    reads answered empty."""
    ks = keyspace.open("memory:", scheme=scheme, leaf_depth=1 if isinstance(scheme, LengthPrefixed) else None)
    try:
        with pytest.raises(InvalidArgument, match="layout 'tuple' keeps typed tuple keys"):
            make(ks.scope("app"), layout=TUPLE)
        assert list(ks.store.scan(b"", None)) == []
    finally:
        ks.close()
