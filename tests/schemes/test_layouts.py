"""Scope layouts store exactly the scheme's bytes, and the C transforms the same
bytes and keys as the pure-Python reference, for every scheme.

For every scheme of the property suite (and the collision-refusing Naive): the
layout's ``stored(key)`` equals ``scheme.encode(path, key)`` and the scheme's
``prefix(path) + encode_key(key)`` (or all raise the same error class);
``key_of`` inverts it; ``decode_chunk`` of stored pairs gives the keys back and
drops children's keys where the own ranges are not exact; the layout built with
the C module (when built) and without it agree on all of that, also through the
str key codec.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scheme_properties import SPECS, Spec

from keyspace.codecs import STR
from keyspace.errors import KeyspaceError, LayoutError
from keyspace.schemes import LengthPrefixed, Naive, Sublevel, TupleScheme
from keyspace.schemes._layouts import KINDS, Layout, LayoutCache

try:
    from keyspace.schemes import _layouts_accel as accel

    accel.Transform  # noqa: B018
except (ImportError, AttributeError):  # pragma: no cover - the C module was not built
    accel = None  # type: ignore[assignment]

LAYOUT = settings(max_examples=150, deadline=None)
SPECS_AND_REFUSING = [pytest.param(spec, id=spec.id) for spec in SPECS] + [
    pytest.param(
        Spec(Naive(), component=st.binary(max_size=4), key=st.binary(max_size=4)), id="naive-refusing"
    )
]
_ODD_KEYS = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.none(), st.just(bytearray(b"x")))


def _outcome(call: Any, *args: Any) -> tuple[str, Any]:
    """What ``call(*args)`` returns, or the class of the keyspace error it raises."""
    try:
        return "ok", call(*args)
    except KeyspaceError as exc:
        return "error", type(exc)


def _reference_encode(scheme: Any, path: tuple[Any, ...], key: Any) -> bytes:
    """The scheme's contract, written without layouts: prefix + encoded key."""
    return bytes(scheme.prefix(path) + scheme.encode_key(key))


def _within(key: bytes, span: tuple[bytes, bytes | None]) -> bool:
    return span[0] <= key and (span[1] is None or key < span[1])


def _layouts(spec: Spec, path: tuple[Any, ...]) -> list[Layout]:
    both = [spec.scheme.layout(path, accelerate=False)]
    if accel is not None:
        both.append(spec.scheme.layout(path))
        assert both[1].accelerated == (both[1].kind != "general")
    return both


@pytest.mark.parametrize("spec", SPECS_AND_REFUSING)
@LAYOUT
@given(data=st.data())
def test_stored_key_is_the_schemes_encoding(spec: Spec, data: st.DataObject) -> None:
    path = data.draw(spec.path())
    keys = data.draw(st.lists(st.one_of(spec.key, _ODD_KEYS), min_size=1, max_size=4))
    for layout in _layouts(spec, path):
        assert layout.prefix == spec.scheme.prefix(path)
        assert layout.kind in KINDS
        for key in keys:
            want = _outcome(_reference_encode, spec.scheme, path, key)
            got = _outcome(layout.stored, key)
            assert got == want == _outcome(spec.scheme.encode, path, key), (layout, key)
            if got[0] == "ok":
                stored = got[1]
                assert layout.key_of(stored) == spec.scheme.decode_key(stored[len(layout.prefix) :])


@pytest.mark.parametrize("spec", SPECS_AND_REFUSING)
@LAYOUT
@given(data=st.data(), keys=st.lists(st.binary(max_size=12), min_size=1, max_size=4))
def test_escape_builds_the_stored_key(spec: Spec, data: st.DataObject, keys: list[bytes]) -> None:
    """Where a layout's transform is one replace (the tuple framing, a raw key with
    no forbidden first byte), ``escape`` says it, and ``head + k.replace(old, new) +
    tail`` is the stored key of every bytes key; elsewhere ``escape`` is None."""
    path = data.draw(spec.path())
    for layout in _layouts(spec, path):
        replace = layout.kind == "tuple" or (layout.kind == "raw" and layout.forbidden < 0)
        assert (layout.escape is not None) == replace, layout
        if layout.escape is None:
            continue
        head, old, new, tail = layout.escape
        for key in keys:
            built = head + key.replace(old, new) + tail
            assert built == layout.stored(key) == spec.scheme.encode(path, key)
            assert layout.key_of(built) == key


