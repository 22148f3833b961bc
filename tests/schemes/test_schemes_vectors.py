"""Published test vectors of the formats the byte schemes are compatible with.

Sources (see the reference notes on encodings): cosmwasm-std
``storage_keys/length_prefixed.rs``, webmaster128/key-namespacing ``src/*.spec.ts``,
abstract-level ``test/self/sublevel-test.js``, and the scoped-heed README; the
XXH32 values of scope names are computed ones, checked against the published XXH32
known answers.
"""

from __future__ import annotations

import binascii
from pathlib import Path

import pytest
import xxhash

from keyspace._bytes import prefix_end
from keyspace.errors import DecodeError, InvalidKey, InvalidName, KeyTooLarge, LayoutError, SchemeMismatch
from keyspace.schemes import (
    SCHEMES,
    AsciiHex,
    Delimited,
    LengthPrefixed,
    Naive,
    Property,
    ScopeHash,
    Sublevel,
    property_table,
    scheme_from_name,
)
from keyspace.schemes.length_prefixed import (
    decompose,
    encode_length,
    namespace_with_key,
    to_length_prefixed,
    to_length_prefixed_nested,
)
from keyspace.schemes.scope_hash import DEFAULT_SCOPE_HASH, hash_name, registry_key


def h(text: str) -> bytes:
    """Bytes from space-separated hex, as the reference writes them."""
    return bytes.fromhex(text)


# -- cosmwasm-std storage_keys ------------------------------------------------------


@pytest.mark.parametrize(
    ("component", "expected"),
    [(b"", "00 00"), (b"a", "00 01 61"), (b"ab", "00 02 61 62"), (b"abc", "00 03 61 62 63")],
)
def test_to_length_prefixed(component: bytes, expected: str) -> None:
    assert to_length_prefixed(component) == h(expected)


@pytest.mark.parametrize(("size", "head"), [(256, "01 00"), (30000, "75 30"), (0xFFFF, "ff ff")])
def test_to_length_prefixed_long(size: int, head: str) -> None:
    out = to_length_prefixed(bytes(size))
    assert out[:2] == h(head)
    assert len(out) == size + 2


def test_to_length_prefixed_over_limit() -> None:
    with pytest.raises(KeyTooLarge, match=r"65536 bytes long.*up to 65535 bytes"):
        to_length_prefixed(bytes(0x10000))
    with pytest.raises(KeyTooLarge, match="65535"):
        LengthPrefixed().encode((b"a", bytes(0x10000)), b"k")
    with pytest.raises(KeyTooLarge):
        LengthPrefixed().prefix((bytes(0x10000),))


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        ([], ""),
        ([b""], "00 00"),
        ([b"", b""], "00 00 00 00"),
        ([b"a"], "00 01 61"),
        ([b"a", b"ab"], "00 01 61 00 02 61 62"),
        ([b"a", b"ab", b"abc"], "00 01 61 00 02 61 62 00 03 61 62 63"),
    ],
)
def test_to_length_prefixed_nested(components: list[bytes], expected: str) -> None:
    assert to_length_prefixed_nested(components) == h(expected)
    assert LengthPrefixed().prefix(tuple(components)) == h(expected)


def test_to_length_prefixed_nested_allows_many_long_namespaces() -> None:
    parts = [bytes(0xFFFD), bytes(0xFFFE), bytes(0xFFFF)]
    out = to_length_prefixed_nested(parts)
    assert out[0:2] == h("ff fd")
    assert out[2 + 0xFFFD : 4 + 0xFFFD] == h("ff fe")
    assert out[4 + 0xFFFD + 0xFFFE : 6 + 0xFFFD + 0xFFFE] == h("ff ff")
    assert decompose(out, 3) == (tuple(parts), b"")


@pytest.mark.parametrize("component", [b"", b"x", b"abababab"])
def test_nested_of_one_is_to_length_prefixed(component: bytes) -> None:
    assert to_length_prefixed_nested([component]) == to_length_prefixed(component)


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (0, "00 00"),
        (1, "00 01"),
        (2, "00 02"),
        (3, "00 03"),
        (255, "00 ff"),
        (256, "01 00"),
        (12345, "30 39"),
        (65535, "ff ff"),
    ],
)
def test_encode_length(length: int, expected: str) -> None:
    assert encode_length(length) == h(expected)


def test_encode_length_over_limit() -> None:
    with pytest.raises(KeyTooLarge, match=r"65536.*65535"):
        encode_length(65536)


