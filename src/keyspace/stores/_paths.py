"""Checks of a store's path made before its engine touches it (no engine creates
anything in a folder that is not its store, and each failure names its cause)."""

from __future__ import annotations

import os
import re
import stat

from ..errors import StoreError

__all__ = ["check_directory", "engine_of", "engine_words", "is_engine_file", "kind_of"]


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


def engine_of(names: list[str]) -> tuple[str, str] | None:
    """Which engine's store a directory holding the files ``names`` is, and the
    file that tells: RocksDB (``IDENTITY``, ``OPTIONS-*``; it keeps LevelDB's
    ``CURRENT`` too), LevelDB (``CURRENT`` without them), LMDB (``data.mdb``);
    ``None`` for none of them. Each engine opens the other's directory and
    rewrites it for itself (RocksDB turns a LevelDB store into one LevelDB
    reports corrupt; LevelDB rotates RocksDB's ``LOG``), so each is refused the
    other's store before it touches it."""
    present = set(names)
    options = sorted(n for n in present if n.startswith("OPTIONS-"))
    if "IDENTITY" in present or options:
        return "RocksDB", "IDENTITY" if "IDENTITY" in present else options[0]
    if "CURRENT" in present:
        return "LevelDB", "CURRENT"
    if "data.mdb" in present:
        return "LMDB", "data.mdb"
    return None


_ENGINE_FILE = re.compile(
    r"(CURRENT|LOCK|LOG|LOG\.old(\.\d+)?|IDENTITY|MANIFEST-\d+|OPTIONS-\d+(\.dbtmp)?|\d+\.(log|ldb|sst|dbtmp)"
    r"|data\.mdb|lock\.mdb|rocksdict-config\.json)"
)


def engine_words(text: str, path: str) -> str:
    """An engine's error message ``text`` without the store's ``path`` in it: the
    words to look for a cause in (a path such as ``/srv/blockchain`` is no lock
    error)."""
    return text.replace(path, "") if path else text


def is_engine_file(name: str) -> bool:
    """Whether ``name`` is a file LMDB, LevelDB or RocksDB (or rocksdict) keeps in
    a store's directory: a file of another name there is someone else's."""
    return _ENGINE_FILE.fullmatch(name) is not None


_CURRENT = re.compile(rb"(MANIFEST-\d+)\n?")


def _current_head(path: str, url: str) -> bytes:
    """The first bytes of the directory's ``CURRENT`` file."""
    try:
        with open(os.path.join(path, "CURRENT"), "rb") as file:
            return file.read(64)
    except OSError as exc:
        raise StoreError(f"cannot open {url}: {exc.strerror or exc}: {path}/CURRENT") from exc


def _names_manifest(head: bytes, names: list[str]) -> bool:
    """Whether ``head``, a ``CURRENT`` file's bytes, names a ``MANIFEST-N`` file of ``names``."""
    match = _CURRENT.fullmatch(head)
    return match is not None and match.group(1).decode() in names


def _holds_store(path: str, names: list[str], url: str) -> bool:
    """Whether the directory holding ``names`` is an engine's store, not only a
    folder with a file of an engine's name in it: every file is an engine's, or
    its ``CURRENT`` names one of its manifests."""
    if all(map(is_engine_file, names)):
        return True
    return "CURRENT" in names and _names_manifest(_current_head(path, url), names)


def _check_current(path: str, names: list[str], url: str, engine: str) -> None:
    """Refuse a ``CURRENT`` file that is not a LevelDB or RocksDB one, before the
    engine opens the directory (and writes its ``LOCK`` and ``LOG`` there): it
    holds the name of a ``MANIFEST-N`` file of the directory."""
    head = _current_head(path, url)
    if not _names_manifest(head, names):
        raise StoreError(
            f"{url} is not {_an(engine)} store, or a damaged one: its CURRENT file names no manifest of "
            f"the directory ({head[:40]!r}); it was left unchanged"
        )


def check_directory(path: str, url: str, engine: str, markers: tuple[str, ...], *, create: bool) -> bool:
    """Check the directory ``path`` of a store of ``engine`` before opening it, and
    return whether it already holds one: a file of ``markers`` (the files only a
    store has) is in it, or every file in it is an engine's (a store whose
    making was cut short).

    Raises :class:`~keyspace.errors.StoreError` for a missing parent directory, a
    file where the directory belongs, a non-empty directory that holds no marker
    and files of its own (someone else's folder, even with a file named ``LOCK``
    or ``lock.mdb`` in it: never written to), a ``CURRENT`` file that names no
    manifest in the directory (not LevelDB's or RocksDB's: never opened), the
    store of another engine (:func:`engine_of`, where every file is an engine's
    or ``CURRENT`` names a manifest: never opened, read or written), a
    path this process may not read (permission denied), and, without ``create``,
    a missing store. Cost: a few ``stat`` calls, one directory listing and, where
    there is one, one read of ``CURRENT``."""
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
    other = engine_of(names)
    if other is not None and other[0] != engine and _holds_store(path, names, url):
        raise StoreError(
            f"{url} is not {_an(engine)} store: {path} holds {_an(other[0])} store (its {other[1]} file); "
            f"open it as {other[0].lower()}://{path}. It was left unchanged"
        )
    if any(name in names for name in markers):
        if "CURRENT" in markers and "CURRENT" in names:
            _check_current(path, names, url, engine)
        return True
    if names and all(map(is_engine_file, names)):
        return True
    if names or not create:
        what = "an empty directory" if not names else f"a directory of {len(names)} other files"
        raise StoreError(
            f"{url} is not {_an(engine)} store: {path} is {what} (no {' or '.join(markers)}); "
            "it was left unchanged"
        )
    return False
