"""Worker processes started together for the tests that race processes: each a
fresh interpreter, given a bounded time, never left running."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def run_together(
    argvs: Sequence[Sequence[str]], *, timeout: float, go: str | Path | None = None
) -> list[str]:
    """Run ``python ARGV`` for each of ``argvs`` at once and return what each
    printed. With ``go``, each must first print ``ready``; then ``go`` is created,
    the start signal the workers wait for. Waits at most ``timeout`` seconds for
    each process, kills every one still running after that, and fails the test
    (with its standard error) when one did not exit with 0."""
    procs = [
        subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for argv in argvs
    ]
    try:
        if go is not None:
            for proc in procs:
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            Path(go).touch()
        outputs = [proc.communicate(timeout=timeout) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    return [out for out, _err in outputs]
