"""Decoders on hostile bytes: every scheme's ``decode`` (with and without a depth)
and ``keyspace.tuples.unpack`` either return or raise :class:`DecodeError` — never
another exception, never a hang.

Two runs: Hypothesis on arbitrary bytes, and a deterministic corpus of 100,000
inputs (seeded random bytes of varied lengths, plus mutations of valid encodings:
truncations, flipped bytes, inserted ``00``/``ff``), each input under a time bound.
"""

from __future__ import annotations

import random
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import tuples
from keyspace.errors import DecodeError
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Naive, ScopeHash, Sublevel, TupleScheme

SCHEMES = [
    TupleScheme(),
    TupleScheme(raw_prefix=b"\x15\x01"),
    LengthPrefixed(),
    AsciiHex(),
    Sublevel(),
    Sublevel(separator="#"),
    ScopeHash(),
    Delimited(":"),
    Delimited("\x00", depth=2),
    Naive(),
    Naive(allow_collisions=True),
]
DEPTHS = (None, 0, 1, 2, 3)
CORPUS_SIZE = 100_000
PER_INPUT_LIMIT_S = 2.0  # generous: a decode takes microseconds; this catches a hang


def _decoders() -> list[tuple[str, Callable[[bytes], Any]]]:
    out: list[tuple[str, Callable[[bytes], Any]]] = [("tuples.unpack", tuples.unpack)]
    for scheme in SCHEMES:
        for depth in DEPTHS:

            def decode(raw: bytes, scheme: Any = scheme, depth: int | None = depth) -> Any:
                return scheme.decode(raw, depth)

            out.append((f"{scheme!r}.decode(depth={depth})", decode))
    return out


DECODERS = _decoders()
# The corpus run gives each input every scheme at one depth, rotating the depth
# from input to input: every (scheme, depth) pair still sees 20,000 inputs.
ROTATION = [
    [DECODERS[0], *(DECODERS[1 + s * len(DEPTHS) + d] for s in range(len(SCHEMES)))]
    for d in range(len(DEPTHS))
]


def _only_decode_errors(raw: bytes, decoders: list[tuple[str, Callable[[bytes], Any]]] = DECODERS) -> None:
    for name, decode in decoders:
        try:
            decode(raw)
        except DecodeError:
            pass
        except Exception as exc:  # the property under test
            raise AssertionError(f"{name} raised {type(exc).__name__}: {exc} on {raw!r}") from exc


@settings(max_examples=1500)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_decode_error(raw: bytes) -> None:
    _only_decode_errors(raw)


@settings(max_examples=500)
@given(
    st.lists(
        st.sampled_from(
            [
                b"\x00",
                b"\xff",
                b"\x01",
                b"\x02",
                b"\x05",
                b"!",
                b"\x15",
                b"\x1c",
                b"\x21",
                b"\x30",
                b"\x33",
                b"\x0b",
                b"\x14",
                b"\x0c",
            ]
        ),
        max_size=40,
    )
)
def test_format_bytes_raise_only_decode_error(parts: list[bytes]) -> None:
    """Strings made of the bytes the formats give meaning to (type codes, escapes,
    separators, length bytes) reach deeper into the decoders than random bytes."""
    _only_decode_errors(b"".join(parts))


def _valid_encodings() -> list[bytes]:
    """Stored keys the schemes produce, and packed tuples: the seeds of mutations."""
    paths: list[tuple[Any, ...]] = [(), ("a",), ("tenant1", "users"), ("x", "y", "zz")]
    keys = [b"", b"k", b"alice", b"\x00\xff\x00", bytes(range(40))]
    out: list[bytes] = []
    for scheme in SCHEMES:
        for path in paths:
            for key in keys:
                try:
                    out.append(scheme.encode(path, key))
                except Exception:  # paths or keys a scheme refuses
                    continue
    for value in [
        (),
        (None, b"a\x00b", "text", 0, 1, -1, 255, -256, 2**70, -(2**70), 1.5, -0.0, True, False),
        (uuid.UUID(int=12345), (b"nested", ("deeper", None)), "é\x00"),
        ((("p",), "k"),),
        (float("inf"), float("-inf"), 2**64 - 1, -(2**64) + 1),
    ]:
        out.append(tuples.pack(value))  # noqa: PERF401
    return out


def _corpus(seed: int, size: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    seeds = _valid_encodings()
    for i in range(size):
        kind = i % 5
        if kind == 0:
            yield rng.randbytes(rng.choice((0, 1, 2, 3, 4, 8, 12, 13, 20, 64, 200)))
        else:
            raw = bytearray(rng.choice(seeds))
            if kind == 1 and raw:  # truncation
                del raw[rng.randrange(len(raw)) :]
            elif kind == 2 and raw:  # flipped bytes
                for _ in range(rng.randint(1, 3)):
                    raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
            elif kind == 3:  # inserted 00 / ff
                for _ in range(rng.randint(1, 3)):
                    raw.insert(rng.randint(0, len(raw)), rng.choice((0x00, 0xFF)))
            else:  # replaced bytes, then maybe truncated
                if raw:
                    raw[rng.randrange(len(raw))] = rng.randrange(256)
                if raw and rng.random() < 0.5:
                    del raw[rng.randrange(len(raw)) :]
            yield bytes(raw)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


@pytest.mark.timeout(300)
def test_corpus_of_100000_inputs() -> None:
    previous = signal.signal(signal.SIGALRM, _alarm)
    slowest = 0.0
    count = 0
    try:
        for i, raw in enumerate(_corpus(20261122, CORPUS_SIZE)):
            started = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, PER_INPUT_LIMIT_S)
            try:
                _only_decode_errors(raw, ROTATION[i % len(ROTATION)])
            except _Hang:
                raise AssertionError(f"decoding {raw!r} took over {PER_INPUT_LIMIT_S} s") from None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            slowest = max(slowest, time.perf_counter() - started)
            count += 1
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert count == CORPUS_SIZE
    assert slowest < PER_INPUT_LIMIT_S


def test_corpus_decodes_valid_inputs_too() -> None:
    """The corpus is not all garbage: the unmutated seeds decode without error."""
    for raw in _valid_encodings():
        assert raw == b"" or _decodes_somewhere(raw), raw


def _decodes_somewhere(raw: bytes) -> bool:
    for _, decode in DECODERS:
        try:
            decode(raw)
            return True
        except DecodeError:
            continue
    return False
