"""The directory layer's bytes: FoundationDB's, derived by hand from its
algorithm and cross-checked with the FoundationDB binding's pure subspace and
tuple functions (no server needed)."""

from __future__ import annotations

import random
import struct

import fdb.tuple
import pytest
from fdb.subspace_impl import Subspace

import keyspace
from keyspace.directory import Tree, TreeOps
from keyspace.directory._allocator import allocate, window_size
from keyspace.stores import MemoryStore

NODES = Subspace(rawPrefix=b"\xfe")
ROOT = NODES[NODES.key()]  # FoundationDB's root node: the node subspace's node for its own key


def store_items(ks: keyspace.Keyspace) -> dict[bytes, bytes]:
    return dict(ks.store.scan(b"", None))


def test_tree_keys_by_hand_and_by_fdb() -> None:
    tree = Tree()
    assert tree.root == b"\xfe\x01\xfe\x00" == ROOT.key()
    assert tree.version_key == b"\xfe\x01\xfe\x00\x01version\x00" == ROOT.pack((b"version",))
    assert tree.counter_key(0) == b"\xfe\x01\xfe\x00\x01hca\x00\x14\x14" == ROOT[b"hca"][0].pack((0,))
    assert tree.recent_key(5) == b"\xfe\x01\xfe\x00\x01hca\x00\x15\x01\x15\x05" == ROOT[b"hca"][1].pack((5,))
    node = tree.node_of(b"\x15\x07")
    assert node == b"\xfe\x01\x15\x07\x00" == NODES[b"\x15\x07"].key()
    layer = NODES[b"\x15\x07"].pack((b"layer",))
    assert tree.layer_key(node) == b"\xfe\x01\x15\x07\x00\x01layer\x00" == layer
    assert tree.child_key(tree.root, "app") == b"\xfe\x01\xfe\x00\x14\x02app\x00" == ROOT[0].pack(("app",))
    r = NODES[b"\x15\x07"][0].range(())
    assert tree.children_range(node) == (r.start, r.stop)


def test_small_tree_with_chosen_prefixes_stores_these_bytes() -> None:
    ks = keyspace.open("memory:", directory_manual_prefixes=True)
    app = ks.directories.create(("app",), prefix=b"\x15\x07")
    users = ks.directories.create(("app", "users"), layer=b"table", prefix=b"\x15\x09")
    users[b"alice"] = b"1"
    users[("bob", 2)] = b"2"
    expected = {
        b"\xfe\x01\xfe\x00\x01version\x00": b"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        b"\xfe\x01\xfe\x00\x14\x02app\x00": b"\x15\x07",
        b"\xfe\x01\x15\x07\x00\x01layer\x00": b"",
        b"\xfe\x01\x15\x07\x00\x14\x02users\x00": b"\x15\x09",
        b"\xfe\x01\x15\x09\x00\x01layer\x00": b"table",
        b"\x15\x09\x01alice\x00": b"1",
        b"\x15\x09\x02bob\x00\x15\x02": b"2",
    }
    found = {k: v for k, v in store_items(ks).items() if not k.startswith(b"\xffkeyspace")}
    assert found == expected
    # the same keys as FoundationDB's subspaces make them
    assert ROOT.pack((b"version",)) in found
    assert struct.unpack("<III", found[ROOT.pack((b"version",))]) == (1, 0, 0)
    assert found[ROOT[0].pack(("app",))] == app.prefix
    assert found[NODES[app.prefix][0].pack(("users",))] == users.prefix
    assert found[NODES[users.prefix].pack((b"layer",))] == b"table"
    content = Subspace(rawPrefix=users.prefix)  # FoundationDB's DirectorySubspace.pack
    assert found[content.pack((b"alice",))] == b"1"
    assert found[content.pack(("bob", 2))] == b"2"
    assert users.layer == b"table" and users.path == ("app", "users")


def test_keys_of_every_type_are_fdb_subspace_pack() -> None:
    ks = keyspace.open("memory:")
    d = ks.directory("t")
    keys = [b"", b"a\x00b", "text", 7, -3, 2.5, None, True, ("a", 1), ((1, 2),)]
    for i, k in enumerate(keys):
        d[k] = bytes([i])
    sub = Subspace(rawPrefix=d.prefix)
    stored = {k for k in store_items(ks) if k.startswith(d.prefix)}
    want = {sub.pack(k if isinstance(k, tuple) else (k,)) for k in keys}
    assert stored == want
    assert {k for k, _ in d.items()} == {k for k in keys} - {("a", 1)} | {("a", 1)}


