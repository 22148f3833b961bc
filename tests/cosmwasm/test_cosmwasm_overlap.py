"""An Item whose name is the stored key of a Map entry is that entry, byte for
byte, exactly as in cw-storage-plus: ``Item::new(k)`` stores at the raw bytes of
``k`` and ``Map::new(ns)`` at ``u16be(len ns) ns k1`` (reference/encodings.md,
cw-storage-plus §2(a)). Bound to one storage they read and write one entry;
decode_state warns when a schema holds such an item, and the keyspace cosmwasm
decode command prints the warning. The examples of docs/cosmwasm.md that
state this run here as written."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace import cosmwasm as cw
from keyspace.cli import main
from keyspace.collections import COSMWASM, TUPLE, Item, Map

SHARED = bytes.fromhex("0007") + b"balance" + b"alice"
"""``namespace_with_key([b"balance"], b"alice")``: the entry ``"alice"`` of the map
``balance``, and the item of that name."""

ROOT = Path(__file__).resolve().parent.parent.parent


def contract_storage() -> keyspace.Scope:
    """The raw root of a length-prefixed keyspace: the store holds exactly the
    contract's keys."""
    return keyspace.open("memory:", scheme="length-prefixed", leaf_depth=0).scope()


def stored(storage: keyspace.Scope) -> list[tuple[bytes, bytes]]:
    return list(storage.keyspace.store.scan())


def test_the_item_and_the_map_entry_have_the_same_stored_key() -> None:
    balances = cw.Map("balance", key="addr")
    assert SHARED == b"\x00\x07balancealice"
    assert balances.key("alice") == SHARED
    assert cw.namespace_with_key([b"balance"], b"alice") == SHARED
    assert cw.Item(SHARED).storage_key == SHARED
    assert cw.Item(SHARED.decode()).storage_key == SHARED  # a str name is its UTF-8
    assert cw.decompose(SHARED, balances) == "alice"
    assert cw.decompose(SHARED, cw.Item(SHARED)) == ()
    # the empty key of the map and the item named by the namespace's prefix alone
    assert cw.Map("balance", key="str").key("") == cw.Item(b"\x00\x07balance").storage_key


def test_bound_to_one_storage_they_read_and_write_one_entry() -> None:
    storage = contract_storage()
    balances = cw.Map("balance", key="addr").bind(storage)
    item = cw.Item(SHARED).bind(storage)

    balances.save("alice", "100")
    assert stored(storage) == [(SHARED, b'"100"')]
    assert item.load() == "100"

    item.save({"n": 7})
    assert stored(storage) == [(SHARED, b'{"n":7}')]
    assert balances.load("alice") == {"n": 7}
    assert list(balances.items()) == [("alice", {"n": 7})]  # the item is among the map's entries

    balances.remove("alice")
    assert stored(storage) == [] and item.may_load() is None

    item.save("x")
    balances.clear()  # the map's namespace range holds the item
    assert stored(storage) == [] and not item.exists()


@pytest.mark.parametrize("scheme", ["sublevel", "scopehash", "tuple"])
def test_in_a_scope_of_any_scheme_the_overlap_is_among_the_scope_keys(scheme: str) -> None:
    """The CosmWasm layout on a nested scope: the scope's keys are the contract's
    bytes, so the item and the entry are one scope key there too."""
    with keyspace.open("memory:", scheme=scheme) as ks:
        scope = ks.scope("contract")
        balances = Map(scope, "balance", key="str", layout=COSMWASM)
        item = Item(scope, SHARED, layout=COSMWASM)
        balances.save("alice", 1)
        assert item.load() == 1
        item.save(2)
        assert balances.load("alice") == 2
        assert list(scope.items()) == [(SHARED, b"2")]


def test_under_the_tuple_layout_they_never_meet() -> None:
    with keyspace.open("memory:") as ks:
        scope = ks.scope("app")
        balances = Map(scope, "balance", key="str", layout=TUPLE)
        item = Item(scope, SHARED, layout=TUPLE)
        balances.save("alice", 1)
        assert not item.exists()
        item.save(2)
        assert balances.load("alice") == 1 and item.load() == 2


@pytest.mark.parametrize(
    ("definition", "name"),
    [
        (cw.Map("balance", key="addr"), "balance"),
        (cw.Deque("balance"), "balance"),
        (cw.SnapshotMap("members", "members__checkpoints", "balance", key="addr"), "balance"),
    ],
    ids=["map", "deque", "snapshot-changelog"],
)
def test_decode_state_warns_of_an_item_in_a_collection_namespace(definition: Any, name: str) -> None:
    schema = cw.Schema([cw.Item(SHARED.decode()), definition])
    with pytest.warns(cw.SchemaWarning, match=re.escape(repr(name))) as caught:
        rows = cw.decode_state([(SHARED, b'"100"')], schema)
    assert len(caught) == 1
    assert "'\\x00\\x07balancealice'" in str(caught[0].message)
    assert rows[0].kind == "item" and rows[0].collection == SHARED.decode() and rows[0].value == "100"


def test_no_warning_where_no_item_lies_in_a_namespace() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for shipped in cw.SHIPPED_SCHEMAS:
            cw.decode_state([], shipped)
        near = [cw.Item(b"\x00\x07balanc"), cw.Item(b"\x00\x08balancex"), cw.Item(b"\x00"), cw.Item(b"")]
        cw.decode_state([], cw.Schema([*near, cw.Map("balance", key="addr")]))


def test_the_cli_prints_the_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps({"items": {SHARED.decode(): "json"}, "maps": {"balance": {"key": ["addr"]}}})
    )
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"models": [{"key": SHARED.hex(), "value": "IjEwMCI="}]}))
    assert main(["cosmwasm", "decode", str(state), "--schema", str(schema), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("warning: item ") and "'balance'" in err and err.count("\n") == 1
    assert json.loads(out.splitlines()[0])["kind"] == "item"


def test_the_documented_example_runs_as_written() -> None:
    """docs/cosmwasm.md: the CosmWasm definitions, then the overlap shown on them."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs/cosmwasm.md").read_text("utf-8"), re.S)
    definitions = next(b for b in blocks if 'cw.Map("balance"' in b)
    overlap = next(b for b in blocks if 'balancealice").storage_key' in b)
    namespace: dict[str, Any] = {}
    exec(compile(definitions + overlap, "docs/cosmwasm.md", "exec"), namespace)
    assert namespace["item"].load() == "7"
    assert namespace["balances"].bind(namespace["storage"]).load("alice") == "7"
    assert namespace["balances"].key("alice") == namespace["cw"].Item(SHARED).storage_key
    raw = dict(namespace["storage"].items())
    assert raw[SHARED] == b'"7"'
