"""What the file system says about an LMDB environment, read without LMDB.

:func:`check_environment` refuses, before anything is mapped, a path that cannot
be an LMDB store (reading the header of ``data.mdb``), :func:`check_map_size` a
map this process cannot map; :func:`nearly_full` and
:func:`os_cause` word the operating-system causes of a failed LMDB call for the
store's error translation.
"""

from __future__ import annotations

import errno
import mmap
import os
import struct
import time

from ...errors import StoreError
from .._paths import check_directory

__all__ = ["check_environment", "check_map_size", "nearly_full", "os_cause"]

_META_MAGIC = 0xBEEFC0DE
_META = struct.Struct("<II")  # mm_magic, mm_version at offset 16 of a meta page
_META_TAIL = struct.Struct("<QQ")  # mm_last_pg, mm_txnid at offset 136 (64-bit builds)
_ROOT = struct.Struct("<Q")  # the free database's md_root at offset 80 of a meta page
_PAGE_HEAD = struct.Struct("<QHHHH")  # mp_pgno, mp_pad, mp_flags, mp_lower, mp_upper
_NODE = struct.Struct("<HHHH")  # mn_lo, mn_hi, mn_flags, mn_ksize
_P_BRANCH, _P_LEAF, _F_BIGDATA = 0x01, 0x02, 0x01
_NO_PAGE = 2**64 - 1
_FREE_PAGES_READ = 4096
"""Pages of the free database :func:`_all_free` reads at most."""
_BEING_MADE_WAIT = 0.01
_BEING_MADE_TRIES = 100
"""A ``data.mdb`` whose header is a new environment's (no transaction committed)
and which is shorter than that header says may be one another process is
writing its first pages into: it is read again every :data:`_BEING_MADE_WAIT`
seconds, at most :data:`_BEING_MADE_TRIES` times (one second), before it is
called truncated."""


def check_environment(path: str, url: str, readonly: bool) -> None:
    """Refuse, before LMDB maps anything, a path that cannot be an LMDB store: a
    missing parent directory, a file where the environment directory belongs, a
    ``data.mdb`` that is not LMDB or is shorter than its header says (mapping a
    truncated file kills the process with SIGBUS on the first read past its end;
    the pages past the end must all be free ones, see :func:`_all_free`),
    and, for ``readonly``, a directory without ``data.mdb``; a new environment
    shorter than its header says is read again for up to a second first, as
    another process may be writing its first pages. Cost: one stat and, when
    ``data.mdb`` exists, one read of its first two pages."""
    if not check_directory(path, url, "LMDB", ("data.mdb",), create=not readonly):
        return
    data = os.path.join(path, "data.mdb")
    if not os.path.isfile(data):
        if readonly:
            raise StoreError(f"{url} is not an LMDB store: {path} holds no data.mdb")
        return
    for attempt in range(_BEING_MADE_TRIES):
        if not _check_data_file(data, url, readonly, final=attempt == _BEING_MADE_TRIES - 1):
            return
        time.sleep(_BEING_MADE_WAIT)


