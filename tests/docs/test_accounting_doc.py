"""The example of docs/accounting.md runs as written and prints what it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_accounting_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "accounting.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    exec(compile(code, "accounting.md", "exec"), {"__name__": "accounting_doc"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2"
    assert lines[1].startswith("ScopeStats(keys=2, bytes=")
    assert lines[2:4] == ["3", "3"]
    assert lines[4].startswith("the scope /tenant1 has a quota of 5 keys; this write would make it 6 keys")
    assert lines[5:] == ["False", "{('tenant1',): (5, None)}"]
