"""A disk that fills: SQLite and LMDB on a small tmpfs that the test mounts.

Mounting needs root (or CAP_SYS_ADMIN); elsewhere the tests are skipped with the
reason printed (``pytest -ra``)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreError

CHUNK = 64 << 10


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for the test, unmounted after it."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the disk-full tests did not run")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()}); the disk-full tests did not run")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def _free(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` with a ballast file until at most ``leave`` bytes are free."""
    ballast = disk / "ballast"
    with open(ballast, "wb") as file:
        for _ in range(4096):  # bounded: 256 MiB at most
            if _free(disk) <= leave + CHUNK:
                break
            file.write(b"\0" * CHUNK)
            file.flush()
    return ballast


def test_sqlite_transaction_on_a_full_disk_is_all_or_nothing(disk: Path) -> None:
    url = f"sqlite://{disk / 's.db'}"
    ks = keyspace.open(url)
    ks.scope("a")[b"committed"] = b"before"
    ballast = _fill(disk, 256 << 10)
    tried = 0
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"disk .* is full") as at_commit, ks.transaction() as tx:
        scope = tx.scope("a")
        first = None
        for i in range(1000):  # bounded: 1000 values of 8 KiB = 8 MiB, twice the disk
            tried += 1
            try:
                scope[b"t%04d" % i] = os.urandom(8 << 10)
            except StoreError as exc:  # caught, and the caller carries on
                first = exc
                break
        assert first is not None and "full" in str(first)
        elapsed = time.monotonic() - started
        for op in (
            lambda: scope.__setitem__(b"after", b"x"),
            lambda: scope.get(b"t0000"),
            lambda: scope.update({b"u": b"1"}),
        ):
            with pytest.raises(StoreError, match="full"):
                op()
    assert "full" in str(at_commit.value)
    assert elapsed < 10
    assert dict(ks.scope("a").items()) == {b"committed": b"before"}  # nothing of it
    # Scope.update outside a transaction: one atomic batch, refused whole.
    with pytest.raises(StoreError, match=r"disk .* is full"):
        ks.scope("b").update({b"u%04d" % i: os.urandom(8 << 10) for i in range(600)})
    assert list(ks.scope("b").items()) == []
    ballast.unlink()  # space freed: the same keyspace works again
    with ks.transaction() as tx:
        tx.scope("a")[b"later"] = b"ok"
    ks.scope("b").update({b"u1": b"1", b"u2": b"2"})
    ks.close()
    with keyspace.open(url) as again:
        assert dict(again.scope("a").items()) == {b"committed": b"before", b"later": b"ok"}
        assert dict(again.scope("b").items()) == {b"u1": b"1", b"u2": b"2"}
    conn = sqlite3.connect(disk / "s.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    print(
        f"sqlite disk full: {tried} puts tried in the transaction, 0 committed, error after {elapsed:.3f} s"
    )


def test_lmdb_disk_full_names_the_cause_and_keeps_committed_data(disk: Path) -> None:
    path = disk / "l"
    ks = keyspace.open(path, map_size=64 << 20)
    ballast = _fill(disk, 1 << 20)
    acked: dict[bytes, bytes] = {}
    tried = 0
    error: StoreError | None = None
    started = time.monotonic()
    for i in range(2000):  # bounded: 2000 values of 2 KiB, more than the disk holds
        tried += 1
        key, value = b"k%05d" % i, os.urandom(2 << 10)
        try:
            ks.scope("a")[key] = value
        except StoreError as exc:
            error = exc
            break
        acked[key] = value
    elapsed = time.monotonic() - started
    assert error is not None
    assert "disk" in str(error) and "full" in str(error), str(error)
    assert "Input/output error" not in str(error).split(":")[0]
    with pytest.raises(StoreError, match="full"), ks.transaction() as tx:
        for i in range(2000):
            tx.scope("t")[b"t%05d" % i] = os.urandom(2 << 10)
    ks.close()
    with keyspace.open(path) as again:
        assert dict(again.scope("a").items()) == acked
        assert list(again.scope("t").items()) == []
        ballast.unlink()
        again.scope("a")[b"later"] = b"ok"
        assert again.scope("a")[b"later"] == b"ok"
    print(
        f"lmdb disk full: {tried} puts tried, {len(acked)} acknowledged, 0 lost, error after {elapsed:.3f} s"
    )
