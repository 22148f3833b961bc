"""Under the CosmWasm layout a UniqueIndex entry is JSON (``{"pk": base64,
"value": …}``). With a value codec whose bytes are not JSON (bytes, str, int,
bincode) the entry embeds the value as a base64 JSON string, so the entry stays
JSON: saving the record again, loading it through the index and a conflicting
save all work, where the entry was once unreadable (DecodeError on every later
use of that index key)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import keyspace
from keyspace.collections import IndexedMap, UniqueIndex
from keyspace.errors import UniqueViolation

CASES = [("bytes", b'x"y\xff'), ("str", 'x"y}'), ("int", 7), ("bincode:String", 'a"b')]


@pytest.mark.parametrize(("codec", "value"), CASES, ids=[c for c, _ in CASES])
def test_a_unique_index_works_with_a_value_codec_that_is_not_json(codec: str, value: Any) -> None:
    app = keyspace.open("memory:", scheme="length-prefixed").scope()
    im = IndexedMap(
        app, "im", key="str", value=codec, indexes={"u": UniqueIndex(lambda v: "k", "im_u", key="str")}
    )
    im.save("a", value)
    im.save("a", value)  # the same record again: its own entry is read back
    assert im.index("u").load("k") == ("a", value)
    with pytest.raises(UniqueViolation):
        im.save("b", value)
    entry = json.loads(app.scope(key="bytes", value="bytes")[b"\x00\x04im_uk"])
    assert base64.b64decode(entry["pk"]) == b"a"
    assert base64.b64decode(entry["value"]) == im.codec.encode(value)


def test_a_json_value_is_embedded_as_cw_storage_plus_does() -> None:
    app = keyspace.open("memory:", scheme="length-prefixed").scope()
    im = IndexedMap(app, "im", key="str", indexes={"u": UniqueIndex(lambda v: "k", "im_u", key="str")})
    im.save("a", {"n": 1})
    assert app.scope(key="bytes", value="bytes")[b"\x00\x04im_uk"] == b'{"pk":"YQ==","value":{"n":1}}'
