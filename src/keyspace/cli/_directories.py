"""The directory tree of a store as the command line shows it: each directory's
path, prefix, layer, and the keys and bytes stored under its prefix; the node
keys counted apart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.table import Table
from rich.text import Text

from .._metadata import DIRECTORY_RECORD
from ..directory import PARTITION, Tree, TreeOps
from ..stores import ReadView
from ._tree import human_bytes

__all__ = ["DirectoryCounts", "directory_counts", "show_path"]


def show_path(path: tuple[str, ...]) -> str:
    """A directory path as the ``dir`` commands take it: names joined by ``/``."""
    return "/" + "/".join(path)


@dataclass
class DirectoryCounts:
    """Per directory ``(path, prefix, layer)``: keys and bytes (stored key + value)
    under its prefix, not under a subdirectory's; the node keys apart."""

    rows: list[tuple[tuple[str, ...], bytes, bytes]] = field(default_factory=list)
    keys: dict[bytes, int] = field(default_factory=dict)
    sizes: dict[bytes, int] = field(default_factory=dict)
    node_keys: int = 0
    node_bytes: int = 0
    _nodes: list[bytes] = field(default_factory=list)
    _longest: int = 0

    def claim(self, stored: bytes, value: bytes) -> bool:
        """Count ``stored`` when it is a directory's key or a node key (True)."""
        if any(stored.startswith(node) for node in self._nodes):
            self.node_keys += 1
            self.node_bytes += len(stored) + len(value)
            return True
        keys = self.keys
        for i in range(min(len(stored), self._longest), 0, -1):
            head = stored[:i]
            if head in keys:
                keys[head] += 1
                self.sizes[head] += len(stored) + len(value)
                return True
        return False

    def table(self) -> Table:
        table = Table(
            title=Text("directories"), title_justify="left", box=None, pad_edge=False, header_style="bold"
        )
        for name, right in (
            ("directory", False),
            ("prefix", False),
            ("layer", False),
            ("keys", True),
            ("bytes", True),
        ):
            table.add_column(name, justify="right" if right else "left", overflow="fold")
        for path, prefix, layer in self.rows:
            table.add_row(
                show_path(path),
                prefix.hex(" "),
                layer.decode("utf-8", "backslashreplace"),
                f"{self.keys[prefix]:,}",
                human_bytes(self.sizes[prefix]),
            )
        return table

    def to_json(self) -> dict[str, Any]:
        return {
            "directories": [
                {
                    "path": list(path),
                    "prefix": prefix.hex(),
                    "layer": layer.decode("utf-8", "backslashreplace"),
                    "keys": self.keys[prefix],
                    "bytes": self.sizes[prefix],
                }
                for path, prefix, layer in self.rows
            ],
            "directory_nodes": {"keys": self.node_keys, "bytes": self.node_bytes},
        }


def directory_counts(view: ReadView) -> DirectoryCounts | None:
    """The directories of ``view`` (``None`` where it holds no directory tree),
    with empty counts for :meth:`DirectoryCounts.claim` to fill. Cost: a walk of
    the tree (a few point reads per directory)."""
    root = Tree()
    if view.get(DIRECTORY_RECORD) is None and view.get(root.version_key) is None:
        return None
    found = TreeOps(root).walk(view)
    counts = DirectoryCounts(rows=[(f.path, f.prefix, f.layer) for f in found])
    counts._nodes = [root.node, *(Tree.partition(f.prefix).node for f in found if f.layer == PARTITION)]
    for f in found:
        counts.keys[f.prefix] = 0
        counts.sizes[f.prefix] = 0
    counts._longest = max((len(f.prefix) for f in found), default=0)
    return counts
