"""cw-storage-plus's own unit tests (``_cw_storage_plus_cases``), run as data
against the keyspace collections: on the CosmWasm layout at the root of a
LengthPrefixed keyspace (answers, order and the stored bytes), and on the tuple
layout in a scope of a tuple keyspace (answers and order)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from _cw_storage_plus_cases import CASES, PB

import keyspace
from keyspace import errors
from keyspace.collections import (
    COSMWASM,
    TUPLE,
    Deque,
    DequeMap,
    IndexedMap,
    IndexedSnapshotMap,
    Map,
    MultiIndex,
    PrefixBound,
    SnapshotItem,
    SnapshotMap,
    UniqueIndex,
)

LAYOUTS = ("cosmwasm", "tuple")


def _index_fn(fields: Any) -> Any:
    if fields is None:
        return lambda v: v
    if isinstance(fields, tuple):
        return lambda v: tuple(v[f] for f in fields)
    return lambda v: v[fields]


def _indexes(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (kind, ns, key, fields) in spec.items():
        cls = MultiIndex if kind == "multi" else UniqueIndex
        out[name] = cls(_index_fn(fields), ns, key=key)
    return out


def _build(spec: dict[str, Any], layout: str) -> tuple[Any, Any]:
    if layout == "cosmwasm":
        ks = keyspace.open("memory:", scheme="length-prefixed")
        scope, lay = ks.scope(), COSMWASM
    else:
        ks = keyspace.open("memory:")
        scope, lay = ks.scope("app"), TUPLE
    kind, ns = spec["kind"], spec["ns"]
    history = {k: spec[k] for k in ("strategy",) if k in spec}
    if kind == "map":
        return ks, Map(scope, ns, key=spec["key"], layout=lay)
    if kind == "deque":
        return ks, Deque(scope, ns, layout=lay)
    if kind == "deque_map":
        return ks, DequeMap(scope, ns, key=spec["key"], layout=lay)
    if kind == "snapshot_map":
        return ks, SnapshotMap(
            scope, ns, spec["checkpoints"], spec["changelog"], key=spec["key"], layout=lay, **history
        )
    if kind == "snapshot_item":
        return ks, SnapshotItem(scope, ns, spec["checkpoints"], spec["changelog"], layout=lay, **history)
    indexes = _indexes(spec["indexes"])
    if kind == "indexed_map":
        return ks, IndexedMap(scope, ns, key=spec["key"], indexes=indexes, layout=lay)
    assert kind == "indexed_snapshot_map"
    return ks, IndexedSnapshotMap(
        scope,
        ns,
        spec["checkpoints"],
        spec["changelog"],
        key=spec["key"],
        indexes=indexes,
        layout=lay,
        **history,
    )


def _arg(value: Any) -> Any:
    if isinstance(value, PB):
        return PrefixBound(value.prefix, value.inclusive)
    if isinstance(value, dict) and set(value) == {"const"}:
        const = value["const"]
        return lambda _old: const
    return value


def _call(target: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    args = tuple(_arg(a) for a in args)
    kwargs = {k: _arg(v) for k, v in kwargs.items()}
    if isinstance(target, Iterator) and name in ("keys", "values"):  # of a range's items
        return [kv[0 if name == "keys" else 1] for kv in target]
    if name == "len":
        return len(target)
    if name == "hex":
        return target.storage_key.hex()
    if name == "reversed":
        return reversed(target)
    if name == "_set_ends":  # a deque pushed and popped this many times (the tests' set_head/set_tail)
        target._set(target._base, ("h",), args[0])
        target._set(target._base, ("t",), args[1])
        return None
    if name == "_remove_position":  # an item lost from under the deque (the tests' remove_unchecked)
        head = target._ends(target._base)[0]
        target._items.scope(target._base).discard(target._items.key(((head + args[0]) % 2**32,)))
        return None
    attr = getattr(target, name)
    return attr(*args, **kwargs) if callable(attr) else attr


def _run(target: Any, calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> Any:
    out = target
    for name, args, kwargs in calls:
        out = _call(out, name, args, kwargs)
    if isinstance(out, Iterator):
        out = list(out)
    return out


def _raw_pairs(got: Any, layout: str) -> Any:
    pairs = [(k, json.loads(v)) for k, v in got]
    return pairs if layout == "cosmwasm" else [v for _, v in pairs]


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['source']}::{case['test']}"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_cw_storage_plus_case(case: dict[str, Any], layout: str) -> None:
    ks, coll = _build(case["collection"], layout)
    for i, step in enumerate(case["steps"]):
        where = f"{_case_id(case)} step {i} ({layout})"
        kind = step["kind"]
        if kind == "stored":
            if layout == "cosmwasm":
                assert ks.store.get(step["key"]) == step["value"], where
            continue
        if kind == "do":
            _run(coll, step["calls"])
        elif kind == "err":
            error = getattr(errors, step["error"], None) or getattr(__builtins__, step["error"], None)
            with pytest.raises(error):
                _run(coll, step["calls"])
        else:
            if step["cw"] and layout != "cosmwasm":
                continue
            got = _run(coll, step["calls"])
            expected = step["expected"]
            if step["raw"]:
                got = _raw_pairs(got, layout)
                if layout != "cosmwasm":
                    expected = [v for _, v in expected]
            assert got == expected, where


def test_every_issue_source_file_is_ported() -> None:
    """Every source file the issue names has cases, and the count is what the
    closing note reports."""
    sources = {c["source"] for c in CASES}
    for name in (
        "src/map.rs",
        "src/prefix.rs",
        "src/snapshot/map.rs",
        "src/snapshot/item.rs",
        "src/snapshot/mod.rs",
        "src/indexed_snapshot.rs",
        "src/deque.rs",
        "src/indexed_map.rs",
        "src/indexes/prefix.rs",
    ):
        assert name in sources, name
    assert len(CASES) >= 75
