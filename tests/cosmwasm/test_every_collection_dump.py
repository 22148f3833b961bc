"""A contract state written through every collection kind of keyspace.cosmwasm
(IndexedSnapshotMap and DequeMap included), dumped as ``wasmd query wasm
contract-state all -o json`` prints it, decodes back with its schema: no
unknown row, every row of the kind and key it was written as."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import keyspace
from keyspace import cosmwasm as cw

SCHEMA: dict[str, Any] = {
    "items": {"config": "json"},
    "maps": {"balance": {"key": ["addr"]}, "stamps": {"key": ["Timestamp", "bytes4"]}},
    "indexed_maps": {
        "tokens": {
            "key": ["str"],
            "indexes": {
                "owner": {"kind": "multi", "namespace": "tokens__owner", "key": ["addr"]},
                "serial": {"kind": "unique", "namespace": "tokens__serial", "key": ["u32"]},
            },
        }
    },
    "deques": {"queue": {"value": "json"}},
    "snapshot_maps": {
        "members": {"key": ["addr"], "checkpoints": "members__check", "changelog": "members__change"}
    },
    "snapshot_items": {"total": {"checkpoints": "total__check", "changelog": "total__change"}},
    "indexed_snapshot_maps": {
        "groups": {
            "key": ["str", "u64"],
            "checkpoints": "groups__check",
            "changelog": "groups__change",
            "indexes": {
                "admin": {"kind": "multi", "namespace": "groups__admin", "key": ["addr"]},
                "code": {"kind": "unique", "namespace": "groups__code", "key": ["u16"]},
            },
        }
    },
    "deque_maps": {"inbox": {"key": ["addr", "u8"]}},
}


def _write_state(storage: keyspace.Scope) -> None:
    cw.Item("config").bind(storage).save({"owner": "alice"})
    cw.Map("balance", key="addr").bind(storage).save("alice", "100")
    cw.Map("stamps", key=("Timestamp", "bytes4")).bind(storage).save(
        (1_700_000_000 * 10**9, b"\x00\x01\x02\x03"), 1
    )
    tokens = cw.IndexedMap(
        "tokens",
        {
            "owner": cw.MultiIndex(lambda t: t["owner"], "tokens", "tokens__owner", key="addr"),
            "serial": cw.UniqueIndex(lambda t: t["serial"], "tokens__serial", key="u32"),
        },
        key="str",
    ).bind(storage)
    tokens.save("t1", {"owner": "alice", "serial": 1})
    tokens.save("t2", {"owner": "bob", "serial": 2})
    queue = cw.Deque("queue").bind(storage)
    queue.push_back("x")
    queue.push_front("w")
    members = cw.SnapshotMap("members", "members__check", "members__change", "selected", key="addr").bind(
        storage
    )
    members.add_checkpoint(5)
    members.save("alice", 3, 5)
    members.save("alice", 4, 6)
    total = cw.SnapshotItem("total", "total__check", "total__change").bind(storage)
    total.save(7, 1)
    total.save(9, 2)
    groups = cw.IndexedSnapshotMap(
        "groups",
        "groups__check",
        "groups__change",
        "every_block",
        {
            "admin": cw.MultiIndex(lambda g: g["admin"], "groups", "groups__admin", key="addr"),
            "code": cw.UniqueIndex(lambda g: g["code"], "groups__code", key="u16"),
        },
        key=("str", "u64"),
    ).bind(storage)
    groups.add_checkpoint(1)
    groups.save(("g", 1), {"admin": "carol", "code": 7}, 1)
    groups.save(("g", 1), {"admin": "dave", "code": 8}, 2)
    groups.remove(("g", 1), 3)
    groups.save(("h", 2), {"admin": "erin", "code": 9}, 3)
    inbox = cw.DequeMap("inbox", key=("addr", "u8")).bind(storage)
    inbox.deque(("alice", 1)).push_back({"msg": "hi"})
    inbox.deque(("alice", 1)).push_front({"msg": "first"})
    inbox.deque(("bob", 2)).push_back("yo")


def _dump(ks: Any) -> str:
    models = [
        {"key": k.hex(), "value": base64.b64encode(v).decode()}
        for k, v in ks.store.scan()
        if not k.startswith(b"\xff\xff")  # keyspace's own layout record, not contract state
    ]
    return json.dumps({"models": models, "pagination": {"next_key": None, "total": "0"}})


def test_every_collection_kind_decodes_with_no_unknown_rows() -> None:
    ks = keyspace.open("memory:", scheme="length-prefixed")
    _write_state(ks.scope())
    rows = cw.decode_state(cw.models_from_dump(_dump(ks)), SCHEMA)
    unknown = [r for r in rows if r.kind == "unknown"]
    assert unknown == []
    kinds = {r.kind for r in rows}
    assert kinds >= {
        "item",
        "map",
        "indexed_map",
        "multi_index",
        "unique_index",
        "deque",
        "deque_head",
        "deque_tail",
        "snapshot_map",
        "snapshot_item",
        "indexed_snapshot_map",
        "changelog",
        "checkpoints",
        "deque_map",
    }
    found = {(r.collection, r.kind, r.key): r.value for r in rows}
    assert found[("groups", "indexed_snapshot_map", ("h", 2))] == {"admin": "erin", "code": 9}
    assert found[("groups__change", "changelog", ("g", 1, 2))] == {"old": {"admin": "carol", "code": 7}}
    assert found[("groups__check", "checkpoints", (1,))] == 1
    assert found[("groups__admin", "multi_index", ("erin", "h", 2))] == len(b"\x00\x01h") + 8
    assert found[("inbox", "deque_map", ("alice", 1, 0))] == {"msg": "hi"}
    assert found[("inbox", "deque_map", ("alice", 1, 0xFFFFFFFF))] == {"msg": "first"}
    assert found[("inbox", "deque_head", ("alice", 1))] == 0xFFFFFFFF
    assert found[("inbox", "deque_tail", ("bob", 2))] == 1
    assert found[("members__change", "changelog", ("alice", 5))] == {"old": None}
    assert ("members__change", "changelog", ("alice", 6)) not in found  # selected: once per checkpoint
    assert found[("stamps", "map", (1_700_000_000 * 10**9, b"\x00\x01\x02\x03"))] == 1


def test_a_schema_without_the_new_sections_leaves_their_rows_unknown() -> None:
    """The counter-check: the same dump with a schema that lacks the deque map
    and the indexed snapshot map reports their rows as unknown."""
    ks = keyspace.open("memory:", scheme="length-prefixed")
    _write_state(ks.scope())
    partial = {k: v for k, v in SCHEMA.items() if k not in ("deque_maps", "indexed_snapshot_maps")}
    rows = cw.decode_state(cw.models_from_dump(_dump(ks)), partial)
    unknown = {bytes(r.raw_key[2 : 2 + r.raw_key[1]]) for r in rows if r.kind == "unknown"}
    assert unknown == {
        b"inbox",
        b"groups",
        b"groups__check",
        b"groups__change",
        b"groups__admin",
        b"groups__code",
    }


def test_deque_map_keys_are_its_definition_keys() -> None:
    """DequeMap's documented bytes: the map's prefix for the key, then the
    position (u32 big-endian) or h/t."""
    inbox = cw.DequeMap("inbox", key=("addr", "u8"))
    prefix = b"\x00\x05inbox" + b"\x00\x05alice" + b"\x00\x01\x01"
    assert inbox.prefix_key(("alice", 1)) == prefix
    assert inbox.item_key(("alice", 1), 7) == prefix + b"\x00\x00\x00\x07"
    assert inbox.head_key(("alice", 1)) == prefix + b"h"
    assert inbox.tail_key(("alice", 1)) == prefix + b"t"
    ks = keyspace.open("memory:", scheme="length-prefixed")
    d = inbox.bind(ks.scope()).deque(("alice", 1))
    d.push_back(5)
    assert ks.store.get(inbox.item_key(("alice", 1), 0)) == b"5"
    assert ks.store.get(inbox.tail_key(("alice", 1))) == b"\x00\x00\x00\x01"


def test_the_new_schema_sections_refuse_entries_missing_their_fields() -> None:
    with pytest.raises(cw.SchemaError, match=r"deque_maps\.inbox needs a 'key'"):
        cw.load_schema({"deque_maps": {"inbox": {"value": "json"}}})
    with pytest.raises(cw.SchemaError, match=r"indexed_snapshot_maps\.groups needs 'checkpoints'"):
        cw.load_schema({"indexed_snapshot_maps": {"groups": {"key": ["str"], "changelog": "c"}}})
    with pytest.raises(cw.SchemaError, match="two collections"):
        cw.decode_state([], {"deque_maps": {"q": {"key": ["str"]}}, "deques": {"q": {}}})
