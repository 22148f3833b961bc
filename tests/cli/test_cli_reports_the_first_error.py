"""A command whose write fails reports that failure, not the close that follows:
a write into RocksDB on a full disk said only "Writer has previous error" (the
close repeating the failed write), never that the disk is full. The close's
failure is printed after it, as a note.

On a small tmpfs (the fixture of ``test_disk_full``: root only, skipped
elsewhere) nearly filled by a ballast file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_disk_full import _fill, disk  # noqa: F401 - the tmpfs fixture

import keyspace


def _keyspace(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "keyspace.cli", *args], input=stdin, capture_output=True, timeout=120
    )
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def _check_reports_the_disk(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 1, proc
    lines = proc.stderr.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    assert "is full" in errors[0] and "no space left on device" in errors[0], proc.stderr
    assert "previous error" not in errors[0] and not errors[0].startswith("error: closing"), proc.stderr
    # whatever the close said comes after the error, as a note
    assert all(line.startswith("note: ") for line in lines[lines.index(errors[0]) + 1 :]), proc.stderr


def test_put_into_rocksdb_on_a_full_disk_reports_the_full_disk(disk: Path) -> None:  # noqa: F811
    url = f"rocksdb://{disk / 'db'}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"kept"] = b"v"
    ballast = _fill(disk, leave=300_000)
    proc = _keyspace("put", url, "a", "--key", "big", "--value", "-", stdin=os.urandom(2_000_000))
    _check_reports_the_disk(proc)
    ballast.unlink()
    with keyspace.open(url) as ks:
        assert dict(ks.scope("a").items()) == {b"kept": b"v"}


def test_migrate_into_rocksdb_on_a_full_disk_reports_the_full_disk(disk: Path, tmp_path: Path) -> None:  # noqa: F811
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("s").update({b"k%04d" % i: os.urandom(2000) for i in range(600)})  # 1.2 MB
    url = f"rocksdb://{disk / 'db'}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"kept"] = b"v"
    ballast = _fill(disk, leave=300_000)
    _check_reports_the_disk(_keyspace("migrate", src, url))
    ballast.unlink()