def test_allocator_counts_windows_and_marks_candidates_as_fdb() -> None:
    store = MemoryStore()
    tree = Tree()
    rng = random.Random(7)
    seen: list[int] = []
    with store.transaction() as tx:
        for _ in range(300):
            prefix = allocate(tx, tree, rng)
            (n,) = fdb.tuple.unpack(prefix)
            assert prefix == fdb.tuple.pack((n,))
            seen.append(n)
    assert len(set(seen)) == len(seen)  # never the same prefix twice
    items = dict(store.scan(b"", None))
    counters = {k: v for k, v in items.items() if k.startswith(tree.counters)}
    assert len(counters) == 1  # earlier windows' counters are dropped as the window advances
    ((key, raw),) = counters.items()
    start = tree.counter_start(key)
    assert len(raw) == 8
    recent = [fdb.tuple.unpack(k[len(tree.recent) :])[0] for k in items if k.startswith(tree.recent)]
    assert recent and min(recent) >= start and max(recent) < start + window_size(start)
    # the windows: 64 wide below 255 (advanced at half full), then 1024
    assert all(n < 64 for n in seen[:31]) and seen[31] >= 64  # 31 of 64: the 32nd fills half
    assert all(n < start + window_size(start) for n in seen)
    assert struct.unpack("<q", raw)[0] == sum(1 for n in seen if n >= start)
    assert [window_size(s) for s in (0, 254, 255, 65534, 65535)] == [64, 64, 1024, 1024, 8192]


def test_partition_keeps_a_tree_of_its_own_under_its_prefix() -> None:
    ks = keyspace.open("memory:", directory_manual_prefixes=True)
    part = ks.directories.create(("p",), layer=b"partition", prefix=b"\x16\x01\x00")
    inner = part.create_or_open(("x",))
    assert inner.path == ("p", "x")
    assert inner.prefix.startswith(b"\x16\x01\x00")
    inner[b"k"] = b"v"
    inside = Subspace(rawPrefix=b"\x16\x01\x00\xfe")  # the partition's node subspace
    proot = inside[inside.key()]
    items = store_items(ks)
    assert items[NODES[b"\x16\x01\x00"].pack((b"layer",))] == b"partition"
    assert items[proot.pack((b"version",))] == struct.pack("<III", 1, 0, 0)
    assert items[proot[0].pack(("x",))] == inner.prefix
    assert items[inside[inner.prefix].pack((b"layer",))] == b""
    (n,) = fdb.tuple.unpack(inner.prefix[3:])
    assert inner.prefix == b"\x16\x01\x00" + fdb.tuple.pack((n,))
    assert ks.directories.list(("p",)) == ["x"]
    assert ks.directories.exists(("p", "x"))
    with pytest.raises(keyspace.DirectoryError, match="holds no keys"):
        part[b"k"] = b"v"
    with pytest.raises(keyspace.DirectoryError, match="is a partition"):
        ks.directory("p")
    with pytest.raises(keyspace.DirectoryError, match="inside a partition"):
        part.create(("y",), prefix=b"\x16\x01\x00\x20")
    ks.directories.remove(("p",))
    assert {k for k in store_items(ks) if k.startswith(b"\x16")} == set()
    assert not ks.directories.exists(("p",))


def fdb_wrote_tree() -> dict[bytes, bytes]:
    """A tree as FoundationDB's directory layer writes it (built with its
    subspaces): /app (prefix 15 11) holding /app/users (16 01 2c) and a key."""
    app, users = fdb.tuple.pack((17,)), fdb.tuple.pack((300,))
    return {
        ROOT.pack((b"version",)): struct.pack("<III", 1, 0, 0),
        ROOT[b"hca"][0].pack((255,)): struct.pack("<q", 2),
        ROOT[b"hca"][1].pack((300,)): b"",
        ROOT[0].pack(("app",)): app,
        NODES[app].pack((b"layer",)): b"",
        NODES[app][0].pack(("users",)): users,
        NODES[users].pack((b"layer",)): b"",
        Subspace(rawPrefix=users).pack((b"alice",)): b"A",
        Subspace(rawPrefix=users).pack(("n", 1)): b"N",
    }


