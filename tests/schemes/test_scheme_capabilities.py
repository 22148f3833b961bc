"""What a scheme declares about itself drives how a keyspace and a store reader
treat it; the layers above ``schemes/`` never ask which class a scheme is.

Two kinds of test:

- the declarations that are facts about bytes hold (Hypothesis, every scheme):
  every stored key lies in the declared footprint and after the declared raw
  prefix, a hashed-name scheme's prefix is the hash alone, of one width, a scheme
  that needs the depth cannot decode without it;
- a scheme that declares a capability gets the treatment, and one that declares
  it away loses it, whatever class it derives from: small subclasses of the
  built-in schemes, with only a declaration changed.
"""

from __future__ import annotations

import itertools
import zlib
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scheme_properties import SPECS, Spec

import keyspace
from keyspace._metadata import REGISTRY_START, registry_key
from keyspace.catalog import LAYOUT_START, LAYOUT_STOP
from keyspace.cli._open import detect, make_scheme
from keyspace.cli._walk import Entry, KeyReader, NeedsMore, walk
from keyspace.errors import DecodeError, LayoutError, SchemeMismatch
from keyspace.schemes import SCHEMES, AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, TupleScheme
from keyspace.schemes._base import Path
from keyspace.schemes.scope_hash import DEFAULT_SCOPE_HASH
from keyspace.stores import MemoryStore

FACTS = settings(max_examples=150)


def _in(stored: bytes, ranges: tuple[tuple[bytes, bytes | None], ...]) -> bool:
    return any(lo <= stored and (hi is None or stored < hi) for lo, hi in ranges)


def _spec_params() -> list[Any]:
    return [pytest.param(spec, id=spec.id) for spec in SPECS]


# -- the declarations are facts about the bytes --------------------------------------------


@pytest.mark.parametrize("spec", _spec_params())
@FACTS
@given(data=st.data())
def test_every_stored_key_lies_in_the_declared_footprint(spec: Spec, data: st.DataObject) -> None:
    scheme = spec.scheme
    footprint = scheme.footprint()
    assert all(hi is not None and hi <= nxt for (_, hi), (nxt, _) in itertools.pairwise(footprint))
    assert all(hi is None or lo < hi for lo, hi in footprint)
    path, key = data.draw(spec.pair())
    stored = scheme.encode(path, key)
    assert _in(stored, footprint)
    assert stored.startswith(scheme.raw_prefix)


_RAW_PREFIX = st.one_of(
    st.binary(max_size=6),
    st.sampled_from([b"\x05", b"\x05\xff", b"app", b"app\x05x", b"\xff", b"\xff\xff", b"\x00"]),
)
_TUPLE_SPEC = SPECS[0]


@FACTS
@given(data=st.data(), raw_prefix=_RAW_PREFIX)
def test_a_raw_prefixed_tuple_footprint_holds_its_keys_and_not_its_records(
    data: st.DataObject, raw_prefix: bytes
) -> None:
    """The bounded footprint of the tuple scheme, under any raw prefix: every
    stored key in it, after the raw prefix; the scheme record and the footprint
    registry entry outside it (the record after the raw prefix too)."""
    scheme = TupleScheme(raw_prefix=raw_prefix)
    path, key = data.draw(_TUPLE_SPEC.pair())
    stored = scheme.encode(path, key)
    footprint = scheme.footprint()
    assert _in(stored, footprint)
    assert stored.startswith(scheme.raw_prefix) and scheme.raw_prefix == raw_prefix
    meta = scheme.metadata_key
    assert meta is not None and meta.startswith(raw_prefix)
    assert not _in(meta, footprint)
    entry = registry_key(scheme)
    assert (entry is None) == (raw_prefix == b"")
    if entry is not None:
        assert entry == REGISTRY_START + raw_prefix
        assert not _in(entry, footprint)


_SCOPE_HASH_SPEC = next(spec for spec in SPECS if spec.scheme.hashed_names)


