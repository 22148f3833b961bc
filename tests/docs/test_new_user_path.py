"""A new user's first steps, as the README gives them: a fresh clone, ``make
demo`` (which makes its own ``.venv`` and installs what the demo needs), then the
README's quick start pasted into a script and run with that environment's
Python in an empty directory: it prints what the README shows."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_doc_examples import ROOT, blocks, same_output

pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("git") is None, reason="make or git is not installed"
)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_fresh_clone_make_demo_then_the_quick_start(tmp_path: Path) -> None:
    clone = tmp_path / "keyspace"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    demo = subprocess.run(["make", "demo"], cwd=clone, capture_output=True, text=True, timeout=840)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert (clone / "demo-data").is_dir(), "make demo runs the demo, which writes demo-data/"
    quick = next(b for b in blocks(ROOT / "README.md") if b.lang == "python")
    assert quick.output is not None, "the quick start shows its output"
    empty = tmp_path / "mine"
    empty.mkdir()
    (empty / "quickstart.py").write_text(quick.code, encoding="utf-8")
    run = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), "quickstart.py"],
        cwd=empty,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert same_output(quick.output, run.stdout), run.stdout
