"""A command on a truncated LMDB store names the fault and crashes on nothing, on
every route it reads the store by: the store's open refuses a ``data.mdb``
shorter than its header says before mapping it (see
``tests/stores/test_store_open.py``), and so do the raw reads a command makes
before it (the named databases a ``db=NAME`` or scoped-heed open would make,
looked up to take back after a failure), which mapped the file themselves and
died with SIGBUS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import keyspace


@pytest.fixture
def truncated(tmp_path: Path) -> Path:
    path = tmp_path / "s"
    with keyspace.open(path, map_size=8 << 20) as ks:
        ks.scope("s").update({b"k%05d" % i: b"v" * 100 for i in range(3000)})
    os.truncate(path / "data.mdb", 8192)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["put", "lmdb://{path}?db=named", "s", "-k", "k", "-v", "v"],
        ["put", "lmdb://{path}", "s", "-k", "k", "-v", "v"],
        ["scan", "lmdb://{path}?db=named", "s"],
        ["inspect", "lmdb://{path}"],
    ],
    ids=["put-named", "put", "scan-named", "inspect"],
)
def test_a_command_on_a_truncated_store_is_a_named_error(truncated: Path, args: list[str]) -> None:
    argv = [a.format(path=truncated) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "keyspace.cli", *argv], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1, (proc.returncode, proc.stderr)  # -7 would be SIGBUS
    assert "truncated or corrupt" in proc.stderr
