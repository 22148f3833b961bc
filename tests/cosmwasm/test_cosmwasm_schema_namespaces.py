"""A schema's namespaces (an index's ``namespace``, a snapshot collection's
``checkpoints`` and ``changelog``) are JSON strings: anything else is a
``SchemaError`` naming the entry (``5`` was five NUL bytes, ``[1, 2]`` two
bytes, ``-1``/``1e12``/``{}`` an unexpected ValueError, MemoryError or
TypeError). Whatever JSON stands in any field of a valid schema, loading it
gives a schema or a ``SchemaError``, nothing else. Through the API and the
``keyspace cosmwasm decode`` command."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace import cosmwasm as cw
from keyspace.errors import InvalidName, KeyTooLarge

BASE: dict[str, Any] = {
    "items": {"i": "json"},
    "maps": {"m": {"key": ["str", "u8"]}},
    "indexed_maps": {
        "t": {
            "key": ["str"],
            "indexes": {
                "o": {"kind": "multi", "namespace": "t__o", "key": ["addr"]},
                "u": {"kind": "unique", "namespace": "t__u", "key": "str"},
            },
        }
    },
    "snapshot_maps": {"s": {"key": ["str"], "checkpoints": "s__cp", "changelog": "s__cl"}},
    "snapshot_items": {"si": {"checkpoints": "si__cp", "changelog": "si__cl"}},
    "deques": {"d": {}},
}

FIELDS = [
    ("indexed_maps", "t", "indexes", "o", "namespace"),
    ("indexed_maps", "t", "indexes", "u", "namespace"),
    ("snapshot_maps", "s", "checkpoints"),
    ("snapshot_maps", "s", "changelog"),
    ("snapshot_items", "si", "checkpoints"),
    ("snapshot_items", "si", "changelog"),
]
BAD = [5, 0, -1, 1e12, 10**12, [1, 2], [], {}, None, True, 1.5, "\ud800", "x" * 70000]


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    at = doc
    for step in path[:-1]:
        at = at[step]
    at[path[-1]] = value
    return doc


def test_the_base_schema_decodes() -> None:
    assert cw.decode_state([], BASE) == []


@pytest.mark.parametrize("field", FIELDS, ids=".".join)
@pytest.mark.parametrize("value", BAD, ids=lambda v: repr(v)[:12])
def test_a_namespace_that_is_no_string_is_named(field: tuple[str, ...], value: Any) -> None:
    where = f"{field[0]}.{field[1]}" + (f".indexes.{field[3]}" if len(field) == 5 else "")
    said = re.escape(f"schema entry {where}: {field[-1]} ")
    with pytest.raises(cw.SchemaError, match=said):
        cw.load_schema(_with(field, value))
    with pytest.raises(cw.SchemaError, match=said):
        cw.decode_state([], _with(field, value))


J = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10**13)
    | st.floats()
    | st.text(max_size=3)
    | st.sampled_from(["str", "u8", "addr", "multi", "unique", "json", "bytes", "\ud800"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)


def _paths(doc: dict[str, Any], at: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for k, v in doc.items():
        out.append((*at, k))
        if isinstance(v, dict):
            out += _paths(v, (*at, k))
    return out


@settings(max_examples=400, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(_paths(BASE)), J)
def test_any_json_in_any_field_loads_or_is_a_schema_error(path: tuple[str, ...], value: Any) -> None:
    try:
        schema = cw.load_schema(_with(path, value))
        cw.decode_state([], schema)
    except cw.SchemaError:
        pass


def test_definitions_refuse_a_namespace_that_is_none() -> None:
    for bad in (5, [1, 2], None):
        with pytest.raises(InvalidName):
            cw.MultiIndex(None, "t", bad, key="str")  # type: ignore[arg-type]
        with pytest.raises(InvalidName):
            cw.UniqueIndex(None, bad, key="str")  # type: ignore[arg-type]
        with pytest.raises(InvalidName):
            cw.SnapshotMap("s", bad, "s__cl", key="str")  # type: ignore[arg-type]
        with pytest.raises(InvalidName):
            cw.SnapshotItem("si", "si__cp", bad)  # type: ignore[arg-type]
    with pytest.raises(KeyTooLarge):
        cw.UniqueIndex(None, "x" * 70000, key="str")


def test_cli_names_the_entry(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_with(("indexed_maps", "t", "indexes", "o", "namespace"), 5)))
    dump = tmp_path / "state.json"
    dump.write_text('{"models": []}')
    got = run("cosmwasm", "decode", str(dump), "--schema", str(schema), ok=False)
    assert got.returncode == 1 and got.stdout == ""
    assert got.stderr.startswith("error: schema entry indexed_maps.t.indexes.o: namespace must be a string")
    assert got.stderr.count("\n") == 1
