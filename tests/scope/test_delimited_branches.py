"""Branch scopes of a Delimited keyspace: the root and every path shallower than
the declared depth list their children (the LevelDB namespacing note's four
listings, read back as scopes), cover their subtree, and hold no keys."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace.errors import LayoutError
from keyspace.schemes import Delimited

USERS = ["rod", "rod.vagg", "rod1977", "roderick"]

NOTE_ORDER = {
    ":": ["rod.vagg", "rod1977", "rod", "roderick"],
    "!": ["rod", "rod.vagg", "rod1977", "roderick"],
    "~": ["rod.vagg", "rod1977", "roderick", "rod"],
    "\x00": ["rod", "rod.vagg", "rod1977", "roderick"],
}
"""The user order of the note's four listings, one per separator."""


@pytest.mark.parametrize("separator", list(NOTE_ORDER), ids=["colon", "bang", "tilde", "nul"])
def test_the_roots_children_are_the_notes_listing(separator: str, tmp_path: Path) -> None:
    url = f"leveldb://{tmp_path / 'sessions'}"
    with keyspace.open(url, scheme=Delimited(separator)) as ks:
        for user in USERS:
            ks.scope(user).update({b"last_login": b"1", b"default_theme": b"dark"})
        expected = [user.encode() for user in NOTE_ORDER[separator]]
        assert ks.scopes() == expected
        assert ks.scope().scopes() == expected
        with ks.snapshot() as snap:
            assert snap.scope().scopes() == expected
        with ks.transaction() as tx:
            assert tx.scope().scopes() == expected


def test_branches_of_a_deeper_keyspace() -> None:
    with keyspace.open("memory:", scheme=Delimited(":", depth=3)) as ks:
        ks.scope("user", "42", "profile")[b"name"] = b"ada"
        ks.scope("user", "42", "profile")[b"a:b:c"] = b"a key holding the separator"
        ks.scope("user", "7", "profile")[b"name"] = b"bob"
        ks.scope("cfg", "x", "y")[b"k"] = b"1"
        assert ks.scopes() == [b"cfg", b"user"]
        assert ks.scope("user").scopes() == [b"42", b"7"]
        assert ks.scope("user", "42").scopes() == [b"profile"]
        assert ks.scope("user", "42", "profile").scopes() == []
        branch = ks.scope("user")
        assert list(branch.items()) == [] and len(branch) == 0 and list(branch) == []
        assert [(p, k) for p, k, _ in branch.subtree()] == [
            ((b"user", b"42", b"profile"), b"a:b:c"),
            ((b"user", b"42", b"profile"), b"name"),
            ((b"user", b"7", b"profile"), b"name"),
        ]
        before = list(ks.store.scan(b"", None))
        for refused in (
            lambda: branch.__setitem__(b"42:profile:name", b"stolen"),
            lambda: branch.get(b"x"),
            lambda: branch.update({b"x": b"y"}),
        ):
            with pytest.raises(LayoutError, match=r"depth 1; .* depth 3"):
                refused()
        with pytest.raises(LayoutError, match="depth 4"):
            ks.scope("a", "b", "c", "d")
        assert list(ks.store.scan(b"", None)) == before
        branch.clear()  # a branch has no own keys: nothing goes
        assert list(ks.store.scan(b"", None)) == before
        ks.scope("user").drop()
        assert [k for k, _ in ks.store.scan(b"", None)] == [b"cfg:x:y:k"]


_names = st.binary(max_size=4).filter(lambda b: b"|" not in b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_names, _names, st.binary(max_size=5)), max_size=12))
def test_children_of_every_branch_are_the_distinct_names_in_stored_order(
    entries: list[tuple[bytes, bytes, bytes]],
) -> None:
    """Keys may hold the separator; children are still exactly the names written."""
    scheme = Delimited("|", depth=2)
    with keyspace.open("memory:", scheme=scheme) as ks:
        for a, b, key in entries:
            ks.scope(a, b)[key] = b"v"
        firsts = sorted({a for a, _, _ in entries}, key=lambda a: scheme.prefix((a,)))
        assert ks.scopes() == firsts
        for a in firsts:
            seconds = sorted({b for x, b, _ in entries if x == a}, key=lambda b: scheme.prefix((a, b)))
            assert ks.scope(a).scopes() == seconds


def test_the_asyncio_keyspace_lists_the_roots_children() -> None:
    async def main() -> None:
        async with await keyspace.aio.open("memory:", scheme=Delimited("\x00")) as aks:
            for user in USERS:
                await aks.scope(user).put(b"last_login", b"1")
            expected = [user.encode() for user in NOTE_ORDER["\x00"]]
            assert await aks.scopes() == expected
            assert await aks.scope().scopes() == expected

    asyncio.run(main())
