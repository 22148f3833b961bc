"""Checks of a store's path made before its engine touches it (no engine creates
anything in a folder that is not its store, and each failure names its cause)."""

from __future__ import annotations

import os

from ..errors import StoreError

__all__ = ["check_directory"]


def _an(engine: str) -> str:
    return f"an {engine}" if engine[0] in "AEIOL" else f"a {engine}"


def check_directory(path: str, url: str, engine: str, markers: tuple[str, ...], *, create: bool) -> bool:
    """Check the directory ``path`` of a store of ``engine`` before opening it, and
    return whether it already holds one (a file of ``markers`` is in it).

    Raises :class:`~keyspace.errors.StoreError` for a missing parent directory, a
    file where the directory belongs, a non-empty directory holding none of the
    engine's files (someone else's folder: never written to), and, without
    ``create``, a missing store. Cost: a few ``stat`` calls and one directory listing."""
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise StoreError(f"cannot open {url}: the parent directory {parent} does not exist")
    if not os.path.exists(path):
        if not create:
            raise StoreError(f"{url} is not {_an(engine)} store: {path} does not exist")
        return False
    if not os.path.isdir(path):
        raise StoreError(
            f"cannot open {url}: {path} is a file, not a directory ({_an(engine)} store is a directory)"
        )
    try:
        names = os.listdir(path)
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