def test_a_tree_fdb_wrote_opens_with_the_same_prefixes_and_keys() -> None:
    store = MemoryStore()
    store.write(list(fdb_wrote_tree().items()))
    ks = keyspace.attach(store, scheme="tuple")
    users = ks.directories.open(("app", "users"))
    assert users.prefix == fdb.tuple.pack((300,))
    assert dict(users.items()) == {b"alice": b"A", ("n", 1): b"N"}
    assert ks.directories.list() == ["app"]
    made = ks.directories.create_or_open(("app", "more"))  # allocated from FoundationDB's counters
    (n,) = fdb.tuple.unpack(made.prefix)
    assert 255 <= n < 255 + 1024 and n != 300


def test_tree_ops_read_fdb_bytes_without_a_keyspace() -> None:
    store = MemoryStore()
    store.write(list(fdb_wrote_tree().items()))
    ops = TreeOps(Tree())
    assert ops.list(store, ()) == ["app"]
    assert [f.path for f in ops.walk(store)] == [("app",), ("app", "users")]
    with store.transaction() as tx:
        ops.move(tx, ("app", "users"), ("people",))
    items = dict(store.scan(b"", None))
    assert items[ROOT[0].pack(("people",))] == fdb.tuple.pack((300,))
    assert NODES[fdb.tuple.pack((17,))][0].pack(("users",)) not in items


def test_newer_version_is_refused() -> None:
    store = MemoryStore()
    store.put(ROOT.pack((b"version",)), struct.pack("<III", 2, 0, 0))
    ks = keyspace.attach(store, scheme="tuple")
    with pytest.raises(keyspace.errors.DirectoryVersion, match=r"2\.0\.0"):
        ks.directories.open(("a",))
    store.put(ROOT.pack((b"version",)), struct.pack("<III", 1, 1, 0))
    assert not ks.directories.exists(("a",))  # a minor version above reads
    before = dict(store.scan(b"", None))
    with pytest.raises(keyspace.errors.DirectoryVersion, match=r"1\.1\.0"):
        ks.directories.create_or_open(("a",))
    assert dict(store.scan(b"", None)) == before


def fdb_find(items: dict[bytes, bytes], path: tuple[str, ...]) -> tuple[bytes, bytes]:
    """FoundationDB's walk of a path (``DirectoryLayer._find``, partitions entered),
    with its subspace objects over plain bytes: ``(prefix, layer)``."""
    nodes = NODES
    node = ROOT
    prefix, layer = b"", b""
    for name in path:
        prefix = items[node[0].pack((name,))]
        layer = items[nodes[prefix].pack((b"layer",))]
        node = nodes[prefix]
        if layer == b"partition":
            nodes = Subspace(rawPrefix=prefix + b"\xfe")
            node = nodes[nodes.key()]
    return prefix, layer


def test_a_tree_keyspace_wrote_reads_as_fdb_reads_it() -> None:
    ks = keyspace.open("memory:")
    users = ks.directory("app", "users")
    part = ks.directories.create_or_open(("app", "tenants"), b"partition")
    inner = part.create_or_open(("acme", "orders"), b"table")
    users[("bob", 1)] = b"B"
    inner[b"o1"] = b"O"
    items = store_items(ks)
    assert fdb_find(items, ("app", "users")) == (users.prefix, b"")
    assert fdb_find(items, ("app", "tenants")) == (part.prefix, b"partition")
    assert fdb_find(items, ("app", "tenants", "acme", "orders")) == (inner.prefix, b"table")
    assert Subspace(rawPrefix=users.prefix).unpack(users.prefix + fdb.tuple.pack(("bob", 1))) == ("bob", 1)
    content = {
        Subspace(rawPrefix=inner.prefix).unpack(k): v for k, v in items.items() if k.startswith(inner.prefix)
    }
    assert content == {(b"o1",): b"O"}
    version = Subspace(rawPrefix=part.prefix + b"\xfe")
    assert items[version[version.key()].pack((b"version",))] == struct.pack("<III", 1, 0, 0)
