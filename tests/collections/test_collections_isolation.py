"""Collections on neighbouring scopes (names that extend, share a prefix with, or are
a prefix of each other; a parent and its child) and on neighbouring namespaces of
one scope (``n`` beside ``nn`` and the empty name): a clear, a pop or a remove of
one collection leaves every other one exactly as it was, and its len/items see
only its own entries. Both layouts, every scheme that holds them, on LMDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.collections import (
    COSMWASM,
    TUPLE,
    Deque,
    IndexedMap,
    Item,
    Layout,
    Map,
    MultiIndex,
    UniqueIndex,
)
from keyspace.errors import KeyspaceError

CASES = [
    pytest.param("tuple", TUPLE, id="tuple-scheme-tuple-layout"),
    pytest.param("tuple", COSMWASM, id="tuple-scheme-cosmwasm-layout"),
    pytest.param("length-prefixed", COSMWASM, id="length-prefixed-cosmwasm-layout"),
    pytest.param("sublevel", COSMWASM, id="sublevel-cosmwasm-layout"),
    pytest.param("asciihex", COSMWASM, id="asciihex-cosmwasm-layout"),
    pytest.param("scopehash", COSMWASM, id="scopehash-cosmwasm-layout"),
]
PATHS = [
    [("app",), ("ap",), ("appx",), ("app\x00",)],
    [("app",), ("app", "x")],
    [(), ("a",)],
    [("a",), ("a", "a")],
]
NAMESPACES = ["n", "nn", ""]


def _make(scope: keyspace.Scope, layout: Layout, ns: str) -> dict[str, Any]:
    return {
        "map": Map(scope, ns, key="str", layout=layout),
        "deque": Deque(scope, ns + "q", layout=layout),
        "indexed": IndexedMap(
            scope,
            ns + "i",
            key="str",
            layout=layout,
            indexes={
                "u": UniqueIndex(lambda v: v["u"], ns + "iu", key="str"),
                "m": MultiIndex(lambda v: v["m"], ns + "im", key="str"),
            },
        ),
        "item": Item(scope, ns + "it", layout=layout),
    }


def _fill(c: dict[str, Any], tag: str) -> None:
    c["map"].save("k", tag)
    c["map"].save("k2", tag)
    c["deque"].push_back(tag)
    c["deque"].push_back(tag + "b")
    c["indexed"].save("r", {"u": tag, "m": "x"})
    c["indexed"].save("r2", {"u": tag + "2", "m": "x"})
    c["item"].save(tag)


def _seen(c: dict[str, Any]) -> tuple[Any, ...]:
    return (
        sorted(c["map"].items()),
        len(c["map"]),
        list(c["deque"]),
        len(c["deque"]),
        sorted(c["indexed"].items()),
        sorted(c["indexed"].index("m").prefix("x").keys()),
        sorted(c["indexed"].index("u").items()),
        c["item"].may_load(),
    )


def _change(c: dict[str, Any]) -> None:
    c["map"].clear()
    c["deque"].pop_front()
    c["deque"].pop_back()
    c["indexed"].remove("r2")
    c["indexed"].clear()
    c["item"].remove()


@pytest.mark.parametrize("paths", PATHS, ids=["siblings", "parent-child", "root-child", "same-name-child"])
@pytest.mark.parametrize(("scheme", "layout"), CASES)
def test_a_collection_never_touches_its_neighbours(
    tmp_path: Path, scheme: str, layout: Layout, paths: list[tuple[str, ...]]
) -> None:
    ks = keyspace.open(f"lmdb:///{tmp_path}/db", scheme=scheme)
    try:
        made: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
        for path in paths:
            for ns in NAMESPACES:
                try:
                    c = _make(ks.scope(*path), layout, ns)
                    _fill(c, f"{path}{ns}")
                except KeyspaceError:
                    continue  # a path the scheme refuses (a name, or a leaf beside a branch)
                made[(path, ns)] = c
        assert len(made) >= len(NAMESPACES)
        for (path, ns), target in made.items():
            tag = f"{path}{ns}"
            assert _seen(target)[0] == [("k", tag), ("k2", tag)]
            assert _seen(target)[2] == [tag, tag + "b"]
            others = {k: _seen(c) for k, c in made.items() if k != (path, ns)}
            _change(target)
            assert _seen(target)[:2] == ([], 0)
            for k, c in made.items():
                if k != (path, ns):
                    assert _seen(c) == others[k], f"changing {(path, ns)} changed {k}"
            _fill(target, tag)
    finally:
        ks.close()
