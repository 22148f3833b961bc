"""Directory handles and operations in one process: the hazards FoundationDB's
directory layer leaves open (two creations of one path in a transaction; a
handle writing after its directory was removed), moves, refusals that change
nothing, and directories beside the keyspace's own scopes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import fdb.tuple
import pytest

import keyspace
from keyspace import Directory, Scope
from keyspace.directory import Tree
from keyspace.errors import (
    DirectoryError,
    DirectoryExists,
    DirectoryNotFound,
    InvalidArgument,
    LayerMismatch,
    PrefixInUse,
    SchemeMismatch,
    StaleDirectory,
)
from keyspace.stores import MemoryStore


def items(ks: keyspace.Keyspace) -> dict[bytes, bytes]:
    return dict(ks.store.scan(b"", None))


def under(ks: keyspace.Keyspace, prefix: bytes) -> list[bytes]:
    return [k for k in items(ks) if k.startswith(prefix)]


def test_create_or_open_twice_in_one_transaction_gives_one_prefix_and_one_node() -> None:
    ks = keyspace.open("memory:")
    with ks.transaction() as tx:
        a = tx.directories.create_or_open(("app", "users"))
        b = tx.directories.create_or_open(("app", "users"))
        c = tx.directory("app", "users")
        assert a.prefix == b.prefix == c.prefix
    tree = Tree()
    stored = items(ks)
    layers = [k for k in stored if k.startswith(b"\xfe") and k.endswith(b"\x01layer\x00")]
    assert len(layers) == 2  # app and app/users, nothing orphaned
    (count,) = [v for k, v in stored.items() if k.startswith(tree.counters)]
    assert int.from_bytes(count, "little") == 2  # two allocations: app and users
    assert ks.directories.open(("app", "users")).prefix == a.prefix


OPS: dict[str, Callable[[Any], Any]] = {
    "get": lambda d: d.get(b"k"),
    "getitem": lambda d: d[b"k"],
    "contains": lambda d: b"k" in d,
    "setitem": lambda d: d.__setitem__(b"n", b"1"),
    "setitem_str": lambda d: d.__setitem__("n", b"1"),
    "delitem": lambda d: d.__delitem__(b"k"),
    "discard": lambda d: d.discard(b"k"),
    "pop": lambda d: d.pop(b"k", None),
    "setdefault": lambda d: d.setdefault(b"n", b"1"),
    "update": lambda d: d.update({b"n": b"1"}),
    "len": len,
    "items": lambda d: list(d.items()),
    "items_range": lambda d: list(d.items(start=b"a", limit=3)),
    "keys": lambda d: list(d.keys()),
    "clear": lambda d: d.clear(),
    "clear_range": lambda d: d.clear_range(start=b"a"),
    "popitem": lambda d: d.popitem(),
}


@pytest.mark.parametrize("op", list(OPS))
def test_every_operation_of_a_removed_directorys_handle_raises_stale(op: str) -> None:
    ks = keyspace.open("memory:")
    d = ks.directory("a", "b")
    d[b"k"] = b"v"
    prefix = d.prefix
    ks.directories.remove(("a",))
    with pytest.raises(StaleDirectory, match="was removed"):
        OPS[op](d)
    assert under(ks, prefix) == []
    with ks.transaction() as tx:  # the handle's operations inside a transaction: the same
        bound = d._on(tx.view, d._state.child())
        with pytest.raises(StaleDirectory):
            OPS[op](bound)
    assert under(ks, prefix) == []


def test_a_transaction_that_removes_a_directory_it_wrote_through_commits_no_orphan() -> None:
    ks = keyspace.open("memory:")
    keep = ks.scope("t")
    with pytest.raises(StaleDirectory, match="this transaction removed"), ks.transaction() as tx:
        d = tx.directory("x")
        d[b"a"] = b"1"  # checked once: later writes of the transaction take the bare put
        tx.scope("t")[b"k"] = b"v"
        tx.directories.remove(("x",))
        d[b"b"] = b"2"
    assert items(ks) == {} and len(keep) == 0


def test_a_transaction_that_removes_then_makes_again_commits() -> None:
    ks = keyspace.open("memory:")
    with ks.transaction() as tx:
        d = tx.directory("x")
        d[b"a"] = b"1"
        tx.directories.remove(("x",))
        again = tx.directory("x")
        again[b"b"] = b"2"
    assert dict(ks.directory("x").items()) == {b"b": b"2"}


def test_a_moved_directorys_handle_keeps_working_on_the_same_keys() -> None:
    ks = keyspace.open("memory:")
    d = ks.directory("a", "b")
    d[b"k"] = b"v"
    sub = d.create_or_open(("c",))
    sub[b"s"] = b"1"
    before = d.prefix
    moved = ks.directories.move(("a", "b"), ("z",))
    assert moved.prefix == before and moved.path == ("z",)
    assert d[b"k"] == b"v" and sub[b"s"] == b"1"
    d[b"k2"] = b"w"
    assert dict(ks.directories.open(("z",)).items()) == {b"k": b"v", b"k2": b"w"}
    assert ks.directories.open(("z", "c")).prefix == sub.prefix
    assert ks.directories.list(("a",)) == [] and ks.directories.list() == ["a", "z"]


def test_move_cost_does_not_depend_on_the_keys_held() -> None:
    ks = keyspace.open("memory:")
    d = ks.directory("big")
    d.update({i: b"x" for i in range(2000)})
    before = {k for k in items(ks) if not k.startswith(b"\xfe")}
    ks.directories.move(("big",), ("bigger",))
    assert {k for k in items(ks) if not k.startswith(b"\xfe")} == before  # no key rewritten


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda ds: ds.move(("a",), ("a", "inner")), DirectoryError, "inside it"),
        (lambda ds: ds.move(("a",), ("a",)), DirectoryError, "inside it"),
        (lambda ds: ds.move(("a",), ("b",)), DirectoryExists, "a directory is there"),
        (lambda ds: ds.move(("nope",), ("c",)), DirectoryNotFound, "no directory at"),
        (lambda ds: ds.move(("a",), ("nope", "c")), DirectoryNotFound, "no parent directory"),
        (lambda ds: ds.open(("nope",)), DirectoryNotFound, "no directory at"),
        (lambda ds: ds.create(("a",)), DirectoryExists, "exists already"),
        (lambda ds: ds.open(("b",), b"other"), LayerMismatch, "has layer"),
        (lambda ds: ds.create_or_open(("b",), b"other"), LayerMismatch, "has layer"),
        (lambda ds: ds.remove(("nope",)), DirectoryNotFound, "to remove"),
        (lambda ds: ds.remove(()), DirectoryError, "root directory"),
        (lambda ds: ds.open(()), DirectoryError, "root directory"),
        (lambda ds: ds.create_or_open((b"a",)), DirectoryError, "tuple of str"),
        (lambda ds: ds.create_or_open(("a", 1)), DirectoryError, "tuple of str"),
        (lambda ds: ds.create_or_open(("\ud800",)), DirectoryError, "UTF-8"),
        (lambda ds: ds.create_or_open(("c",), "layer"), DirectoryError, "layer is bytes"),
        (lambda ds: ds.create(("c",), prefix=b"\x30"), DirectoryError, "manual prefixes"),
        (lambda ds: ds.list(("nope",)), DirectoryNotFound, "no directory at"),
    ],
)
def test_refusals_are_named_and_change_nothing(call: Callable[[Any], Any], error: type, words: str) -> None:
    ks = keyspace.open("memory:")
    ks.directories.create_or_open(("a",))
    ks.directories.create_or_open(("b",), b"table")
    before = items(ks)
    with pytest.raises(error, match=words):
        call(ks.directories)
    assert items(ks) == before
    with pytest.raises(error, match=words), ks.transaction() as tx:
        call(tx.directories)
    assert items(ks) == before


def test_manual_prefixes_are_checked_against_directories_and_the_keyspace() -> None:
    ks = keyspace.open("memory:", directory_manual_prefixes=True)
    ks.scope("t")[b"k"] = b"v"
    ks.directories.create(("a",), prefix=b"\x30\x01")
    before = items(ks)
    for prefix, words in [
        (b"\x30", "meets another directory"),  # holds a's prefix
        (b"\x30\x01\x02", "meets another directory"),  # inside a's prefix
        (b"\x05", "keeps its scopes' keys"),  # the tuple scopes' keys
        (b"\xff", "keeps its scopes' keys"),  # the records
        (b"\xfe\x10", "the directory nodes"),
        (b"", "empty"),
    ]:
        with pytest.raises(PrefixInUse, match=words):
            ks.directories.create(("b",), prefix=prefix)
        assert items(ks) == before
    made = ks.directories.create(("b",), prefix=b"\x31")
    assert made.prefix == b"\x31"


def test_directories_beside_tuple_scopes_in_one_store() -> None:
    ks = keyspace.open("memory:")
    scope = ks.scope("app", "users")
    scope[b"alice"] = b"s"
    d = ks.directory("app", "users")
    d[b"alice"] = b"d"
    assert scope[b"alice"] == b"s" and d[b"alice"] == b"d"
    assert list(ks.scope().subtree()) == [(("app", "users"), b"alice", b"s")]
    assert ks.scope().scopes() == ["app"]
    assert d.prefix[0] in range(0x14, 0x1D) and scope.prefix[0] == 0x05
    ks.scope("app").drop()
    assert d[b"alice"] == b"d"
    ks.directories.remove(("app",))
    assert under(ks, b"\xfe") != [] and under(ks, d.prefix) == []


def test_a_directory_is_a_scope_with_its_range_words_and_codecs() -> None:
    ks = keyspace.open("memory:")
    d = ks.directories.create_or_open(("t",), key="str", value="json")
    assert isinstance(d, Directory) and isinstance(d, Scope)
    for i in range(10):
        d[f"k{i}"] = {"i": i}
    assert list(d.keys(start="k2", stop="k5")) == ["k2", "k3", "k4"]
    assert [v["i"] for v in d.values(reverse=True, limit=2)] == [9, 8]
    assert list(d.keys(start="k7", include_start=False)) == ["k8", "k9"]
    assert list(d.keys(prefix="k1")) == ["k1"]
    raw = ks.directories.open(("t",))
    assert raw["k1"] == b'{"i":1}'
    assert ks.store.get(d.prefix + fdb.tuple.pack(("k1",))) == b'{"i":1}'
    tup = ks.directory("pairs")
    tup[("a", 1)] = b"1"
    tup[("a", 2)] = b"2"
    tup[("b", 1)] = b"3"
    assert list(tup.keys(prefix=("a",))) == [("a", 1), ("a", 2)]
    with pytest.raises(DirectoryError, match="no child scopes"):
        tup.scope("x")


def test_directory_methods_are_relative_to_the_directory() -> None:
    ks = keyspace.open("memory:")
    app = ks.directory("app")
    users = app.create_or_open(("users",))
    assert users.path == ("app", "users")
    assert app.list() == ["users"] and app.exists(("users",)) and app.exists()
    app.move(("users",), ("people",))
    assert ks.directories.list(("app",)) == ["people"]
    assert app.open(("people",)).prefix == users.prefix
    app.remove(("people",))
    assert not app.remove_if_exists(("people",))
    moved = app.move_to(("top",))
    assert moved.path == ("top",) and ks.directories.list() == ["top"]


def test_keyspaces_whose_keys_would_meet_directories_are_refused() -> None:
    store = MemoryStore()
    ks = keyspace.attach(store, close_store=False)
    ks.directory("a")[b"k"] = b"v"
    with pytest.raises(SchemeMismatch, match="directories"):
        keyspace.attach(store, scheme=keyspace.TupleScheme(b"\x15"), close_store=False)
    with pytest.raises(SchemeMismatch, match="directories"):
        keyspace.attach(store, scheme=keyspace.TupleScheme(b"\xfe"), close_store=False)
    keyspace.attach(store, scheme=keyspace.TupleScheme(b"\x40"), close_store=False).scope("x")[b"k"] = b"1"
    other = MemoryStore()
    keyspace.attach(other, scheme=keyspace.TupleScheme(b"\x15"), close_store=False).scope("x")[b"k"] = b"1"
    root = keyspace.attach(other, scheme="tuple", close_store=False)
    with pytest.raises(SchemeMismatch, match="directories keep"):
        root.directory("a")
    subl = keyspace.attach(MemoryStore(), scheme="sublevel")
    with pytest.raises(SchemeMismatch, match="tuple scheme"):
        subl.directory("a")
    with pytest.raises(SchemeMismatch, match="tuple scheme"):
        subl.directories.list()


def test_a_reopened_keyspace_knows_directories_are_in_use(tmp_path: Any) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        ks.directory("a")[b"k"] = b"v"
    with pytest.raises(SchemeMismatch, match="directories"):
        keyspace.open(url, scheme=keyspace.TupleScheme(b"\x15"))
    with keyspace.open(url) as ks:
        assert ks.directories.open(("a",))[b"k"] == b"v"


def test_keyspaces_whose_keys_would_meet_a_manual_prefix_are_refused() -> None:
    store = MemoryStore()
    ks = keyspace.attach(store, close_store=False)
    ks.directories.manual = True
    ks.directories.create(("m",), prefix=b"\x40\x01")
    ks.directories.create(("n",), prefix=b"\x42")
    ks.directories.create(("o",), prefix=b"\x43\x05\x01")
    # keys raw 05 ...: inside a directory's prefix, or holding one
    for raw in (b"\x40\x01", b"\x42\x07", b"\x43"):
        with pytest.raises(SchemeMismatch, match="directories"):
            keyspace.attach(store, scheme=keyspace.TupleScheme(raw), close_store=False)
    for raw in (b"\x40", b"\x41"):  # 40 05 ... and 41 05 ... meet no directory
        keyspace.attach(store, scheme=keyspace.TupleScheme(raw), close_store=False).scope("x")[b"k"] = b"1"


def test_a_manual_prefix_meeting_another_keyspaces_keys_is_refused() -> None:
    store = MemoryStore()
    keyspace.attach(store, scheme=keyspace.TupleScheme(b"\x50"), close_store=False).scope("x")[b"k"] = b"1"
    ks = keyspace.attach(store, scheme="tuple", close_store=False)
    ks.directories.manual = True
    before = dict(store.scan(b"", None))
    for prefix in (b"\x50", b"\x50\x05", b"\x50\x05\x02"):
        with pytest.raises(PrefixInUse, match="keeps its scopes' keys"):
            ks.directories.create(("d",), prefix=prefix)
        assert dict(store.scan(b"", None)) == before
    assert ks.directories.create(("d",), prefix=b"\x50\x01").prefix == b"\x50\x01"


def test_a_keyspace_opened_before_directories_were_made_refuses_its_first_write_into_them() -> None:
    store = MemoryStore()
    stale = keyspace.attach(store, scheme=keyspace.TupleScheme(b"\x15"), close_store=False)  # opened on empty
    root = keyspace.attach(store, scheme="tuple", close_store=False)
    made = [root.directories.create_or_open((f"d{i}",)).prefix for i in range(3)]
    before = dict(store.scan(b"", None))
    with pytest.raises(SchemeMismatch, match="directories"):
        stale.scope("x")[b"k"] = b"1"  # 15 05 ...: where the allocator hands out 15 05
    assert dict(store.scan(b"", None)) == before
    assert [root.directories.open((f"d{i}",)).prefix for i in range(3)] == made


def test_create_or_open_of_an_existing_directory_writes_nothing(tmp_path: Any) -> None:
    with keyspace.open(f"lmdb://{tmp_path / 'db'}") as ks:
        made = ks.directory("a", "b")
        commits = []
        real = ks.store.transaction

        def counted() -> Any:
            commits.append(1)
            return real()

        ks.store.transaction = counted  # type: ignore[method-assign]
        again = ks.directory("a", "b")
        assert again.prefix == made.prefix and commits == []
        with pytest.raises(LayerMismatch):
            ks.directories.create_or_open(("a", "b"), b"other")
        ks.directory("a", "c")
        assert commits == [1]


def test_a_handle_removing_its_own_directory_in_a_transaction_commits_no_orphan() -> None:
    ks = keyspace.open("memory:")
    ks.directory("x")  # its catalog made outside the transaction first: shared by the handles below
    with pytest.raises(StaleDirectory, match="this transaction removed"), ks.transaction() as tx:
        d = tx.directory("x")
        d[b"a"] = b"1"
        d.remove()
        d[b"b"] = b"2"
    assert ks.directories.list() == ["x"] and len(ks.directory("x")) == 0


def test_walk_to_a_depth_gives_the_directories_that_many_levels_below() -> None:
    ks = keyspace.open("memory:")
    for path in [("a", "b", "c"), ("a", "d"), ("p", "x", "y")]:
        ks.directories.create_or_open(path[:1], b"partition" if path[0] == "p" else b"")
        ks.directories.create_or_open(path)
    every = ks.directories.walk()
    assert [p for p, _, _ in every] == [
        ("a",), ("a", "b"), ("a", "b", "c"), ("a", "d"), ("p",), ("p", "x"), ("p", "x", "y")
    ]  # fmt: skip
    for depth in (1, 2, 3):
        for top in [(), ("a",), ("p",)]:
            want = [r for r in every if r[0][: len(top)] == top and len(top) < len(r[0]) <= len(top) + depth]
            assert ks.directories.walk(top, depth=depth) == want
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(InvalidArgument, match="walk depth"):
            ks.directories.walk(depth=bad)
