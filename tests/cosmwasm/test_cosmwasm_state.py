"""Contract-state dumps written through keyspace.cosmwasm collections and decoded
back with decode_state and the shipped schemas (JSON and YAML dumps), unknown
entries kept with their bytes, custom schemas, and the CLI command."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import cosmwasm as cw
from keyspace.cli import main
from keyspace.errors import DecodeError

ADDRS = st.text(alphabet="abcdef0123456789", min_size=1, max_size=10).map(lambda s: "wasm1" + s)


def new_storage() -> keyspace.Scope:
    """Contract storage: the raw root of a length-prefixed keyspace, whose stored
    bytes are exactly the contract's keys."""
    return keyspace.open("memory:", scheme="length-prefixed", leaf_depth=0).scope()


def dump(storage: keyspace.Scope) -> dict[str, Any]:
    """The store as ``wasmd query wasm contract-state all -o json`` prints it."""
    models = [
        {"key": k.hex().upper(), "value": base64.b64encode(v).decode()}
        for k, v in storage.keyspace.store.scan()
    ]
    return {"models": models, "pagination": {"next_key": None, "total": "0"}}


def yaml_dump(doc: dict[str, Any]) -> str:
    """The same as wasmd's ``-o yaml``: digit-only keys quoted."""
    lines = ["models:"]
    for m in doc["models"]:
        key = f'"{m["key"]}"' if m["key"].isdigit() else m["key"]
        lines += [f"- key: {key}", f"  value: {m['value']}"]
    return "\n".join([*lines, "pagination:", "  next_key: null", '  total: "0"', ""])


def contract_info(storage: keyspace.Scope, name: str) -> None:
    cw.Item("contract_info").bind(storage).save({"contract": name, "version": "1.0.1"})


def write_cw20(storage: keyspace.Scope, balances: dict[str, int], allowances: dict[Any, int]) -> None:
    contract_info(storage, "crate:cw20-base")
    cw.Item("token_info").bind(storage).save(
        {
            "name": "Coin",
            "symbol": "COIN",
            "decimals": 6,
            "total_supply": str(sum(balances.values())),
            "mint": None,
        }
    )
    balance = cw.Map("balance", key="addr").bind(storage)
    for a, n in balances.items():
        balance.save(a, str(n))
    allowance = cw.Map("allowance", key=("addr", "addr")).bind(storage)
    spender = cw.Map("allowance_spender", key=("addr", "addr")).bind(storage)
    for (owner, sp), n in allowances.items():
        allowance.save((owner, sp), {"allowance": str(n), "expires": {"never": {}}})
        spender.save((sp, owner), {"allowance": str(n), "expires": {"never": {}}})


@given(
    balances=st.dictionaries(ADDRS, st.integers(0, 10**30), max_size=8),
    allowances=st.dictionaries(st.tuples(ADDRS, ADDRS), st.integers(0, 10**6), max_size=5),
)
@settings(max_examples=40)
def test_cw20_dump_decodes_with_no_unknown_rows(balances: dict[str, int], allowances: dict[Any, int]) -> None:
    storage = new_storage()
    write_cw20(storage, balances, allowances)
    doc = dump(storage)
    rows = cw.decode_state(doc, "cw20")
    assert [r for r in rows if r.kind == "unknown"] == []
    assert len(rows) == len(doc["models"])
    got = {r.key[0]: int(r.value) for r in rows if r.collection == "balance"}
    assert got == balances
    got_allow = {r.key: int(r.value["allowance"]) for r in rows if r.collection == "allowance"}
    assert got_allow == allowances
    assert {r.key[::-1] for r in rows if r.collection == "allowance_spender"} == set(allowances)
    # the YAML form decodes to the same rows
    assert cw.decode_state(cw.models_from_dump(yaml_dump(doc)), cw.load_schema("cw20-base")) == rows