@FACTS
@given(data=st.data())
def test_hashed_names_prefix_is_the_hash_alone(data: st.DataObject) -> None:
    """The contract of ``hashed_names``: every prefix is the hash, of one width,
    little-endian; decode gives that hash as an int; stored keys are longer than
    the registry key and the scheme record is shorter."""
    scheme = _SCOPE_HASH_SPEC.scheme
    width = len(scheme.prefix(()))
    path, key = data.draw(_SCOPE_HASH_SPEC.pair())
    stored = scheme.encode(path, key)
    head = scheme.prefix(path)
    assert len(head) == width and len(stored) > width
    decoded_path, decoded_key = scheme.decode(stored)
    assert decoded_key == key
    root = scheme.prefix(())
    assert int.from_bytes(root, "little") == DEFAULT_SCOPE_HASH
    assert decoded_path == (() if head == root else (int.from_bytes(head, "little"),))
    assert bool(path) or head == root
    meta = scheme.metadata_key
    assert meta is not None and len(meta) < width


@pytest.mark.parametrize("spec", [p for p in _spec_params() if p.values[0].scheme.decode_needs_depth])
@FACTS
@given(data=st.data())
def test_decode_needs_depth_is_true(spec: Spec, data: st.DataObject) -> None:
    scheme = spec.scheme
    path, key = data.draw(spec.pair())
    stored = scheme.encode(path, key)
    with pytest.raises(DecodeError):
        scheme.decode(stored)
    got_path, got_key = scheme.decode(stored, len(path))
    assert (spec.normal(got_path), got_key) == (spec.normal(path), key)


@pytest.mark.parametrize(
    "spec", [p for p in _spec_params() if p.values[0].scheme.max_decode_depth is not None]
)
@FACTS
@given(data=st.data(), extra=st.integers(1, 3))
def test_max_decode_depth_is_the_deepest_read(spec: Spec, data: st.DataObject, extra: int) -> None:
    scheme = spec.scheme
    deepest = scheme.max_decode_depth
    assert deepest is not None
    stored = scheme.encode(*data.draw(spec.pair()))
    got_path, _ = scheme.decode(stored, deepest)
    assert len(got_path) == deepest
    with pytest.raises(DecodeError):
        scheme.decode(stored, deepest + extra)


def test_one_registered_scheme_records_layouts() -> None:
    """Layout records do not name their scheme, so one registered scheme at most
    may write them; it is one whose scopes are leaves or branches."""
    recorders = [cls for cls in SCHEMES.values() if cls.records_layout]
    assert recorders == [LengthPrefixed]
    assert all(not cls.separates_own_keys for cls in recorders)


# -- a declaration, not the class, gets the treatment ------------------------------------------


class _BoundedHex(AsciiHex):
    """AsciiHex declaring what is true of it: its keys are hex digits and ``00``,
    all below ``g``."""

    name: ClassVar[str] = "bounded-hex"

    def footprint(self) -> tuple[tuple[bytes, bytes | None], ...]:
        return ((b"", b"g"),)


