"""A scope of a transaction or a snapshot is the keyspace's scope of that path bound
to the transaction's view (``Scope._on``): its compiled part (layout, key routes,
codecs, ranges) is the keyspace scope's, and everything that reads a view (the
engine callables, the catalog state, the read guard, the routes of the point
operations) is the transaction's. Such a scope is the one a construction on that
view makes, for every scheme and store kind; the keyspace's scope is left as it
was; and a view that narrows (a union of databases) or a scope that meets
reserved ranges is constructed whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace import scoped_heed
from keyspace._scope_fields import FIELDS
from keyspace._scope_fields import ScopeFields as PyScopeFields
from keyspace.codecs import BYTES
from keyspace.schemes import Naive, Scheme
from keyspace.scope import Scope

Path_ = tuple[str, ...]

# scheme -> (the scheme, a path, a sibling path)
SCHEMES: dict[str, tuple[Callable[[], Scheme | str], Path_, Path_]] = {
    "tuple": (lambda: "tuple", ("t1", "users"), ("t2", "users")),
    "length-prefixed": (lambda: "length-prefixed", ("t1", "users"), ("t2", "users")),
    "asciihex": (lambda: "asciihex", ("t1", "users"), ("t2", "users")),
    "sublevel": (lambda: "sublevel", ("t1", "users"), ("t2", "users")),
    "scopehash": (lambda: "scopehash", ("t1",), ("t2",)),
    "naive": (lambda: Naive(True), ("t1",), ("t2",)),
}

# the slots a scope keeps from the scope it is bound from, and those it binds anew
COMPILED = (
    "_bound",
    "_chunk",
    "_compiled",
    "_cut",
    "_escape",
    "_key_of",
    "_key_spec",
    "_layout",
    "_ranges",
    "_reserved",
    "_space",
    "_stored",
    "_value_spec",
    "_vdec",
    "_venc",
    "path",
    "prefix",
    "scheme",
)
BOUND = (
    "_data",
    "_get",
    "_guard",
    "_put",
    "_read_route",
    "_state",
    "_view",
    "_write_route",
)


def test_the_slots_are_the_compiled_and_the_bound_ones() -> None:
    assert sorted(COMPILED + BOUND) == sorted(FIELDS)


def _same_binding(made: Scope, built: Scope) -> None:
    """``made`` (bound) and ``built`` (constructed on the same view and state) hold
    the same compiled part and bind the same things."""
    for name in COMPILED:
        assert getattr(made, name) == getattr(built, name), name
    assert made._view is built._view and made._state is built._state
    assert type(made._data) is type(built._data)
    assert made._get == built._get
    assert (made._guard is None) == (built._guard is None)
    assert made._read_route == built._read_route
    assert made._put is None and made._write_route == built._write_route


def _open(tmp_path: Path, url: str, scheme: str) -> keyspace.Keyspace:
    where = "memory:" if url == "memory" else f"{url}://{tmp_path / 'store'}"
    return keyspace.open(where, scheme=SCHEMES[scheme][0]())


@pytest.mark.parametrize("url", ["memory", "lmdb", "sqlite"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_bound_scope_is_the_scope_a_construction_on_the_view_makes(
    tmp_path: Path, url: str, scheme: str
) -> None:
    with _open(tmp_path, url, scheme) as ks:
        path = SCHEMES[scheme][1]
        ks.scope(*path)[b"k"] = b"1"
        template = ks.scope(*path)
        before = {name: getattr(template, name) for name in FIELDS}
        for block in (ks.transaction, ks.snapshot):
            with block() as tx:
                made = tx.scope(*path)
                built = Scope(ks._space, tx.view, tx.catalog, path, BYTES, BYTES)
                _same_binding(made, built)
                assert made[b"k"] == built[b"k"] == b"1"
        after = {name: getattr(template, name) for name in FIELDS}
        assert after.keys() == before.keys()
        for name, value in before.items():
            assert after[name] is value, name  # the keyspace's scope is untouched


@pytest.mark.parametrize("scheme", SCHEMES)
def test_bound_scopes_read_and_write_their_view_only(tmp_path: Path, scheme: str) -> None:
    with _open(tmp_path, "lmdb", scheme) as ks:
        _, path, other = SCHEMES[scheme]
        outside = ks.scope(*path)
        outside[b"k"] = b"old"
        ks.scope(*other)[b"k"] = b"theirs"
        with ks.snapshot() as snap:
            seen = snap.scope(*path)
            with ks.transaction() as tx:
                scope = tx.scope(*path)
                scope[b"k"] = b"new"
                scope[b"j"] = b"2"
                assert dict(scope.items()) == {b"j": b"2", b"k": b"new"}
                assert outside[b"k"] == b"old"  # not committed yet
            assert seen[b"k"] == b"old" and b"j" not in seen  # the snapshot's state
            assert dict(seen.items()) == {b"k": b"old"}
        assert dict(outside.items()) == {b"j": b"2", b"k": b"new"}
        assert dict(ks.scope(*other).items()) == {b"k": b"theirs"}
        # the keyspace's scope still writes the store, outside any transaction
        outside[b"z"] = b"3"
        with ks.snapshot() as snap:
            assert snap.scope(*path)[b"z"] == b"3"


def test_a_bound_scope_of_an_unsettled_guard_settles_alone(tmp_path: Path) -> None:
    """ScopeHash scopes run a read guard until it settles: settling that of a
    transaction's scope leaves the keyspace's scope's own guard in place."""
    with _open(tmp_path, "lmdb", "scopehash") as ks:
        ks.scope("a")[b"k"] = b"1"
        fresh = keyspace.open(tmp_path / "store")  # knows no name yet
        template = fresh.scope("a")
        guard = template._guard
        assert guard is not None
        with fresh.snapshot() as snap:
            bound = snap.scope("a")
            assert bound[b"k"] == b"1"
            assert bound._guard is None  # settled in the snapshot
        assert template._guard is guard
        assert template[b"k"] == b"1"
        fresh.close()


