"""``make demo`` installs only what the demo needs (keyspace and its own
dependencies, no test extra); ``make test`` installs the test extra. Checked
with ``make -n`` (the commands, not run) against a virtual environment path
that does not exist, as in a fresh clone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _plan(target: str, venv: Path) -> str:
    proc = subprocess.run(
        ["make", "-n", "-C", str(ROOT), target, f"VENV={venv}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout


def test_demo_installs_without_the_test_extra(tmp_path: Path) -> None:
    plan = _plan("demo", tmp_path / "venv")
    installs = [line for line in plan.splitlines() if "pip install" in line and "--upgrade pip" not in line]
    assert installs == [f"{tmp_path / 'venv'}/bin/python -m pip install --quiet -e ."]
    assert "keyspace demo demo-data" in plan


def test_test_installs_the_test_extra(tmp_path: Path) -> None:
    plan = _plan("test", tmp_path / "venv")
    assert "pip install --quiet -e '.[test]'" in plan
    assert "scripts/run-tests.sh" in plan


def test_pytest_xdist_is_in_the_test_extra() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    extra = text[text.index("test = [") :]
    assert '"pytest-xdist' in extra[: extra.index("]\n")]
