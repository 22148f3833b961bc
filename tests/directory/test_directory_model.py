"""A Hypothesis state machine of the directory operations (create_or_open,
create, open, move, remove, list, exists, key writes through handles, reopen)
against a dict model of the tree, on every store."""

from __future__ import annotations

import itertools
import shutil
import tempfile
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from _etcd import etcd_cluster
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

import keyspace
from keyspace.errors import DirectoryError, DirectoryExists, DirectoryNotFound, StaleDirectory
from keyspace.stores import MemoryStore, open_store

pytestmark = pytest.mark.timeout(900)

NAMES = st.sampled_from(["a", "b", "c", "é"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map(tuple)
KEYS = st.one_of(st.binary(max_size=4), st.text(max_size=3), st.integers(-5, 5))

Path = tuple[str, ...]


def _url_maker(engine: str) -> Callable[[], tuple[str, Callable[[], None]]]:
    """A maker of fresh store URLs of ``engine`` and their cleanup."""
    if engine == "etcd":
        cluster = etcd_cluster()

        def etcd() -> tuple[str, Callable[[], None]]:
            url = f"etcd://{','.join(cluster.endpoints)}/dirmodel-{uuid.uuid4().hex}"

            def drop() -> None:
                with open_store(url) as store:
                    store.delete_range(b"", None)

            return url, drop

        return etcd

    def local() -> tuple[str, Callable[[], None]]:
        where = tempfile.mkdtemp()
        url = f"sqlite://{where}/db.sqlite" if engine == "sqlite" else f"{engine}://{where}/db"
        return url, lambda: shutil.rmtree(where, ignore_errors=True)

    return local


class DirectoryMachine(RuleBasedStateMachine):
    engine = "memory"
    make: Callable[[], tuple[str, Callable[[], None]]] | None = None

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[Path, dict[Any, bytes]] = {}
        self.prefixes: dict[Path, bytes] = {}
        self.handles: list[Any] = []  # handles kept across operations, removed directories' too
        if self.engine == "memory":
            self.store: MemoryStore | None = MemoryStore()
            self.url, self.drop = "memory:", lambda: None
            self.ks = keyspace.attach(self.store, close_store=False)
        else:
            assert self.make is not None
            self.store = None
            self.url, self.drop = self.make()
            self.ks = keyspace.open(self.url)

    def teardown(self) -> None:
        self.ks.close()
        self.drop()

    # -- the model --------------------------------------------------------------

    def exists(self, path: Path) -> bool:
        return path in self.model

    def children(self, path: Path) -> list[str]:
        return sorted({p[len(path)] for p in self.model if len(p) > len(path) and p[: len(path)] == path})

    def add(self, path: Path) -> None:
        for i in range(1, len(path) + 1):
            self.model.setdefault(path[:i], {})

    def subtree(self, path: Path) -> list[Path]:
        return [p for p in self.model if p[: len(path)] == path]

    # -- rules --------------------------------------------------------------------

    @rule(path=PATHS, tx=st.booleans())
    def create_or_open(self, path: Path, tx: bool) -> None:
        if tx:
            with self.ks.transaction() as t:
                made = t.directories.create_or_open(path)
                again = t.directories.create_or_open(path)
                assert again.prefix == made.prefix
        else:
            made = self.ks.directories.create_or_open(path)
        if path in self.prefixes:
            assert made.prefix == self.prefixes[path]
        self.add(path)
        self.prefixes[path] = made.prefix
        if not tx:
            self.handles.append(made)

    @rule(path=PATHS)
    def create(self, path: Path) -> None:
        if self.exists(path):
            try:
                self.ks.directories.create(path)
            except DirectoryExists:
                return
            raise AssertionError(f"create of existing {path}")
        self.prefixes[path] = self.ks.directories.create(path).prefix
        self.add(path)

    @rule(path=PATHS)
    def open(self, path: Path) -> None:
        if not self.exists(path):
            try:
                self.ks.directories.open(path)
            except DirectoryNotFound:
                return
            raise AssertionError(f"open of missing {path}")
        d = self.ks.directories.open(path)
        if path in self.prefixes:
            assert d.prefix == self.prefixes[path]
        self.prefixes[path] = d.prefix

    @rule(path=PATHS, key=KEYS, value=st.binary(max_size=3))
    def put(self, path: Path, key: Any, value: bytes) -> None:
        if not self.exists(path):
            return
        d = self.ks.directories.open(path)
        d[key] = value
        self.model[path][key] = value

    @rule(path=PATHS)
    def check_keys(self, path: Path) -> None:
        if self.exists(path):
            assert dict(self.ks.directories.open(path).items()) == self.model[path]

    @rule(old=PATHS, new=PATHS)
    def move(self, old: Path, new: Path) -> None:
        expected: type[Exception] | None = None
        if new[: len(old)] == old:
            expected = DirectoryError
        elif not self.exists(old):
            expected = DirectoryNotFound
        elif self.exists(new):
            expected = DirectoryExists
        elif len(new) > 1 and not self.exists(new[:-1]):
            expected = DirectoryNotFound
        if expected is not None:
            try:
                self.ks.directories.move(old, new)
            except expected:
                return
            raise AssertionError(f"move {old} -> {new} not refused with {expected}")
        self.ks.directories.move(old, new)
        for p in self.subtree(old):
            moved = new + p[len(old) :]
            self.model[moved] = self.model.pop(p)
            if p in self.prefixes:
                self.prefixes[moved] = self.prefixes.pop(p)

    @rule(path=PATHS, if_exists=st.booleans())
    def remove(self, path: Path, if_exists: bool) -> None:
        if not self.exists(path):
            if if_exists:
                assert self.ks.directories.remove_if_exists(path) is False
                return
            try:
                self.ks.directories.remove(path)
            except DirectoryNotFound:
                return
            raise AssertionError(f"remove of missing {path}")
        if if_exists:
            assert self.ks.directories.remove_if_exists(path) is True
        else:
            self.ks.directories.remove(path)
        for p in self.subtree(path):
            del self.model[p]
            self.prefixes.pop(p, None)

    @rule(path=st.one_of(st.just(()), PATHS))
    def list_and_exists(self, path: Path) -> None:
        if path and not self.exists(path):
            assert not self.ks.directories.exists(path)
            try:
                self.ks.directories.list(path)
            except DirectoryNotFound:
                return
            raise AssertionError(f"list of missing {path}")
        assert self.ks.directories.exists(path)
        assert self.ks.directories.list(path) == self.children(path)

    @rule(pick=st.integers(0, 1000), key=KEYS, value=st.binary(max_size=3))
    def write_through_a_kept_handle(self, pick: int, key: Any, value: bytes) -> None:
        """A kept handle writes where its directory still is (moved or not), and
        raises StaleDirectory, writing nothing, once it was removed."""
        if not self.handles:
            return
        handle = self.handles[pick % len(self.handles)]
        owner = [p for p, prefix in self.prefixes.items() if prefix == handle.prefix]
        if not owner:
            try:
                handle[key] = value
            except StaleDirectory:
                pass
            else:
                raise AssertionError(f"a handle of a removed directory wrote: {handle!r}")
            try:
                handle.get(key)
            except StaleDirectory:
                pass
            else:
                raise AssertionError(f"a handle of a removed directory read: {handle!r}")
            left = self.ks.store.scan(handle.prefix, handle.prefix + b"\xff", limit=1)
            assert next(iter(left), None) is None
            return
        handle[key] = value
        self.model[owner[0]][key] = value

    @rule()
    def reopen(self) -> None:
        self.handles = []  # a closed keyspace's handles end with it
        self.ks.close()
        if self.store is not None:
            self.ks = keyspace.attach(self.store, close_store=False)
        else:
            self.ks = keyspace.open(self.url)

    @invariant()
    def tree_matches(self) -> None:
        walked = self.ks.directories.walk()
        assert sorted(p for p, _, _ in walked) == sorted(self.model)
        prefixes = sorted(prefix for _, prefix, _ in walked)
        for a, b in itertools.pairwise(prefixes):
            assert not b.startswith(a), (a, b)  # prefix-free
        for p, prefix, _ in walked:
            if p in self.prefixes:
                assert prefix == self.prefixes[p]


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite", "leveldb", "rocksdb", "etcd"])
def test_directory_operations_match_a_model_of_the_tree(engine: str) -> None:
    machine = type(
        f"DirectoryMachine_{engine}",
        (DirectoryMachine,),
        {"engine": engine, "make": staticmethod(_url_maker(engine)) if engine != "memory" else None},
    )
    examples = 40 if engine == "memory" else 8
    run_state_machine_as_test(machine, settings=settings(max_examples=examples, stateful_step_count=30))