@pytest.mark.parametrize(
    ("components", "key", "expected"),
    [
        ([], b"foo", "66 6f 6f"),
        ([], b"", ""),
        ([b"bar"], b"foo", "00 03 62 61 72 66 6f 6f"),
        ([b"bar"], b"", "00 03 62 61 72"),
        ([b"bar", b"cool"], b"foo", "00 03 62 61 72 00 04 63 6f 6f 6c 66 6f 6f"),
        ([b"bar", b"cool"], b"", "00 03 62 61 72 00 04 63 6f 6f 6c"),
    ],
)
def test_namespace_with_key(components: list[bytes], key: bytes, expected: str) -> None:
    assert namespace_with_key(components, key) == h(expected)
    scheme = LengthPrefixed()
    assert scheme.encode(tuple(components), key) == h(expected)
    assert scheme.decode(h(expected), len(components)) == (tuple(components), key)
    assert decompose(h(expected), len(components)) == (tuple(components), key)


def test_length_prefixed_str_components_are_utf8() -> None:
    assert LengthPrefixed().encode(("bar", "cool"), b"foo") == h("00 03 62 61 72 00 04 63 6f 6f 6c 66 6f 6f")
    assert to_length_prefixed("é") == h("00 02 c3 a9")


def test_length_prefixed_decode_needs_depth() -> None:
    with pytest.raises(DecodeError, match="depth"):
        LengthPrefixed().decode(h("00 03 62 61 72 66 6f 6f"))


@pytest.mark.parametrize(
    ("raw", "depth", "offset"),
    [
        (h("00"), 1, 0),
        (h("00 03 62 61"), 1, 2),
        (h("00 01 61 00"), 2, 3),
        (h("00 01 61 00 02 62"), 2, 5),
    ],
)
def test_decompose_truncated(raw: bytes, depth: int, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        decompose(raw, depth)
    assert info.value.offset == offset


def test_length_prefixed_range() -> None:
    scheme = LengthPrefixed()
    assert scheme.own_range(()) == (b"", None)
    assert scheme.own_range((b"bob",)) == (h("00 03 62 6f 62"), h("00 03 62 6f 63"))
    # cosmwasm's old upper bound kept the length (fo ff -> fp 00); ours is tight.
    assert scheme.own_range((b"f\xff\xff",)) == (h("00 03 66 ff ff"), h("00 03 67"))
    assert scheme.subtree_range((b"bob",)) == scheme.own_range((b"bob",))


# -- webmaster128/key-namespacing: 0x00 separated ASCIIHEX -----------------------------


def test_asciihex_readme() -> None:
    scheme = AsciiHex()
    assert scheme.encode((b"fo",), b"obar") == h("36 36 36 66 00 36 66 36 32 36 31 37 32")
    assert scheme.encode((b"foo",), b"bar") == h("36 36 36 66 36 66 00 36 32 36 31 37 32")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("00", "30 30"),
        ("01", "30 31"),
        ("10", "31 30"),
        ("11", "31 31"),
        ("1b", "31 62"),
        ("b1", "62 31"),
        ("fa", "66 61"),
        ("ff", "66 66"),
        ("12 34", "31 32 33 34"),
        ("a0 0a", "61 30 30 61"),
        ("", ""),
    ],
)
def test_asciihex(raw: str, expected: str) -> None:
    scheme = AsciiHex()
    assert scheme.encode_key(h(raw)) == h(expected)
    assert scheme.decode_key(h(expected)) == h(raw)
    assert scheme.encode((), h(raw)) == h(expected)
    assert scheme.decode(h(expected)) == ((), h(raw))


