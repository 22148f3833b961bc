"""Every vector of cw-storage-plus's and cosmwasm-std's own tests, through the
public names of keyspace.cosmwasm (tests/data/cosmwasm/*.json, copied from the
reference files; each record cites the source line it was taken from)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace import cosmwasm
from keyspace.errors import DecodeError, KeyTooLarge

DATA = Path(__file__).parent.parent / "data" / "cosmwasm"
CSP = json.loads((DATA / "vectors.json").read_text())
STD = json.loads((DATA / "std_vectors.json").read_text())

# cw-storage-plus before v0.11 (this commit) stored signed ints without the sign flip
_LEGACY_COMMITS = ("61d0a58be30a",)

_RUST = {
    "&[u8]": "bytes",
    "Vec<u8>": "bytes",
    "&str": "str",
    "String": "str",
    "Addr": "addr",
    "U32Key": "u32",
}


def _spec(rust: str) -> Any:
    """A key spec from a Rust key type (``(&str, u32, &[u8])``, ``IntKeyOld<i8>``)."""
    rust = rust.strip()
    old = re.fullmatch(r"IntKeyOld<(\w+)>", rust)
    if old:
        return old.group(1)
    if rust.startswith("(") and rust.endswith(")"):
        parts, depth, cur = [], 0, ""
        for ch in rust[1:-1]:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "("
            depth -= ch == ")"
            cur += ch
        parts.append(cur)
        return tuple(_spec(p) for p in parts)
    return _RUST.get(rust, rust)


def _legacy(v: dict[str, Any]) -> bool:
    return "IntKeyOld" in v["key_type"] or any(c in v["source"] for c in _LEGACY_COMMITS)


def _value(spec: Any, key: Any) -> Any:
    """The Python key for a JSON key of ``spec`` (bytes from text, ints from text)."""
    if isinstance(spec, tuple):
        return tuple(_value(s, k) for s, k in zip(spec, key, strict=True))
    if spec == "bytes":
        return key.encode() if isinstance(key, str) else bytes(key)
    if spec[0] in "ui":
        return int(key)
    return key


def _raw(key: Any) -> bytes:
    if isinstance(key, dict):
        if "repeat_hex" in key:
            return bytes.fromhex(key["repeat_hex"]) * key["len"]
        return bytes.fromhex(key["hex"])
    return key.encode()


def _ids(vectors: list[dict[str, Any]]) -> list[str]:
    return [v["source"].split(":", 1)[1] + f"[{v['kind']}]" for v in vectors]


def _root() -> keyspace.Scope:
    return keyspace.open("memory:", scheme="length-prefixed", leaf_depth=0).scope()


def _check_slices(stored: bytes, slices: list[dict[str, Any]]) -> None:
    for s in slices:
        rng = s["range"]
        if rng == "len":
            assert len(stored) == eval(str(s["value"]), {"__builtins__": {}})  # "6+4+2"
            continue
        lo_text, hi_text = rng.split("..")
        lo = eval(lo_text or "0", {"__builtins__": {}})
        part = stored[lo : eval(hi_text, {"__builtins__": {}})] if hi_text else stored[lo:]
        if "utf8" in s:
            assert part == s["utf8"].encode()
        elif "hex" in s:
            assert part == bytes.fromhex(s["hex"])
        else:
            m = re.fullmatch(r"(\d+)(\w+)\.to_cw_bytes\(\)", s["expr"])
            assert m is not None
            assert part == cosmwasm.to_cw_bytes(m.group(2), int(m.group(1)))


def _csp(v: dict[str, Any]) -> None:
    kind, legacy = v["kind"], _legacy(v)
    expected = None if v.get("stored_key_hex") is None else bytes.fromhex(v["stored_key_hex"])
    if kind == "element" and v["key_type"].startswith("length="):
        assert cosmwasm.encode_length(v["key"]) == expected
    elif kind == "element":
        assert cosmwasm.to_cw_bytes(v["key_type"], int(v["key"]), legacy_signed=legacy) == expected
    elif kind == "decode":
        spec = _spec(v["key_type"])
        got = cosmwasm.from_slice(spec, expected or b"", legacy_signed=legacy)
        assert got == int(v["decoded_value"])
    elif kind == "decode_error":
        with pytest.raises(DecodeError):
            cosmwasm.from_slice(_spec(v["key_type"]), expected or b"")
    elif kind == "joined_key":
        assert cosmwasm.joined_key(_spec(v["key_type"]), v["key"]) == expected
    elif kind in ("segments", "prefix_segments"):
        spec = _spec(v["key_type"])
        fn = cosmwasm.key if kind == "segments" else cosmwasm.prefix
        got = fn(spec, _value(spec, v["key"]), legacy_signed=legacy)
        assert got == [bytes.fromhex(h) for h in v["segments_hex"]]
    elif kind == "full" and v["collection"].startswith(("Prefix::new", "IndexPrefix::new")):
        ns, sub = v["key"][0], v["key"][1]
        m = cosmwasm.Map(ns, key=("u8", "bytes"))
        assert m.prefix_key(sub[0]) == expected
    elif kind == "full" and v["collection"].startswith("Item"):
        root = _root()
        item = cosmwasm.Item(v["namespace"])
        item.bind(root).save(int(v["stored_value_utf8"]))
        assert item.storage_key == expected
        assert list(root.keyspace.store.scan()) == [(expected, v["stored_value_utf8"].encode())]
    elif kind == "slice":
        spec = _spec(v["key_type"])
        stored = cosmwasm.Map(v["namespace"], key=spec).key(_value(spec, v["key"]))
        _check_slices(stored, v["slice"])
    elif kind == "range_remainder":
        spec = _spec(v["key_type"])
        remainders = [bytes.fromhex(h) for h in v["remainders_hex"]]
        definition = cosmwasm.Map(v["namespace"], key=spec)
        m = definition.bind(_root())
        if v["key"] is None:
            for i, r in enumerate(reversed(remainders)):
                m.save(r, i)
            assert list(m.keys_raw()) == remainders
            return
        (p,) = v["key"]
        p = _value(spec[0], p)
        for i, r in enumerate(reversed(remainders)):
            m.save((p, r), i)
        # neighbours that a sloppy prefix range would pick up
        other = p + b"x" if isinstance(p, bytes) else p + 1
        m.save((other, remainders[0]), 99)
        assert list(m.prefix(p).keys_raw()) == remainders
        assert list(m.prefix(p).keys()) == remainders
        assert len(m) == len(remainders) + 1
    else:
        raise AssertionError(f"vector kind {kind} of {v['collection']} is not tested")


def _std(v: dict[str, Any]) -> None:
    kind, coll = v["kind"], v["collection"]
    expected = None if v.get("stored_key_hex") is None else bytes.fromhex(v["stored_key_hex"])
    if coll.startswith("encode_length"):
        if kind == "panic":
            with pytest.raises(KeyTooLarge):
                cosmwasm.encode_length(v["key"])
        else:
            assert cosmwasm.encode_length(v["key"]) == expected
    elif coll == "to_length_prefixed":
        raw = _raw(v["key"])
        if kind == "panic":
            with pytest.raises(KeyTooLarge):
                cosmwasm.to_length_prefixed(raw)
        elif kind == "slice":
            got = cosmwasm.to_length_prefixed(raw)
            _check_slices(got, v["slice"])
        else:
            assert cosmwasm.to_length_prefixed(raw) == expected
    elif coll.startswith("to_length_prefixed_nested =="):
        for k in v["key"]:
            assert cosmwasm.to_length_prefixed_nested([k.encode()]) == cosmwasm.to_length_prefixed(k.encode())
    elif coll.startswith("to_length_prefixed_nested"):
        parts = [_raw(k) for k in v["key"]]
        got = cosmwasm.to_length_prefixed_nested(parts)
        if kind == "slice":
            offsets = [0, 2 + len(parts[0]), 2 + len(parts[0]) + 2 + len(parts[1])]
            assert [got[o : o + 2] for o in offsets] == [bytes.fromhex(h) for h in v["slice_hex"]]
            assert len(got) == sum(len(p) + 2 for p in parts)
        else:
            assert got == expected
    elif coll == "namespace_with_key" or "PrefixedStorage" in coll:
        ns = v["namespace"] if isinstance(v["namespace"], list) else [v["namespace"]]
        assert cosmwasm.namespace_with_key([n.encode() for n in ns], _raw(v["key"])) == expected
    elif coll.startswith("namespace_upper_bound"):
        assert cosmwasm.namespace_upper_bound(_raw(v["key"])) == expected
    else:
        raise AssertionError(f"vector {kind} of {coll} is not tested")


@pytest.mark.parametrize("vector", CSP, ids=_ids(CSP))
def test_cw_storage_plus_vector(vector: dict[str, Any]) -> None:
    _csp(vector)


@pytest.mark.parametrize("vector", STD, ids=_ids(STD))
def test_cosmwasm_std_vector(vector: dict[str, Any]) -> None:
    _std(vector)


def test_every_vector_file_is_complete() -> None:
    assert len(CSP) == 91
    assert len(STD) == 40
