"""``len(scope)`` equals a recount of the scope's own keys (``len(list(scope))``)
on every scheme, on LMDB, SQLite and memory, on the store, in a snapshot (whose
count ignores later writes) and in a transaction with writes of its own, for
scopes with children of any depth among their own keys (AsciiHex stores a
child's keys between its parent's: its count filters by the byte its own keys
lack, ``Layout.lacks``, and that is exactly its ``is_own``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.schemes import AsciiHex, Scheme, ScopeHash, Sublevel, TupleScheme

_SCHEMES: list[Scheme] = [TupleScheme(), AsciiHex(), Sublevel(), ScopeHash()]
_URLS = ["memory:", "lmdb://{d}/db", "sqlite://{d}/s.db"]
_NAMES = st.sampled_from(["a", "b", "ab", "a\x00"[:1], "users"])
_PATHS = st.lists(_NAMES, min_size=1, max_size=3).map(tuple)
_KEYS = st.binary(min_size=1, max_size=4).filter(lambda k: not k.startswith(b"!"))
_WRITES = st.lists(st.tuples(_PATHS, _KEYS), max_size=40)


def _paths(scheme: Scheme, writes: list[tuple[tuple[str, ...], bytes]]) -> list[tuple[str, ...]]:
    """ScopeHash names one level: a path is one name there."""
    if scheme.hashed_names:
        return [(".".join(p),) for p, _ in writes]
    return [p for p, _ in writes]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scheme=st.sampled_from(_SCHEMES),
    url=st.sampled_from(_URLS),
    writes=_WRITES,
    later=_WRITES,
)
def test_len_is_a_recount_of_the_own_keys(
    tmp_path_factory: pytest.TempPathFactory,
    scheme: Scheme,
    url: str,
    writes: list[tuple[tuple[str, ...], bytes]],
    later: list[tuple[tuple[str, ...], bytes]],
) -> None:
    d = tmp_path_factory.mktemp("s")
    with keyspace.open(url.format(d=d), scheme=scheme) as ks:
        for path, (_, key) in zip(_paths(scheme, writes), writes, strict=True):
            ks.scope(*path)[key] = b"v"
        asked = sorted(set(_paths(scheme, writes + later))) + [()] * (not scheme.hashed_names)
        for path in asked:
            assert len(ks.scope(*path)) == len(list(ks.scope(*path))), path
        with ks.snapshot() as snap:
            for path, (_, key) in zip(_paths(scheme, later), later, strict=True):
                ks.scope(*path)[key + b"L"] = b"v"  # after the snapshot began
            for path in asked:
                seen = snap.scope(*path)
                assert len(seen) == len(list(seen)), path
        with ks.transaction() as tx:
            for path, (_, key) in zip(_paths(scheme, later), later, strict=True):
                tx.scope(*path)[key + b"T"] = b"v"
                tx.scope(*path).pop(key + b"L", None)
            for path in asked:
                mine = tx.scope(*path)
                assert len(mine) == len(list(mine)), path


def test_an_asciihex_scope_counts_its_own_keys_among_its_childrens(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path / 'db'}", scheme=AsciiHex()) as ks:
        parent = ks.scope("t")
        parent.update({b"\x00" + bytes([i]): b"v" for i in range(200)})
        for i in range(50):  # children whose keys sort among the parent's own
            ks.scope("t", bytes([i]).hex())[b"k"] = b"v"
        assert ks.scope("t").layout.lacks == 0 and not ks.scope("t").layout.exact
        assert len(parent) == 200 == len(list(parent))
        assert ks.scope("t", "00")[b"k"] == b"v" and len(ks.scope("t", "00")) == 1
