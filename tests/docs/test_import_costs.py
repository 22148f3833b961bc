"""``import keyspace`` reads the errors alone: the engines, gRPC, rich, asyncio
and the rest of the library are imported when a name that needs them is first
used, and every public name is still importable where it was."""

from __future__ import annotations

import subprocess
import sys

import keyspace

HEAVY = [
    "asyncio",
    "concurrent.futures",
    "grpc",
    "rich",
    "lmdb",
    "sqlite3",
    "plyvel",
    "rocksdict",
    "click",
    "keyspace.keyspace",
    "keyspace.scope",
    "keyspace.stores",
]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    return set(out.split())


def test_import_keyspace_imports_nothing_heavy() -> None:
    loaded = _modules_after("import keyspace")
    assert [m for m in HEAVY if m in loaded] == []


def test_every_public_name_resolves_where_it_was() -> None:
    for name in keyspace.__all__:
        assert getattr(keyspace, name) is not None, name
    namespace: dict[str, object] = {}
    exec("from keyspace import *", namespace)
    assert set(keyspace.__all__) <= set(namespace)
    assert keyspace.open is keyspace.keyspace.open
    assert keyspace.Scope is keyspace.scope.Scope
    assert keyspace.tuples.pack((1,)) == b"\x15\x01"  # a submodule, as an attribute of the package


def test_an_unknown_name_is_an_attribute_error() -> None:
    for name in ("no_such_name", "_private", "__wrapped__"):
        try:
            getattr(keyspace, name)
        except AttributeError as exc:
            assert name in str(exc)
        else:
            raise AssertionError(f"keyspace.{name} resolved")
