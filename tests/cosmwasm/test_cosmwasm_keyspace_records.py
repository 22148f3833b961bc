"""Contract state written through keyspace's cosmwasm collections, decoded: a
``LengthPrefixed`` keyspace that owns its store keeps its leaf-layout record
beside the contract's keys, and ``decode_state`` reports it as a
``keyspace_record`` row, not an unknown one; a keyspace opened with
``leaf_depth=0`` adds no entry at all, so the store holds exactly the keys a
contract would. Every collection kind, on LMDB and SQLite, through the API and
the ``keyspace cosmwasm decode`` command."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import cosmwasm as cw

SCHEMA: dict[str, Any] = {
    "items": {"config": "json"},
    "maps": {"balance": {"key": ["addr"]}},
    "indexed_maps": {
        "tokens": {
            "key": ["str"],
            "indexes": {
                "owner": {"kind": "multi", "namespace": "tokens__owner", "key": ["addr"]},
                "name": {"kind": "unique", "namespace": "tokens__name", "key": ["str"]},
            },
        }
    },
    "deques": {"queue": {}},
    "snapshot_maps": {"members": {"key": ["addr"], "checkpoints": "members__cp", "changelog": "members__cl"}},
    "snapshot_items": {"total": {"checkpoints": "total__cp", "changelog": "total__cl"}},
}

TOKENS = cw.IndexedMap(
    "tokens",
    {
        "owner": cw.MultiIndex(lambda t: t["owner"], "tokens", "tokens__owner", key="addr"),
        "name": cw.UniqueIndex(lambda t: t["name"], "tokens__name", key="str"),
    },
    key="str",
)


def write_contract(storage: keyspace.Scope, balances: dict[str, int]) -> None:
    """One of every collection kind, written as a contract would."""
    cw.Item("contract_info").bind(storage).save({"contract": "crate:demo", "version": "1.0.0"})
    cw.Item("config").bind(storage).save({"owner": "wasm1owner"})
    bal = cw.Map("balance", key="addr").bind(storage)
    for addr, amount in balances.items():
        bal.save(addr, str(amount))
    tokens = TOKENS.bind(storage)
    tokens.save("t1", {"owner": "wasm1alice", "name": "one"})
    tokens.save("t2", {"owner": "wasm1bob", "name": "two"})
    cw.Deque("queue").bind(storage).push_back({"job": 1})
    members = cw.SnapshotMap("members", "members__cp", "members__cl", key="addr").bind(storage)
    members.save("wasm1alice", 1, 10)
    members.save("wasm1alice", 2, 11)
    cw.SnapshotItem("total", "total__cp", "total__cl").bind(storage).save(3, 10)


def store_pairs(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan())


def as_models(pairs: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    models = [{"key": k.hex().upper(), "value": base64.b64encode(v).decode()} for k, v in pairs]
    return {"models": models, "pagination": {"next_key": None, "total": "0"}}


@pytest.fixture(params=["lmdb", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"lmdb://{tmp_path}/db" if request.param == "lmdb" else f"sqlite:///{tmp_path}/db.sqlite"


def test_the_layout_record_is_a_keyspace_record(url: str) -> None:
    with keyspace.open(url, scheme=keyspace.LengthPrefixed()) as ks:
        write_contract(ks.scope(), {"wasm1alice": 5})
        pairs = store_pairs(ks)
    assert (b"\xff\xffkeyspace-layout\x00", b"leaf") in pairs
    rows = cw.decode_state(as_models(pairs), SCHEMA)
    assert [r for r in rows if r.kind == "unknown"] == []
    (record,) = [r for r in rows if r.kind == "keyspace_record"]
    assert record.collection is None and record.key == () and record.value == "leaf"
    assert record.to_json() == {"collection": None, "kind": "keyspace_record", "key": [], "value": "leaf"}
    assert cw.summarize(rows)["keyspace_record"] == 1 and "unknown" not in cw.summarize(rows)


def test_a_nested_layout_record_names_its_scope() -> None:
    with keyspace.open("memory:", scheme=keyspace.LengthPrefixed()) as ks:
        cw.Map("balance", key="addr").bind(ks.scope("contract", b"\xfe")).save("wasm1a", "1")
        pairs = store_pairs(ks)
    (record,) = [r for r in cw.decode_state(pairs, SCHEMA) if r.kind == "keyspace_record"]
    assert record.key == ("contract", b"\xfe")


def test_an_unclaimed_key_elsewhere_stays_unknown() -> None:
    rows = cw.decode_state([(b"\xff\xffother", b"x"), (b"\xffkeyspacf", b"y")], SCHEMA)
    assert [r.kind for r in rows] == ["unknown", "unknown"]


def test_leaf_depth_zero_stores_exactly_the_contracts_keys(url: str) -> None:
    with keyspace.open(url, scheme=keyspace.LengthPrefixed(), leaf_depth=0) as ks:
        write_contract(ks.scope(), {"wasm1alice": 5, "wasm1bob": 7})
        pairs = store_pairs(ks)
    keys = [k for k, _ in pairs]
    assert not any(k.startswith(b"\xff") for k in keys)
    rows = cw.decode_state(as_models(pairs), SCHEMA)
    assert {r.kind for r in rows} >= {"item", "map", "indexed_map", "multi_index", "unique_index", "deque"}
    assert not [r for r in rows if r.kind in ("unknown", "keyspace_record")]
    # cw-storage-plus's bytes, as its own vectors give them:
    assert b"\x00\x07balancewasm1alice" in keys and b"config" in keys and b"contract_info" in keys
    assert b"\x00\x0dtokens__owner\x00\x0awasm1alicet1" in keys
    assert b"\x00\x05queue\x00\x00\x00\x00" in keys
    # Reopened the same way, the collections read it back.
    with keyspace.open(url, scheme=keyspace.LengthPrefixed(), leaf_depth=0) as ks:
        assert cw.Map("balance", key="addr").bind(ks.scope()).load("wasm1bob") == "7"
        assert next(iter(TOKENS.bind(ks.scope()).index("owner").prefix("wasm1bob").items()))[0] == "t2"
        assert store_pairs(ks) == pairs


@settings(max_examples=30, deadline=None)
@given(
    st.dictionaries(
        st.text("abc123", min_size=1, max_size=6).map(lambda s: "wasm1" + s), st.integers(0, 10**9)
    )
)
def test_leaf_depth_zero_adds_no_entry(balances: dict[str, int]) -> None:
    with keyspace.open("memory:", scheme=keyspace.LengthPrefixed(), leaf_depth=0) as ks:
        storage = ks.scope()
        cw.Item("contract_info").bind(storage).save({"contract": "c", "version": "1"})
        bal = cw.Map("balance", key="addr").bind(storage)
        for addr, amount in balances.items():
            bal.save(addr, str(amount))
        expected = {b"contract_info"} | {cw.Map("balance", key="addr").key(a) for a in balances}
        assert {k for k, _ in store_pairs(ks)} == expected


def test_cli_reports_the_record_as_keyspaces(tmp_path: Path, url: str) -> None:
    with keyspace.open(url, scheme=keyspace.LengthPrefixed()) as ks:
        write_contract(ks.scope(), {"wasm1alice": 5})
        pairs = store_pairs(ks)
    dump, schema = tmp_path / "state.json", tmp_path / "schema.json"
    dump.write_text(json.dumps(as_models(pairs)))
    schema.write_text(json.dumps(SCHEMA))
    got = run("cosmwasm", "decode", str(dump), "--schema", str(schema), "--json")
    lines = [json.loads(line) for line in got.stdout.splitlines()]
    assert {"collection": None, "kind": "keyspace_record", "key": [], "value": "leaf"} in lines
    summary = lines[-1]["summary"]
    assert summary["keyspace_record"] == 1 and "unknown" not in summary
    table = run("cosmwasm", "decode", str(dump), "--schema", str(schema)).stdout
    assert "(keyspace)" in table and "keyspace_record: 1" in table and "unknown" not in table
