"""Taking back a store a failed command created.

A command that writes into a store it may create (``migrate``'s destination)
runs in :func:`removed_on_failure`: when the command fails before it has written
anything there, the files and folders its open created are removed again, so a
mistyped or refused migration leaves no empty store behind. Whatever existed
before the command (a store, a file, an empty folder) is never removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..keyspace import _local_path
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


@contextmanager
def removed_on_failure(url: str, wrote: Callable[[], bool]) -> Iterator[None]:
    """Run the block; when it raises (any exception, an interrupt too) and
    ``wrote()`` says it wrote nothing into the store at ``url``, remove what the
    block created there: the store's path if it did not exist before (with the
    files an engine keeps beside it), or the entries of a folder that was empty
    before. The block's exception is raised as it was. Nothing that existed
    before the block is touched. Cost: a few ``stat`` calls and a listing."""
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
        if not wrote():
            if empty_folder:
                for name in os.listdir(path):
                    _remove(os.path.join(path, name))
            for made in created:
                _remove(made)
        raise
