"""The tree drawn in ``keyspace.errors``' docstring is the class tree: every
error the module exports is drawn, under the base it derives from."""

from __future__ import annotations

import inspect
import re

import keyspace.errors as errors


def drawn_parents() -> dict[str, str]:
    """Each name drawn in the docstring's tree, mapped to the name it hangs under."""
    doc = errors.__doc__ or ""
    parents: dict[str, str] = {}
    stack: list[str] = []
    root_indent = None
    for line in doc.splitlines():
        if line.strip() == "KeyspaceError":
            root_indent = len(line) - len(line.lstrip())
            stack = ["KeyspaceError"]
            continue
        branch = re.search(r"[├└]── (\w+)", line)
        if root_indent is None or branch is None:
            continue
        depth = (branch.start() - root_indent) // 4 + 1  # the root's children: 1
        del stack[depth:]
        parents[branch.group(1)] = stack[-1]
        stack.append(branch.group(1))
    return parents


def test_every_exported_error_is_drawn_under_its_base() -> None:
    drawn = drawn_parents()
    exported = {
        name: cls
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if name in errors.__all__ and issubclass(cls, errors.KeyspaceError) and name != "KeyspaceError"
    }
    assert exported, "no error exported"
    for name, cls in exported.items():
        bases = {base.__name__ for base in cls.__bases__ if issubclass(base, errors.KeyspaceError)}
        assert drawn.get(name) in bases, f"{name} is drawn under {drawn.get(name)}, derives from {bases}"
    assert set(drawn) == set(exported)
