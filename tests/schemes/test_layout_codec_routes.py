"""A layout's routes for key codecs: any codec object plugs in, each scope
encodes with its own codec, and the routes a layout keeps stay bounded.

``Layout.route`` composes a layout with a scope's key codec once and keeps the
result. "Any object with encode and decode plugs in" (``keyspace.codecs``):
an unhashable one (a plain ``@dataclass``) as well, two codecs that compare
equal yet encode differently each write their own keys, and a program that
makes a codec object per request does not keep every one of them alive.
"""

from __future__ import annotations

import dataclasses
import gc
import weakref
from typing import Any

import pytest

import keyspace

SCHEMES = ["tuple", "sublevel", "length-prefixed", "scopehash", "asciihex"]


@dataclasses.dataclass
class Tagged:
    """A key codec as a plain dataclass: unhashable (``eq`` without ``frozen``)."""

    tag: bytes
    name: str = "tagged"

    def encode(self, obj: Any) -> bytes:
        if type(obj) is not bytes:
            raise keyspace.errors.InvalidKey(f"{obj!r} is not bytes")
        return self.tag + obj

    def decode(self, raw: bytes) -> bytes:
        return raw[len(self.tag) :]


class SameKind:
    """Codecs that compare equal to every codec of their class (their kind), yet
    each puts its own tag in front of a key."""

    name = "same-kind"

    def __init__(self, tag: bytes) -> None:
        self.tag = tag

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SameKind)

    def __hash__(self) -> int:
        return hash(SameKind)

    def encode(self, obj: Any) -> bytes:
        return self.tag + obj  # type: ignore[no-any-return]

    def decode(self, raw: bytes) -> bytes:
        return raw[len(self.tag) :]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_an_unhashable_key_codec_makes_a_working_scope(scheme: str) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    scope = ks.scope("a", key=Tagged(b"t:"))
    scope[b"x"] = b"1"
    assert scope[b"x"] == b"1"
    assert list(scope.keys()) == [b"x"]
    assert dict(ks.scope("a")) == {b"t:x": b"1"}
    assert dict(ks.scope("c", key=Tagged(b"t:"))) == {}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_codecs_that_compare_equal_each_encode_their_own_keys(scheme: str) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    ks.scope("a", key=SameKind(b"p:"))[b"x"] = b"1"
    ks.scope("a", key=SameKind(b"q:"))[b"x"] = b"2"
    assert dict(ks.scope("a")) == {b"p:x": b"1", b"q:x": b"2"}
    assert dict(ks.scope("a", key=SameKind(b"q:"))) == {b"x": b"2"}


def test_codec_objects_of_gone_scopes_are_not_kept_alive_by_the_layout() -> None:
    ks = keyspace.open("memory:")
    ks.scope("a")[b"t:k"] = b"v"
    refs = []
    for _ in range(1000):
        codec = Tagged(b"t:")
        refs.append(weakref.ref(codec))
        assert ks.scope("a", key=codec)[b"k"] == b"v"
    del codec
    gc.collect()
    alive = sum(ref() is not None for ref in refs)
    assert alive <= 64, f"{alive} of 1000 codec objects are still alive"
