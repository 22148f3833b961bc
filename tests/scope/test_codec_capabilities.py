"""A codec declares what it can do; the layers above read the declaration, never
the codec's class. ``writes_json`` decides how a unique index entry of an
IndexedMap under the CosmWasm layout embeds a record (``{"pk": base64, "value":
…}``): the record's bytes as they are when its codec declares it, else a base64
JSON string."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import keyspace
from keyspace import bincode
from keyspace.codecs import BYTES, INT, JSON, STR, JsonCodec, writes_json
from keyspace.collections import IndexedMap, UniqueIndex
from keyspace.collections._layouts import SERDE_JSON
from keyspace.errors import UniqueViolation


class PointCodec:
    """A user's codec of ``(x, y)`` points as a JSON array; no relation to JsonCodec."""

    name = "point"
    writes_json = True

    def encode(self, obj: Any) -> bytes:
        x, y = obj
        return json.dumps([x, y], separators=(",", ":")).encode()

    def decode(self, raw: bytes) -> Any:
        x, y = json.loads(raw)
        return (x, y)


class UndeclaredPointCodec(PointCodec):
    """The same bytes, without the declaration."""

    writes_json = False


class OpaqueJsonCodec(JsonCodec):
    """A JsonCodec subclass that withdraws the declaration."""

    writes_json = False


def _points(codec: Any) -> tuple[IndexedMap, keyspace.Scope]:
    app = keyspace.open("memory:", scheme="length-prefixed").scope()
    im = IndexedMap(
        app, "im", key="str", value=codec, indexes={"u": UniqueIndex(lambda p: str(p[0]), "im_u", key="str")}
    )
    return im, app.scope(key="bytes", value="bytes")


def test_the_shipped_codecs_declare_what_they_did_by_class() -> None:
    assert writes_json(JSON) and writes_json(SERDE_JSON) and writes_json(JsonCodec(sort_keys=False))
    for codec in (BYTES, STR, INT, bincode.STRING, bincode.BYTES, bincode.U64):
        assert not writes_json(codec)


def test_a_codec_without_the_attribute_keeps_the_default() -> None:
    class Plain:
        name = "plain"

        def encode(self, obj: Any) -> bytes:
            return bytes(obj)

        def decode(self, raw: bytes) -> Any:
            return raw

    assert not writes_json(Plain())
    odd = Plain()
    odd.writes_json = "yes"  # type: ignore[attr-defined]  # only True declares it
    assert not writes_json(odd)
    declared = Plain()
    declared.writes_json = True  # type: ignore[attr-defined]  # on the instance alone
    assert writes_json(declared)


def test_a_user_codec_that_declares_json_is_embedded_as_it_is() -> None:
    im, raw = _points(PointCodec())
    im.save("a", (1, 2))
    assert raw[b"\x00\x04im_u1"] == b'{"pk":"YQ==","value":[1,2]}'
    assert im.index("u").load("1") == ("a", (1, 2))
    im.save("a", (1, 2))  # its own entry, read back
    with pytest.raises(UniqueViolation):
        im.save("b", (1, 5))


@pytest.mark.parametrize("codec", [UndeclaredPointCodec(), OpaqueJsonCodec()], ids=["user", "json-subclass"])
def test_without_the_declaration_the_value_is_a_base64_string(codec: Any) -> None:
    im, raw = _points(codec)
    im.save("a", [1, 2])
    entry = raw[b"\x00\x04im_u1"]
    assert entry == b'{"pk":"YQ==","value":"' + base64.b64encode(b"[1,2]") + b'"}'
    assert im.index("u").load("1")[0] == "a"
