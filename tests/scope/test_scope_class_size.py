"""No class of the library (its ``testing`` package aside) is over 600 lines: a
class that grows past that holds several jobs, and is split by job into modules
of their own (the scan plan of a scope lives in ``keyspace._scan_plan``), read
from the source with ``ast`` (a class's lines run from its ``class`` line to its
last statement)."""

from __future__ import annotations

import ast
from pathlib import Path

import keyspace

LIMIT = 600
PACKAGE = Path(keyspace.__file__).parent


def class_lengths() -> dict[str, int]:
    """``module:Class`` -> lines, for every class (nested ones too) of every
    module of the package outside ``testing``."""
    found: dict[str, int] = {}
    for source in sorted(PACKAGE.rglob("*.py")):
        relative = source.relative_to(PACKAGE)
        if relative.parts[0] == "testing":
            continue
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                found[f"{relative.as_posix()}:{node.name}"] = node.end_lineno - node.lineno + 1
    return found


def test_the_package_has_classes_to_measure() -> None:
    lengths = class_lengths()
    assert "scope.py:Scope" in lengths
    assert "keyspace.py:Keyspace" in lengths


def test_no_class_is_over_600_lines() -> None:
    over = {name: lines for name, lines in class_lengths().items() if lines > LIMIT}
    assert over == {}, f"classes over {LIMIT} lines: {over}"
