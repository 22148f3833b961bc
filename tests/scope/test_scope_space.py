"""A scope holds its keyspace's space (store, catalog, layouts), never the keyspace:
the scope module and the space import nothing of the keyspace module, and a
scope's one-step transactions and snapshots run through the space."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import keyspace
from keyspace import _space, scope
from keyspace._scope_fields import FIELDS
from keyspace._space import Space
from keyspace.errors import LayoutError


def _imported_modules(module: object) -> set[str]:
    """Every module a source file imports, type-only imports included."""
    tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[attr-defined]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_scope_and_space_modules_import_nothing_of_the_keyspace_module() -> None:
    for module in (scope, _space):
        imported = _imported_modules(module)
        assert not {".keyspace", "keyspace.keyspace", "..keyspace"} & imported, (module, imported)
    assert ".scope" not in _imported_modules(_space)


def test_a_scope_holds_the_space_of_its_keyspace_and_no_keyspace() -> None:
    with keyspace.open("memory:") as ks:
        users = ks.scope("t", "users")
        slots = {*FIELDS, *(name for cls in type(users).__mro__ for name in getattr(cls, "__slots__", ()))}
        held = [getattr(users, name) for name in slots if hasattr(users, name)]
        assert not any(isinstance(value, keyspace.Keyspace) for value in held)
        spaces = [value for value in held if isinstance(value, Space)]
        assert len(spaces) == 1 and spaces[0].catalog is ks.catalog and spaces[0].store is ks.store
        assert users.keyspace is ks  # the public attribute answers through the space
        with ks.transaction() as tx:
            assert tx.scope("t", "users").keyspace is ks
        with ks.snapshot() as snap:
            assert snap.scope("t", "users").keyspace is ks


def test_one_step_operations_run_in_one_transaction_of_the_space() -> None:
    """``setdefault`` and ``pop`` outside a transaction run in one transaction of
    the space: the first write records the leaf with its key, so the parent is a
    branch for this keyspace and for one that opens the store later."""
    with keyspace.open("memory:", scheme="length-prefixed") as ks:
        leaf = ks.scope("ns", "leaf")
        assert leaf.setdefault(b"k", b"v") == b"v"
        assert leaf.setdefault(b"k", b"other") == b"v"
        with pytest.raises(LayoutError):
            ks.scope("ns")[b"x"] = b"y"
        with keyspace.attach(ks.store, scheme="length-prefixed", close_store=False) as again:
            with pytest.raises(LayoutError):
                again.scope("ns")[b"x"] = b"y"
            assert dict(again.scope("ns", "leaf").items()) == {b"k": b"v"}
        assert leaf.pop(b"k") == b"v" and len(leaf) == 0