@pytest.mark.parametrize(
    ("bad", "offset"),
    [
        (b"1", 1),
        (b"111", 3),
        (b"1\x2f", 1),
        (b"1\x3a", 1),
        (b"1\x60", 1),
        (b"1\x67", 1),
        (b"1A", 1),
    ],
)
def test_asciihex_rejects(bad: bytes, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        AsciiHex().decode_key(bad)
    assert info.value.offset == offset
    with pytest.raises(DecodeError):
        AsciiHex().decode(bad)


def test_asciihex_rejects_upper_case_by_name() -> None:
    with pytest.raises(DecodeError, match="upper-case"):
        AsciiHex().decode(b"61\x004A")


def _join(parts: list[bytes]) -> bytes:
    return b"\x00".join(parts)


# key-namespacing's join/unjoin vectors, seen through the scheme: the last part is
# the key (already in asciihex form here, as the vectors use raw bytes), the rest the
# path. join([]) has no key, so the scheme has no counterpart for it.
@pytest.mark.parametrize(
    ("parts", "joined"),
    [
        ([b""], ""),
        ([h("11")], "11"),
        ([h("11 22")], "11 22"),
        ([b"", b""], "00"),
        ([h("11"), h("11")], "11 00 11"),
        ([h("11 22"), h("33 44")], "11 22 00 33 44"),
        ([b"", b"", b""], "00 00"),
        ([h("11"), h("11"), h("11")], "11 00 11 00 11"),
        ([h("11 22"), h("33 44"), h("55 66")], "11 22 00 33 44 00 55 66"),
    ],
)
def test_asciihex_join_unjoin(parts: list[bytes], joined: str) -> None:
    assert _join(parts) == h(joined)
    hexed = [binascii.hexlify(p) for p in parts]
    stored = AsciiHex().encode(tuple(parts[:-1]), parts[-1])
    assert stored == _join(hexed)
    assert stored.split(b"\x00") == hexed
    assert AsciiHex().decode(stored) == (tuple(parts[:-1]), parts[-1])


def test_asciihex_unjoin_separators() -> None:
    assert AsciiHex().decode(h("00")) == ((b"",), b"")
    assert AsciiHex().decode(h("00 00")) == ((b"", b""), b"")
    assert AsciiHex().decode(b"") == ((), b"")


def test_asciihex_ranges_and_metadata() -> None:
    scheme = AsciiHex()
    assert scheme.prefix((b"fo",)) == b"666f\x00"
    assert scheme.own_range((b"fo",)) == (b"666f\x00", b"666f\x01")
    assert scheme.own_range(()) == (b"", b"\xff")
    assert not scheme.own_range_is_exact()
    assert scheme.is_own_remainder(b"6162")
    assert not scheme.is_own_remainder(b"61\x0062")
    meta = scheme.metadata_key
    assert meta is not None and meta[:1] == b"\xff"
    with pytest.raises(DecodeError):
        scheme.decode(meta)


# -- abstract-level sublevels ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "separator", "prefix"),
    [
        (("",), "!", "21 21"),
        (("name",), "!", "21 6e 61 6d 65 21"),
        (("name",), "%", "25 6e 61 6d 65 25"),
        (("a", "b"), "!", "21 61 21 21 62 21"),
        (("", ""), "!", "21 21 21 21"),
    ],
)
def test_sublevel_prefix(path: tuple[str, ...], separator: str, prefix: str) -> None:
    assert Sublevel(separator=separator).prefix(path) == h(prefix)


def test_sublevel_keys() -> None:
    scheme = Sublevel()
    assert scheme.encode(("test",), b"a") == b"!test!a"
    assert scheme.encode(("test", "nested"), b"a") == b"!test!!nested!a"
    assert scheme.encode(("tenant1", "users"), b"alice") == b"!tenant1!!users!alice"
    for stored, path, key in [
        (b"!1!!2!!3!c", (b"1", b"2", b"3"), b"c"),
        (b"!1!!2!b", (b"1", b"2"), b"b"),
        (b"!1!a", (b"1",), b"a"),
    ]:
        assert scheme.encode(path, key) == stored
        assert scheme.decode(stored) == (path, key)
    # Doubly nested keys sort as abstract-level lists them: deepest first here.
    assert sorted([b"!1!a", b"!1!!2!b", b"!1!!2!!3!c"]) == [b"!1!!2!!3!c", b"!1!!2!b", b"!1!a"]


def test_sublevel_bounds() -> None:
    scheme = Sublevel()
    assert scheme.own_range(("sub",)) == (b"!sub!", h("21 73 75 62 22"))
    assert scheme.subtree_range(("sub",)) == (b"!sub!", b'!sub"')
    assert scheme.own_ranges(("sub",)) == ((b"!sub!", b"!sub!!"), (b'!sub!"', b'!sub"'))
    assert scheme.own_range(()) == (b"", None)
    assert scheme.own_ranges(()) == ((b"", b"!"), (b'"', None))
    # The sort order abstract-level's comment gives.
    keys = [b"!a!", b"!a!!a!", b'!a"', b"!aa!", b"!b!"]
    assert sorted(keys) == keys


@pytest.mark.parametrize(
    ("path", "separator"),
    [
        (("foo\x05",), "!"),
        (("foo\xff",), "!"),
        (("ok", "foo\xff"), "!"),
        (("foo!",), "@"),
        (("!name",), "!"),
        (("!!name!!",), "!"),
        (("!!!!",), "!"),
        ((b"a\x7f",), "!"),
        ((b'a"',), "!"),
    ],
)
def test_sublevel_invalid_names(path: tuple[str | bytes, ...], separator: str) -> None:
    scheme = Sublevel(separator=separator)
    with pytest.raises(InvalidName, match=r"names use bytes \d+\.\.126"):
        scheme.prefix(path)
    with pytest.raises(InvalidName):
        scheme.encode(path, b"k")
    with pytest.raises(InvalidName):
        scheme.validate_path(path)


