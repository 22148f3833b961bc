"""Directories: paths mapped to short allocated prefixes, with FoundationDB's
directory layer bytes, on every store.

``ks.directories`` (and ``tx.directories`` inside a transaction) is a
:class:`Directories`: ``create_or_open``, ``open``, ``create``, ``exists``,
``list``, ``move``, ``remove``, ``remove_if_exists``; ``ks.directory(*path)`` is
``create_or_open``. A :class:`Directory` is a scope over its prefix (keys stored
``prefix + pack((k,))``), with ``path``, ``layer``, ``prefix`` and the same
operations relative to itself; a partition (``layer=b"partition"``) is a
:class:`DirectoryPartition`. See ``docs/directories.md``.
"""

from ._api import Directories
from ._directory import Directory, DirectoryPartition
from ._layer import Found, TreeOps
from ._nodes import PARTITION, Tree

__all__ = ["PARTITION", "Directories", "Directory", "DirectoryPartition", "Found", "Tree", "TreeOps"]
