"""Scan bounds and prefixes are positions, not keys: a bound or prefix that starts
with the byte no key of the scheme may start with (Sublevel's separator) still
answers, with exactly the scope's own keys and never a child's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.schemes import Scheme, Sublevel

FORBIDDING = [Sublevel(), Sublevel("#")]

own_keys = st.binary(max_size=3)
bounds = st.one_of(st.none(), st.binary(max_size=3), st.sampled_from([b"!", b"!x", b"#", b"#\x00", b"\xff"]))


def _fill(scheme: Scheme, keys: list[bytes]) -> tuple[keyspace.Keyspace, dict[bytes, bytes]]:
    ks = keyspace.open("memory:", scheme=scheme)
    sep = bytes((scheme.layout((b"a",)).forbidden,))
    own = {k: b"v" + k for k in keys if not k.startswith(sep)}
    ks.scope(b"a").update(own)
    ks.scope(b"a", b"c").update({b"child": b"x", sep[:0] + b"z": b"y"})  # a child's keys beside the own
    return ks, own


@pytest.mark.parametrize("scheme", FORBIDDING, ids=lambda s: s.separator)
@settings(max_examples=150, deadline=None)
@given(
    keys=st.lists(own_keys, max_size=8),
    start=bounds,
    stop=bounds,
    reverse=st.booleans(),
    limit=st.none() | st.integers(1, 4),
)
def test_bounds_are_positions(
    scheme: Scheme,
    keys: list[bytes],
    start: bytes | None,
    stop: bytes | None,
    reverse: bool,
    limit: int | None,
) -> None:
    ks, own = _fill(scheme, keys)
    want = sorted(
        (k, v) for k, v in own.items() if (start is None or k >= start) and (stop is None or k < stop)
    )
    if reverse:
        want.reverse()
    if limit is not None:
        want = want[:limit]
    got = list(ks.scope(b"a").items(start=start, stop=stop, reverse=reverse, limit=limit))
    assert got == want


@pytest.mark.parametrize("scheme", FORBIDDING, ids=lambda s: s.separator)
@settings(max_examples=100, deadline=None)
@given(keys=st.lists(own_keys, max_size=8), prefix=bounds.filter(lambda b: b is not None))
def test_prefixes_are_positions(scheme: Scheme, keys: list[bytes], prefix: bytes) -> None:
    ks, own = _fill(scheme, keys)
    want = sorted((k, v) for k, v in own.items() if k.startswith(prefix))
    assert list(ks.scope(b"a").items(prefix=prefix)) == want


@pytest.mark.parametrize("scheme", FORBIDDING, ids=lambda s: s.separator)
def test_a_str_prefix_or_bound_at_the_separator_reads_no_child(scheme: Scheme) -> None:
    ks, _ = _fill(scheme, [b"a", b"b"])
    sep = chr(scheme.layout((b"a",)).forbidden)
    scope = ks.scope(b"a", key="str")
    assert list(scope.keys(prefix=sep)) == []
    assert list(scope.keys(start=sep)) == ["a", "b"]  # both sort after either separator
    assert list(scope.keys(stop=sep + "z")) == []
    assert list(scope.keys(start=sep, stop="b")) == ["a"]