def test_sublevel_name_range_edges() -> None:
    scheme = Sublevel()
    assert scheme.prefix((b"#~",)) == b"!#~!"


def test_sublevel_refuses_separator_keys() -> None:
    scheme = Sublevel()
    with pytest.raises(InvalidName, match="starts with the separator"):
        scheme.encode(("a",), b"!b!x")
    with pytest.raises(InvalidName):
        scheme.encode_key(b"!")
    assert scheme.encode(("a",), b'"b') == b'!a!"b'


@pytest.mark.parametrize("separator", ["", "!!", "}", "é", "\x7f"])
def test_sublevel_bad_separator(separator: str) -> None:
    with pytest.raises(InvalidName, match="separator"):
        Sublevel(separator=separator)


@pytest.mark.parametrize(("stored", "offset"), [(b"!abc", 0), (b"!a!!abc", 3), (b"!a\x05!k", 1)])
def test_sublevel_decode_errors(stored: bytes, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        Sublevel().decode(stored)
    assert info.value.offset == offset


# -- scoped-heed -----------------------------------------------------------------------


def test_scoped_heed_codec_vector() -> None:
    # The README vector, with the hash given directly.
    assert h("78 56 34 12") == registry_key(0x12345678)
    stored = registry_key(0x12345678) + ScopeHash().encode_key(b"test")
    assert stored == h("78 56 34 12 04 00 00 00 00 00 00 00 74 65 73 74")
    assert ScopeHash().decode(stored) == ((0x12345678,), b"test")


def test_xxh32_known_answers() -> None:
    assert xxhash.xxh32_intdigest(b"") == 0x02CC5D05
    assert xxhash.xxh32_intdigest(b"abc") == 0x32D153FF
    assert xxhash.xxh32_intdigest(b"Nobody inspects the spammish repetition") == 0xE2293B2F


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tenant_0", 0xD079EA7B),
        ("tenant_1", 0x17AA15F1),
        ("tenant_2", 0x540EBEFD),
        ("tenant_3", 0x8CC1CDD6),
        ("tenant_4", 0x7C2FEEFD),
        ("tenant1", 0x4ED879C3),
        ("tenant214", 0x3865CFFF),
    ],
)
def test_scope_hash_values(name: str, value: int) -> None:
    assert hash_name(name) == value
    assert ScopeHash.hash_name(name) == value
    assert ScopeHash().encode((name,), b"k") == value.to_bytes(4, "little") + h("01 00 00 00 00 00 00 00 6b")


def test_scope_hash_ranges_are_exact() -> None:
    scheme = ScopeHash()
    # tenant_2's range in scoped-heed, [fd be 0e 54, fe be 0e 54), holds tenant_4's keys.
    t2_start, t2_stop = scheme.own_range(("tenant_2",))
    assert (t2_start, t2_stop) == (h("fd be 0e 54") + bytes(8), h("fd be 0e 55"))
    t4 = scheme.encode(("tenant_4",), b"k")
    assert t4[:4] == h("fd ee 2f 7c")
    assert h("fd be 0e 54") <= t4 < h("fe be 0e 54")
    assert t2_stop is not None
    assert not t2_start <= t4 < t2_stop
    # tenant214's hash has low byte ff (LE form starts ff): scoped-heed's range is inverted.
    start, stop = scheme.own_range(("tenant214",))
    assert start == h("ff cf 65 38") + bytes(8)
    assert stop == h("ff cf 65 39")
    assert h("00 d0 65 38") < h("ff cf 65 38")
    assert start <= scheme.encode(("tenant214",), b"") < stop
    assert start <= scheme.encode(("tenant214",), b"\xff" * 300) < stop
    # The registry key sits just below the range, outside it.
    assert registry_key("tenant214") == h("ff cf 65 38") < start
    assert scheme.own_range(()) == (DEFAULT_SCOPE_HASH.to_bytes(4, "little") + bytes(8), h("05 5d cc 03"))
    assert scheme.subtree_range(("tenant1",)) == scheme.own_range(("tenant1",))


def test_scope_hash_all_ff_hash_has_open_end() -> None:
    assert prefix_end(registry_key(0xFFFFFFFF)) is None


def test_scope_hash_default_scope() -> None:
    scheme = ScopeHash()
    stored = scheme.encode((), b"k")
    assert stored[:4] == registry_key("") == h("05 5d cc 02")
    assert scheme.decode(stored) == ((), b"k")


