"""``ks.stats()``, ``stats()`` and ``set_quota`` of the root and of every ancestor
work under every countable scheme, Delimited too, whose scopes hold keys only at
its fixed depth: the counts of an ancestor are the sums of the scopes below it,
and a quota on an ancestor holds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import QuotaExceeded
from keyspace.schemes import Delimited

NAMES = st.sampled_from(["a", "b", "cc"])


@settings(max_examples=40, deadline=None)
@given(
    depth=st.integers(1, 3),
    writes=st.lists(st.tuples(st.lists(NAMES, min_size=3, max_size=3), st.binary(max_size=4)), max_size=8),
)
def test_ancestors_of_a_fixed_depth_scheme_have_counts(
    depth: int, writes: list[tuple[list[str], bytes]]
) -> None:
    ks = keyspace.open("memory:", scheme=Delimited(depth=depth), accounting=True)
    model: dict[tuple[Any, ...], dict[bytes, bytes]] = {}
    for names, key in writes:
        path = tuple(names[:depth])
        ks.scope(*path)[key or b"k"] = b"v"
        model.setdefault(path, {})[key or b"k"] = b"v"
    for cut in range(depth):
        for path in {p[:cut] for p in model} | {()}:
            below = [k for p, d in model.items() if p[: len(path)] == path for k in d]
            stats = ks.stats() if not path else ks.scope(*path).stats()
            assert stats.keys == 0 and stats.subtree_keys == len(below)


@pytest.mark.parametrize("depth", [1, 2])
def test_a_quota_on_the_root_or_an_ancestor_of_a_fixed_depth_scheme_holds(depth: int) -> None:
    ks = keyspace.open("memory:", scheme=Delimited(depth=depth), accounting=True)
    path = ("a", "b")[:depth]
    ks.scope(*path)[b"x"] = b"1"
    ks.set_quota(path[:-1], keys=1)
    with pytest.raises(QuotaExceeded, match="quota of 1 keys"):
        ks.scope(*path)[b"y"] = b"1"
    assert list(ks.scope(*path).keys()) == [b"x"]
    assert ks.stats().subtree_keys == 1
    assert ks.quotas() == {tuple(c.encode() for c in path[:-1]): (1, None)}
