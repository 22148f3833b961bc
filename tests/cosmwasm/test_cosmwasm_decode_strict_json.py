"""Decoded values are RFC 8259 JSON and keep their value: a stored ``NaN`` or
``Infinity`` (which Python's ``json`` takes and serde_json refuses) is an
unknown row that says why, never a float ``nan``; a number no float holds
(``1e400``, ``1e-400``, an integer of 5000 digits) reads as its exact
``Decimal``; and ``keyspace cosmwasm decode --json`` prints strict JSON, every
number as the value it is (it printed ``NaN`` and ``Infinity``)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import cosmwasm as cw
from keyspace.cli import main

TOKEN_INFO = b"token_info"
BALANCE = b"\x00\x07balance"


def _refuse(name: str) -> Any:
    raise AssertionError(f"not strict JSON: {name}")


def strict_loads(text: str) -> Any:
    """RFC 8259 JSON only, numbers with fractions or exponents as Decimal."""
    return json.loads(text, parse_constant=_refuse, parse_float=Decimal)


def _value(raw: bytes) -> Any:
    (row,) = cw.decode_state([(TOKEN_INFO, raw)], "cw20")
    return row


@pytest.mark.parametrize("raw", [b"NaN", b"Infinity", b"-Infinity", b'{"a": [1, NaN]}', b"[-Infinity]"])
def test_nan_and_infinity_are_no_json(raw: bytes) -> None:
    row = _value(raw)
    assert row.kind == "unknown" and row.raw_value == raw
    assert row.error is not None and "is not JSON" in row.error and "RFC 8259" in row.error


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"1e400", Decimal("1e400")),
        (b"-1E+400", Decimal("-1e400")),
        (b"1e-400", Decimal("1e-400")),
        (b"[2.5e-400, 0.0, 0e9]", [Decimal("2.5e-400"), 0.0, 0.0]),
        (b"1" + b"0" * 5000, Decimal("1" + "0" * 5000)),
        (b"1.5", 1.5),
        (b'{"supply": 12345678901234567890123}', {"supply": 12345678901234567890123}),
    ],
)
def test_numbers_keep_their_value(raw: bytes, expected: Any) -> None:
    row = _value(raw)
    assert row.kind == "item" and row.error is None
    assert row.value == expected
    assert type(row.value) is type(expected)


def _dump(tmp_path: Path, pairs: list[tuple[bytes, bytes]]) -> Path:
    models = [{"key": k.hex(), "value": base64.b64encode(v).decode()} for k, v in pairs]
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"models": models}))
    return path


def test_cli_json_is_strict_and_keeps_the_number(tmp_path: Path) -> None:
    path = _dump(
        tmp_path,
        [
            (TOKEN_INFO, b'{"total_supply": 1e400, "tiny": 1e-400, "f": 1.5}'),
            (BALANCE + b"alice", b"NaN"),
            (BALANCE + b"bob", b"[Infinity]"),
            (BALANCE + b"carol", b'"7"'),
        ],
    )
    got = run("cosmwasm", "decode", str(path), "--schema", "cw20", "--json")
    lines = [strict_loads(line) for line in got.stdout.splitlines()]
    item = next(line for line in lines if line.get("collection") == "token_info")
    assert item["value"] == {"total_supply": Decimal("1e400"), "tiny": Decimal("1e-400"), "f": Decimal("1.5")}
    unknown = [line for line in lines if line.get("kind") == "unknown"]
    assert {base64.b64decode(u["value_base64"]) for u in unknown} == {b"NaN", b"[Infinity]"}
    assert all("RFC 8259" in u["error"] for u in unknown)
    assert lines[-1] == {"summary": {"token_info (item)": 1, "unknown": 2, "balance (map)": 1}}

    table = run("cosmwasm", "decode", str(path), "--schema", "cw20").stdout
    assert '{"total_supply":1E+400,"tiny":1E-400,"f":1.5}' in table
    assert "inf" not in table.lower().replace("token_info", "")


NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-999, 999).flatmap(lambda e: st.integers(1, 99).map(lambda m: f"{m}e{e}")),
)


def _text(tree: Any) -> str:
    if isinstance(tree, list):
        return "[" + ",".join(_text(t) for t in tree) + "]"
    return str(tree)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.recursive(NUMBERS, lambda inner: st.lists(inner, max_size=3), max_leaves=6), max_size=3))
def test_any_number_is_printed_as_the_value_it_is(tmp_path_factory: Any, values: list[Any]) -> None:
    """Whatever numbers a contract stored, ``--json`` prints strict JSON whose
    numbers equal the stored ones exactly (compared as decimals). The command
    runs in this process (its subprocess form is the test above)."""
    tmp = tmp_path_factory.mktemp("dump")
    pairs = [(BALANCE + f"a{i}".encode(), _text(v).encode()) for i, v in enumerate(values)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["cosmwasm", "decode", str(_dump(tmp, pairs)), "--schema", "cw20", "--json"]) == 0
    rows = [strict_loads(line) for line in out.getvalue().splitlines()[:-1]]
    assert [r["kind"] for r in rows] == ["map"] * len(values)
    for row, (_, raw) in zip(rows, pairs, strict=True):
        assert row["value"] == strict_loads(raw.decode())
        assert not any(isinstance(x, float) and not math.isfinite(x) for x in _leaves(row["value"]))


def _leaves(tree: Any) -> list[Any]:
    return [x for t in tree for x in _leaves(t)] if isinstance(tree, list) else [tree]
