"""The examples in the library's docstrings run as written."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import keyspace

SRC = Path(keyspace.__file__).parent


def _modules_with_examples() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(SRC.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


MODULES = _modules_with_examples()


def test_the_library_has_docstring_examples() -> None:
    assert len(MODULES) >= 4


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, report=True)
    assert result.attempted > 0
    assert result.failed == 0
