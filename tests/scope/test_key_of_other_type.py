"""A miss on a key whose text is a key of the other type (str / bytes) says so.

In the tuple scheme (the default) ``s["user1"]`` and ``s[b"user1"]`` are two
keys: a reader that asks for the other one gets a KeyError naming the key that
exists; a plain miss stays a plain ``KeyError(key)``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keyspace


def _store() -> keyspace.Keyspace:
    ks = keyspace.open("memory://")
    ks.scope("acme", key="str")["user1"] = b"v"
    ks.scope("acme")[b"raw"] = b"w"
    return ks


def test_getitem_names_the_str_key_that_exists() -> None:
    scope = _store().scope("acme")
    with pytest.raises(KeyError) as info:
        scope[b"user1"]
    assert str(info.value) == "b'user1' (a str key 'user1' exists: this scope's keys are str)"
    assert info.value.args == (b"user1",)


def test_getitem_names_the_bytes_key_that_exists() -> None:
    scope = _store().scope("acme")
    with pytest.raises(KeyError) as info:
        scope["raw"]
    assert str(info.value) == "'raw' (a bytes key b'raw' exists: this scope's keys are bytes)"


def test_delitem_and_pop_name_it_and_change_nothing() -> None:
    ks = _store()
    scope = ks.scope("acme")
    with pytest.raises(KeyError, match="a str key 'user1' exists"):
        del scope[b"user1"]
    with pytest.raises(KeyError, match="a bytes key b'raw' exists"):
        scope.pop("raw")
    assert scope.pop("raw", None) is None
    assert dict(scope.items()) == {"user1": b"v", b"raw": b"w"}


def test_a_plain_miss_is_a_plain_key_error() -> None:
    scope = _store().scope("acme")
    for key in (b"nobody", "nobody", (1, "x"), 7):
        with pytest.raises(KeyError) as info:
            scope[key]
        assert type(info.value) is KeyError
        assert info.value.args == (key,)


def test_inside_a_transaction() -> None:
    ks = _store()
    with ks.transaction() as tx, pytest.raises(KeyError, match="a str key 'user1' exists"):
        tx.scope("acme")[b"user1"]


@given(st.text(min_size=1, max_size=8), st.booleans())
def test_any_text_either_way(text: str, as_str: bool) -> None:
    ks = keyspace.open("memory://")
    written: str | bytes = text if as_str else text.encode()
    asked: str | bytes = text.encode() if as_str else text
    ks.scope("s")[written] = b"1"
    with pytest.raises(KeyError) as info:
        ks.scope("s")[asked]
    assert info.value.args == (asked,)
    assert f"a {type(written).__name__} key {written!r} exists" in str(info.value)