def test_cw721_and_cw4_dumps_decode_with_no_unknown_rows() -> None:
    nft = new_storage()
    contract_info(nft, "crate:cw721-base")
    cw.Item("num_tokens").bind(nft).save(3)
    cw.Item("minter").bind(nft).save("wasm1minter")
    tokens = cw.IndexedMap(
        "tokens",
        {"owner": cw.MultiIndex(lambda t: t["owner"], "tokens", "tokens__owner", key="addr")},
        key="str",
    ).bind(nft)
    for i, owner in enumerate(["alice", "bob", "alice"]):
        tokens.save(f"t{i}", {"owner": owner, "approvals": [], "token_uri": None, "extension": {}})
    tokens.save("t1", {"owner": "carol", "approvals": [], "token_uri": None, "extension": {}})
    cw.Map("operators", key=("addr", "addr")).bind(nft).save(("alice", "bob"), {"never": {}})
    rows = cw.decode_state(dump(nft)["models"], "cw721")
    assert [r for r in rows if r.kind == "unknown"] == []
    owners = sorted(r.key for r in rows if r.kind == "multi_index")
    assert owners == [("alice", "t0"), ("alice", "t2"), ("carol", "t1")]
    assert all(r.value == 2 for r in rows if r.kind == "multi_index")  # the pk length
    # the index entry is cw-storage-plus's own bytes
    assert b"\x00\x0dtokens__owner\x00\x05alicet0" in dict(nft.keyspace.store.scan())

    group = new_storage()
    contract_info(group, "crate:cw4-group")
    cw.Item("admin").bind(group).save("wasm1admin")
    members = cw.SnapshotMap("members", "members__checkpoints", "members__changelog", key="addr").bind(group)
    total = cw.SnapshotItem("total", "total__checkpoints", "total__changelog").bind(group)
    members.save("alice", 5, height=10)
    members.save("bob", 2, height=11)
    total.save(7, height=11)
    rows = cw.decode_state(dump(group), "cw4")
    assert [r for r in rows if r.kind == "unknown"] == []
    kinds = {(r.collection, r.kind) for r in rows}
    assert ("members__changelog", "changelog") in kinds and ("total", "snapshot_item") in kinds
    assert {r.key: r.value for r in rows if r.collection == "members__changelog"} == {
        ("alice", 10): {"old": None},
        ("bob", 11): {"old": None},
    }


def test_unknown_entries_are_kept_with_their_bytes() -> None:
    storage = new_storage()
    cw.Map("balance", key="addr").bind(storage).save("alice", "5")
    models = dump(storage)["models"]
    models.append({"key": "6A756E6B", "value": base64.b64encode(b"zz").decode()})  # b"junk"
    bad_u64 = b"\x00\x13members__checkpoints\x00\x01"  # a height of 2 bytes, not 8
    models.append({"key": bad_u64.hex(), "value": base64.b64encode(b"1").decode()})
    models.append({"key": b"\x00\x07balancebob".hex(), "value": base64.b64encode(b"{oops").decode()})
    rows = cw.decode_state(models, "cw4")
    unknown = [r for r in rows if r.kind == "unknown"]
    assert [r.raw_key for r in unknown] == [b"\x00\x07balancealice", b"junk", bad_u64, b"\x00\x07balancebob"]
    rows = cw.decode_state(models, "cw20")
    unknown = [r for r in rows if r.kind == "unknown"]
    assert [r.raw_key for r in unknown] == [b"junk", bad_u64, b"\x00\x07balancebob"]
    assert "not JSON" in (unknown[2].error or "")
    assert unknown[0].to_json() == {
        "collection": None,
        "kind": "unknown",
        "key_hex": "6a756e6b",
        "value_base64": "eno=",
    }
    assert cw.summarize(rows) == {"balance (map)": 1, "unknown": 3}