def _check_data_file(data: str, url: str, readonly: bool, final: bool) -> bool:
    """Check the header and size of ``data`` (see :func:`check_environment`): True
    where it is a new environment shorter than its header says and not ``final``
    (read it again), :class:`StoreError` for a fault, else False."""
    try:
        with open(data, "rb") as file:
            head = file.read(2 * 65536)
            size = os.fstat(file.fileno()).st_size  # after the header: the file only grows
    except OSError as exc:
        raise StoreError(f"cannot open {url}: {exc.strerror or exc}: {data}") from exc
    if size == 0 and not readonly:
        return False  # a new environment that was never written: LMDB initialises it
    psize = struct.unpack_from("<I", head, 40)[0] if len(head) >= 44 else 0
    if psize < 512 or psize > 65536 or psize & (psize - 1):
        psize = 0  # not a page size: no LMDB header
    metas = []
    for offset in (0, psize):
        if psize and offset + 152 <= len(head):
            magic, _version = _META.unpack_from(head, offset + 16)
            if magic == _META_MAGIC:
                last_page, txnid = _META_TAIL.unpack_from(head, offset + 136)
                metas.append((last_page, txnid, _ROOT.unpack_from(head, offset + 80)[0]))
    if not metas:
        raise StoreError(f"{url} is not an LMDB store: {data} has no LMDB header")
    last_page, txnid, free_root = max(metas, key=lambda meta: meta[1])
    needed = (last_page + 1) * psize
    if size < needed:
        if txnid == 0 and not final:
            return True  # its first pages being written by the process making it
        if txnid and size % psize == 0 and _all_free(data, psize, size, free_root, size // psize, last_page):
            return False  # pages the last commit freed before writing them: LMDB never writes those
        raise StoreError(
            f"{url} is truncated or corrupt: {data} has {size} bytes but its header says "
            f"{needed} ({last_page + 1} pages of {psize}); restore it from a copy"
        )
    return False


def _all_free(data: str, psize: int, size: int, root: int, first: int, last: int) -> bool:
    """Whether every page ``first..last`` (past the end of ``data``) is one the
    free database rooted at ``root`` lists: LMDB counts in its last page
    number the pages a commit allocated and freed again before writing them,
    which it lists as free and never writes, so a file may end before them.
    Reads the free database's pages from the file (at most
    :data:`_FREE_PAGES_READ`); False where it cannot tell (a page of it past the
    end, a page that is not one of its branch or leaf pages)."""
    missing = set(range(first, last + 1))
    if root == _NO_PAGE or not missing:
        return not missing
    try:
        fd = os.open(data, os.O_RDONLY)
    except OSError:
        return False
    try:
        pending, seen = [root], 0
        while pending and missing:
            pgno = pending.pop()
            seen += 1
            if seen > _FREE_PAGES_READ or (pgno + 1) * psize > size:
                return False
            page = os.pread(fd, psize, pgno * psize)
            _pgno, _pad, flags, lower, _upper = _PAGE_HEAD.unpack_from(page)
            if not flags & (_P_BRANCH | _P_LEAF) or lower < 16 or lower > psize:
                return False
            for i in range((lower - 16) // 2):
                at = struct.unpack_from("<H", page, 16 + 2 * i)[0]
                if at + 8 > psize:
                    return False
                lo, hi, node_flags, ksize = _NODE.unpack_from(page, at)
                if flags & _P_BRANCH:
                    pending.append(lo | hi << 16 | node_flags << 32)
                    continue
                start = at + 8 + ksize
                if node_flags & _F_BIGDATA:  # the page list lies in overflow pages
                    over = struct.unpack_from("<Q", page, start)[0]
                    length = lo | hi << 16
                    if (over * psize) + 16 + length > size:
                        return False
                    ids = os.pread(fd, length, over * psize + 16)
                else:
                    ids = page[start : start + (lo | hi << 16)]
                count = struct.unpack_from("<Q", ids)[0] if len(ids) >= 8 else 0
                if 8 * (count + 1) > len(ids):
                    return False
                missing.difference_update(struct.unpack_from(f"<{count}Q", ids, 8))
        return not missing
    except (OSError, struct.error):
        return False
    finally:
        os.close(fd)


def check_lock_file(path: str, url: str) -> None:
    """Refuse, for a read-only open, an environment whose lock file this process
    may not write: every LMDB reader records itself in ``lock.mdb`` (and creates
    it, in the environment's directory, when missing), so LMDB itself would say
    only "permission denied". The message names the file, what readers need and
    the ``lock=false`` option. Cost: one or two ``access`` calls."""
    lock = os.path.join(path, "lock.mdb")
    if os.path.exists(lock):
        if os.access(lock, os.R_OK | os.W_OK):
            return
        need = f"write access to LMDB's lock file {lock}, which every reader writes"
    elif os.access(path, os.W_OK | os.X_OK):
        return
    else:
        need = f"to create LMDB's lock file lock.mdb in {path}, which every reader writes"
    raise StoreError(
        f"cannot open {url} read-only: permission denied: this user needs {need}; "
        "give it that access, or open with lock=false (?lock=false), which reads without "
        "the lock file and is safe only while no process writes the store"
    )


def nearly_full(path: str) -> bool:
    """Whether the file system holding ``path`` has under 1 MiB free: LMDB reports a
    write that ran out of space as a short write ("Input/output error")."""
    try:
        stat = os.statvfs(path)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < 1 << 20


def os_cause(exc: BaseException) -> str | None:
    """The operating-system cause of an LMDB or OS error, worded for a user, or None."""
    number = getattr(exc, "errno", None)
    text = str(exc)
    if number == errno.ENOSPC or "No space left on device" in text:
        return f"the disk is full (no space left on device): {text}"
    if number in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
        return f"permission denied: {text}"
    if number == errno.EROFS or "Read-only file system" in text:
        return f"the file system is read-only: {text}"
    if number == errno.ENOENT and isinstance(exc, OSError):
        return f"no such file or directory: {text}"
    return None


def _maps(size: int) -> bool:
    """Whether this process can reserve ``size`` bytes of address space now: an
    anonymous mapping that cannot be read or written, so no memory is committed."""
    try:
        probe = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0)
    except (OSError, OverflowError, ValueError):
        return False
    probe.close()
    return True


def check_map_size(map_size: int, url: str) -> None:
    """Refuse, before LMDB makes any file, a ``map_size`` this process cannot map:
    LMDB maps the whole map when it opens the environment and, failing ("Cannot
    allocate memory"), has already made ``data.mdb`` and ``lock.mdb``. The refusal
    names the size that does map (the largest power of two up to ``map_size``).
    Cost: one ``mmap`` and ``munmap`` of address space alone (no memory); on a
    refusal, about 60 more. Where the platform has no anonymous mappings, nothing
    is checked."""
    if not hasattr(mmap, "MAP_ANONYMOUS") or map_size <= 0 or _maps(map_size):
        return
    fits = 1 << (map_size.bit_length() - 1)
    while fits > 1 and not _maps(fits):
        fits >>= 1
    raise StoreError(
        f"option map_size={map_size} is more address space than this process can map for {url} "
        f"(at most about {fits} bytes map here); open the store with a smaller map_size "
        "(it grows by itself as the store fills)"
    )
