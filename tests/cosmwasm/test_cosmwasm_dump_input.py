"""A contract-state dump is read as written, and anything else is refused by
name: a byte-order mark (PowerShell's ``Out-File``, Notepad) is skipped; text
that is no dump (empty, wasmd's own error message, a document without
``models``) is a ``DecodeError``, never "0 entries"; an entry without a base64
string value is named, while ``""`` is an empty value. Through the API and the
``keyspace cosmwasm decode`` command."""

from __future__ import annotations

import base64
import codecs
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import cosmwasm as cw
from keyspace.errors import DecodeError, InvalidArgument

MODELS = [
    {
        "key": b"contract_info".hex().upper(),
        "value": base64.b64encode(b'{"contract":"c","version":"1"}').decode(),
    },
    {"key": (b"\x00\x07balance" + b"wasm1alice").hex().upper(), "value": base64.b64encode(b'"5"').decode()},
    {"key": b"junk".hex(), "value": ""},
]
JSON_DUMP = json.dumps({"models": MODELS, "pagination": {"next_key": None, "total": "0"}}, indent=2)
YAML_DUMP = "".join(f'- key: {m["key"]}\n  value: "{m["value"]}"\n' for m in MODELS)
YAML_DUMP = f'models:\n{YAML_DUMP}pagination:\n  next_key: null\n  total: "0"\n'
PAIRS = [(bytes.fromhex(m["key"]), base64.b64decode(m["value"])) for m in MODELS]

NOT_DUMPS = {
    "empty": "",
    "blank": " \n\n",
    "bom only": "\ufeff",
    "wasmd error": "Error: rpc error: code = Unknown desc = contract: not found: invalid request\n",
    "yaml without models": 'pagination:\n  next_key: null\n  total: "0"\n',
    "json without models": '{"pagination": {"next_key": null}}',
}


@pytest.mark.parametrize("text", [JSON_DUMP, YAML_DUMP], ids=["json", "yaml"])
def test_a_byte_order_mark_is_skipped(text: str) -> None:
    assert cw.parse_dump(text) == PAIRS
    assert cw.parse_dump("\ufeff" + text) == PAIRS
    assert cw.decode_state(cw.models_from_dump("\ufeff" + text), "cw20") == cw.decode_state(
        cw.models_from_dump(text), "cw20"
    )


@pytest.mark.parametrize("name", sorted(NOT_DUMPS))
def test_text_that_is_no_dump_is_refused(name: str) -> None:
    with pytest.raises(DecodeError, match="not a contract-state dump"):
        cw.parse_dump(NOT_DUMPS[name])
    with pytest.raises(DecodeError, match="not a contract-state dump"):
        cw.models_from_dump(NOT_DUMPS[name])


def test_the_message_says_what_was_found() -> None:
    with pytest.raises(DecodeError, match=r"top-level keys \['Error'\]; first line 'Error: rpc error"):
        cw.parse_dump(NOT_DUMPS["wasmd error"])
    with pytest.raises(DecodeError, match=r"the text is empty"):
        cw.parse_dump("")
    with pytest.raises(DecodeError, match=r"keys \['pagination'\]"):
        cw.parse_dump(NOT_DUMPS["json without models"])


def test_an_empty_dump_is_one() -> None:
    assert cw.parse_dump('{"models": [], "pagination": {}}') == []
    assert cw.parse_dump("models: []\npagination:\n  total: '0'\n") == []
    assert cw.decode_state({"models": []}, "cw20") == []


@pytest.mark.parametrize("value", [None, False, 0, [], {}, 1.5, True], ids=repr)
def test_a_value_that_is_no_base64_string_is_named(value: Any) -> None:
    doc = {"models": [MODELS[0], {"key": "0102", "value": value}]}
    with pytest.raises(DecodeError, match=r"model 1 \(key 0102\): value .* is not a base64 string"):
        cw.parse_dump(json.dumps(doc))
    with pytest.raises(DecodeError, match=r"model 1 \(key 0102\)"):
        cw.decode_state(doc, "cw20")


def test_a_missing_value_is_named() -> None:
    doc = {"models": [{"key": "0102"}]}
    with pytest.raises(DecodeError, match=r"model 0 \(key 0102\) has no 'value'"):
        cw.parse_dump(json.dumps(doc))
    with pytest.raises(DecodeError, match=r"model 0 \(key 0102\) has no 'value'"):
        cw.decode_state(doc["models"], "cw20")
    with pytest.raises(DecodeError, match=r"model 0 \(key 0102\) has no 'value'"):
        cw.parse_dump('models:\n- key: "0102"\n')
    with pytest.raises(DecodeError, match=r"model 0 \(key 0102\): value None"):
        cw.parse_dump('models:\n- key: "0102"\n  value:\n')  # YAML null


def test_an_empty_string_is_an_empty_value() -> None:
    assert cw.parse_dump('{"models": [{"key": "0102", "value": ""}]}') == [(b"\x01\x02", b"")]
    assert cw.parse_dump('models:\n- key: "0102"\n  value: ""\n') == [(b"\x01\x02", b"")]
    (row,) = cw.decode_state([{"key": "0102", "value": ""}], "cw20")
    assert row.raw_value == b""


