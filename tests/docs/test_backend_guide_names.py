"""The backend guide sends an implementor to public names only: every dotted
``keyspace.…`` name it gives is importable and has no private part, and it names
no source file of the package."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-backend.md"
_DOTTED = re.compile(r"\bkeyspace(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _names() -> list[str]:
    return sorted(set(_DOTTED.findall(GUIDE.read_text(encoding="utf-8"))))


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_guide_names_keyspace_names() -> None:
    assert len(_names()) >= 5


@pytest.mark.parametrize("dotted", _names())
def test_each_name_is_public_and_importable(dotted: str) -> None:
    private = [part for part in dotted.split(".") if part.startswith("_")]
    assert not private, f"{dotted}: the guide names a private part {private}"
    _resolve(dotted)


def test_the_guide_names_no_source_file_of_the_package() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert not re.findall(r"src/keyspace/\S+|stores/_\w+\.py", text)
