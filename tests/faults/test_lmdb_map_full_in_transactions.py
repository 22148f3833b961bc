"""LMDB's map filling up inside a transaction that writes without a replay log,
for every scheme.

A ``transaction()`` that begins with at least ``FAST_HEADROOM`` bytes of the map
free writes straight to LMDB and raises :class:`StoreError` when it outgrows
them (``MDB_MAP_FULL``). Here the headroom is lowered (it is read when each
transaction begins) and the map made small, so the map fills part way through an
``update`` (the store's own transaction, a scope's first write with its records
included) and through a caller's transaction:

- the failed operation raises :class:`StoreError` naming the cause, and the raw
  store is exactly as before;
- a caller that catches it and goes on gets a :class:`StoreError` from every
  later write and from the commit, saying the transaction cannot go on and
  nothing of it is committed (not LMDB's bare ``MDB_BAD_TXN``), and nothing is;
- the store then takes writes again (a one-shot write grows the map).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _schemes import SCOPE_AND_SIBLING

import keyspace
from keyspace.errors import StoreError
from keyspace.stores.lmdb import _growth as _lmdb_growth

SCHEMES = {name: made for name, made in SCOPE_AND_SIBLING.items() if name != "naive"}
MAP = 1 << 20
BIG = {b"k%05d" % i: b"x" * 1000 for i in range(3000)}  # three times the map


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lmdb_growth, "FAST_HEADROOM", 4096)


@pytest.fixture(params=list(SCHEMES))
def ks(request: pytest.FixtureRequest, tmp_path: Path, fast: None) -> Iterator[keyspace.Keyspace]:
    make = SCHEMES[request.param][0]
    k = keyspace.open(f"lmdb://{tmp_path}?map_size={MAP}", scheme=make())
    k.name = request.param  # type: ignore[attr-defined]
    try:
        yield k
    finally:
        k.close()


def _raw(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b"", None))


def _paths(ks: keyspace.Keyspace) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    _, path, sibling = SCHEMES[ks.name]  # type: ignore[attr-defined]
    return path, sibling


def _full(call: Callable[[], object]) -> None:
    with pytest.raises(StoreError, match="outgrew the free space of the map"):
        call()


def test_a_first_update_that_fills_the_map_leaves_no_trace(ks: keyspace.Keyspace) -> None:
    path, sibling = _paths(ks)
    _full(lambda: ks.scope(*path).update(BIG))
    assert _raw(ks) == []  # no scheme record, registration or leaf either
    ks.scope(*sibling)[b"s"] = b"fine"
    ks.scope(*path)[b"k"] = b"the scope works"
    assert dict(ks.scope(*path).items()) == {b"k": b"the scope works"}


def test_a_later_update_that_fills_the_map_changes_nothing(ks: keyspace.Keyspace) -> None:
    path, sibling = _paths(ks)
    ks.scope(*path).update({b"a": b"1", b"k00001": b"old"})
    ks.scope(*sibling)[b"s"] = b"s"
    before = _raw(ks)
    _full(lambda: ks.scope(*path).update(BIG))
    assert _raw(ks) == before


@pytest.mark.parametrize(
    "fill",
    [
        pytest.param(lambda s: s.update(BIG), id="update"),
        pytest.param(lambda s: [s.__setitem__(k, v) for k, v in BIG.items()], id="setitem"),
        pytest.param(lambda s: [s.setdefault(k, v) for k, v in BIG.items()], id="setdefault"),
    ],
)
def test_a_transaction_that_fills_the_map_commits_nothing(ks: keyspace.Keyspace, fill: Any) -> None:
    path, sibling = _paths(ks)
    ks.scope(*path)[b"old"] = b"0"
    before = _raw(ks)
    with pytest.raises(StoreError) as committed, ks.transaction() as tx:
        tx.scope(*sibling)[b"before"] = b"1"
        tx.scope(*path).pop(b"old")
        _full(lambda: fill(tx.scope(*path)))
        with pytest.raises(StoreError, match="cannot go on: a write in it failed"):  # the caller goes on
            tx.scope(*sibling)[b"after"] = b"2"
    assert "nothing of it is committed" in str(committed.value)
    assert _raw(ks) == before
    ks.scope(*sibling)[b"later"] = b"fine"  # the store takes writes again
    assert ks.scope(*sibling)[b"later"] == b"fine"


def _databases(path: Path) -> dict[bytes, list[tuple[bytes, bytes]]]:
    """Every database of the LMDB environment at ``path``, read with lmdb itself."""
    import lmdb

    env = lmdb.open(str(path), max_dbs=16, readonly=True, lock=False)
    try:
        out = {}
        with env.begin() as txn:
            for name, _ in txn.cursor():
                db = env.open_db(name, txn=txn, create=False)
                out[name] = list(txn.cursor(db=db))
        return out
    finally:
        env.close()


def test_a_scoped_heed_environment_whose_map_fills_changes_nothing(tmp_path: Path, fast: None) -> None:
    """The named scopes, the default scope and the name registry are databases of
    one environment, written in one joint transaction."""
    from keyspace import scoped_heed

    env = tmp_path / "env"
    with scoped_heed.open(env, "db", map_size=MAP) as ks:
        ks.scope("t1")[b"k"] = b"v"
    before = _databases(env)
    with scoped_heed.open(env, "db", map_size=MAP) as ks:
        _full(lambda: ks.scope("t2").update(BIG))  # a first write: it registers the name
        _full(lambda: ks.scope().update(BIG))
        with pytest.raises(StoreError), ks.transaction() as tx:
            tx.scope("t3")[b"a"] = b"1"
            tx.scope()[b"d"] = b"default"
            _full(lambda: tx.scope("t4").update(BIG))
            with contextlib.suppress(StoreError):
                tx.scope("t1")[b"after"] = b"1"
    assert _databases(env) == before