@pytest.mark.parametrize(
    ("path", "match"),
    [
        (("",), "empty scope name"),
        ((b"tenant1",), "type bytes"),
        ((1,), "type int"),
        (("a", "b"), "at most 1"),
        (("\ud800",), "UTF-8"),
    ],
)
def test_scope_hash_invalid_paths(path: tuple[object, ...], match: str) -> None:
    with pytest.raises(InvalidName, match=match):
        ScopeHash().encode(path, b"k")
    with pytest.raises(InvalidName):
        ScopeHash().own_range(path)


@pytest.mark.parametrize(
    ("stored", "offset"),
    [
        (b"", 0),
        (h("78 56 34 12 04 00 00 00 00 00 00"), 11),
        (h("78 56 34 12 04 00 00 00 00 00 00 00 74 65 73"), 4),
        (h("78 56 34 12 04 00 00 00 00 00 00 00 74 65 73 74 74"), 4),
    ],
)
def test_scope_hash_decode_errors(stored: bytes, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        ScopeHash().decode(stored)
    assert info.value.offset == offset


def test_scope_hash_order_is_length_first() -> None:
    scheme = ScopeHash()
    assert scheme.encode(("t",), b"b") < scheme.encode(("t",), b"aa")
    assert scheme.encode(("t",), b"a" * 256) < scheme.encode(("t",), b"a")


def test_scope_hash_metadata_key_outside_every_scope() -> None:
    meta = ScopeHash().metadata_key
    assert meta is not None and len(meta) < 4
    with pytest.raises(DecodeError):
        ScopeHash().decode(meta)


# -- Naive -----------------------------------------------------------------------------


def test_naive_refuses_without_permission() -> None:
    with pytest.raises(LayoutError, match=r"b'foobar'.*allow_collisions=True"):
        Naive().encode((b"foo",), b"bar")
    with pytest.raises(LayoutError):
        Naive().encode_key(b"bar")
    legacy = Naive(allow_collisions=True)
    assert legacy.encode((b"foo",), b"bar") == legacy.encode((b"fo",), b"obar") == b"foobar"
    assert legacy.decode(b"foobar", 0) == ((), b"foobar")
    with pytest.raises(DecodeError):
        legacy.decode(b"foobar")
    with pytest.raises(DecodeError):
        legacy.decode(b"foobar", 1)


# -- registry, table, value semantics -------------------------------------------------------


def test_registry_round_trips_params() -> None:
    for scheme in [
        LengthPrefixed(),
        AsciiHex(),
        Sublevel(),
        Sublevel("%"),
        ScopeHash(),
        Naive(True),
        Delimited(":", depth=2),
        Delimited("\x00"),
    ]:
        rebuilt = scheme_from_name(scheme.name, **scheme.params())
        assert rebuilt == scheme
        assert hash(rebuilt) == hash(scheme)
    assert Sublevel("%") != Sublevel()
    assert repr(Sublevel()) == "Sublevel(separator='!')"
    assert set(SCHEMES) >= {"length-prefixed", "asciihex", "sublevel", "scopehash", "naive", "delimited"}
    with pytest.raises(SchemeMismatch, match="unknown scheme 'nope'"):
        scheme_from_name("nope")


def test_property_table() -> None:
    table = property_table().splitlines()
    assert table[0].startswith("| scheme | 1 any bytes | 2 collision-free |")
    assert len(table) == 2 + sum(1 + len(cls.variants) for cls in SCHEMES.values())
    row = next(line for line in table if "`AsciiHex`" in line)
    assert row.count("✔") == 6
    row = next(line for line in table if "`LengthPrefixed`" in line)
    assert row.count("✔") == 2
    colon = next(line for line in table if '`Delimited(":")`' in line)
    nul = next(line for line in table if '`Delimited("\\x00")`' in line)
    assert colon.split(" | ")[1:] == ["✘", "✔", "✔", "✘", "✘", "✔ |"]
    assert nul.split(" | ")[1:] == ["✘", "✔", "✔", "✔", "✘", "✔ |"]
    assert LengthPrefixed.properties == {Property.ORDER_WITHIN, Property.NESTING}


def test_byte_schemes_refuse_non_bytes_keys() -> None:
    for scheme in [LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash(), Naive(True)]:
        with pytest.raises(InvalidKey):
            scheme.encode((), "text")


def test_the_documented_table_is_current() -> None:
    page = (Path(__file__).resolve().parent.parent.parent / "docs" / "schemes.md").read_text(encoding="utf-8")
    assert property_table() in page
