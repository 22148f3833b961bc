"""``Scope.clear_range`` with abstract-level's clear-range cases, as data, on every
local store and on schemes whose stored order is key order; and, on every
scheme, a differential property: ``clear_range(**args)`` removes exactly the keys
``items(**args)`` yields, returns their number, and touches nothing else.

The cases are those of abstract-level's ``test/clear-range-test.js``: keys
``"00"`` … ``"99"``; its range words map to plyvel's as ``gte`` -> ``start``,
``gt`` -> ``start`` with ``include_start=False``, ``lte`` -> ``stop`` with
``include_stop=True``, ``lt`` -> ``stop``. Its ``limit=-1`` ("clear the whole
database") is refused here (``None`` means no limit), with nothing removed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _etcd import own_url
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidArgument

KEYS = [b"%02d" % i for i in range(100)]
STORES = ["memory", "sqlite", "lmdb", "leveldb", "rocksdb"]
ORDERED_SCHEMES = ["tuple", "sublevel", "asciihex", "length-prefixed", "delimited"]
"""Schemes whose stored order of a scope's keys is key order (ScopeHash stores a
key's length first: it is checked by the differential property only)."""

ALL = (0, 99)

# (name, options in abstract-level's words, removed: inclusive index range or None)
CASES: list[tuple[str, dict[str, Any], tuple[int, int] | None]] = [
    ("full range", {}, ALL),
    ("reverse=true", {"reverse": True}, ALL),
    ("gte=00", {"gte": "00"}, ALL),
    ("gte=50", {"gte": "50"}, (50, 99)),
    ("lte=50 and reverse=true", {"lte": "50", "reverse": True}, (0, 50)),
    ("gte=49.5 (midway)", {"gte": "49.5"}, (50, 99)),
    ("gte=49999 (midway)", {"gte": "49999"}, (50, 99)),
    ("lte=49.5 (midway) and reverse=true", {"lte": "49.5", "reverse": True}, (0, 49)),
    ("lt=49.5 (midway) and reverse=true", {"lt": "49.5", "reverse": True}, (0, 49)),
    ("lt=50 and reverse=true", {"lt": "50", "reverse": True}, (0, 49)),
    ("lte=50", {"lte": "50"}, (0, 50)),
    ("lte=50.5 (midway)", {"lte": "50.5"}, (0, 50)),
    ("lte=50555 (midway)", {"lte": "50555"}, (0, 50)),
    ("lt=50555 (midway)", {"lt": "50555"}, (0, 50)),
    ("gte=50.5 (midway) and reverse=true", {"gte": "50.5", "reverse": True}, (51, 99)),
    ("gt=50.5 (midway) and reverse=true", {"gt": "50.5", "reverse": True}, (51, 99)),
    ("gt=50 and reverse=true", {"gt": "50", "reverse": True}, (51, 99)),
    ("lte=0", {"lte": "0"}, None),
    ("lt=0", {"lt": "0"}, None),
    ("gte=30 and lte=70", {"gte": "30", "lte": "70"}, (30, 70)),
    ("gt=29 and lt=71", {"gt": "29", "lt": "71"}, (30, 70)),
    ("gte=30 and lte=70 and reverse=true", {"lte": "70", "gte": "30", "reverse": True}, (30, 70)),
    ("gt=29 and lt=71 and reverse=true", {"lt": "71", "gt": "29", "reverse": True}, (30, 70)),
    ("limit=20", {"limit": 20}, (0, 19)),
    ("limit=20 and gte=20", {"limit": 20, "gte": "20"}, (20, 39)),
    ("limit=20 and reverse=true", {"limit": 20, "reverse": True}, (80, 99)),
    ("limit=20 and lte=79 and reverse=true", {"limit": 20, "lte": "79", "reverse": True}, (60, 79)),
    ("limit=0 should not clear anything", {"limit": 0}, None),
    ("lte after limit", {"limit": 20, "lte": "50"}, (0, 19)),
    ("lte before limit", {"limit": 50, "lte": "19"}, (0, 19)),
    ("gte after database end", {"gte": "9a"}, None),
    ("gt after database end", {"gt": "9a"}, None),
    ("lte after database end and reverse=true", {"lte": "9a", "reverse": True}, ALL),
    ("lte and gte after database and reverse=true", {"lte": "9b", "gte": "9a", "reverse": True}, None),
    ("lt and gt after database and reverse=true", {"lt": "9b", "gt": "9a", "reverse": True}, None),
    ("gt greater than lt", {"gt": "20", "lt": "10"}, None),
    ("gte greater than lte", {"gte": "20", "lte": "10"}, None),
]


def _arguments(options: dict[str, Any]) -> dict[str, Any]:
    """abstract-level's range words as ``clear_range``'s keyword arguments."""
    out: dict[str, Any] = {}
    for word, value in options.items():
        if word in ("reverse", "limit"):
            out[word] = value
        elif word in ("gte", "gt"):
            out["start"], out["include_start"] = value.encode(), word == "gte"
        else:
            out["stop"], out["include_stop"] = value.encode(), word == "lte"
    return out


