"""A key codec declares the type it takes as a scheme may store it
(``native_type``); a scope reads the declaration, never which codec object it
was given. So ``StrCodec()`` made anew stores exactly what ``"str"`` stores (in
the tuple scheme: typed ``str`` elements, not bytes elements), a user's codec
that declares ``str`` keys does too, and one that declares nothing (or a
declaration that is not one of the three types) has its ``encode`` turn every
key into bytes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace import scoped_heed
from keyspace.codecs import BYTES, INT, JSON, STR, BytesCodec, IntCodec, StrCodec, native_type
from keyspace.errors import InvalidArgument, InvalidKey

SCHEMES = ["tuple", "sublevel", "length-prefixed", "scopehash", "asciihex"]


class UserText:
    """A user's UTF-8 text codec, no relation to StrCodec, declaring ``str`` keys."""

    name = "user-text"
    native_type = str

    def encode(self, obj: Any) -> bytes:
        if type(obj) is not str:
            raise InvalidKey(f"{obj!r} is not a str")
        return obj.encode()

    def decode(self, raw: bytes) -> str:
        return raw.decode()


class UndeclaredText(UserText):
    """The same codec without the declaration."""

    native_type = None  # type: ignore[assignment]


class RaisingEq(type):
    def __eq__(cls, other: object) -> bool:
        raise RuntimeError("no comparing")

    __hash__ = type.__hash__


class Odd(metaclass=RaisingEq):
    pass


def _stored(scheme: str, key: Any, value: Any, pairs: dict[Any, Any]) -> list[Any]:
    """Every (key, value) of the store after writing ``pairs`` into one scope, or
    the type of the error that refused them (a key the scheme does not take,
    such as one that starts with sublevel's separator) and the empty store."""
    ks = keyspace.open("memory:", scheme=scheme)
    scope = ks.scope("users", key=key, value=value)
    try:
        scope.update(pairs)
    except keyspace.errors.KeyspaceError as exc:
        refused: list[Any] = [type(exc)]
    else:
        refused = []
        assert dict(scope.items()) == pairs
    return refused + [kv for kv in ks.store.scan(b"", None) if not kv[0].startswith(b"\xff")]


def test_native_type_reads_the_declaration_only() -> None:
    assert [native_type(c) for c in (BYTES, STR, INT, JSON)] == [bytes, str, int, None]
    assert (native_type(BytesCodec()), native_type(StrCodec()), native_type(IntCodec())) == (bytes, str, int)
    assert native_type(UserText()) is str and native_type(UndeclaredText()) is None
    for declared in ("str", float, bool, Odd, object()):  # not one of the three types: nothing declared
        codec = UserText()
        codec.native_type = declared  # type: ignore[assignment]
        assert native_type(codec) is None


@pytest.mark.parametrize("scheme", SCHEMES)
@given(keys=st.lists(st.text(max_size=8), max_size=6, unique=True))
def test_a_fresh_str_codec_stores_what_the_named_one_stores(scheme: str, keys: list[str]) -> None:
    pairs = {k: i.to_bytes(2, "big") for i, k in enumerate(keys)}
    named = _stored(scheme, "str", "bytes", pairs)
    assert _stored(scheme, StrCodec(), BytesCodec(), pairs) == named
    assert _stored(scheme, UserText(), None, pairs) == named


@pytest.mark.parametrize("scheme", SCHEMES)
@given(keys=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6, unique=True))
def test_a_fresh_int_codec_stores_what_the_named_one_stores(scheme: str, keys: list[int]) -> None:
    pairs = {k: b"v" for k in keys}
    assert _stored(scheme, IntCodec(), None, pairs) == _stored(scheme, "int", None, pairs)


def test_in_the_tuple_scheme_declared_str_keys_are_typed_elements() -> None:
    declared = _stored("tuple", UserText(), None, {"k": b"v"})
    undeclared = _stored("tuple", UndeclaredText(), None, {"k": b"v"})
    assert declared == [(keyspace.tuples.pack((("users",), "k")), b"v")]
    assert undeclared == [(keyspace.tuples.pack((("users",), b"k")), b"v")]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_declared_codec_still_refuses_the_wrong_type_and_writes_nothing(scheme: str) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    for codec in (StrCodec(), UserText()):
        scope = ks.scope("users", key=codec)
        with pytest.raises(InvalidKey):
            scope[b"k"] = b"v"
    scope = ks.scope("nums", key=IntCodec())
    with pytest.raises(InvalidKey):
        scope["1"] = b"v"
    assert [k for k, _ in ks.store.scan(b"", None) if not k.startswith(b"\xff")] == []


def test_scoped_heed_raw_bytes_takes_any_codec_declaring_bytes_keys(tmp_path: Any) -> None:
    db = scoped_heed.open(tmp_path / "env", "raw", api="raw_bytes", key=BytesCodec())
    try:
        db.scope("a")[b"k"] = b"v"
        assert db.scope("a")[b"k"] == b"v"
    finally:
        db.close()
    with pytest.raises(InvalidArgument, match="raw bytes keys"):
        scoped_heed.open(tmp_path / "env", "raw", api="raw_bytes", key=UserText())
