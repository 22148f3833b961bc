"""Checks of a store's path made before its engine touches it (no engine creates
anything in a folder that is not its store, and each failure names its cause)."""

from __future__ import annotations

import os
import stat

from ..errors import StoreError

__all__ = ["check_directory", "kind_of"]


def _an(engine: str) -> str:
    return f"an {engine}" if engine == "LMDB" or engine[0] in "AEIOU" else f"a {engine}"


def kind_of(path: str, url: str) -> str | None:
    """``"dir"``, ``"file"`` (anything else that exists) or ``None`` (missing).
    A path this process may not look at raises :class:`~keyspace.errors.StoreError`
    saying permission is denied (``os.path.exists`` would say "missing")."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        raise StoreError(f"cannot open {url}: permission denied: {path}") from None
    except OSError as exc:
        raise StoreError(f"cannot open {url}: {exc.strerror or exc}: {path}") from exc
    return "dir" if stat.S_ISDIR(mode) else "file"


def check_directory(path: str, url: str, engine: str, markers: tuple[str, ...], *, create: bool) -> bool:
    """Check the directory ``path`` of a store of ``engine`` before opening it, and
    return whether it already holds one (a file of ``markers`` is in it).

    Raises :class:`~keyspace.errors.StoreError` for a missing parent directory, a
    file where the directory belongs, a non-empty directory holding none of the
    engine's files (someone else's folder: never written to), a path this process
    may not read (permission denied), and, without ``create``, a missing store.
    Cost: a few ``stat`` calls and one directory listing."""
    parent = os.path.dirname(path)
    if kind_of(parent, url) != "dir":
        raise StoreError(f"cannot open {url}: the parent directory {parent} does not exist")
    kind = kind_of(path, url)
    if kind is None:
        if not create:
            raise StoreError(f"{url} is not {_an(engine)} store: {path} does not exist")
        return False
    if kind != "dir":
        raise StoreError(
            f"cannot open {url}: {path} is a file, not a directory ({_an(engine)} store is a directory)"
        )
    try:
        names = os.listdir(path)
    except PermissionError:
        raise StoreError(f"cannot open {url}: permission denied: {path}") from None
    except OSError as exc:
        raise StoreError(f"cannot open {url}: {exc.strerror or exc}: {path}") from exc
    if any(name in names for name in markers):
        return True
    if names or not create:
        what = "an empty directory" if not names else f"a directory of {len(names)} other files"
        raise StoreError(
            f"{url} is not {_an(engine)} store: {path} is {what} (no {' or '.join(markers)}); "
            "it was left unchanged"
        )
    return False
