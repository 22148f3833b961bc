"""An LMDB store whose file ends before the last page its header counts is
refused as truncated only where a page past the end holds data: LMDB counts
in its last page number the pages a commit allocated and freed before writing
them, lists them in its free database and never writes them, so a store whose
last commit did that is whole (a writer killed after such a commit left one;
opening it failed as "truncated or corrupt"). The pages past the end are
looked up in the free database read from the file; the store opened that way
reads every key and takes writes."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import lmdb
import pytest

from keyspace.errors import StoreError
from keyspace.stores.lmdb import _files

_READ_AND_WRITE = """
import sys
from keyspace.stores import open_store
with open_store("lmdb://" + sys.argv[1]) as store:
    before = sum(1 for _ in store.scan(b"", None))
    store.put(b"z-after", b"1")
    print(before, store.get(b"z-after"), sum(1 for _ in store.scan(b"", None)))
"""


def _store_with_free_tail(path: Path) -> tuple[int, int, int, int]:
    """A store whose last pages are free ones: rewritten values leave the old
    pages free, and later commits reuse pages from the start of the file.
    Returns ``(page size, last page, free root, keys)``."""
    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i in range(3000):
            txn.put(b"k%05d" % i, b"v" * 100)
    with env.begin(write=True) as txn:
        for i in range(3000):
            txn.put(b"k%05d" % i, b"w" * 100)
    for r in range(3):
        with env.begin(write=True) as txn:
            txn.put(b"x%d" % r, b"1")
    env.close()
    data = (path / "data.mdb").read_bytes()
    psize = struct.unpack_from("<I", data, 40)[0]
    metas = [(*struct.unpack_from("<QQ", data, off + 136), off) for off in (0, psize)]
    last, _txnid, off = max(metas, key=lambda meta: meta[1])
    return psize, last, struct.unpack_from("<Q", data, off + 80)[0], 3003


def _free_tail(path: Path, psize: int, last: int, root: int) -> int:
    """The first page of the run of free pages that ends the file."""
    data = str(path / "data.mdb")
    size = (last + 1) * psize
    first = last + 1
    while first > 2 and _files._all_free(data, psize, size, root, first - 1, first - 1):
        first -= 1
    return first


def test_free_pages_past_the_end_leave_a_whole_store(tmp_path: Path) -> None:
    path = tmp_path / "s"
    psize, last, root, keys = _store_with_free_tail(path)
    first = _free_tail(path, psize, last, root)
    assert first <= last  # the precondition: LMDB left free pages at the end
    (path / "data.mdb").write_bytes((path / "data.mdb").read_bytes()[: first * psize])
    _files.check_environment(str(path), f"lmdb://{path}", readonly=False)  # not refused
    proc = subprocess.run(
        [sys.executable, "-c", _READ_AND_WRITE, str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)  # -7 would be SIGBUS
    assert proc.stdout.split() == [str(keys), "b'1'", str(keys + 1)]


def test_a_page_past_the_end_that_is_not_free_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    psize, last, root, _keys = _store_with_free_tail(path)
    first = _free_tail(path, psize, last, root)
    data = path / "data.mdb"
    data.write_bytes(data.read_bytes()[: (first - 1) * psize])  # one page of data cut off too
    with pytest.raises(StoreError, match="truncated or corrupt"):
        _files.check_environment(str(path), f"lmdb://{path}", readonly=False)


@pytest.mark.parametrize("cut", [1, 100, 4095])
def test_a_partial_page_past_the_end_is_refused(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "s"
    psize, last, root, _keys = _store_with_free_tail(path)
    first = _free_tail(path, psize, last, root)
    data = path / "data.mdb"
    data.write_bytes(data.read_bytes()[: first * psize - cut])
    with pytest.raises(StoreError, match="truncated or corrupt"):
        _files.check_environment(str(path), f"lmdb://{path}", readonly=False)
