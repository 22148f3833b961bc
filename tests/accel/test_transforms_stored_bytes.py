"""The C layout transforms (``keyspace.schemes._layouts_accel.Transform``) of every layout
kind (raw, tuple, hex, u64len) and key codec against the pure-Python reference
layouts (``accelerate=False``): on stored keys that are valid, truncated,
mutated or random bytes, ``decode_chunk`` returns the same keys and values or
raises the same named error; ``stored`` builds the same bytes or raises the same
error for keys of every type. A crash check runs a seeded corpus in a child
process with the debug allocator, so a bad read ends that process, not the
test run."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.codecs import INT, STR, resolve_codec
from keyspace.schemes import (
    AsciiHex,
    Delimited,
    Naive,
    NulDelimited,
    Scheme,
    ScopeHash,
    Sublevel,
    TupleScheme,
)
from keyspace.schemes._layouts import Layout

try:
    from keyspace.schemes import _layouts_accel as accel
except ImportError:  # pragma: no cover - built without a C compiler
    accel = None

pytestmark = pytest.mark.skipif(accel is None, reason="keyspace.schemes._layouts_accel was not built")

SCHEMES: list[Scheme] = [
    TupleScheme(),
    AsciiHex(),
    Sublevel(),
    ScopeHash(),
    Naive(True),
    Delimited(),
    NulDelimited(),
]
CODECS = [None, "str", "int", "json", "bincode:u16", "bincode:i32", "bincode:u64", "bincode:String"]


class _Bytes(bytes):
    pass


class _Str(str):
    pass


KEYS: list[Any] = [
    b"",
    b"a",
    b"!",
    b"\x00",
    b"\x00\xff",
    b"\xff\x00",
    bytes(range(256)),
    _Bytes(b"k"),
    "",
    "a",
    "\x00",
    "é",
    "\ud800",
    _Str("k"),
    0,
    1,
    -1,
    33,
    65535,
    65536,
    -(2**31),
    2**64,
    True,
    1.5,
    math.nan,
    None,
    (),
    ("a", 1),
    bytearray(b"a"),
]


def routes(scheme: Scheme, codec_name: str | None) -> tuple[Any, Any, Layout]:
    """``(c, reference, c_layout)``: the ``(stored, decode_chunk)`` pair of the scope
    route for ``codec_name``, from the C layout and from the reference layout."""
    path = ("p",)
    c_layout, py_layout = scheme.layout(path), scheme.layout(path, accelerate=False)
    assert c_layout.accelerated and not py_layout.accelerated
    if codec_name is None:
        return (c_layout.stored, c_layout.decode_chunk), (py_layout.stored, py_layout.decode_chunk), c_layout
    codec = resolve_codec(codec_name)
    native = scheme.typed_keys and (codec is STR or codec is INT)
    c_stored, _, c_chunk = c_layout.route(codec, native, codec is STR)
    py_stored, _, py_chunk = py_layout.route(codec, native, codec is STR)
    return (c_stored, c_chunk), (py_stored, py_chunk), c_layout


def outcome(call: Any, arg: Any) -> tuple[Any, ...]:
    try:
        got = call(arg)
    except Exception as exc:
        return ("error", type(exc))
    return ("ok", repr(got))


CASES = [(s, c) for s in SCHEMES for c in CODECS]
CASE_IDS = [f"{s.name}-{type(s).__name__}-{c}" for s, c in CASES]


@pytest.mark.parametrize(("scheme", "codec"), CASES, ids=CASE_IDS)
def test_stored_keys_of_every_type_alike(scheme: Scheme, codec: str | None) -> None:
    (c_stored, _), (py_stored, _), _ = routes(scheme, codec)
    for key in KEYS:
        assert outcome(c_stored, key) == outcome(py_stored, key), key


CODE_BYTES = [0x00, 0x00, 0xFF, 0x01, 0x02, 0x05, 0x14, 0x15, 0x21, 0x30, 0x61, 0x66, 0xC3, 0xA9]


def _framed(p: tuple[int, bytes]) -> bytes:
    return p[0].to_bytes(8, "little") + p[1]  # a u64le length field, then bytes


tails = st.one_of(
    st.binary(max_size=24),
    st.lists(
        st.sampled_from(CODE_BYTES),
        max_size=16,
    ).map(bytes),
    st.tuples(st.integers(0, 300), st.binary(max_size=12)).map(_framed),
    st.tuples(st.integers(0, 2**64 - 1), st.binary(max_size=4)).map(
        lambda p: p[0].to_bytes(8, "little") + p[1]
    ),
)


def mutated(stored: bytes, plen: int, data: st.DataObject) -> bytes:
    raw = bytearray(stored)
    for _ in range(data.draw(st.integers(0, 2))):
        if len(raw) <= plen:
            break
        at = data.draw(st.integers(plen, len(raw) - 1))
        action = data.draw(st.sampled_from(["set", "delete", "insert", "truncate"]))
        byte = data.draw(st.sampled_from([0x00, 0xFF, 0x01, 0x02, 0x30, 0x61, 0x67, 0xC3, 0x80]))
        if action == "set":
            raw[at] = byte
        elif action == "delete":
            del raw[at]
        elif action == "insert":
            raw.insert(at, byte)
        else:
            del raw[at:]
    return bytes(raw)


@pytest.mark.parametrize(("scheme", "codec"), CASES, ids=CASE_IDS)
@settings(max_examples=40)
@given(data=st.data())
def test_chunks_of_valid_mutated_and_random_stored_keys_decode_alike(
    scheme: Scheme, codec: str | None, data: st.DataObject
) -> None:
    (_, c_chunk), (py_stored, py_chunk), layout = routes(scheme, codec)
    prefix = layout.prefix
    items: list[tuple[bytes, bytes]] = []
    for i in range(data.draw(st.integers(0, 6))):
        if data.draw(st.booleans()):
            key = data.draw(st.sampled_from(KEYS))
            try:
                stored = py_stored(key)
            except Exception:
                continue
            stored = mutated(stored, len(prefix), data)
        else:
            stored = prefix + data.draw(tails)
        items.append((stored, b"%d" % i))
    assert outcome(c_chunk, list(items)) == outcome(py_chunk, list(items)), items


_CRASH_CHECK = """
import random, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from test_transforms_stored_bytes import CASES, KEYS, outcome, routes

