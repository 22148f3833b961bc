"""Structure reads: a scheme's ``child_step`` against its definition, and
``scopes()`` / ``len()`` through every embedded engine's skip scan and count."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, Sublevel, TupleScheme

_ELEMENT = st.one_of(
    st.none(),
    st.binary(max_size=6),
    st.sampled_from([b"\x00", b"\x00\xff", b"\xff", b"a\x00"]),
    st.text(max_size=4),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.floats(allow_nan=False),
    st.uuids(),
)
_COMPONENT = st.one_of(_ELEMENT, st.lists(_ELEMENT, max_size=3).map(tuple))


@settings(max_examples=300, deadline=None)
@given(
    path=st.lists(_COMPONENT, max_size=2).map(tuple),
    below=st.lists(_COMPONENT, min_size=1, max_size=3).map(tuple),
    key=_ELEMENT,
    raw_prefix=st.sampled_from([b"", b"\x05", b"rp"]),
)
def test_tuple_child_step_is_the_definition(
    path: tuple[Any, ...], below: tuple[Any, ...], key: Any, raw_prefix: bytes
) -> None:
    """The tuple scheme reads the child and its subtree end off the stored bytes;
    the result is what decoding and :meth:`subtree_range` give (the default)."""
    scheme = TupleScheme(raw_prefix)
    stored = scheme.encode((*path, *below), key)
    fast = scheme.child_step(path)(stored)
    assert fast == Scheme.child_step(scheme, path)(stored)
    assert fast is not None
    child, end = fast
    assert scheme.encode((*path, child), b"") < end
    assert end == scheme.subtree_range((*path, child))[1]


def test_tuple_child_step_refuses_what_does_not_decode() -> None:
    scheme = TupleScheme()
    step = scheme.child_step(("a",))
    own = scheme.encode(("a",), b"k")  # an own key: no child at depth 1
    assert step(own) is None
    assert step(scheme.subtree_range(("a",))[0] + b"\x02bad") is None
    assert Scheme.child_step(scheme, ("a",))(own) is None


_ENGINES = ["memory:", "lmdb", "sqlite", "leveldb", "rocksdb"]


def _open(engine: str, tmp: Path, scheme: Scheme) -> keyspace.Keyspace:
    if engine == "memory:":
        return keyspace.open("memory:", scheme=scheme)
    return keyspace.open(f"{engine}://{tmp / uuid.uuid4().hex}", scheme=scheme)


def _stored_order(scheme: Scheme) -> Any:
    return lambda name: scheme.subtree_range(("t", name))[0]


@pytest.mark.parametrize("engine", _ENGINES)
@pytest.mark.parametrize("scheme", [TupleScheme(), Sublevel(), AsciiHex(), LengthPrefixed()], ids=repr)
def test_scopes_and_len_on_every_engine(engine: str, scheme: Scheme, tmp_path: Path) -> None:
    """Children (with own keys around them where the scheme allows), counts of own
    keys, in a transaction and out: the same on every engine."""
    pytest.importorskip({"leveldb": "plyvel", "rocksdb": "rocksdict"}.get(engine, "sortedcontainers"))
    ks = _open(engine, tmp_path, scheme)
    try:
        layered = not scheme.separates_own_keys
        names = [f"c{i:03d}" for i in range(0, 300, 7)]
        with ks.transaction() as tx:
            for name in names:
                tx.scope("t", name).update({b"k%d" % j: b"v" for j in range(3)})
                if not layered:  # a scope of these holds keys or children, not both
                    tx.scope("t", name, "deeper")[b"x"] = b"y"
            if not layered:
                tx.scope("t").update({b"\x00own": b"1", b"own": b"2", b"\xffown": b"3"})
        expected = [n.encode() for n in names] if not scheme.typed_keys else names
        assert ks.scope("t").scopes() == expected
        assert len(ks.scope("t", names[3])) == 3
        assert list(ks.scope("t", names[3]).keys()) == [b"k0", b"k1", b"k2"]
        if not layered:
            assert len(ks.scope("t")) == 3
        with ks.transaction() as tx:
            tx.scope("t", "c000").clear()
            if not layered:
                tx.scope("t", "c000", "deeper").drop()
            tx.scope("t", "zzz")[b"k"] = b"v"
            later = sorted(
                [*expected[1:], b"zzz" if not scheme.typed_keys else "zzz"], key=_stored_order(scheme)
            )
            assert tx.scope("t").scopes() == later
            assert len(tx.scope("t", "zzz")) == 1
            assert len(tx.scope("t", "c000")) == 0
        assert len(ks.scope("t", "zzz")) == 1
    finally:
        ks.close()
