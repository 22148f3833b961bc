"""``keyspace inspect`` counts runs of a scope's keys by range: the tree and the
keys outside every scope are exactly what reading every key one by one gives,
whatever the store holds (keys of many scopes, reserved keys, keys that do not
decode in the middle of a scope's range)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.cli._tree import ScopeTree
from keyspace.cli._walk import Entry, KeyReader, walk
from keyspace.cli.inspect_cmd import Outside, scope_tree
from keyspace.errors import InvalidName
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme


def _one_by_one(ks: keyspace.Keyspace, depth: int | None) -> tuple[ScopeTree, Outside]:
    """The reference: every stored key decoded on its own (:func:`walk`)."""
    tree, outside = ScopeTree(), Outside()
    for item in walk(ks.store, KeyReader(ks.scheme, depth, ks.store)):
        if isinstance(item, Entry):
            tree.add(item.path, len(item.stored) + len(item.value))
        else:
            outside.count(item.stored, item.value, item.reason)
    return tree, outside


def _storable(scheme: Scheme, path: tuple[str, ...], key: bytes) -> bool:
    try:
        scheme.encode(path, key)
    except InvalidName:
        return False
    return True


_NAMES = st.sampled_from(["a", "b", "ab", "users", "z"])
_KEYS = st.one_of(st.binary(max_size=5), st.sampled_from([b"\x00", b"\xff", b"k", b"k\x00"]))
_DELIMITED_KEYS = st.binary(max_size=4).map(lambda b: b.replace(b":", b""))
_GARBAGE = st.binary(max_size=8)
# (scheme, depth passed to inspect, path depth range written)
_CASES: list[tuple[Scheme, int | None, int, int]] = [
    (TupleScheme(), None, 0, 3),
    (TupleScheme(b"rp"), None, 0, 2),
    (Sublevel(), None, 0, 3),
    (AsciiHex(), None, 0, 3),
    (LengthPrefixed(), 2, 2, 2),
    (ScopeHash(), None, 0, 1),
    (Delimited(":", 2), 2, 2, 2),
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(_CASES),
    data=st.data(),
)
def test_runs_count_what_keys_one_by_one_count(case: tuple[Scheme, int | None, int, int], data: Any) -> None:
    scheme, depth, low, high = case
    ks = keyspace.open("memory:", scheme=scheme, **({"leaf_depth": depth} if depth is not None else {}))
    try:
        paths = data.draw(st.lists(st.lists(_NAMES, min_size=low, max_size=high).map(tuple), max_size=6))
        for path in paths:
            keys = data.draw(
                st.lists(_DELIMITED_KEYS if isinstance(scheme, Delimited) else _KEYS, max_size=20)
            )
            # a key the scheme refuses (a Sublevel key starting with its separator) is no case here
            keys = [k for k in keys if _storable(scheme, path, k)]
            if keys:
                ks.scope(*path).update({k: b"v" * len(k) for k in keys})
        # keys written around the scheme: inside scopes' ranges, between them, anywhere
        stored = [k for k, _ in ks.store.scan()]
        for _ in range(data.draw(st.integers(0, 6))):
            if stored and data.draw(st.booleans()):
                base = data.draw(st.sampled_from(stored))
                cut = data.draw(st.integers(0, len(base)))
                junk = base[:cut] + data.draw(_GARBAGE)
            else:
                junk = data.draw(_GARBAGE)
            if junk:
                ks.store.put(junk, b"junk")
        tree, outside = scope_tree(ks, depth)
        want_tree, want_outside = _one_by_one(ks, depth)
        typed = scheme.typed_keys
        assert tree.to_json(typed=typed) == want_tree.to_json(typed=typed)
        assert outside == want_outside
    finally:
        ks.close()


@pytest.mark.parametrize("engine", ["memory", "lmdb", "leveldb"])
def test_a_long_scope_is_counted_in_runs(engine: str, tmp_path: Path) -> None:
    """Many keys of a few scopes, across several chunks: the same counts, whether
    the store's pages are lists (memory, LMDB: each taken as a chunk) or one page
    read as it streams (LevelDB: read in chunks)."""
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"
    ks = keyspace.open(url, scheme=TupleScheme())
    for t in range(3):
        ks.scope(f"t{t}", "users").update({b"%06d" % i: b"v" for i in range(1000)})
    ks.store.put(TupleScheme().encode(("t1", "users"), b"000100") + b"\x01junk", b"x")
    tree, outside = scope_tree(ks)
    want_tree, want_outside = _one_by_one(ks, None)
    assert tree.to_json(typed=True) == want_tree.to_json(typed=True)
    assert outside == want_outside
    assert outside.undecodable == 1
    assert tree.root.sub_keys == 3000
    ks.close()