def _url(engine: str, where: Path) -> str:
    if engine == "memory":
        return "memory:"
    if engine == "sqlite":
        return f"sqlite:///{where / 'store.sqlite'}"
    return f"{engine}://{where / engine}"


@pytest.fixture(scope="module", params=[(e, s) for e in STORES for s in ORDERED_SCHEMES], ids=str)
def space(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[keyspace.Keyspace]:
    engine, scheme = request.param
    with keyspace.open(_url(engine, tmp_path_factory.mktemp(engine)), scheme=scheme) as ks:
        yield ks


def _fresh(ks: keyspace.Keyspace) -> keyspace.Scope:
    """The scope ``("s",)`` holding exactly the 100 keys, beside a sibling scope
    ``("t",)`` that no clear may touch."""
    scope = ks.scope("s")
    scope.clear()
    scope.update({k: b"v" + k for k in KEYS})
    ks.scope("t").update({k: b"other" for k in (b"00", b"50", b"99")})
    return scope


@pytest.mark.parametrize(("name", "options", "removed"), CASES, ids=[c[0] for c in CASES])
def test_abstract_level_clear_range_case(
    space: keyspace.Keyspace, name: str, options: dict[str, Any], removed: tuple[int, int] | None
) -> None:
    scope = _fresh(space)
    gone = set() if removed is None else set(KEYS[removed[0] : removed[1] + 1])
    assert scope.clear_range(**_arguments(options)) == len(gone), name
    assert list(scope.keys()) == [k for k in KEYS if k not in gone]
    assert dict(space.scope("t")) == {k: b"other" for k in (b"00", b"50", b"99")}


@pytest.fixture(scope="module")
def etcd_space() -> Iterator[keyspace.Keyspace]:
    """A tuple keyspace under a key prefix of its own on the etcd test cluster."""
    urls = own_url("clear-range")
    with keyspace.open(next(urls)) as ks:
        yield ks
    next(urls, None)  # removes every key under the prefix


@pytest.mark.parametrize(("name", "options", "removed"), CASES, ids=[c[0] for c in CASES])
def test_abstract_level_clear_range_case_on_etcd(
    etcd_space: keyspace.Keyspace, name: str, options: dict[str, Any], removed: tuple[int, int] | None
) -> None:
    test_abstract_level_clear_range_case(etcd_space, name, options, removed)


def test_a_negative_limit_clears_nothing(space: keyspace.Keyspace) -> None:
    scope = _fresh(space)
    with pytest.raises(InvalidArgument, match="not -1"):
        scope.clear_range(limit=-1)  # abstract-level: "limit=-1 should clear whole database"
    assert list(scope.keys()) == KEYS
    assert scope.clear_range(limit=None) == 100 and len(scope) == 0


def test_a_limited_clear_in_a_transaction_is_atomic(space: keyspace.Keyspace) -> None:
    scope = _fresh(space)

    class Abort(Exception):
        pass

    with pytest.raises(Abort), space.transaction() as tx:
        assert tx.scope("s").clear_range(limit=30, reverse=True) == 30
        assert len(tx.scope("s")) == 70
        raise Abort
    assert list(scope.keys()) == KEYS
    with space.transaction() as tx:
        assert tx.scope("s").clear_range(b"10", limit=5) == 5
    assert list(scope.keys()) == KEYS[:10] + KEYS[15:]


# no leading "!": a sublevel key may not start with its separator
_bytes = st.binary(max_size=3).filter(lambda b: not b.startswith(b"!"))
_bound = st.one_of(st.none(), _bytes)
_key = _bytes.filter(bool)


@pytest.mark.parametrize("scheme", [*ORDERED_SCHEMES, "scopehash"])
@settings(max_examples=80, deadline=None)
@given(
    keys=st.sets(_key, max_size=20),
    start=_bound,
    stop=_bound,
    include_start=st.booleans(),
    include_stop=st.booleans(),
    reverse=st.booleans(),
    limit=st.one_of(st.none(), st.integers(0, 25)),
)
def test_clear_range_removes_what_items_yields(
    scheme: str,
    keys: set[bytes],
    start: bytes | None,
    stop: bytes | None,
    include_start: bool,
    include_stop: bool,
    reverse: bool,
    limit: int | None,
) -> None:
    args = {
        "start": start,
        "stop": stop,
        "include_start": include_start,
        "include_stop": include_stop,
        "reverse": reverse,
        "limit": limit,
    }
    with keyspace.open("memory:", scheme=scheme) as ks:
        scope = ks.scope("s")
        scope.update({k: b"v" for k in keys})
        ks.scope("t")[b"k"] = b"w"
        doomed = [k for k, _ in scope.items(**args)]
        assert scope.clear_range(**args) == len(doomed)
        assert sorted(scope.keys()) == sorted(keys - set(doomed))
        assert dict(ks.scope("t")) == {b"k": b"w"}