class _Unbounded(TupleScheme):
    """A tuple scheme that declares nothing about where it writes."""

    name: ClassVar[str] = "unbounded-tuple"

    def footprint(self) -> tuple[tuple[bytes, bytes | None], ...]:
        return ((b"", None),)


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test schemes by name, so that their records read back."""
    for cls in (_BoundedHex, _Unbounded, _Crc32Names, _Unhashed):
        monkeypatch.setitem(SCHEMES, cls.name, cls)


def _write(store: MemoryStore, scheme: Scheme, path: Path = ("s",), **options: Any) -> None:
    with keyspace.attach(store, scheme=scheme, close_store=False, **options) as ks:
        ks.scope(*path)[b"k"] = b"v"


@pytest.mark.usefixtures("registered")
def test_a_declared_footprint_lets_keyspaces_share_a_store() -> None:
    """Keyspaces whose declared footprints are disjoint share a store, whatever
    their class; the same keys declared to go anywhere are refused."""
    for first, second in (
        (_BoundedHex(), TupleScheme(raw_prefix=b"t/")),
        (TupleScheme(b"t/"), _BoundedHex()),
    ):
        store = MemoryStore()
        _write(store, first)
        _write(store, second)
        with keyspace.attach(store, scheme=first, close_store=False) as ks:
            assert dict(ks.scope("s")) == {b"k": b"v"}
    for first, second in ((AsciiHex(), TupleScheme(raw_prefix=b"t/")), (TupleScheme(b"t/"), AsciiHex())):
        store = MemoryStore()
        _write(store, first)
        with pytest.raises(SchemeMismatch):
            _write(store, second)


@pytest.mark.usefixtures("registered")
def test_a_tuple_scheme_declaring_no_footprint_is_treated_as_writing_anywhere() -> None:
    store = MemoryStore()
    _write(store, TupleScheme(raw_prefix=b"a/"))
    _write(store, TupleScheme(raw_prefix=b"b/"))  # bounded: beside it
    with pytest.raises(SchemeMismatch):
        _write(store, _Unbounded(raw_prefix=b"c/"))


class _RecordingNaive(Naive):
    records_layout: ClassVar[bool] = True


class _Unrecorded(LengthPrefixed):
    records_layout: ClassVar[bool] = False


def _layout_records(store: MemoryStore) -> list[bytes]:
    return [k for k, _ in store.scan(LAYOUT_START, LAYOUT_STOP)]


def test_records_layout_is_what_makes_a_keyspace_record_its_leaves() -> None:
    cases: list[tuple[Scheme, dict[str, Any], bool]] = [
        (LengthPrefixed(), {}, True),
        (LengthPrefixed(), {"leaf_depth": 2}, False),
        (_Unrecorded(), {}, False),
        (Naive(allow_collisions=True), {}, False),
        (_RecordingNaive(allow_collisions=True), {}, True),
        (_RecordingNaive(allow_collisions=True), {"leaf_depth": 2}, False),
    ]
    for scheme, options, records in cases:
        store = MemoryStore()
        _write(store, scheme, (b"t", b"u"), **options)
        assert bool(_layout_records(store)) == records, (scheme, options)


def test_layout_records_refuse_the_schemes_that_record_none() -> None:
    store = MemoryStore()
    _write(store, LengthPrefixed(), (b"t", b"u"))
    assert _layout_records(store)
    for scheme in (Naive(allow_collisions=True), _Unrecorded(), TupleScheme()):
        with pytest.raises(SchemeMismatch, match="LengthPrefixed"):
            keyspace.attach(store, scheme=scheme, close_store=False)
    # a scheme that records layouts is not refused: the records may be its own
    keyspace.attach(store, scheme=_RecordingNaive(allow_collisions=True), close_store=False).close()
    keyspace.attach(store, scheme=LengthPrefixed(), close_store=False).close()


class _Crc32Names(ScopeHash):
    """Hashed names with another hash (CRC-32 of the name), the root keeping
    ScopeHash's: a keyspace must check its registry with this scheme's hash."""

    name: ClassVar[str] = "crc32-names"

    def _hash(self, path: Path) -> int:
        if path:
            super()._hash(path)  # the name rules
            return zlib.crc32(path[0].encode())
        return DEFAULT_SCOPE_HASH


class _Unhashed(ScopeHash):
    """ScopeHash declaring its names are not hashed: no registry is kept."""

    name: ClassVar[str] = "unhashed"
    hashed_names: ClassVar[bool] = False


@pytest.mark.usefixtures("registered")
def test_hashed_names_are_registered_and_checked_with_the_schemes_own_hash() -> None:
    store = MemoryStore()
    scheme = _Crc32Names()
    with keyspace.attach(store, scheme=scheme, close_store=False) as ks:
        ks.scope("tenant")[b"k"] = b"v"
        ks.scope("other")[b"k"] = b"w"
    entry = zlib.crc32(b"tenant").to_bytes(4, "little")
    assert store.get(entry) == b"tenant"
    with keyspace.attach(store, scheme=scheme, close_store=False) as ks:
        assert dict(ks.scope("tenant")) == {b"k": b"v"}
        assert sorted(ks.scope().scopes()) == ["other", "tenant"]
        assert sorted(ks.scope().subtree()) == [(("other",), b"k", b"w"), (("tenant",), b"k", b"v")]
    found = sorted(
        (e.path, e.key) for e in walk(store, KeyReader(scheme, None, store)) if isinstance(e, Entry)
    )
    assert found == [(("other",), b"k"), (("tenant",), b"k")]
    store.put(entry, b"intruder")  # a name that does not hash to its entry
    with keyspace.attach(store, scheme=scheme, close_store=False) as ks, pytest.raises(DecodeError):
        dict(ks.scope("tenant"))


@pytest.mark.usefixtures("registered")
def test_a_scheme_declaring_unhashed_names_keeps_no_registry() -> None:
    store = MemoryStore()
    with keyspace.attach(store, scheme=_Unhashed(), close_store=False) as ks:
        ks.scope("tenant")[b"k"] = b"v"
    assert [k for k, _ in store.scan(b"", None) if len(k) == 4] == []
    store = MemoryStore()
    with keyspace.attach(store, scheme=ScopeHash(), close_store=False) as ks:
        ks.scope("tenant")[b"k"] = b"v"
    assert [v for k, v in store.scan(b"", None) if len(k) == 4] == [b"tenant"]


class _DepthHex(AsciiHex):
    decode_needs_depth: ClassVar[bool] = True
    max_decode_depth: ClassVar[int | None] = 1


class _DepthFree(LengthPrefixed):
    decode_needs_depth: ClassVar[bool] = False


def test_a_reader_asks_for_the_depth_the_scheme_declares_it_needs() -> None:
    with pytest.raises(NeedsMore, match="pass --depth"):
        KeyReader(_DepthHex())
    with pytest.raises(NeedsMore, match="only --depth 0 to 1"):
        KeyReader(_DepthHex(), 2)
    KeyReader(_DepthHex(), 1)
    KeyReader(AsciiHex())
    KeyReader(AsciiHex(), 2)
    KeyReader(_DepthFree())  # no depth asked for, as declared
    with pytest.raises(NeedsMore, match="length-prefixed keys do not record how many"):
        KeyReader(LengthPrefixed())
    with pytest.raises(
        NeedsMore, match="naive keys do not record where a component ends; only --depth 0 reads"
    ):
        KeyReader(Naive(allow_collisions=True), 1)
    KeyReader(Naive(allow_collisions=True), 0)
    KeyReader(Naive(allow_collisions=True))


class _LegacyConcat(Naive):
    """Naive under another name: it declares refuses_writes as Naive does."""

    name: ClassVar[str] = "legacy-concat"


@pytest.mark.parametrize("cls", [cls for cls in SCHEMES.values() if cls.refuses_writes])
def test_refuses_writes_is_true(cls: type[Scheme]) -> None:
    with pytest.raises(LayoutError):
        cls().encode((b"a",), b"k")
    assert cls(allow_collisions=True).encode((b"a",), b"k")


@pytest.mark.parametrize("name", ["naive", _LegacyConcat.name])
def test_a_scheme_chosen_by_name_reads_and_refuses_writes_as_it_declares(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setitem(SCHEMES, _LegacyConcat.name, _LegacyConcat)
    reading, writing = make_scheme(name), make_scheme(name, writing=True)
    assert reading.encode((b"a",), b"k") == b"ak"
    with pytest.raises(LayoutError):
        writing.encode((b"a",), b"k")


def test_detection_tries_a_scheme_that_needs_the_depth_only_with_one() -> None:
    store = MemoryStore()
    for key in (b"\x00\x01a\x00\x01bk1", b"\x00\x01a\x00\x01bk2", b"\x00\x01c\x00\x01dk"):
        store.put(key, b"v")
    assert "length-prefixed" not in [d.scheme.name for d in detect(store)]
    best = detect(store, 2)[0]
    assert best.scheme.name == "length-prefixed" and best.decoded == best.sampled == best.nested == 3