def test_custom_schema_with_deque_unique_index_bytes_and_legacy_keys() -> None:
    schema = {
        "legacy_signed_keys": True,
        "items": {"config": "json", "blob": "bytes"},
        "maps": {"scores": {"key": ["i32", "bytes"], "value": "str"}},
        "deques": {"queue": {"value": "json"}},
        "indexed_maps": {
            "users": {
                "key": ["u64"],
                "value": "json",
                "indexes": {"email": {"kind": "unique", "namespace": "users__email", "key": ["str"]}},
            }
        },
    }
    storage = new_storage()
    cw.Item("blob", value="bytes").bind(storage).save(b"\x00\x01")
    scores = cw.Map("scores", key=("i32", "bytes"), value="str", legacy_signed=True)
    scores.bind(storage).save((-1, b"\xff"), "low")
    assert scores.key((-1, b"\xff")) == b"\x00\x06scores\x00\x04\xff\xff\xff\xff\xff"
    q = cw.Deque("queue").bind(storage)
    q.push_back({"a": 1})
    q.push_front(0)
    users = cw.IndexedMap(
        "users", {"email": cw.UniqueIndex(lambda u: u["email"], "users__email", key="str")}, key="u64"
    ).bind(storage)
    users.save(7, {"email": "x@y"})
    rows = cw.decode_state(dump(storage), schema)
    assert [r for r in rows if r.kind == "unknown"] == []
    by_kind = {(r.collection, r.kind, r.key): r.value for r in rows}
    assert by_kind[("blob", "item", ())] == b"\x00\x01"
    assert by_kind[("scores", "map", (-1, b"\xff"))] == "low"
    assert by_kind[("queue", "deque", (0,))] == {"a": 1}
    assert by_kind[("queue", "deque", (0xFFFFFFFF,))] == 0
    assert by_kind[("queue", "deque_head", ())] == 0xFFFFFFFF
    assert by_kind[("queue", "deque_tail", ())] == 1
    entry = by_kind[("users__email", "unique_index", ("x@y",))]
    assert entry == {"pk": base64.b64encode((7).to_bytes(8, "big")).decode(), "value": {"email": "x@y"}}
    assert users.index("email").load("x@y") == (7, {"email": "x@y"})


@pytest.mark.parametrize(
    "schema",
    [
        {"maps": {"m": {"value": "json"}}},
        {"maps": {"m": {"key": ["u7"]}}},
        {"items": {"a": "yaml"}},
        {"tables": {}},
        {"maps": {"m": {"key": ["str"]}}, "deques": {"m": {}}},
        {
            "indexed_maps": {
                "t": {"key": ["str"], "indexes": {"o": {"kind": "x", "namespace": "o", "key": "str"}}}
            }
        },
    ],
)
def test_bad_schemas_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(cw.SchemaError):
        cw.decode_state([], schema)


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ({"legacy_signed_keys": "false"}, "legacy_signed_keys must be true or false, not 'false'"),
        ({"legacy_signed_keys": 0}, "legacy_signed_keys must be true or false"),
        (
            {"indexed_maps": {"t": {"key": ["str"], "indexes": {"o": "multi"}}}},
            "indexed_maps.t.indexes.o must",
        ),
        ({"indexed_maps": {"t": {"key": ["str"], "indexes": ["o"]}}}, "indexed_maps.t.indexes must"),
        (
            {"indexed_maps": {"t": {"key": ["str"], "indexes": {"o": {"kind": "multi", "key": "str"}}}}},
            "indexed_maps.t.indexes.o needs 'namespace'",
        ),
        ({"snapshot_maps": {"m": {"key": ["str"], "changelog": "c"}}}, "snapshot_maps.m needs 'checkpoints'"),
    ],
)
def test_a_bad_schema_entry_is_named_with_what_it_needs(schema: dict[str, Any], said: str) -> None:
    """``"legacy_signed_keys": "false"`` read as true (a truthy string), and an index
    spec that is not an object raised a bare AttributeError."""
    with pytest.raises(cw.SchemaError, match=re.escape(said)):
        cw.decode_state([], schema)


