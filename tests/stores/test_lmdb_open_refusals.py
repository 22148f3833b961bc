"""Opens of an LMDB store refused for their arguments make nothing, a second
opener of a path cannot silently lose the durability it asked for, and a forked
child is refused the environment its parent held (LMDB forbids using it there)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import InvalidName, StoreError
from keyspace.schemes import TupleScheme
from keyspace.stores import LMDBStore


@pytest.mark.parametrize(
    ("db", "named"),
    [("a\x00b", "NUL character"), ("\ud800", "no UTF-8 form"), ("n" * 600, "over LMDB's limit of 511")],
)
def test_a_database_name_lmdb_cannot_take_is_refused_before_anything_is_made(
    tmp_path: Path, db: str, named: str
) -> None:
    """The name was checked after the environment was created: the refusal left
    a new store (data.mdb, lock.mdb) behind."""
    path = tmp_path / "new"
    with pytest.raises(StoreError, match=named):
        keyspace.open(path, db=db)
    with pytest.raises(StoreError, match=named):
        LMDBStore(path, db=db)
    assert not path.exists()


def test_a_reserved_raw_prefix_is_refused_before_the_store_is_made(tmp_path: Path) -> None:
    path = tmp_path / "new"
    with pytest.raises(InvalidName, match="reserved"):
        keyspace.open(path, scheme=TupleScheme(raw_prefix=b"\xffkeyspace/x"))
    assert not path.exists()


def test_a_map_larger_than_the_address_space_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    """LMDB maps the whole map at open: its failure ("Cannot allocate memory", no
    word of map_size) came after it had made data.mdb and lock.mdb."""
    path = tmp_path / "new"
    too_big = 1 << 60  # past every 64-bit address space (57-bit with five-level paging)
    with pytest.raises(
        StoreError, match=rf"map_size={too_big} is more address space .*at most about \d+ bytes"
    ):
        keyspace.open(path, map_size=too_big)
    with pytest.raises(StoreError, match="map_size"):
        keyspace.open(f"lmdb://{path}?map_size=1048576TiB")
    assert not path.exists()
    with keyspace.open(path, map_size=1 << 30) as ks:  # a size that maps: the store is made
        ks.scope("a")[b"k"] = b"v"
    with pytest.raises(StoreError, match="more address space"):
        keyspace.open(path, map_size=too_big)  # an existing store: refused alike, unchanged
    with keyspace.open(path) as ks:
        assert ks.scope("a")[b"k"] == b"v"


def test_a_second_opener_asking_another_sync_is_refused(tmp_path: Path) -> None:
    """LMDB syncs an environment's commits or not: the second opener's sync=True
    was dropped without a word, and its commits were never fsynced."""
    path = tmp_path / "db"
    with LMDBStore(path, sync=False) as first:
        with pytest.raises(StoreError, match="already open in this process with sync=False"):
            keyspace.open(path, sync=True)
        with LMDBStore(path, sync=False) as second:  # the same sync: shared
            second.put(b"k", b"v")
            assert first.get(b"k") == b"v"
        with LMDBStore(path, readonly=True) as reader:  # commits nothing
            assert reader.get(b"k") == b"v"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_is_refused_its_parents_environment(tmp_path: Path) -> None:
    """keyspace.open in a child forked while the parent held the store returned
    the parent's environment: its readers were registered as the parent's, so
    a snapshot of the child read pages the parent's later writes reused."""
    path = tmp_path / "db"
    with keyspace.open(path) as parent:
        parent.scope("a")[b"k"] = b"v"
        pid = os.fork()
        if pid == 0:  # the child: exit status 0 only for the StoreError expected
            try:
                keyspace.open(path)
            except StoreError as exc:
                os._exit(0 if "forked process" in str(exc) else 2)
            except BaseException:
                os._exit(3)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert parent.scope("a")[b"k"] == b"v"  # the parent's environment is untouched