@pytest.mark.parametrize("spec", [pytest.param(spec, id=spec.id) for spec in SPECS])
@LAYOUT
@given(data=st.data())
def test_chunks_decode_own_keys_and_drop_childrens(spec: Spec, data: st.DataObject) -> None:
    scheme = spec.scheme
    path = data.draw(spec.path(max_size=2))
    keys = data.draw(st.lists(spec.key, max_size=6, unique_by=lambda k: scheme.encode(path, k)))
    children = []
    if spec.max_depth > len(path) and scheme.separates_own_keys:
        child = (*path, data.draw(spec.component))
        child_keys = data.draw(st.lists(spec.key, max_size=3))
        try:
            children = [(scheme.encode(child, k), b"child") for k in child_keys]
        except KeyspaceError:  # a scheme of one depth (Delimited): no children
            children = []
    results = []
    for layout in _layouts(spec, path):
        own = [(layout.stored(k), k) for k in keys]
        items = sorted([(s, b"v" + s) for s, _ in own] + children)
        in_ranges = [(k, v) for k, v in items if any(_within(k, r) for r in layout.ranges)]
        decoded = layout.decode_chunk(in_ranges)
        # in stored order, exactly the own keys (the values are their stored keys)
        want = [(scheme.decode_key(s[len(layout.prefix) :]), b"v" + s) for s, _ in sorted(own)]
        assert decoded == want
        results.append(decoded)
    assert all(r == results[0] for r in results)


@pytest.mark.parametrize("spec", [pytest.param(spec, id=spec.id) for spec in SPECS])
@LAYOUT
@given(data=st.data())
def test_str_keys_route_the_same_with_and_without_c(spec: Spec, data: st.DataObject) -> None:
    scheme = spec.scheme
    path = data.draw(spec.path(max_size=2))
    keys = data.draw(st.lists(st.one_of(st.text(max_size=4), _ODD_KEYS), min_size=1, max_size=4))
    native = scheme.typed_keys
    seen = []
    for layout in _layouts(spec, path):
        stored, key_of, chunk = layout.route(STR, native, True)
        outcomes = [_outcome(stored, key) for key in keys]
        for key, (status, value) in zip(keys, outcomes, strict=True):
            if status == "ok":
                assert key_of(value) == key
                assert chunk([(value, b"v")]) == [(key, b"v")]
        seen.append(outcomes)
    assert all(s == seen[0] for s in seen)


def test_layouts_are_immutable_and_cached_per_path() -> None:
    cache = LayoutCache(TupleScheme(), size=2)
    a = cache.get(("a",))
    assert cache.get(("a",)) is a
    with pytest.raises(AttributeError):
        a.prefix = b""  # type: ignore[misc]
    # equal Python tuples, different tuple-scheme paths: never served from the cache
    assert cache.get((1,)).prefix != cache.get((True,)).prefix
    cache.get(("b",))
    cache.get(("c",))
    assert len(cache) == 2  # bounded: the oldest went
    assert cache.get(("a",)) is not a
    assert cache.get(("a",)).prefix == a.prefix


def test_encode_keeps_a_bounded_memo_of_exact_paths() -> None:
    """``scheme.encode`` builds keys with the path's compiled ``stored`` from a
    memo of at most 1024 paths of str/bytes components, the oldest dropped first;
    equal tuples of other components are compiled each time, never confused."""
    from keyspace.schemes._base import _MEMO_SIZE

    scheme, fresh = TupleScheme(), TupleScheme()
    for i in range(_MEMO_SIZE + 10):
        path = ("t", str(i))
        assert scheme.encode(path, b"k") == fresh.prefix(path) + fresh.encode_key(b"k")
    assert len(scheme._memo) == _MEMO_SIZE
    assert ("t", "0") not in scheme._memo and ("t", str(_MEMO_SIZE + 9)) in scheme._memo
    assert scheme.encode((1,), b"k") != scheme.encode((True,), b"k") != scheme.encode((1.0,), b"k")
    assert (1,) not in scheme._memo
    refusing = Naive()
    with pytest.raises(LayoutError, match="refuses"):
        refusing.encode((b"a",), b"k")
    assert not hasattr(refusing, "_memo")  # a refusing scheme compiles nothing


def test_prefix_ranges_of_byte_schemes() -> None:
    layout = Sublevel().layout(("s",))
    assert layout.prefix_range(b"ab") == (b"!s!ab", b"!s!ac", None)
    lp = LengthPrefixed().layout((b"n",))
    assert lp.prefix_range(b"\xff") == (b"\x00\x01n\xff", b"\x00\x01o", None)