def test_bad_dumps_are_refused() -> None:
    with pytest.raises(DecodeError):
        cw.parse_dump('{"models": [{"key": "zz", "value": ""}]}')
    with pytest.raises(DecodeError):
        cw.parse_dump('{"models": [{"key": "00", "value": "!!"}]}')
    with pytest.raises(DecodeError):
        cw.parse_dump("models:\n- key 0001\n")
    assert cw.parse_dump("models: []\npagination:\n  total: '0'\n") == []
    assert cw.parse_dump("models:\n- value: 'eno='\n  key: \"0102\"\n") == [(b"\x01\x02", b"zz")]


def test_a_dump_or_schema_nested_past_the_parser_is_a_named_error(tmp_path: Path) -> None:
    """Python's JSON parser gives up on deep nesting with a RecursionError, which
    reached the caller (and the command's "unexpected RecursionError")."""
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text(deep)
    with pytest.raises(DecodeError, match="nested too deeply"):
        cw.parse_dump(deep)
    with pytest.raises(cw.SchemaError, match="nested too deeply"):
        cw.load_schema(tmp_path / "deep.json")
    (tmp_path / "ok.json").write_text('{"models": []}')
    for args in (
        [str(tmp_path / "deep.json"), "--schema", "cw20-base"],
        [str(tmp_path / "ok.json"), "--schema", str(tmp_path / "deep.json")],
    ):
        proc = run("cosmwasm", "decode", *args, ok=False)
        assert proc.returncode != 0 and "nested too deeply" in proc.stderr
        assert "unexpected" not in proc.stderr and "Traceback" not in proc.stderr


def test_decompose_names_the_collection_key() -> None:
    allowance = cw.Map("allowance", key=("addr", "addr"))
    stored = bytes.fromhex("0009616c6c6f77616e636500056f776e65727370656e646572")
    assert cw.decompose(stored, allowance) == ("owner", "spender")
    assert cw.decompose(b"token_info", cw.Item("token_info")) == ()
    with pytest.raises(DecodeError):
        cw.decompose(b"\x00\x07balancex", allowance)


def test_cli_decodes_a_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = new_storage()
    write_cw20(storage, {"wasm1alice": 5, "wasm1bob": 7}, {("wasm1alice", "wasm1bob"): 1})
    storage[b"junk"] = b"zz"
    doc = dump(storage)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(doc))
    assert main(["cosmwasm", "decode", str(path), "--schema", "cw20", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == len(doc["models"]) + 1
    assert {"collection": "balance", "kind": "map", "key": ["wasm1bob"], "value": "7"} in lines
    assert {"collection": None, "kind": "unknown", "key_hex": "6a756e6b", "value_base64": "eno="} in lines
    assert lines[-1]["summary"]["balance (map)"] == 2 and lines[-1]["summary"]["unknown"] == 1

    yaml_path = tmp_path / "state.yaml"
    yaml_path.write_text(yaml_dump(doc))
    assert main(["cosmwasm", "decode", str(yaml_path), "--schema", "cw20"]) == 0
    out = capsys.readouterr().out
    assert "balance" in out and '["wasm1alice", "wasm1bob"]' in out and "unknown: 1" in out

    assert main(["cosmwasm", "decode", str(tmp_path / "missing.json"), "--schema", "cw20"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot read dump") and err.count("\n") == 1
    assert main(["cosmwasm", "decode", str(path), "--schema", "cw99"]) == 1
    assert capsys.readouterr().err.startswith("error: cannot read schema 'cw99'")
    (tmp_path / "bad.json").write_text("{nope")
    assert main(["cosmwasm", "decode", str(tmp_path / "bad.json"), "--schema", "cw4"]) == 1
    assert capsys.readouterr().err.startswith("error: contract-state dump is not valid JSON")
