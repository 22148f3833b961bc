"""The layer rules of the design, checked on the source: every module of
``src/keyspace`` is parsed (nothing is imported) and every import it makes is
an arrow, wherever it stands: at the top, under ``TYPE_CHECKING``, or inside a
function; absolute or relative; ``from package import submodule`` included.

- No import circle between modules: each module can be read knowing only the
  modules below it.
- Lower layers never import higher ones: the arrows between layers follow
  :data:`ALLOWED` (stores see only bytes; schemes never touch a store).

An arrow that breaks a rule today, and whose removal needs a move in a module
others are reshaping, is listed in :data:`KNOWN_CIRCLES` or
:data:`KNOWN_UPWARD` with the reason; an entry that no longer happens fails
the test, so the lists only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent.parent / "src"

# -- the layers, lowest first: a module belongs to the layer of its longest listed prefix

LAYER_OF: dict[str, str] = {
    # bottom: byte helpers and closing helpers; import nothing of keyspace
    "keyspace._bytes": "bytes",
    "keyspace._closing": "bytes",
    # the error tree (its message helpers read bytes through _bytes)
    "keyspace.errors": "errors",
    # the FoundationDB tuple layer, pure (and its C module)
    "keyspace.tuples": "tuples",
    "keyspace._tuple_types": "tuples",
    "keyspace._tuples_accel": "tuples",
    # key and value codecs, bincode among them
    "keyspace.codecs": "codecs",
    "keyspace.bincode": "codecs",
    "keyspace._bincode_accel": "codecs",
    # path + key <-> stored bytes: pure functions, no I/O
    "keyspace.schemes": "schemes",
    # one small contract over ordered byte stores, one adapter per engine: bytes only
    "keyspace.stores": "stores",
    # the conformance suite, the store model and the test cluster, over the public layers
    "keyspace.testing": "testing",
    # the keyspace command, the top
    "keyspace.cli": "cli",
    # everything else is the keyspace layer: Keyspace, Scope, the catalog,
    # directory/, collections/, cosmwasm/, aio/, access, scoped_heed, ...
    "keyspace": "keyspace",
}

ALLOWED: dict[str, frozenset[str]] = {
    "bytes": frozenset(),
    "errors": frozenset({"bytes"}),
    "tuples": frozenset({"errors", "bytes"}),
    "codecs": frozenset({"tuples", "errors", "bytes"}),
    # never a store, never the keyspace layer, never the command
    "schemes": frozenset({"codecs", "tuples", "errors", "bytes"}),
    # stores see only bytes: no scheme, no tuple, no codec, nothing above
    "stores": frozenset({"errors", "bytes"}),
    "keyspace": frozenset({"schemes", "stores", "codecs", "tuples", "errors", "bytes"}),
    "testing": frozenset({"keyspace", "schemes", "stores", "codecs", "tuples", "errors", "bytes"}),
    "cli": frozenset({"testing", "keyspace", "schemes", "stores", "codecs", "tuples", "errors", "bytes"}),
}
"""The layers each layer may import, besides its own."""

KNOWN_CIRCLES: dict[frozenset[str], str] = {}
"""Circles allowed for now, each with the reason it is still there (none today)."""

KNOWN_UPWARD: dict[tuple[str, str], str] = {}
"""Imports against the layers allowed for now, each with its reason (none today)."""


# -- reading the imports ---------------------------------------------------------------


def modules(src: Path) -> dict[str, Path]:
    """Every module of the ``keyspace`` package under ``src``: its dotted name and
    its file (a C module by its ``.pyi`` stub, which imports nothing)."""
    found: dict[str, Path] = {}
    root = src / "keyspace"
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.pyi")]):
        if path.suffix == ".pyi" and path.with_suffix(".py").exists():
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _known(name: str, known: Iterable[str]) -> str:
    """``name``, or the nearest enclosing module that exists (a name imported
    from a module is an arrow to that module)."""
    names = set(known)
    while name not in names and "." in name:
        name = name.rpartition(".")[0]
    return name


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` of every import of ``keyspace`` modules the
    module ``name`` (its file ``path``) makes, wherever it stands."""
    if path.suffix == ".pyi":
        return
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "keyspace":
                    yield _known(alias.name, known), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            if base.split(".")[0] != "keyspace":
                continue
            for alias in node.names:
                yield _known(f"{base}.{alias.name}", known), node.lineno


