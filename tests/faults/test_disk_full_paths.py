"""Disks that fill under the paths the older disk-full tests do not take.

On a small tmpfs (the fixture of ``test_disk_full``: root only, skipped elsewhere)
nearly filled by a ballast file:

- RocksDB: ``update`` batches until the disk refuses one, with a
  :class:`StoreError` saying the disk is full (and, as RocksDB keeps refusing
  writes of that handle once space is free again, that the store must be
  reopened); closing the store afterwards
  (RocksDB then reports its writer's earlier error) raises a named error too, and
  a ``with`` block that the disk-full error leaves ends with that error, not with
  the close's; once the ballast is gone the reopened store holds every batch
  that returned, whole, and no key of the refused one.
- ``keyspace migrate`` and ``keyspace put`` into a new store on the full disk
  fail with the disk-full error and leave no store behind.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from test_disk_full import _fill, disk  # noqa: F401 - the tmpfs fixture

import keyspace
from keyspace.errors import KeyspaceError, StoreError

migrate_cmd = importlib.import_module("keyspace.cli.migrate")
data_cmd = importlib.import_module("keyspace.cli.data")


def _batches_until_full(ks: keyspace.Keyspace, acked: dict[bytes, bytes]) -> None:
    for i in range(10_000):  # bounded: the disk holds far less
        batch = {b"b%05d-%02d" % (i, j): os.urandom(1000) for j in range(20)}
        ks.scope("a").update(batch)
        acked.update(batch)


def test_rocksdb_batches_on_a_full_disk_are_whole_and_close_names_the_error(disk: Path) -> None:  # noqa: F811
    url = f"rocksdb://{disk / 'db'}"
    ks = keyspace.open(url)
    ks.scope("a").update({b"k%03d" % i: b"v" for i in range(100)})
    acked = {k: v for k, v in ks.scope("a").items()}
    ballast = _fill(disk, leave=1_500_000)
    with pytest.raises(StoreError, match=r"disk .* is full"):
        _batches_until_full(ks, acked)
    assert len(ks.scope("a")) == len(acked)  # reads still answer
    ballast.unlink()
    with pytest.raises(StoreError, match="close and reopen"):  # RocksDB's error sticks to the handle
        ks.scope("a")[b"after"] = b"space is free again"
    try:
        ks.close()
    except Exception as exc:  # RocksDB reports the earlier failed write again
        assert isinstance(exc, KeyspaceError), f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    with keyspace.open(url) as again:
        assert dict(again.scope("a").items()) == acked
        again.scope("a")[b"after"] = b"reopened"
        assert again.scope("a")[b"after"] == b"reopened"


def test_a_with_block_ended_by_a_full_disk_raises_the_disk_full_error(disk: Path) -> None:  # noqa: F811
    url = f"rocksdb://{disk / 'db'}"
    acked: dict[bytes, bytes] = {}
    with keyspace.open(url) as ks:
        ks.scope("a")[b"first"] = b"1"
        acked[b"first"] = b"1"
    ballast = _fill(disk, leave=1_500_000)
    with pytest.raises(StoreError, match=r"disk .* is full"), keyspace.open(url) as ks:
        _batches_until_full(ks, acked)
    ballast.unlink()
    with keyspace.open(url) as again:
        assert dict(again.scope("a").items()) == acked


@pytest.mark.parametrize("engine", ["sqlite", "lmdb", "leveldb"])
def test_migrate_into_a_new_store_on_a_full_disk_leaves_none(
    disk: Path,  # noqa: F811
    tmp_path: Path,
    engine: str,
) -> None:
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("s").update({b"k%04d" % i: os.urandom(2000) for i in range(600)})  # 1.2 MB
    ballast = _fill(disk, leave=400_000)
    before = sorted(os.listdir(disk))
    dst = {"sqlite": f"sqlite://{disk / 'dst.sqlite'}", "lmdb": str(disk / "dst.lmdb")}.get(
        engine, f"{engine}://{disk / 'dst'}"
    )
    with pytest.raises(StoreError, match="full"):
        migrate_cmd.migrate.main([src, dst, "--batch", "5000"], standalone_mode=False)
    assert sorted(os.listdir(disk)) == before
    ballast.unlink()


def test_put_into_a_new_store_on_a_full_disk_leaves_none(disk: Path) -> None:  # noqa: F811
    ballast = _fill(disk, leave=0)
    before = sorted(os.listdir(disk))
    with pytest.raises(KeyspaceError):
        data_cmd.put.main(
            [f"sqlite://{disk / 'new.sqlite'}", "a", "--key", "k", "--value", "v" * 100_000],
            standalone_mode=False,
        )
    assert sorted(os.listdir(disk)) == before
    ballast.unlink()
