"""The example of docs/directories.md runs as written and prints what it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_directories_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "directories.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    exec(compile(code, "directories.md", "exec"), {"__name__": "directories_doc"})
    assert capsys.readouterr().out.startswith("stale: the directory opened at ('acme', 'users')")
