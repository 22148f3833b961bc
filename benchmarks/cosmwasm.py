"""``keyspace.cosmwasm.decode_state`` against a decoder written by hand for one
schema: entries per second on a generated cw721-base contract-state dump."""

from __future__ import annotations

import base64
import binascii
import gc
import json
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from keyspace import cosmwasm as cw

from ._harness import Comparison, Context, Ratio, Trial, workload

_ITEMS = {b"contract_info", b"nft_info", b"minter", b"num_tokens"}


def generate(n: int, seed: int = 7) -> list[dict[str, str]]:
    """``n`` entries of a cw721-base contract as ``contract-state all -o json``
    prints them: 4 items, then tokens, their owner index entries and operators
    (45 %, 45 %, 10 %), sorted by key."""
    rng = random.Random(seed)
    tokens = cw.Map("tokens", key="str")
    owners = cw.Map("tokens__owner", key=("addr", "str"))
    operators = cw.Map("operators", key=("addr", "addr"))
    addrs = [f"wasm1{rng.randbytes(19).hex()}" for _ in range(max(n // 50, 2))]
    pairs: dict[bytes, bytes] = {
        b"contract_info": b'{"contract":"crate:cw721-base","version":"0.15.0"}',
        b"nft_info": b'{"name":"Bench","symbol":"BNC"}',
        b"minter": b'"' + addrs[0].encode() + b'"',
    }
    count = (n - 4) * 45 // 100
    for i in range(count):
        tid, owner = f"token-{i:07d}", rng.choice(addrs)
        info = {"owner": owner, "approvals": [], "token_uri": f"ipfs://{i}", "extension": {}}
        pairs[tokens.key(tid)] = json.dumps(info, separators=(",", ":")).encode()
        pairs[owners.key((owner, tid))] = str(len(tid)).encode()
    while len(pairs) < n - 1:
        pairs[operators.key((rng.choice(addrs), rng.choice(addrs)))] = b'{"never":{}}'
    pairs[b"num_tokens"] = str(count).encode()
    return [{"key": k.hex().upper(), "value": base64.b64encode(v).decode()} for k, v in sorted(pairs.items())]


def by_hand(models: list[dict[str, str]]) -> list[tuple[Any, ...]]:
    """What an indexer writes without keyspace: this one schema's namespaces
    matched and split inline, with the same C hex, base64 and JSON routines."""
    out: list[tuple[Any, ...]] = []
    append = out.append
    b64 = binascii.a2b_base64
    parse = json.JSONDecoder().decode

    def loads(raw: bytes) -> Any:
        return parse(raw.decode())

    for m in models:
        key = bytes.fromhex(m["key"])
        value = b64(m["value"])
        if key in _ITEMS:
            append((key.decode(), "item", (), loads(value)))
            continue
        end = 2 + ((key[0] << 8) | key[1])
        ns, rest = key[2:end], key[end:]
        if ns == b"tokens":
            append(("tokens", "indexed_map", (rest.decode(),), loads(value)))
        elif ns == b"tokens__owner" or ns == b"operators":
            cut = 2 + ((rest[0] << 8) | rest[1])
            first, last = rest[2:cut].decode(), rest[cut:].decode()
            kind = "multi_index" if ns == b"tokens__owner" else "map"
            append((ns.decode(), kind, (first, last), loads(value)))
        else:
            append((None, "unknown", key, value))
    return out


def _timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes with the collector off (as the harness times)."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def _trial(fn: Callable[[], object], n: int) -> Callable[[], Trial]:
    def make() -> Trial:
        return Trial(fn, n)

    return make


@workload("cosmwasm")
def decode(ctx: Context) -> Iterator[Comparison]:
    """``decode_state(models, "cw721")`` vs :func:`by_hand` on 10^5 entries
    (ratio keyspace / by hand; lower is better). Informational (no target);
    the entries per second of both are in the notes."""
    n = ctx.n(100_000, 2_000)
    models = generate(n)
    schema = cw.load_schema("cw721")
    rows = cw.decode_state(models, schema)
    hand = by_hand(models)
    assert [(r.collection, r.kind, r.key, r.value) for r in rows] == hand
    assert not any(r.kind == "unknown" for r in rows)
    decoders = (
        ("decode_state", lambda: cw.decode_state(models, schema)),
        ("by hand", lambda: by_hand(models)),
    )
    for label, fn in decoders:
        best = min(_timed(fn) for _ in range(1 if ctx.quick else 3))
        ctx.note(f"{label}: {n / best:,.0f} entries/s on {n:,} entries (best of 3, collector off)")
    yield Comparison(
        "cosmwasm",
        f"decode {n} entries",
        {
            "keyspace": _trial(lambda: cw.decode_state(models, schema), n),
            "by hand": _trial(lambda: by_hand(models), n),
        },
        [Ratio("decode_state / by hand", "keyspace", "by hand")],
        rounds=None if ctx.quick else 5,
    )
