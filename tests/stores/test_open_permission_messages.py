"""Opens refused for permissions say so, and say what the engine needs: LevelDB
creating a store in a folder it may not write said "NotFound: …/LOCK"; a
read-only SQLite open by a user who may not write beside the file said "cannot be
written", LMDB's only "permission denied". Readers who may not write there can
still read with ``immutable=true`` (SQLite) or ``lock=false`` (LMDB).

The opens run in a subprocess that switches to an unprivileged user (uid 65534)
after its imports, as the test suite runs as root, whom no permission stops."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")

_OPEN_AS_NOBODY = (
    "import os, sys, keyspace\nfrom keyspace.errors import StoreError\n"
    "import keyspace.stores.lmdb, keyspace.stores.sqlite, keyspace.stores.leveldb\n"
    "import keyspace.keyspace\n"  # keyspace.open is imported when first used
    "os.setgid(65534)\nos.setuid(65534)\n"  # imports done: now an unprivileged user
    "try:\n"
    "    with keyspace.open(sys.argv[1], readonly=sys.argv[2] == 'r') as ks:\n"
    "        print('read:', ks.scope('a').get(b'k'))\n"
    "except StoreError as exc:\n    print('StoreError:', exc)\n"
)


def as_nobody(url: str, mode: str) -> str:
    """What an unprivileged user's open of ``url`` (``r``: read-only) prints."""
    proc = subprocess.run(
        [sys.executable, "-c", _OPEN_AS_NOBODY, url, mode],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder any user may enter and read, and only root write."""
    base = Path(tempfile.mkdtemp(prefix="keyspace-perm-", dir="/tmp"))  # reachable by any user
    try:
        base.chmod(0o755)
        yield base
    finally:
        shutil.rmtree(base)


def test_leveldb_creating_a_store_in_a_folder_it_may_not_write_says_permission_denied(shared: Path) -> None:
    got = as_nobody(f"leveldb://{shared / 'new'}", "w")
    assert got.startswith("StoreError:") and "permission denied" in got, got
    assert "NotFound" not in got and str(shared / "new") in got, got
    assert not (shared / "new").exists()


def _written(url: str) -> None:
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"


def test_sqlite_read_only_open_names_the_wal_and_shm_files_and_immutable(shared: Path) -> None:
    url = f"sqlite://{shared / 'store.db'}"
    _written(url)
    (shared / "store.db").chmod(0o644)
    got = as_nobody(url, "r")
    assert got.startswith("StoreError:") and "permission denied" in got, got
    assert "cannot be written" not in got
    assert "store.db-wal" in got and "store.db-shm" in got and "immutable=true" in got, got
    # the way out it names reads the store, and leaves nothing behind
    assert as_nobody(url + "?immutable=true", "r") == "read: b'v'"
    assert sorted(os.listdir(shared)) == ["store.db"]
    refused = as_nobody(url + "?immutable=true", "w")
    assert refused.startswith("StoreError:") and "read-only opens only" in refused


def test_sqlite_immutable_is_refused_while_the_wal_holds_commits(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'store.db'}"
    _written(url)
    writer = sqlite3.connect(tmp_path / "store.db")  # keeps the -wal file holding the next commit
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO kv VALUES (?, ?)", (b"late", b"commit"))
        writer.commit()
        assert os.path.getsize(tmp_path / "store.db-wal") > 32
        with pytest.raises(StoreError, match="not yet in the database file"):
            keyspace.open(url + "?immutable=true", readonly=True)
    finally:
        writer.close()


def test_lmdb_read_only_open_names_the_lock_file_and_lock_false(shared: Path) -> None:
    url = f"lmdb://{shared / 'store'}"
    _written(url)
    for name in ("data.mdb", "lock.mdb"):
        (shared / "store" / name).chmod(0o644)
    got = as_nobody(url, "r")
    assert got.startswith("StoreError:") and "permission denied" in got, got
    assert "lock.mdb" in got and "lock=false" in got, got
    assert as_nobody(url + "?lock=false", "r") == "read: b'v'"
    refused = as_nobody(url + "?lock=false", "w")
    assert refused.startswith("StoreError:") and "read-only opens only" in refused
    # without the lock file, a reader would have to create it in the folder
    (shared / "store" / "lock.mdb").unlink()
    got = as_nobody(url, "r")
    assert "create LMDB's lock file lock.mdb" in got and "lock=false" in got, got
    assert not (shared / "store" / "lock.mdb").exists()
