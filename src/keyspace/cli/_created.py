"""Taking back a store a failed command created.

A command that writes into a store it may create (``migrate``'s destination,
``put``'s store) runs in :func:`removed_on_failure`: when the command fails
before it has written anything there, the files and folders its open created are
removed again, so a mistyped or refused command leaves no empty store behind.
Whatever existed before the command (a store, a file, a folder: an empty one
stays, emptied again) is never removed, nor a new store that another command
wrote to or holds open meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import StoreError
from ..keyspace import _local_path
from ..stores import open_store
from ._heed import HEED_URL

__all__ = ["local_path", "removed_on_failure"]

_SIDECARS = ("-wal", "-shm", "-journal", "-lock")
"""Files an engine keeps beside a store file (SQLite's journals, LMDB's lock file)."""


def local_path(url: str) -> str | None:
    """The file-system path a store URL names (``None``: memory, etcd)."""
    if url.startswith(HEED_URL):
        rest = url[len(HEED_URL) :]
        rest = rest[2:] if rest.startswith("//") else rest
        path = rest.partition("?")[0]
        return path[len("lmdb://") :] if path.startswith("lmdb://") else path or None
    return _local_path(url)


def _absent(paths: list[str]) -> list[str]:
    return [p for p in paths if not os.path.lexists(p)]


def _empty_folder(path: str) -> bool:
    try:
        return os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)
    except OSError:  # not ours to look into: not ours to clean either
        return False


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):  # what cannot be removed stays; the command's error is what counts
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _holds_nothing(url: str) -> bool:
    """Whether no other process has written into the store at ``url`` or holds it
    open where its engine allows one process (LevelDB, RocksDB): another command
    may have created the same new store meanwhile, and its data is not this
    command's to remove. A store that cannot be opened for another reason (a full
    disk) holds nothing of anyone's."""
    if url.startswith(HEED_URL):
        return True  # an environment of named databases: no one store to look into
    try:
        with open_store(url) as store:
            return next(iter(store.scan(b"", None, limit=1)), None) is None
    except StoreError as exc:
        return "already open" not in str(exc) and "lock" not in str(exc).lower()
    except Exception:
        return False


@contextmanager
def removed_on_failure(url: str, wrote: Callable[[], bool]) -> Iterator[None]:
    """Run the block; when it raises (any exception, an interrupt too) and
    ``wrote()`` says it wrote nothing into the store at ``url``, remove what the
    block created there: the store's path if it did not exist before (with the
    files an engine keeps beside it), or the entries of a folder that was empty
    before — unless the store now holds keys or another process holds it open
    (another command created the same store meanwhile). The block's exception is
    raised as it was. Nothing that existed before the block is touched. Cost: a
    few ``stat`` calls and a listing; after a failure, one open and one short scan.
    (A process that opened the same new store and has not written yet is not
    seen.)"""
    path = local_path(url)
    if path is None:
        yield
        return
    path = os.path.abspath(path)
    created = [path, *_absent([path + suffix for suffix in _SIDECARS])] if not os.path.lexists(path) else []
    empty_folder = not created and _empty_folder(path)
    try:
        yield
    except BaseException:
        if (created or empty_folder) and not wrote() and _holds_nothing(url):
            if empty_folder:
                for name in os.listdir(path):
                    _remove(os.path.join(path, name))
            for made in created:
                _remove(made)
        raise