def graph(src: Path) -> dict[str, dict[str, int]]:
    """Module -> {module it imports: first line of such an import}; no self arrows."""
    known = modules(src)
    out: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        arrows: dict[str, int] = {}
        for target, line in imports(name, path, known):
            if target != name:
                arrows.setdefault(target, line)
        out[name] = arrows
    return out


def circles(arrows: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in arrows:
        if root in index:
            continue
        work = [(root, iter(arrows[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(arrows.get(child, {}))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(frozenset(group))
    return found


def layer(name: str) -> str:
    return LAYER_OF[_known(name, LAYER_OF)]


def upward(arrows: dict[str, dict[str, int]]) -> dict[tuple[str, str], int]:
    """Every arrow from a layer to one it may not import: ``(importer, imported)`` -> line."""
    return {
        (name, target): line
        for name, targets in arrows.items()
        for target, line in targets.items()
        if layer(target) != layer(name) and layer(target) not in ALLOWED[layer(name)]
    }


# -- the rules --------------------------------------------------------------------------


def test_no_import_circle_between_modules() -> None:
    arrows = graph(SRC)
    found = set(circles(arrows))
    new = [
        sorted(f"{a} -> {b} (line {line})" for a in group for b, line in arrows[a].items() if b in group)
        for group in found - set(KNOWN_CIRCLES)
    ]
    assert not new, f"import circles: {new}"
    gone = [sorted(group) for group in set(KNOWN_CIRCLES) - found]
    assert not gone, f"known circles that no longer exist (drop them from KNOWN_CIRCLES): {gone}"


def test_lower_layers_never_import_higher_ones() -> None:
    found = upward(graph(SRC))
    new = sorted(
        f"{a} ({layer(a)}) -> {b} ({layer(b)}), line {line}"
        for (a, b), line in found.items()
        if (a, b) not in KNOWN_UPWARD
    )
    assert not new, "imports against the layers:\n" + "\n".join(new)
    gone = sorted(set(KNOWN_UPWARD) - set(found))
    assert not gone, f"known upward imports that no longer exist (drop them from KNOWN_UPWARD): {gone}"


def test_every_module_has_a_layer_and_every_layer_its_rule() -> None:
    assert set(LAYER_OF.values()) == set(ALLOWED)
    for name in modules(SRC):
        assert layer(name) in ALLOWED, name
    for allowed in ALLOWED.values():
        assert allowed <= set(ALLOWED)


# -- the reader itself ------------------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "source",
    [
        "from .b import thing\n",
        "from . import b\n",
        "import keyspace.sub.b\n",
        "from keyspace.sub import b as renamed\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import Thing\n",
        "def f() -> None:\n    from .b import thing\n",
        "class C:\n    def m(self) -> None:\n        from ..sub.b import thing\n",
        "try:\n    from . import b\nexcept ImportError:\n    pass\n",
    ],
)
def test_every_kind_of_import_is_an_arrow(tmp_path: Path, source: str) -> None:
    src = _package(
        tmp_path,
        {
            "keyspace/__init__.py": "",
            "keyspace/sub/__init__.py": "",
            "keyspace/sub/a.py": source,
            "keyspace/sub/b.py": "from .a import x\n",
        },
    )
    arrows = graph(src)
    assert "keyspace.sub.b" in arrows["keyspace.sub.a"]
    assert circles(arrows) == [frozenset({"keyspace.sub.a", "keyspace.sub.b"})]


def test_an_import_of_a_lower_layer_passes_and_of_a_higher_one_is_named(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "keyspace/__init__.py": "",
            "keyspace/errors.py": "from ._bytes import buffer_bytes\n",
            "keyspace/_bytes.py": "",
            "keyspace/schemes/__init__.py": "",
            "keyspace/schemes/x.py": "def f() -> None:\n    from ..stores import memory\n",
            "keyspace/stores/__init__.py": "",
            "keyspace/stores/memory.py": "from ..errors import StoreError\n",
        },
    )
    assert upward(graph(src)) == {("keyspace.schemes.x", "keyspace.stores.memory"): 2}
    assert circles(graph(src)) == []


def test_a_circle_through_a_package_and_a_c_module_stub(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "keyspace/__init__.py": "from . import scope\n",
            "keyspace/scope.py": "from keyspace import _accel\nimport keyspace\n",
            "keyspace/_accel.pyi": "def f() -> None: ...\n",
        },
    )
    arrows = graph(src)
    assert arrows["keyspace.scope"] == {"keyspace._accel": 1, "keyspace": 2}
    assert circles(arrows) == [frozenset({"keyspace", "keyspace.scope"})]