def test_decode_state_refuses_what_is_no_list_of_models() -> None:
    with pytest.raises(DecodeError, match="no 'models' list"):
        cw.decode_state({"pagination": {}}, "cw20")
    with pytest.raises(InvalidArgument, match="models_from_dump"):
        cw.decode_state(JSON_DUMP, "cw20")


@settings(max_examples=40)
@given(
    st.lists(st.tuples(st.binary(min_size=1, max_size=12), st.binary(max_size=12)), max_size=5),
    st.sampled_from(["", "\ufeff"]),
    st.booleans(),
)
def test_every_dump_reads_back_its_pairs(pairs: list[tuple[bytes, bytes]], bom: str, as_yaml: bool) -> None:
    models = [{"key": k.hex().upper(), "value": base64.b64encode(v).decode()} for k, v in pairs]
    if as_yaml:
        body = "".join(f'- key: "{m["key"]}"\n  value: "{m["value"]}"\n' for m in models)
        text = "models:\n" + body if models else "models: []\n"
    else:
        text = json.dumps({"models": models})
    assert cw.parse_dump(bom + text) == pairs


# -- the command ---------------------------------------------------------------------


def _decode(path: Path, *more: str, ok: bool = True) -> Any:
    return run("cosmwasm", "decode", str(path), "--schema", "cw20", *more, ok=ok)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_cli_reads_a_dump_with_a_byte_order_mark(tmp_path: Path, encoding: str) -> None:
    plain, marked = tmp_path / "plain.json", tmp_path / "marked.json"
    plain.write_bytes(JSON_DUMP.encode())
    marked.write_bytes(JSON_DUMP.encode(encoding))
    assert marked.read_bytes().startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    expected = _decode(plain, "--json").stdout
    assert json.loads(expected.splitlines()[-1])["summary"] == {
        "contract_info (item)": 1,
        "balance (map)": 1,
        "unknown": 1,
    }
    assert _decode(marked, "--json").stdout == expected
    yaml_marked = tmp_path / "marked.yaml"
    yaml_marked.write_bytes(YAML_DUMP.encode(encoding))
    assert "3 entries" in _decode(yaml_marked).stdout
    got = run("cosmwasm", "decode", "-", "--schema", "cw20", "--json", stdin="\ufeff" + JSON_DUMP)
    assert got.returncode == 0 and got.stdout == expected


@pytest.mark.parametrize("name", sorted(NOT_DUMPS))
def test_cli_refuses_text_that_is_no_dump(tmp_path: Path, name: str) -> None:
    path = tmp_path / "out.txt"
    path.write_text(NOT_DUMPS[name], encoding="utf-8")
    got = _decode(path, ok=False)
    assert got.returncode == 1 and got.stdout == ""
    assert got.stderr.startswith("error: not a contract-state dump") and got.stderr.count("\n") == 1
    got = run("cosmwasm", "decode", "-", "--schema", "cw20", stdin=NOT_DUMPS[name], ok=False)
    assert got.returncode == 1 and "not a contract-state dump" in got.stderr


@pytest.mark.parametrize("value", [None, False, 0, []], ids=repr)
def test_cli_names_an_entry_without_a_value(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"models": [MODELS[0], {"key": "0102", "value": value}]}))
    got = _decode(path, ok=False)
    assert got.returncode == 1 and got.stdout == ""
    assert got.stderr.startswith("error: model 1 (key 0102)")
    path.write_text(json.dumps({"models": [MODELS[0], {"key": "0102"}]}))
    assert "model 1 (key 0102) has no 'value'" in _decode(path, ok=False).stderr


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        ((b"k", None), "value None is NoneType"),
        ((b"k", 5), "value 5 is int"),
        ((5, b"v"), "key 5 is int"),
        (("k", b"v"), "key 'k' is str"),
        ((b"k", "v"), "value 'v' is str"),
    ],
)
def test_a_pair_that_is_not_bytes_is_named(pair: tuple[Any, Any], said: str) -> None:
    """Entries given as (key, value) pairs are bytes: ``(b"k", 5)`` was five NUL
    bytes, ``(b"k", None)`` a bare TypeError."""
    with pytest.raises(DecodeError, match=rf"model 1: {said}, not bytes"):
        cw.decode_state([(b"contract_info", b"{}"), pair], "cw20")
    rows = cw.decode_state([(bytearray(b"k"), memoryview(b"")), (b"k2", b"")], "cw20")
    assert [(r.raw_key, r.raw_value) for r in rows] == [(b"k", b""), (b"k2", b"")]


def test_a_dump_is_text() -> None:
    with pytest.raises(InvalidArgument, match="decode the bytes first"):
        cw.models_from_dump(JSON_DUMP.encode())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="decode the bytes first"):
        cw.parse_dump(None)  # type: ignore[arg-type]
