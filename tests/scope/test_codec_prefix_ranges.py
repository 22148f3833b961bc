"""``prefix=`` on a scope whose key codec is not the scheme's own (``json``, a
custom codec): the prefix is a key of that codec, encoded by it as every other
key and bound is, in every scheme.

In the tuple scheme such a scope stores each key as one bytes element (the
codec's bytes), so ``prefix=k`` selects the key ``k`` itself (elements equal to
the prefix's); in the byte schemes it selects the keys whose encoded bytes start
with the encoded prefix. ``clear_range(prefix=)`` removes what ``items(prefix=)``
yields and nothing of a neighbour scope.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.schemes import AsciiHex, Delimited, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.stores import open_store

SCHEMES = {
    "tuple": TupleScheme,
    "tuple-raw-prefix": lambda: TupleScheme(raw_prefix=b"p/"),
    "asciihex": AsciiHex,
    "sublevel": Sublevel,
    "scopehash": ScopeHash,
    "delimited": lambda: Delimited(":"),
}
KEYS: list[Any] = ["x", "xy", [1, 2], 5, 50, {"a": 1}, None]


class Upper:
    """A custom key codec: str keys stored as their upper-case UTF-8 (lossy, but a codec)."""

    def encode(self, key: Any) -> bytes:
        if not isinstance(key, str):
            raise TypeError(key)
        return key.upper().encode()

    def decode(self, raw: bytes) -> str:
        return raw.decode().lower()


def _expected(scheme: Scheme, prefix: Any, encode: Any, keys: list[Any]) -> list[Any]:
    head = encode(prefix)
    if scheme.typed_keys:  # one bytes element per key: the key equal to the prefix
        return [k for k in keys if encode(k) == head]
    return [k for k in keys if encode(k).startswith(head)]


@pytest.mark.parametrize("engine", ["memory", "lmdb"])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_json_key_prefix_is_encoded_by_the_codec(name: str, engine: str, tmp_path: Path) -> None:
    scheme = SCHEMES[name]()
    url = "memory:" if engine == "memory" else f"lmdb://{tmp_path}"
    with keyspace.attach(open_store(url), scheme=scheme) as ks:
        path = ("a",)
        s = ks.scope(*path, key="json")
        neighbour = ks.scope("b", key="json")
        codec = keyspace.codecs.JSON
        for i, k in enumerate(KEYS):
            s[k] = b"%d" % i
            neighbour[k] = b"n%d" % i
        order = sorted(KEYS, key=lambda k: scheme.encode(path, codec.encode(k)))
        for prefix in KEYS:
            if prefix is None:  # prefix=None asks for no prefix
                continue
            want = _expected(scheme, prefix, codec.encode, order)
            assert want, prefix  # every prefix is itself a key
            assert list(s.keys(prefix=prefix)) == want, prefix
            assert list(s.keys(prefix=prefix, reverse=True, limit=1)) == want[::-1][:1], prefix
            assert [v for _, v in s.items(prefix=prefix)] == [b"%d" % KEYS.index(k) for k in want]
        s.clear_range(prefix="x")
        gone = set(map(codec.encode, _expected(scheme, "x", codec.encode, KEYS)))
        left = sorted(codec.encode(k) for k in KEYS if codec.encode(k) not in gone)
        assert sorted(map(codec.encode, s.keys())) == left
        assert len(neighbour) == len(KEYS)


@pytest.mark.parametrize("name", ["tuple", "asciihex", "sublevel", "scopehash"])
def test_custom_key_codec_prefix_is_encoded_by_the_codec(name: str) -> None:
    scheme = SCHEMES[name]()
    with keyspace.attach(open_store("memory:"), scheme=scheme) as ks:
        s = ks.scope("a", key=Upper())
        for k in ("ab", "abc", "b"):
            s[k] = k.encode()
        want = ["ab"] if scheme.typed_keys else ["ab", "abc"]
        assert list(s.keys(prefix="ab")) == want
        assert list(s.keys(prefix="zz")) == []
