"""On the root scope of a length-prefixed keyspace the collections' keys are
cw-storage-plus's bytes, raw in the store; the one other record is keyspace's
own layout record under ``ff ff "keyspace-layout"``, which the root scope does
not list (docs/collections.md)."""

from __future__ import annotations

from pathlib import Path

import keyspace
from keyspace import cosmwasm as cw


def test_root_scope_holds_a_contracts_keys_beside_the_layout_record(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db", scheme="length-prefixed") as ks:
        root = ks.scope()
        cw.Map("balance", key="addr").bind(root).save("alice", "100")
        cw.Item("config").bind(root).save({"a": 1})
        contract = [(b"\x00\x07balancealice", b'"100"'), (b"config", b'{"a":1}')]
        assert list(root.scope(key="bytes", value="bytes").items()) == contract
        assert [kv for kv in ks.store.scan(b"") if not kv[0].startswith(b"\xff\xff")] == contract
        assert [k for k, _ in ks.store.scan(b"") if k.startswith(b"\xff\xff")] == [
            b"\xff\xffkeyspace-layout\x00"
        ]
