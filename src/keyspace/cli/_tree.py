"""The scope tree of a store with key and byte counts, built in one pass.

:class:`ScopeTree` takes entries in any order (one dict lookup per level of the
entry's path, cached for runs of keys in the same scope) and renders as a rich
table, as the plain lines that table prints without a terminal, or as nested
JSON objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ._format import JSON, component_json, path_identity, render_component

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["ScopeNode", "ScopeTree", "human_bytes"]


class ScopeNode:
    """One scope: its own key count and bytes (stored keys + values), its
    children in first-seen order (stored order), and subtree totals."""

    __slots__ = ("bytes", "children", "keys", "path", "sub_bytes", "sub_keys")

    def __init__(self, path: tuple[Any, ...]) -> None:
        self.path = path
        self.keys = 0
        self.bytes = 0
        self.sub_keys = 0
        self.sub_bytes = 0
        self.children: dict[Any, ScopeNode] = {}

    def child(self, component: Any) -> ScopeNode:
        """The child scope named ``component``, told apart from the others exactly
        (:func:`~._format.path_identity`: ``1``, ``True`` and ``1.0`` are three)."""
        key = path_identity((component,))
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = ScopeNode((*self.path, component))
        return node


class ScopeTree:
    """Counts keys and bytes per scope. ``add(path, size)`` costs O(1) when the
    path is the previous one, else O(len(path))."""

    def __init__(self) -> None:
        self.root = ScopeNode(())
        self._last_path: Any = None  # path_identity of the path last added
        self._last_chain: list[ScopeNode] = []

    def add(self, path: tuple[Any, ...], size: int, keys: int = 1) -> None:
        """Count ``keys`` keys (one by default) of ``size`` stored bytes in all in
        scope ``path``."""
        same = path_identity(path)
        if same != self._last_path:
            node = self.root
            chain = [node]
            for component in path:
                node = node.child(component)
                chain.append(node)
            self._last_path, self._last_chain = same, chain
        chain = self._last_chain
        leaf = chain[-1]
        leaf.keys += keys
        leaf.bytes += size
        for node in chain:
            node.sub_keys += keys
            node.sub_bytes += size

    def nodes(self, levels: int | None = None) -> Iterator[tuple[ScopeNode, str]]:
        """Depth-first ``(node, guide)`` pairs, the guide drawing the tree lines,
        down to ``levels`` levels below the root (all when ``None``)."""
        yield self.root, ""
        yield from _descend(self.root, "", levels)

    def to_json(self, *, typed: bool) -> JSON:
        """``{"path": [...], "keys": N, "bytes": M, "children": [...]}`` for the
        root, children nested the same way."""
        return _node_json(self.root, typed)

    def table(self, title: str, *, typed: bool, levels: int | None = None) -> Table:
        """The tree as a rich table: scope, own keys and bytes, subtree keys and bytes;
        ``title`` is shown as it is (a path's ``[`` is no markup)."""
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(title), title_justify="left", box=None, pad_edge=False, header_style="bold")
        table.add_column("scope", overflow="fold")
        for name in _HEADERS[1:]:
            table.add_column(name, justify="right", no_wrap=True)
        for node, guide, name in self._rows(typed, levels):
            label = Text(guide, style="dim") + Text(name, style="bold" if node.children else "")
            table.add_row(label, *_counts(node))
        return table

    def plain_lines(self, title: str, *, typed: bool, levels: int | None = None) -> list[str] | None:
        """The lines :meth:`table` prints into a console without a terminal or
        colours, every name whole (the console as wide as the widest row): the
        title (if any), the header and one row a scope, the columns two spaces apart,
        names left-justified and counts right-justified, no trailing space. Built
        without rich (whose measuring and rendering cost about a millisecond a
        row); ``None`` where the title or a name holds a character that is not
        printable ASCII (whose width in cells rich measures: print
        :meth:`table` then). Cost: O(scopes)."""
        if not (title.isascii() and title.isprintable()):
            return None
        rows: list[tuple[str, ...]] = [_HEADERS]
        for node, guide, name in self._rows(typed, levels):
            if not (name.isascii() and name.isprintable()):
                return None
            rows.append((guide + name, *_counts(node)))
        widths = [max(map(len, column)) for column in zip(*rows, strict=True)]
        first = widths[0]
        rest = widths[1:]
        lines = [title] if title else []
        for label, *counts in rows:
            cells = [label.ljust(first)]
            cells += [count.rjust(width) for count, width in zip(counts, rest, strict=True)]
            lines.append("  ".join(cells).rstrip())
        return lines

    def _rows(self, typed: bool, levels: int | None) -> Iterator[tuple[ScopeNode, str, str]]:
        """``(node, guide, name)`` of each row of the table, in :meth:`nodes` order."""
        for node, guide in self.nodes(levels):
            name = "(root)" if not node.path else render_component(node.path[-1], typed=typed)
            yield node, guide, name


_HEADERS = ("scope", "keys", "bytes", "subtree keys", "subtree bytes")


def _counts(node: ScopeNode) -> tuple[str, str, str, str]:
    """The four count cells of ``node``'s row."""
    return f"{node.keys:,}", human_bytes(node.bytes), f"{node.sub_keys:,}", human_bytes(node.sub_bytes)


def _descend(node: ScopeNode, indent: str, levels: int | None) -> Iterator[tuple[ScopeNode, str]]:
    if levels is not None and len(node.path) >= levels:
        return
    kids = list(node.children.values())
    for i, kid in enumerate(kids):
        last = i == len(kids) - 1
        yield kid, indent + ("└─ " if last else "├─ ")
        yield from _descend(kid, indent + ("   " if last else "│  "), levels)


def _node_json(node: ScopeNode, typed: bool) -> JSON:
    return {
        "path": [component_json(c, typed=typed) for c in node.path],
        "keys": node.keys,
        "bytes": node.bytes,
        "children": [_node_json(kid, typed) for kid in node.children.values()],
    }


def human_bytes(n: int) -> str:
    """``n`` bytes as ``812 B``, ``1.2 kB``, ``3.4 MB`` … (powers of 1000)."""
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")