def test_a_root_scope_that_meets_reserved_ranges_still_refuses_them(tmp_path: Path) -> None:
    with _open(tmp_path, "lmdb", "sublevel") as ks:
        root = ks.scope()
        assert root._reserved  # the keyspace's records lie among the root's keys
        record = root._reserved[0][0]
        with ks.transaction() as tx:
            bound = tx.scope()
            assert bound._reserved == root._reserved
            with pytest.raises(keyspace.errors.ReservedKey):
                bound[record] = b"x"
        assert ks.store.get(record) != b"x"


def test_scoped_heed_scopes_narrow_to_their_database_and_are_built_whole(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path / "env", "db", api="types", key=BYTES, value=BYTES) as ks:
        ks.scope("users")[b"k"] = b"1"
        template = ks.scope("users")
        assert template._cut  # the union's part for the database
        with ks.snapshot() as snap:
            bound = snap.scope("users")
            assert bound._view is snap.view and bound._cut == template._cut
            assert bound[b"k"] == b"1"
        with ks.transaction() as tx:
            tx.scope("users")[b"j"] = b"2"
        assert dict(ks.scope("users").items()) == {b"j": b"2", b"k": b"1"}


try:
    from keyspace._scope_accel import ScopeFields as CScopeFields
except ImportError:  # pragma: no cover - built without a C compiler
    CScopeFields = None  # type: ignore[assignment,misc]

FIELD_TYPES = [CScopeFields, PyScopeFields]


@pytest.mark.parametrize("fields", FIELD_TYPES, ids=["C", "Python"])
def test_copy_copies_every_field_of_a_scope(tmp_path: Path, fields: Any) -> None:
    if fields is None:
        pytest.fail("the C module is not built")
    with keyspace.open(tmp_path / "s") as ks:
        scope = ks.scope("a")
        made = fields._copy(scope)
        assert type(made) is Scope and made is not scope
        for name in FIELDS:
            assert getattr(made, name) is getattr(scope, name), name


@pytest.mark.parametrize("fields", FIELD_TYPES, ids=["C", "Python"])
def test_copy_leaves_unset_fields_unset_and_refuses_a_class_holding_more(fields: Any) -> None:
    if fields is None:
        pytest.fail("the C module is not built")

    class Bare(fields):  # type: ignore[misc]
        __slots__ = ()

    class More(fields):  # type: ignore[misc]
        __slots__ = ("extra",)

    class WithDict(fields):  # type: ignore[misc]
        pass

    obj = Bare()
    obj.path, obj.prefix = ("a",), b"p"
    made = obj._copy()
    assert type(made) is Bare and made.path is obj.path and made.prefix is obj.prefix
    for unset in ("scheme", "_view", "_get"):
        with pytest.raises(AttributeError):
            getattr(made, unset)
    for refused in (More(), WithDict()):
        with pytest.raises(TypeError, match="holds more"):
            refused._copy()
