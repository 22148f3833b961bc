"""Taking back a store a failed command created.

A command that writes into a store it may create (``migrate``'s destination,
``put``'s store) runs in :func:`removed_on_failure`: when the command fails
before it has written anything there, the files and folders its open created are
removed again, so a mistyped or refused command leaves no empty store behind.
Whatever existed before the command (a store, a file, a folder: an empty one
stays, emptied again) is never removed, nor a new store that another process
wrote to or holds open meanwhile, nor a folder where a file that no engine makes
appeared: the check and the removal run under the engine's own lock
(:func:`_alone`), so no other process can start to use the store between them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any
from urllib.parse import parse_qsl

from ..errors import StoreError
from ..scoped_heed import REGISTRY_DB
from ..stores import local_path as store_path
from ..stores import open_store, parse_url
from ..stores._paths import is_engine_file
from ._heed import HEED_URL, heed_location
from ._sqlite_trace import SHM_OPEN_BYTE, lock_bytes

__all__ = ["local_path", "removed_on_failure"]

_SIDECARS = ("-wal", "-shm", "-journal", "-lock")
"""Files an engine keeps beside a store file (SQLite's journals, LMDB's lock file)."""


def local_path(url: str) -> str | None:
    """The file-system path a store URL names (``None``: memory, etcd)."""
    if url.startswith(HEED_URL):
        return heed_location(url)[0] or None
    return store_path(url)


def _absent(paths: list[str]) -> list[str]:
    return [p for p in paths if not os.path.lexists(p)]


def _empty_folder(path: str) -> bool:
    try:
        return os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)
    except OSError:  # not ours to look into: not ours to clean either
        return False


def _empty_file(path: str) -> bool:
    try:
        return os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) == 0
    except OSError:
        return False


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):  # what cannot be removed stays; the command's error is what counts
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _only_engine_files(path: str) -> bool:
    """Whether the directory ``path`` holds nothing but files a store engine makes
    (:func:`~keyspace.stores._paths.is_engine_file`; a file is not looked into:
    see :func:`_alone`)."""
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return all(is_engine_file(name) and not os.path.isdir(os.path.join(path, name)) for name in names)


def _engine(url: str) -> str:
    """``lmdb``, ``sqlite``, ``leveldb``, ``rocksdb`` or ``scoped-heed``: the engine of a local URL."""
    return "scoped-heed" if url.startswith(HEED_URL) else parse_url(url)[0]


def _try_lock(path: str, offset: int) -> int | None:
    """A descriptor of ``path`` holding an exclusive POSIX lock of its byte
    ``offset``, or ``None`` when another process holds a lock there (or the file
    cannot be opened). Closing the descriptor releases the lock."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    if lock_bytes(fd, offset, 1):
        return fd
    os.close(fd)
    return None


@contextmanager
def _alone(url: str, path: str) -> Iterator[bool]:
    """While the block runs, whether no other process uses the new store at
    ``url`` (file or directory ``path``) or has written into it, and the store held
    so that none can start to (its opener waits, or fails, until the block has
    removed it):

    - LMDB: every process that opens an environment holds a shared lock of byte 0
      of its ``lock.mdb`` until it closes it; this one takes that byte exclusively,
      then reads the environment without its lock file: no transaction was ever
      committed, or its main database holds no entry.
    - SQLite (WAL, as the store writes): every connection holds a shared lock of
      byte 128 of the ``-shm`` file; this one takes it exclusively after finding
      no key, then checks that neither the database file nor its ``-wal`` has
      changed since before it looked.
    - LevelDB and RocksDB: the store is opened (its engine lets one process hold
      it) and stays open while the block removes it.

    A store that cannot be opened for another reason (a full disk) holds nothing
    of anyone's; one whose engine is unknown is never taken for alone."""
    engine = _engine(url)
    if engine in ("leveldb", "rocksdb"):
        with _directory_alone(url, path) as alone:
            yield alone
        return
    if engine == "sqlite":
        with _sqlite_alone(url, path) as alone:
            yield alone
        return
    with _lmdb_alone(path, registry=engine == "scoped-heed") as alone:
        yield alone