rnd = random.Random(20261123)
alphabet = [0x00, 0x00, 0xFF, 0x01, 0x02, 0x05, 0x14, 0x15, 0x21, 0x30, 0x61, 0x66, 0xC3, 0xA9, 0x80]
checked = 0
for scheme, codec in CASES:
    (c_stored, c_chunk), (py_stored, py_chunk), layout = routes(scheme, codec)
    valid = []
    for key in KEYS:
        try:
            valid.append(py_stored(key))
        except Exception:
            pass
    for _ in range(400):
        items = []
        for i in range(rnd.randrange(5)):
            if valid and rnd.random() < 0.5:
                stored = rnd.choice(valid)
                stored = stored[: rnd.randrange(len(stored) + 1)]
            else:
                n = rnd.randrange(20)
                tail = bytes(
                    rnd.choice(alphabet) if rnd.random() < 0.7 else rnd.randrange(256) for _ in range(n)
                )
                if rnd.random() < 0.3:
                    tail = rnd.choice([rnd.randrange(64), rnd.randrange(2**64)]).to_bytes(8, "little") + tail
                stored = layout.prefix + tail
            items.append((stored, b"v"))
        got, expected = outcome(c_chunk, items), outcome(py_chunk, items)
        assert got == expected, (scheme, codec, items, got, expected)
        checked += 1
print("checked", checked)
"""


def test_corrupt_stored_keys_never_crash_the_decoder() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _CRASH_CHECK,
            os.path.dirname(__file__),
            os.path.dirname(os.path.dirname(__file__)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONMALLOC": "debug"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["checked", str(400 * len(CASES))]
