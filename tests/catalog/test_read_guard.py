"""The catalog's read guard settles once its answer can no longer change.

A ScopeHash name registered as its own, and a LengthPrefixed leaf, are facts no
later write can undo (registry and layout records are never removed): once a
scope has seen one in the view it reads, it stops asking (its guard slot is
cleared, in the C point operations and in the Python methods alike). What is
still open (a name nobody registered, a path with nothing recorded) is asked
again at every read, so a write by another keyspace object (another process)
is seen; a fact learnt inside a transaction settles only that transaction's
scopes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name

import keyspace
from keyspace._scope_fields import PointOps
from keyspace.codecs import BYTES
from keyspace.errors import HashCollision
from keyspace.keyspace import Keyspace
from keyspace.schemes import LengthPrefixed, ScopeHash
from keyspace.scope import Scope
from keyspace.stores import MemoryStore, open_store
from keyspace.stores._base import Store


class PythonScope(Scope):
    """A scope whose point operations are the pure-Python methods."""

    __slots__ = ()
    __getitem__ = PointOps.__getitem__
    get = PointOps.get
    __setitem__ = PointOps.__setitem__
    __delitem__ = PointOps.__delitem__


Make = Callable[[Keyspace, tuple[Any, ...]], Scope]


def _c_scope(ks: Keyspace, path: tuple[Any, ...]) -> Scope:
    return Scope(ks._space, ks.store, ks.catalog, path, BYTES, BYTES)


def _python_scope(ks: Keyspace, path: tuple[Any, ...]) -> Scope:
    return PythonScope(ks._space, ks.store, ks.catalog, path, BYTES, BYTES)


@pytest.fixture(params=["memory", "lmdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """One store that several keyspace objects (each its own catalog, as another
    process would have) attach to."""
    made = MemoryStore() if request.param == "memory" else open_store(f"lmdb://{tmp_path / 'db'}")
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(params=[_c_scope, _python_scope], ids=["c", "python"])
def make(request: pytest.FixtureRequest) -> Make:
    return request.param  # type: ignore[no-any-return]


def _attach(store: Store, scheme: Any) -> Keyspace:
    return keyspace.attach(store, scheme=scheme, close_store=False)


def test_a_registered_name_settles(store: Store, make: Make) -> None:
    ks = _attach(store, ScopeHash())
    ks.scope("users")[b"k"] = b"v"
    scope = make(ks, ("users",))
    assert scope._guard is not None  # type: ignore[attr-defined]
    assert scope[b"k"] == b"v"
    assert scope._guard is None  # type: ignore[attr-defined]
    assert scope.get(b"k") == b"v" and scope.get(b"missing") is None
    assert b"k" in scope and list(scope.items(limit=5)) == [(b"k", b"v")]


def test_a_free_name_is_asked_again_and_a_later_collision_raises(store: Store, make: Make) -> None:
    """A name nobody registered yet is asked again at every read: when another
    keyspace then registers a colliding name, every read path of the first raises;
    the second, which owns the hash, settles and stays readable."""
    mine, theirs = "alpha", colliding_name("alpha")
    ks = _attach(store, ScopeHash())
    ks.scope("other")[b"k"] = b"v"  # the store is recorded; "alpha" is not registered
    scope = make(ks, (mine,))
    assert scope.get(b"k") is None and len(scope) == 0
    assert scope._guard is not None  # type: ignore[attr-defined]

    other = _attach(store, ScopeHash())  # another process
    other.scope(theirs)[b"k"] = b"theirs"

    reads: list[Callable[[Scope], object]] = [
        lambda s: s[b"k"],
        lambda s: s.get(b"k"),
        lambda s: b"k" in s,
        len,
        lambda s: list(s.items(start=b"a", limit=3)),
        lambda s: list(s.items()),
        lambda s: list(s.keys(limit=3)),
        bool,
    ]
    for read in reads:
        with pytest.raises(HashCollision, match=re.escape(theirs)):
            read(scope)
        with pytest.raises(HashCollision, match=re.escape(theirs)):
            read(make(ks, (mine,)))  # a fresh scope of the name too
    owner = make(ks, (theirs,))
    assert owner[b"k"] == b"theirs"
    assert owner._guard is None  # type: ignore[attr-defined]
    assert owner.get(b"k") == b"theirs"


def test_a_name_registered_in_a_transaction_settles_only_its_scopes(store: Store, make: Make) -> None:
    """Inside a transaction the name's registration settles that transaction's
    scope; when the transaction is rolled back, nothing of it is kept: the
    keyspace's own scopes still ask, and see another process's colliding name."""
    mine, theirs = "beta", colliding_name("beta")
    ks = _attach(store, ScopeHash())
    ks.scope("other")[b"k"] = b"v"
    with pytest.raises(RuntimeError), ks.transaction() as tx:
        inside = tx.scope(mine)
        inside[b"k"] = b"mine"
        assert inside[b"k"] == b"mine"
        assert inside._guard is None  # type: ignore[attr-defined]
        raise RuntimeError("roll back")
    scope = make(ks, (mine,))
    assert scope.get(b"k") is None
    assert scope._guard is not None  # type: ignore[attr-defined]
    _attach(store, ScopeHash()).scope(theirs)[b"k"] = b"theirs"
    with pytest.raises(HashCollision):
        scope.get(b"k")
    with pytest.raises(HashCollision):
        ks.scope(mine)[b"k"] = b"mine"


def test_a_leaf_settles_and_a_free_path_is_asked_again(store: Store, make: Make) -> None:
    """A LengthPrefixed leaf settles; a path with nothing recorded is asked again
    at every read, so when another keyspace makes it a branch its bytes (a
    child's keys) are never read as its own."""
    ks = _attach(store, LengthPrefixed())
    ks.scope(b"leaf")[b"k"] = b"v"
    leaf = make(ks, (b"leaf",))
    assert leaf[b"k"] == b"v"
    assert leaf._guard is None  # type: ignore[attr-defined]

    free = make(ks, (b"a",))
    assert free.get(b"\x00\x01bk") is None
    assert free._guard is not None  # type: ignore[attr-defined]
    other = _attach(store, LengthPrefixed())  # another process
    other.scope(b"a", b"b")[b"k"] = b"child"
    # the stored key of (a, b)/k is the stored key of (a,)/(00 01 b k)
    assert free.get(b"\x00\x01bk") is None
    assert len(free) == 0 and list(free.items(limit=3)) == []
    assert free._guard is not None  # type: ignore[attr-defined]  # a branch is asked (and answers no)
    assert make(ks, (b"a", b"b"))[b"k"] == b"child"


def test_a_leaf_learnt_in_a_transaction_is_kept_by_its_scopes_only(store: Store, make: Make) -> None:
    ks = _attach(store, LengthPrefixed())
    ks.scope(b"x")[b"k"] = b"v"  # recorded
    with pytest.raises(RuntimeError), ks.transaction() as tx:
        inside = tx.scope(b"new")
        inside[b"k"] = b"v"
        assert inside[b"k"] == b"v"
        assert inside._guard is None  # type: ignore[attr-defined]
        raise RuntimeError("roll back")
    outside = make(ks, (b"new",))
    assert outside.get(b"k") is None
    assert outside._guard is not None  # type: ignore[attr-defined]  # nothing recorded: still free
    _attach(store, LengthPrefixed()).scope(b"new", b"child")[b"k"] = b"c"
    assert outside.get(b"\x00\x05childk") is None  # a branch now: no own keys