@contextmanager
def _directory_alone(url: str, path: str) -> Iterator[bool]:
    """:func:`_alone` of a LevelDB or RocksDB store: opened and closed again to
    find it empty (closing makes the engine write its files once more, so it is
    closed before anything is removed: removed under an open store, they came
    back as a broken store), then its ``LOCK`` file held as the engine holds it
    (a POSIX lock that every opener takes), and nothing in the folder changed
    meanwhile: no other process opened it between the close and the lock."""
    try:
        with open_store(url) as store:
            empty = next(iter(store.scan(b"", None, limit=1)), None) is None
    except StoreError as exc:
        empty = "already open" not in str(exc) and "lock" not in str(exc).lower()
    except Exception:
        empty = False
    if not empty:
        yield False
        return
    before = _folder_state(path)
    fd = _try_lock(os.path.join(path, "LOCK"), 0)
    if fd is None:
        yield False
        return
    try:
        yield _folder_state(path) == before
    finally:
        os.close(fd)


def _folder_state(path: str) -> list[tuple[str, tuple[int, int, int, bytes] | None]]:
    """The name and signature of every file of the folder ``path`` (a write
    changes one)."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    return [(name, _signature(os.path.join(path, name))) for name in names]


@contextmanager
def _lmdb_alone(path: str, *, registry: bool) -> Iterator[bool]:
    if not os.path.isdir(path):
        yield False
        return
    fd = _try_lock(os.path.join(path, "lock.mdb"), 0)
    if fd is None:
        yield False
        return
    try:
        yield registry or _lmdb_unwritten(path)  # a scoped-heed open makes its own named databases
    finally:
        os.close(fd)


_NAMED_MOST = 64
"""The named databases an environment may hold and still count as unwritten."""


def _raw_environment(path: str, **options: Any) -> Any:
    """``lmdb.open(path, **options)`` (without the lock file), after the check
    every LMDB store's open makes first (``check_environment``): a truncated
    ``data.mdb`` is refused with :class:`StoreError` before it is mapped, where
    mapping it kills the process with SIGBUS at its first read past the end."""
    import lmdb

    from ..stores.lmdb._files import check_environment

    check_environment(path, f"lmdb://{path}", readonly=True)
    return lmdb.open(path, lock=False, **options)


def _lmdb_unwritten(path: str) -> bool:
    """Whether the environment at ``path`` holds no entry, read without its lock
    file (which would drop this process's lock of it when closed): its main
    database holds nothing, or only the records of empty named databases (a
    store opened with ``db=NAME`` makes one)."""
    if not os.path.exists(os.path.join(path, "data.mdb")):
        return True
    try:
        env = _raw_environment(path, readonly=True, max_dbs=_NAMED_MOST)
    except Exception:
        return False
    try:
        if env.info()["last_txnid"] == 0:
            return True
        with env.begin() as txn:
            names = list(islice(txn.cursor().iternext(values=False), _NAMED_MOST + 1))
            if len(names) > _NAMED_MOST:
                return False
            for name in names:  # a key that is no named database's record raises
                if b"\x00" in name:  # data: LMDB would open the database named by its part before the NUL
                    return False
                if txn.stat(env.open_db(name, txn=txn, create=False))["entries"]:
                    return False
        return True
    except Exception:
        return False
    finally:
        env.close()


def _named_databases(url: str) -> list[str]:
    """The LMDB named databases an open of ``url`` makes when they are missing:
    ``db=NAME``'s, a scoped-heed database's (``NAME``, ``NAME_scoped`` and the
    registry's); none for another engine."""
    engine = _engine(url)
    if engine == "scoped-heed":
        name = dict(parse_qsl(heed_location(url)[1])).get("name", "")
        return [d for d in (name, f"{name}_scoped", REGISTRY_DB) if name and d]
    if engine == "lmdb":
        return [value for option, value in parse_url(url)[2] if option == "db" and value]
    return []


def _absent_databases(url: str, path: str) -> list[bytes]:
    """The named databases of ``url`` that the existing environment at ``path``
    does not hold (read without its lock file), as LMDB names them."""
    names = _named_databases(url)
    if not names or not os.path.exists(os.path.join(path, "data.mdb")):
        return []
    try:
        env = _raw_environment(path, readonly=True, max_dbs=0)
    except Exception:  # the command's own open says what is wrong with the store
        return []
    try:
        with env.begin() as txn:
            return [raw for raw in (n.encode() for n in names) if txn.get(raw) is None]
    except Exception:
        return []
    finally:
        env.close()


def _drop_empty_databases(path: str, names: list[bytes]) -> None:
    """Drop each named database of ``names`` that the failed command made at
    ``path`` and that holds no entry (called holding the environment alone,
    :func:`_lmdb_alone`: its lock file is not used, as no other process has the
    environment open)."""
    with contextlib.suppress(Exception):
        env = _raw_environment(path, max_dbs=len(names) + 1)
        try:
            with env.begin(write=True) as txn:
                for name in names:
                    if txn.get(name) is None:
                        continue
                    db = env.open_db(name, txn=txn, create=False)
                    if txn.stat(db)["entries"] == 0:
                        txn.drop(db, delete=True)
        finally:
            env.close()


def _signature(path: str) -> tuple[int, int, int, bytes] | None:
    try:
        with open(path, "rb") as file:
            info = os.fstat(file.fileno())
            return info.st_ino, info.st_size, info.st_mtime_ns, file.read(100)
    except OSError:
        return None


@contextmanager
def _sqlite_alone(url: str, path: str) -> Iterator[bool]:
    if not os.path.isfile(path) or os.path.islink(path):  # a folder named as the file: no store, no -shm
        yield False
        return
    before = _sqlite_state(path)  # taken before the scan: what changes after it is another's write
    try:
        with open_store(url, readonly=True) as store:
            empty = next(iter(store.scan(b"", None, limit=1)), None) is None
    except StoreError:
        empty = True
    except Exception:
        empty = False
    if not empty:
        yield False
        return
    fd = _try_lock(path + "-shm", SHM_OPEN_BYTE)
    if fd is None:
        yield False
        return
    try:
        yield _sqlite_state(path) == before
    finally:
        os.close(fd)


def _sqlite_state(path: str) -> tuple[object, object]:
    """The database file's signature and its ``-wal`` file's (an empty or missing
    ``-wal`` alike: a reader creates an empty one): a commit changes one of them."""
    wal = _signature(path + "-wal")
    return _signature(path), None if wal is None or wal[1] == 0 else wal


@contextmanager
def removed_on_failure(url: str, wrote: Callable[[], bool]) -> Iterator[None]:
    """Run the block; when it raises (any exception, an interrupt too) and
    ``wrote()`` says it wrote nothing into the store at ``url``, remove what the
    block created there: the store's path if it did not exist before (with the
    files an engine keeps beside it), or the entries of a folder that was empty
    before — unless the store now holds keys, another process holds it open
    (another command created the same store meanwhile), or a file no engine makes
    is in its folder; the check and the removal hold the engine's lock, so a
    process that opens the store meanwhile waits, or fails, rather than writing
    into removed files. The block's exception is raised as it was. Nothing that
    existed before the block is touched. Cost: a few ``stat`` calls and a listing;
    after a failure, one open and one short scan."""
    path = local_path(url)
    if path is None:
        yield
        return
    path = os.path.abspath(path)
    sidecars = _absent([path + suffix for suffix in _SIDECARS])
    created = [path, *sidecars] if not os.path.lexists(path) else []
    empty_folder = not created and _empty_folder(path)
    empty_file = not created and _empty_file(path)
    if empty_file:
        created = sidecars  # the file stays, emptied again; what the open made beside it goes
    databases = [] if created or empty_folder else _absent_databases(url, path)
    try:
        yield
    except BaseException:
        if (created or empty_folder or empty_file) and not wrote():
            _take_back(url, path, created, empty_folder, empty_file)
        if databases and not wrote():
            with _lmdb_alone(path, registry=True) as alone:
                if alone:
                    _drop_empty_databases(path, databases)
        raise


def _take_back(url: str, path: str, created: list[str], empty_folder: bool, empty_file: bool = False) -> None:
    """Remove what the failed command created at ``path`` (an empty file that was
    there, an SQLite store's: emptied again), unless a file that no engine makes
    is there, or another process uses the store or wrote into it."""
    if os.path.isdir(path) and not os.path.islink(path) and not _only_engine_files(path):
        return
    with _alone(url, path) as alone:
        if not alone:
            return
        if empty_folder:
            for name in os.listdir(path):
                _remove(os.path.join(path, name))
        if empty_file:
            with contextlib.suppress(OSError):
                os.truncate(path, 0)
        for made in created:
            _remove(made)
