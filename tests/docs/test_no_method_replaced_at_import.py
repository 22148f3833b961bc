"""Speed is contained in C types and C functions a class defines as its own: no
module of the library replaces a method of a class, or of an object, once made.
Read from the source with ``ast``: a module's top-level statements neither assign
an attribute (``Transaction.scope = ...``) nor call a function of the module that
sets attributes with ``setattr`` (an ``_install(...)`` step run at import). Plain
data written out (a tuple of classes) may be assigned; the generated gRPC modules
are not read."""

from __future__ import annotations

import ast
from pathlib import Path

import keyspace

PACKAGE = Path(keyspace.__file__).parent


def _setattr_functions(tree: ast.Module) -> set[str]:
    """The module-level functions of ``tree`` that call ``setattr``."""
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Name)
                    and inner.func.id == "setattr"
                ):
                    found.add(node.name)
    return found


def _top_level_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a module's top level, those inside ``if``/``try`` blocks
    there included."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out += _top_level_statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            out += _top_level_statements(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                out += _top_level_statements(handler.body)
    return out


def _data(value: ast.expr | None) -> bool:
    """Whether ``value`` is plain data written out: a constant, or a display of
    names and constants (a class's table of variants); never a name alone (a
    function) or a call."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return all(isinstance(element, ast.Name) or _data(element) for element in value.elts)
    return False


def replacements(source: str) -> list[str]:
    """What the top level of ``source`` replaces at import, one line each."""
    tree = ast.parse(source)
    setters = _setattr_functions(tree)
    found = []
    for node in _top_level_statements(tree.body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and not _data(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        found.extend(
            f"line {node.lineno}: assigns {ast.unparse(target)}"
            for target in targets
            if isinstance(target, ast.Attribute)
        )
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and (func.id in setters or func.id == "setattr"):
                found.append(f"line {node.lineno}: calls {func.id}, which sets attributes")
    return found


def test_the_check_sees_both_forms() -> None:
    source = (
        "def _install(cls):\n    setattr(cls, 'f', 1)\n"
        "class A:\n    pass\n"
        "_install(A)\n"
        "if True:\n    A.g = len\n"
        "A.table = (A, 1)\n"
        "A.h = A.g.__get__(A)\n"
    )
    assert replacements(source) == [
        "line 5: calls _install, which sets attributes",
        "line 7: assigns A.g",
        "line 9: assigns A.h",
    ]


def test_no_module_replaces_a_method_at_import() -> None:
    found = {
        str(path.relative_to(PACKAGE)): got
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_proto" not in path.parts  # the gRPC compiler's output, not ours
        and (got := replacements(path.read_text(encoding="utf-8")))
    }
    assert found == {}
