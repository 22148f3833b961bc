"""Records and keys written by hand into a store never make one scope reach another.

- Garbage stored keys inside a scope's own range (bytes no encoder writes there:
  ``fe``, ``00``, ``ff``, stray separators, truncated length fields): every read of
  the scope either shows them as its own keys or raises a keyspace error
  (``DecodeError``, ``LayoutError``), never a raw exception; its sibling reads as
  before; ``clear`` removes exactly the scope's own range and leaves the sibling;
  ``inspect`` exits 0 (warning about what does not decode).
- A forged LengthPrefixed layout record saying a branch is a leaf too: the branch
  never shows, counts, overwrites, pops or clears its child's keys, however the
  keyspace learns the layout (child first, branch first, a fresh keyspace).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from _xxh32 import colliding_name

import keyspace
from keyspace._metadata import LAYOUT_START
from keyspace.cli import main
from keyspace.errors import HashCollision, KeyspaceError, LayoutError
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes.length_prefixed import to_length_prefixed_nested

GARBAGE = [
    b"\xfe",
    b"\x00",
    b"\xff",
    b"\x02ab",
    b"\x05\x00",
    b"\x01\x00\xff",
    b"!",
    b"!!",
    b"\x00\x01",
    b"\x00" * 9,
    b"\x09\x00\x00\x00\x00\x00\x00\x00ab",
]
# scheme, CLI options, the scope, its sibling
SCHEMES: dict[str, tuple[Any, list[str], tuple[Any, ...], tuple[Any, ...]]] = {
    "tuple": (TupleScheme(), [], ("t", "a"), ("t", "ab")),
    "asciihex": (AsciiHex(), [], ("t", "a"), ("t", "ab")),
    "sublevel": (Sublevel(), [], ("t", "a"), ("t", "ab")),
    "scopehash": (ScopeHash(), [], ("a",), ("ab",)),
    "delimited": (Delimited(":"), ["--separator", ":"], ("a",), ("ab",)),
    "length-prefixed": (LengthPrefixed(), ["--depth", "2"], (b"t", b"a"), (b"t", b"ab")),
}
READS = {
    "len": len,
    "items": lambda s: list(s.items()),
    "keys": lambda s: list(s.keys()),
    "reverse-short": lambda s: list(s.items(reverse=True, limit=3)),
    "scopes": lambda s: s.scopes(),
    "subtree": lambda s: list(s.subtree()),
    "get": lambda s: s.get(b"ok"),
}


@pytest.mark.parametrize("engine", ["lmdb", "leveldb"])
@pytest.mark.parametrize("name", list(SCHEMES))
def test_garbage_in_a_scope_range_stays_in_that_scope(
    name: str, engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scheme, cli_options, path, sibling_path = SCHEMES[name]
    url = f"{engine}://{tmp_path / 'db'}"
    with keyspace.open(url, scheme=scheme) as ks:
        scope, sibling = ks.scope(*path), ks.scope(*sibling_path)
        scope[b"ok"] = b"1"
        sibling.update({b"x": b"2", b"y": b"3"})
        for junk in GARBAGE:
            ks.store.put(scope.prefix + junk, b"junk")
        for read in READS.values():
            # refusing to read what does not decode is fine; a raw error is not
            with contextlib.suppress(KeyspaceError):
                read(scope)
            assert dict(sibling.items()) == {b"x": b"2", b"y": b"3"}
            assert sibling.get(b"ok") is None and len(sibling) == 2
        assert scope.get(b"ok") == b"1"
        scope.clear()
        assert scope.get(b"ok") is None
        assert dict(sibling.items()) == {b"x": b"2", b"y": b"3"}
    assert main(["inspect", url, "--scheme", name, *cli_options]) == 0
    capsys.readouterr()


def _forged(url: str) -> None:
    with keyspace.open(url, scheme=LengthPrefixed()) as ks:
        ks.scope(b"a", b"b")[b"k"] = b"child secret"
        ks.store.put(LAYOUT_START + to_length_prefixed_nested((b"a",)), b"leaf")


CHILD_KEY_AS_PARENT_KEY = b"\x00\x01bk"  # the key of (a,) whose stored key is (a, b)'s k


@pytest.mark.parametrize("learn", ["child-first", "branch-first", "fresh"])
def test_a_forged_leaf_record_never_lets_a_branch_reach_its_child(learn: str, tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    _forged(url)
    ks = keyspace.open(url, scheme=LengthPrefixed())
    try:
        if learn == "child-first":
            with contextlib.suppress(LayoutError):
                len(ks.scope(b"a", b"b"))
        elif learn == "branch-first":
            len(ks.scope(b"a"))
        branch = ks.scope(b"a")
        assert list(branch.items()) == [] and len(branch) == 0
        assert branch.get(CHILD_KEY_AS_PARENT_KEY) is None and CHILD_KEY_AS_PARENT_KEY not in branch
        assert branch.pop(CHILD_KEY_AS_PARENT_KEY, None) is None
        with pytest.raises(KeyError):
            del branch[CHILD_KEY_AS_PARENT_KEY]
        with pytest.raises(LayoutError):
            branch[CHILD_KEY_AS_PARENT_KEY] = b"overwrite"
        with pytest.raises(LayoutError):
            branch.update({CHILD_KEY_AS_PARENT_KEY: b"overwrite"})
        branch.clear()
        raw = list(ks.store.scan(b"", None))
        assert (b"\x00\x01a\x00\x01bk", b"child secret") in raw
        assert all(v != b"overwrite" for _, v in raw)
    finally:
        ks.close()


def test_a_deleted_leaf_record_never_lets_its_parent_reach_the_leafs_keys(tmp_path: Path) -> None:
    """The layout record of a leaf deleted outside keyspace: its parent would be a
    free path whose prefix holds the leaf's keys, read and cleared as its own."""
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url, scheme=LengthPrefixed()) as ks:
        ks.scope(b"a", b"b")[b"k"] = b"child secret"
        ks.scope(b"c")[b"k"] = b"other"
        ks.store.delete(LAYOUT_START + to_length_prefixed_nested((b"a", b"b")))
        before = list(ks.store.scan(b"", None))
    with keyspace.open(url, scheme=LengthPrefixed()) as ks:
        parent = ks.scope(b"a")
        for touch in (
            lambda: list(parent.items()),
            lambda: len(parent),
            parent.clear,
            lambda: parent.get(b"k"),
        ):
            with pytest.raises(LayoutError, match="no recorded layout, yet the store holds keys under it"):
                touch()
        assert ks.scope(b"c")[b"k"] == b"other"
        assert list(ks.store.scan(b"", None)) == before


def test_a_deleted_registry_entry_never_hands_a_names_keys_to_its_hash_twin(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    twin = colliding_name("alice")
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        ks.scope("alice")[b"secret"] = b"alice's data"
        ks.store.delete(ScopeHash().prefix(("alice",)))  # its registry entry
        before = list(ks.store.scan(b"", None))
    with keyspace.open(url, scheme=ScopeHash()) as ks:
        other = ks.scope(twin)
        for touch in (lambda: list(other.items()), lambda: other.__setitem__(b"k", b"v"), other.clear):
            with pytest.raises(HashCollision, match="no name registry entry says whose they are"):
                touch()
        assert list(ks.store.scan(b"", None)) == before
