"""``prefix=`` on a layout that stores each key's length before it (ScopeHash,
scoped-heed: ``prefix + u64le(len key) + key``) reads one exact range per length
stored, found by seeking, instead of the whole scope through a filter: it yields
exactly the own keys that start with the prefix, in stored order, with
``reverse``, ``limit``, ``clear_range`` and counts, on every store kind; keys
too short to hold a length field, or whose field does not match, are met as
the filter met them; and the ranges come from one seek per length stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _heed_env import HEED_DATA, reference_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import scoped_heed
from keyspace.schemes._layouts import LengthFirstFilter

KEYS = st.binary(max_size=6) | st.sampled_from([b"ab", b"abc", b"a", b"b\x00", b"\xff" * 3])
PREFIXES = st.binary(max_size=3) | st.sampled_from([b"a", b"ab", b"\xff"])


def _expected(
    scope: Any, pairs: dict[bytes, bytes], prefix: bytes, reverse: bool, limit: int | None
) -> list[Any]:
    path = scope.path
    kept = sorted((scope.scheme.encode(path, k), k, v) for k, v in pairs.items() if k.startswith(prefix))
    items = [(k, v) for _, k, v in kept]
    if reverse:
        items.reverse()
    return items if limit is None else items[:limit]


@pytest.mark.parametrize("url", ["memory", "lmdb", "sqlite"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=st.dictionaries(KEYS, st.binary(max_size=3), max_size=16),
    prefix=PREFIXES,
    reverse=st.booleans(),
    limit=st.none() | st.integers(0, 5),
)
def test_prefix_yields_exactly_the_keys_that_start_with_it_in_stored_order(
    tmp_path_factory: pytest.TempPathFactory,
    url: str,
    pairs: dict[bytes, bytes],
    prefix: bytes,
    reverse: bool,
    limit: int | None,
) -> None:
    where = "memory:" if url == "memory" else f"{url}://{tmp_path_factory.mktemp('s') / 'store'}"
    with keyspace.open(where, scheme="scopehash") as ks:
        scope = ks.scope("a")
        scope.update(pairs)
        ks.scope("b").update({prefix + b"x": b"other", prefix: b"other"})  # a sibling's keys
        want = _expected(scope, pairs, prefix, reverse, limit)
        assert list(scope.items(prefix=prefix, reverse=reverse, limit=limit)) == want
        assert list(scope.keys(prefix=prefix, reverse=reverse, limit=limit)) == [k for k, _ in want]
        with ks.snapshot() as snap:
            assert list(snap.scope("a").items(prefix=prefix, reverse=reverse, limit=limit)) == want
        scope.clear_range(prefix=prefix)
        assert dict(scope.items()) == {k: v for k, v in pairs.items() if not k.startswith(prefix)}
        assert dict(ks.scope("b").items()) == {prefix + b"x": b"other", prefix: b"other"}


def test_the_ranges_take_one_seek_per_length_stored() -> None:
    stored = sorted(b"P" + len(k).to_bytes(8, "little") + k for k in [b"a" * n for n in range(300)])
    seeks: list[bytes] = []

    def seek(start: bytes) -> bytes | None:
        seeks.append(start)
        return next((k for k in stored if k >= start), None)

    runs = LengthFirstFilter(b"P", b"aa", b"P" + bytes(8)).runs(seek)
    assert len(runs) == 298  # lengths 2 to 299
    assert len(seeks) == 301  # one per length stored, and the one that finds the end
    assert all(any(lo <= k < hi for lo, hi in runs) == (k[9:].startswith(b"aa")) for k in stored)


@settings(max_examples=200, deadline=None)
@given(
    stored=st.lists(
        st.binary(max_size=3).map(lambda rest: b"P" + rest)  # too short to hold a length field
        | st.tuples(st.integers(0, 6), st.binary(max_size=6)).map(
            lambda t: b"P" + t[0].to_bytes(8, "little") + t[1]  # a field that need not match
        ),
        max_size=20,
    ),
    head=st.binary(max_size=3),
)
def test_the_ranges_hold_what_the_filter_keeps_malformed_keys_included(
    stored: list[bytes], head: bytes
) -> None:
    stored = sorted(set(stored))
    keep = LengthFirstFilter(b"P", head, b"P")

    def seek(start: bytes) -> bytes | None:
        return next((k for k in stored if k >= start), None)

    runs = keep.runs(seek)
    assert [r[0] for r in runs] == sorted(r[0] for r in runs)  # stored order, disjoint
    for k in stored:
        inside = [r for r in runs if r[0] <= k and (r[1] is None or k < r[1])]
        assert len(inside) <= 1
        field_ok = len(k) >= 9 and int.from_bytes(k[1:9], "little") >= len(head)
        assert bool(inside) == (keep(k) and field_ok), k


def test_scoped_heed_prefix_reads_of_the_reference_environment(tmp_path: Path) -> None:
    """The ``cache`` database that scoped-heed wrote: every prefix of every key of
    ``tenant1`` answers the entries scoped-heed itself read back with that prefix."""
    entries = [
        json.loads(line)
        for line in (HEED_DATA / "dump.jsonl").read_text(encoding="utf-8").splitlines()
        if '"kind":"scoped"' in line
    ]
    mine = {
        bytes.fromhex(e["key_hex"]): bytes.fromhex(e["value_hex"])
        for e in entries
        if e["db"] == "cache" and e["scope"] == "tenant1"
    }
    assert mine  # the reference holds keys of that scope
    env = reference_env(tmp_path)
    with scoped_heed.open(env, "cache", readonly=True) as ks:
        scope = ks.scope("tenant1")
        assert dict(scope.items()) == mine
        for key in mine:
            for cut in range(len(key) + 1):
                prefix = key[:cut]
                want = {k: v for k, v in mine.items() if k.startswith(prefix)}
                got = list(scope.items(prefix=prefix))
                assert dict(got) == want and len(got) == len(want)
                assert [k for k, _ in got] == sorted(want, key=lambda k: (len(k).to_bytes(8, "little"), k))
