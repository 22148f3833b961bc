"""``popitem`` removes the stored key it read, not the key its codec would write.

A key codec may read several stored forms as one key: JSON that another program
wrote (Node's ``json`` key encoding keeps object fields in insertion order, and
escapes as it likes) decodes to a value whose re-encoding is other bytes. The
last item of a scope is then removed by its stored key: ``popitem`` never raises
``KeyError`` on a scope that holds keys, never removes another key than the one
it returns, and never touches a neighbour scope.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.schemes import AsciiHex, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.stores import open_store

SCHEMES = {"tuple": TupleScheme, "asciihex": AsciiHex, "sublevel": Sublevel, "scopehash": ScopeHash}
# stored as another program wrote them; each decodes to a key whose JSON is other bytes
FOREIGN = [b'{"b":1,"a":2}', b'"\\u0061"', b"[1, 2]", b"1.50"]


@pytest.mark.parametrize("engine", ["memory", "lmdb"])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_popitem_removes_the_stored_key_it_read(name: str, engine: str, tmp_path: Path) -> None:
    scheme: Scheme = SCHEMES[name]()
    url = "memory:" if engine == "memory" else f"lmdb://{tmp_path}"
    with keyspace.attach(open_store(url), scheme=scheme) as ks:
        raw = ks.scope("a")  # the stored keys as they are
        typed = ks.scope("a", key="json")
        neighbour = ks.scope("b", key="json")
        for i, stored in enumerate(FOREIGN):
            raw[stored] = b"%d" % i
            neighbour[i] = b"n"
        typed["a"] = b"canonical"  # the JSON of the key '"\u0061"' decodes to
        want = sorted(raw.items(), key=lambda kv: scheme.encode(("a",), kv[0]))
        popped = []
        while want:
            stored, value = want.pop()
            key, got = typed.popitem()
            assert got == value and key == keyspace.codecs.JSON.decode(stored)
            assert dict(raw.items()) == dict(want)  # exactly that stored key went
            popped.append(key)
        with pytest.raises(KeyError):
            typed.popitem()
        assert len(neighbour) == len(FOREIGN)


def test_popitem_in_a_transaction_removes_the_stored_key_it_read() -> None:
    with keyspace.attach(open_store("memory:"), scheme=TupleScheme()) as ks:
        ks.scope("a")[b'{"b":1,"a":2}'] = b"v"
        ks.scope("a")[b'{"a":2,"b":1}'] = b"w"  # sorts first: popped last
        with ks.transaction() as tx:
            assert tx.scope("a", key="json").popitem() == ({"a": 2, "b": 1}, b"v")
        assert dict(ks.scope("a").items()) == {b'{"a":2,"b":1}': b"w"}
