"""The keyspace command run as a user runs it: one subprocess per command."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str, ok: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``keyspace ARGS``; with ``ok`` the exit code must be 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "keyspace.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc
