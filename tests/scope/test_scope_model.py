"""Isolation of scopes, checked against a plain-Python model.

A Hypothesis state machine drives a :class:`~keyspace.Keyspace` and a dict
``(path, key) -> value`` with the same random operations: put, delete, discard,
get, ``in``, ``len``, ranged ``items`` (start/stop/include_*/reverse/limit/prefix),
``update``, ``clear``, ``drop``, ``scopes``, ``subtree`` and transactions, committed
and aborted. Paths and keys are adversarial: empty components, ``00`` and ``ff``
bytes, components that are byte prefixes of each other, the separator where the
scheme takes it, ints/None/floats/bools/nested tuples in the tuple scheme, and
names or keys the scheme must refuse.

After every step, every scope touched so far (and each of its ancestors) must show
exactly the model's own keys, in key order, and the model's children; the whole
store must hold exactly the model's stored keys (plus the scheme's metadata
record). So no operation on one scope may return, count or delete another scope's
keys.

Every scheme that nests runs on every embedded store; LengthPrefixed uses paths of
one fixed depth, as it refuses scopes that hold both keys and child scopes.
"""

from __future__ import annotations

import itertools
import shutil
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

import keyspace
from keyspace.catalog import LAYOUT_START
from keyspace.errors import InvalidName, KeyspaceError
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.tuples import pack

# -- what the model compares by ------------------------------------------------------


def tag(value: Any) -> Any:
    """A tuple-layer value as a hashable, type-exact token (1, True and 1.0 differ;
    -0.0 and 0.0 differ), independent of any encoding."""
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, bytes):
        return ("bytes", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, tuple):
        return ("tuple", tuple(tag(v) for v in value))
    raise TypeError(type(value))


class Flavor:
    """How the model sees one scheme's names and keys (bytes schemes)."""

    typed = False
    fixed_depth: int | None = None

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme

    def name(self, component: Any) -> Any:
        return component.encode() if isinstance(component, str) else component

    def path(self, path: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(self.name(c) for c in path)

    def key(self, key: Any) -> Any:
        return key

    def key_order(self, key: Any) -> Any:
        """Byte order of the keys themselves (property 3 in the byte schemes)."""
        return key

    def child_order(self, name: Any) -> Any:
        return name

    def valid_name(self, name: Any) -> bool:
        return True

    def valid_key(self, key: Any) -> bool:
        return True

    def in_range(self, key: Any, lo: Any, lo_incl: bool, hi: Any, hi_incl: bool) -> bool:
        k = self.key_order(key)
        if lo is not None:
            b = self.key_order(lo)
            if k < b or (k == b and not lo_incl):
                return False
        if hi is not None:
            b = self.key_order(hi)
            if k > b or (k == b and not hi_incl):
                return False
        return True

    def has_prefix(self, key: Any, prefix: Any) -> bool:
        return bool(key.startswith(prefix))


class SublevelFlavor(Flavor):
    def valid_name(self, name: Any) -> bool:
        return all(35 <= b <= 126 for b in self.name(name))

    def valid_key(self, key: Any) -> bool:
        return not key.startswith(b"!")


class LengthPrefixedFlavor(Flavor):
    fixed_depth = 2

    def child_order(self, name: Any) -> Any:
        return (len(name), name)


class TupleFlavor(Flavor):
    typed = True

    def name(self, component: Any) -> Any:
        return tag(component)

    def key(self, key: Any) -> Any:
        """``x`` and ``(x,)`` are one key; ``((a, b),)`` is not ``(a, b)``."""
        elements = key if isinstance(key, tuple) else (key,)
        return tuple(tag(e) for e in elements)

    def key_order(self, key: Any) -> Any:
        return self.scheme.encode_key(key)

    def child_order(self, name: Any) -> Any:
        return pack((name,))

    def has_prefix(self, key: Any, prefix: Any) -> bool:
        elements, wanted = self.key(key), self.key(prefix)
        return elements[: len(wanted)] == wanted


# -- adversarial values --------------------------------------------------------------

ANY_NAMES = [
    b"",
    b"\x00",
    b"\x00\x00",
    b"\x01",
    b"\xff",
    b"\xff\xff",
    b"a",
    b"ab",
    b"a\x00",
    b"a\xff",
    "a",
    "é",
]
SUBLEVEL_NAMES = [b"", b"#", b"a", b"ab", b"a~", b"~", b"~~", "a", "ab", b"b"]
SUBLEVEL_BAD_NAMES = [b"a!b", b"!", b'"', b"\x00", b"\xff", "é", b"a\x7f"]
BYTE_KEYS = [
    b"",
    b"ks\xff",  # a scheme record's key: reserved at the roots that can reach it
    b"\xffkeyspace\x00a",
    b"\x00",
    b"\x00\x00",
    b"\x00\xff",
    b"\x01",
    b"\xff",
    b"\xff\xff",
    b"a",
    b"a\x00",
    b"a\xff",
    b"ab",
    b"b",
    b"!",
    b"!a!",
    b'"',
    b'"a',
    b"\x05",
]
TUPLE_ATOMS = [None, b"", b"\x00", b"\xff", b"\x00\xff", "", "a", "a\x00", "ab", 0, 1, -1, 2**64, True, False]
TUPLE_ATOMS += [0.0, -0.0, 1.5, (), (None,), ("a", None), ((),), (b"\x00", 1)]


def tuple_atoms() -> st.SearchStrategy[Any]:
    return st.sampled_from(TUPLE_ATOMS)


def byte_keys() -> st.SearchStrategy[bytes]:
    return st.one_of(st.sampled_from(BYTE_KEYS), st.binary(max_size=3))


RECORD_KEYS = {TupleScheme().metadata_key, AsciiHex().metadata_key, ScopeHash().metadata_key}
"""The keys where keyspaces record their schemes (read when a store is opened)."""

SCHEMES: dict[str, tuple[Callable[[], Scheme], type[Flavor], st.SearchStrategy[Any], st.SearchStrategy[Any]]]
SCHEMES = {
    "tuple": (
        TupleScheme,
        TupleFlavor,
        tuple_atoms(),
        st.one_of(tuple_atoms(), st.tuples(tuple_atoms(), tuple_atoms())),
    ),
    "asciihex": (AsciiHex, Flavor, st.one_of(st.sampled_from(ANY_NAMES), st.binary(max_size=2)), byte_keys()),
    "sublevel": (
        Sublevel,
        SublevelFlavor,
        st.one_of(st.sampled_from(SUBLEVEL_NAMES), st.sampled_from(SUBLEVEL_BAD_NAMES)),
        byte_keys(),
    ),
    "length-prefixed": (
        LengthPrefixed,
        LengthPrefixedFlavor,
        st.one_of(st.sampled_from(ANY_NAMES), st.binary(max_size=2)),
        byte_keys(),
    ),
}

# store -> (URL for a fresh store in a directory, max examples, steps per example)
STORES: dict[str, tuple[Callable[[str], str], int, int]] = {
    "memory": (lambda d: "memory:", 150, 40),
    "lmdb": (lambda d: f"lmdb://{d}/store.lmdb", 25, 30),
    "sqlite": (lambda d: f"sqlite://{d}/store.sqlite", 25, 30),
    "leveldb": (lambda d: f"leveldb://{d}/store.leveldb", 25, 30),
    "rocksdb": (lambda d: f"rocksdb://{d}/store.rocksdb", 25, 30),
}


# -- the machine -----------------------------------------------------------------------


def make_machine(scheme_name: str, store_name: str, workdir: Path) -> type[RuleBasedStateMachine]:
    make_scheme, make_flavor, names, keys = SCHEMES[scheme_name]
    url_for = STORES[store_name][0]
    values = st.binary(max_size=4)
    depth = make_flavor.fixed_depth
    if depth is None:
        paths = st.lists(names, max_size=3).map(tuple)
    else:
        paths = st.lists(names, min_size=depth, max_size=depth).map(tuple)
    # a cut of a path: the ancestors are read, cleared and dropped too
    cuts = st.integers(min_value=0, max_value=3)
    tx_ops = st.lists(
        st.one_of(
            st.tuples(st.just("put"), paths, keys, values),
            st.tuples(st.just("discard"), paths, keys, st.none()),
            st.tuples(st.just("clear"), paths, cuts, st.none()),
            st.tuples(st.just("drop"), paths, cuts, st.none()),
        ),
        max_size=5,
    )

    class ScopeModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.dir = tempfile.mkdtemp(dir=workdir)
            self.scheme = make_scheme()
            self.flavor = make_flavor(self.scheme)
            self.ks = keyspace.open(url_for(self.dir), scheme=self.scheme)
            self.empty_keys = self.ks.store.capabilities.empty_keys
            # (model path, model key) -> (path, key, value)
            self.model: dict[tuple[Any, Any], tuple[tuple[Any, ...], Any, bytes]] = {}
            self.paths: dict[Any, tuple[Any, ...]] = {(): ()}  # model path -> a real path

        def teardown(self) -> None:
            self.ks.close()
            shutil.rmtree(self.dir, ignore_errors=True)

        # -- the model --------------------------------------------------------------

        def mpath(self, path: tuple[Any, ...]) -> tuple[Any, ...]:
            return self.flavor.path(path)

        def valid_path(self, path: tuple[Any, ...]) -> bool:
            return all(self.flavor.valid_name(c) for c in path)

        def storable(self, path: tuple[Any, ...], key: Any) -> bool:
            """Whether the store can hold the stored key (LMDB refuses ``b""``) and the
            keyspace lets a scope have it (not where it keeps its records: refused
            with ``ReservedKey`` on every path)."""
            stored = self.scheme.encode(path, key)
            reserved = (
                stored.startswith((b"\xffkeyspace", LAYOUT_START))
                or stored in RECORD_KEYS
                or stored == self.scheme.metadata_key
            )
            return not reserved and (self.empty_keys or stored != b"")

        def remember(self, path: tuple[Any, ...]) -> None:
            for cut in range(len(path) + 1):
                self.paths.setdefault(self.mpath(path[:cut]), path[:cut])

        def cut(self, path: tuple[Any, ...], cut: int) -> tuple[Any, ...]:
            return path[: min(cut, len(path))]

        def own(self, model: Any, mp: tuple[Any, ...]) -> list[tuple[Any, Any, bytes]]:
            found = [(p, k, v) for (q, _), (p, k, v) in model.items() if q == mp]
            return sorted(found, key=lambda t: self.flavor.key_order(t[1]))

        def under(self, model: Any, mp: tuple[Any, ...]) -> list[tuple[Any, Any]]:
            return [(q, mk) for (q, mk) in model if q[: len(mp)] == mp]

        def children(self, model: Any, mp: tuple[Any, ...]) -> list[Any]:
            """Model names of the direct children holding data, in the scheme's order."""
            seen: dict[Any, Any] = {}  # model name -> the real component
            for (q, _), (p, _k, _v) in model.items():
                if len(q) > len(mp) and q[: len(mp)] == mp:
                    seen.setdefault(q[len(mp)], p[len(mp)])
            f = self.flavor
            return sorted(seen, key=lambda m: f.child_order(seen[m] if f.typed else m))

        def apply(self, model: Any, op: tuple[str, tuple[Any, ...], Any, Any]) -> None:
            kind, path, arg, value = op
            if kind == "put":
                model[self.mpath(path), self.flavor.key(arg)] = (path, arg, value)
            elif kind == "discard":
                model.pop((self.mpath(path), self.flavor.key(arg)), None)
            elif kind == "clear":
                mp = self.mpath(self.cut(path, arg))
                for mk in [mk for (q, mk) in model if q == mp]:
                    del model[mp, mk]
            elif kind == "drop":
                for item in self.under(model, self.mpath(self.cut(path, arg))):
                    del model[item]

        def op_ok(self, op: tuple[str, tuple[Any, ...], Any, Any]) -> bool:
            kind, path, arg, _ = op
            if kind in ("put", "discard"):
                return self.valid_path(path) and self.flavor.valid_key(arg) and self.storable(path, arg)
            return self.valid_path(self.cut(path, arg))

        def run(self, root: Any, op: tuple[str, tuple[Any, ...], Any, Any]) -> None:
            kind, path, arg, value = op
            if kind == "put":
                root.scope(*path)[arg] = value
            elif kind == "discard":
                root.scope(*path).discard(arg)
            elif kind == "clear":
                root.scope(*self.cut(path, arg)).clear()
            else:
                root.scope(*self.cut(path, arg)).drop()

        # -- checks -------------------------------------------------------------------

        def check_scope(self, handle: Any, model: Any, mp: tuple[Any, ...], path: tuple[Any, ...]) -> None:
            scope = handle.scope(*path)
            want = self.own(model, mp)
            got = list(scope.items())
            assert [self.flavor.key(k) for k, _ in got] == [self.flavor.key(k) for _, k, _ in want], path
            assert [v for _, v in got] == [v for _, _, v in want], path
            assert len(scope) == len(want), path
            assert bool(scope) == bool(want), path
            kids = scope.scopes()
            assert [self.flavor.name(c) for c in kids] == self.children(model, mp), path

        def check_subtree(self, handle: Any, model: Any, mp: tuple[Any, ...], path: tuple[Any, ...]) -> None:
            got = [(self.mpath(p), self.flavor.key(k), v) for p, k, v in handle.scope(*path).subtree()]
            want = sorted(
                (self.scheme.encode(p, k), (q, mk, v))
                for (q, mk), (p, k, v) in model.items()
                if q[: len(mp)] == mp
            )
            assert got == [w for _, w in want], path

        @invariant()
        def every_scope_sees_exactly_its_own(self) -> None:
            for mp, path in list(self.paths.items()):
                self.check_scope(self.ks, self.model, mp, path)
            self.check_subtree(self.ks, self.model, (), ())

        @invariant()
        def store_holds_exactly_the_model(self) -> None:
            meta = self.scheme.metadata_key
            # the scheme record and the LengthPrefixed layout records are the keyspace's own
            raw = {
                k: v for k, v in self.ks.store.scan(b"", None) if k != meta and not k.startswith(LAYOUT_START)
            }
            want = {self.scheme.encode(p, k): v for (p, k, v) in self.model.values()}
            assert raw == want

        # -- rules --------------------------------------------------------------------

        @rule(path=paths, key=keys, value=values)
        def put(self, path: tuple[Any, ...], key: Any, value: bytes) -> None:
            if not self.valid_path(path):
                with pytest.raises(InvalidName):
                    self.ks.scope(*path)
                return
            scope = self.ks.scope(*path)
            if not self.flavor.valid_key(key):
                with pytest.raises(InvalidName):
                    scope[key] = value
                return
            if not self.storable(path, key):
                with pytest.raises(KeyspaceError):
                    scope[key] = value
                return
            scope[key] = value
            self.remember(path)
            self.apply(self.model, ("put", path, key, value))

        @rule(path=paths, key=keys)
        def read(self, path: tuple[Any, ...], key: Any) -> None:
            if not self.valid_path(path):
                return
            scope = self.ks.scope(*path)
            if not self.flavor.valid_key(key):
                with pytest.raises(InvalidName):
                    scope.get(key)
                return
            if not self.storable(path, key):  # LMDB refuses to read b"" as well
                with pytest.raises(KeyspaceError):
                    scope.get(key)
                return
            entry = self.model.get((self.mpath(path), self.flavor.key(key)))
            assert scope.get(key, None) == (None if entry is None else entry[2])
            assert (key in scope) == (entry is not None)
            if entry is None:
                with pytest.raises(KeyError):
                    scope[key]
            else:
                assert scope[key] == entry[2]

        @rule(path=paths, key=keys)
        def delete(self, path: tuple[Any, ...], key: Any) -> None:
            if not self.op_ok(("discard", path, key, None)):
                return
            scope = self.ks.scope(*path)
            mk = (self.mpath(path), self.flavor.key(key))
            if mk in self.model:
                del scope[key]
                del self.model[mk]
            else:
                with pytest.raises(KeyError):
                    del scope[key]

        @rule(path=paths, key=keys)
        def discard(self, path: tuple[Any, ...], key: Any) -> None:
            if self.op_ok(("discard", path, key, None)):
                self.ks.scope(*path).discard(key)
                self.apply(self.model, ("discard", path, key, None))

        @rule(
            path=paths,
            cut=cuts,
            start=st.none() | keys,
            stop=st.none() | keys,
            include_start=st.booleans(),
            include_stop=st.booleans(),
            reverse=st.booleans(),
            limit=st.none() | st.integers(min_value=0, max_value=4),
        )
        def ranged(
            self,
            path: tuple[Any, ...],
            cut: int,
            start: Any,
            stop: Any,
            include_start: bool,
            include_stop: bool,
            reverse: bool,
            limit: int | None,
        ) -> None:
            path = self.cut(path, cut)
            if not self.valid_path(path):
                return
            scope = self.ks.scope(*path)
            bounds = [b for b in (start, stop) if b is not None]
            options = dict(
                include_start=include_start, include_stop=include_stop, reverse=reverse, limit=limit
            )
            if not all(self.flavor.valid_key(b) for b in bounds):
                with pytest.raises(InvalidName):
                    list(scope.items(start, stop, **options))  # type: ignore[arg-type]
                return
            f = self.flavor
            want = [
                (f.key(k), v)
                for _, k, v in self.own(self.model, self.mpath(path))
                if f.in_range(k, start, include_start, stop, include_stop)
            ]
            if reverse:
                want.reverse()
            if limit is not None:
                want = want[:limit]
            got = [(f.key(k), v) for k, v in scope.items(start, stop, **options)]  # type: ignore[arg-type]
            assert got == want

        @rule(path=paths, cut=cuts, prefix=keys, reverse=st.booleans())
        def prefixed(self, path: tuple[Any, ...], cut: int, prefix: Any, reverse: bool) -> None:
            path = self.cut(path, cut)
            if prefix is None:  # prefix=None means "no prefix"; the element None is (None,)
                prefix = (None,)
            if not self.valid_path(path) or not self.flavor.valid_key(prefix):
                return
            f = self.flavor
            want = [
                (f.key(k), v) for _, k, v in self.own(self.model, self.mpath(path)) if f.has_prefix(k, prefix)
            ]
            if reverse:
                want.reverse()
            got = [(f.key(k), v) for k, v in self.ks.scope(*path).items(prefix=prefix, reverse=reverse)]
            assert got == want

        @rule(path=paths, pairs=st.lists(st.tuples(keys, values), max_size=4))
        def update(self, path: tuple[Any, ...], pairs: list[tuple[Any, bytes]]) -> None:
            if not self.valid_path(path):
                with pytest.raises(InvalidName):
                    self.ks.scope(*path).update(pairs)
                return
            ops = [("put", path, k, v) for k, v in pairs]
            if not all(self.op_ok(op) for op in ops):
                if all(self.flavor.valid_key(k) for k, _ in pairs):  # refused as a whole
                    with pytest.raises(KeyspaceError):
                        self.ks.scope(*path).update(pairs)
                return
            self.ks.scope(*path).update(pairs)
            if ops:
                self.remember(path)
            for op in ops:
                self.apply(self.model, op)

        def removal(self, op: tuple[str, tuple[Any, ...], Any, Any]) -> None:
            """Run ``op`` (a clear or a drop) on the store and the model, or see it refused."""
            if not self.op_ok(op):
                with pytest.raises(InvalidName):
                    self.run(self.ks, op)
                return
            self.run(self.ks, op)
            self.apply(self.model, op)

        @rule(path=paths, cut=cuts)
        def clear(self, path: tuple[Any, ...], cut: int) -> None:
            self.removal(("clear", path, cut, None))

        @rule(path=paths, cut=cuts)
        def drop(self, path: tuple[Any, ...], cut: int) -> None:
            self.removal(("drop", path, cut, None))

        @rule(ops=tx_ops, abort=st.booleans())
        def transaction(self, ops: list[tuple[str, tuple[Any, ...], Any, Any]], abort: bool) -> None:
            ops = [op for op in ops if self.op_ok(op)]
            staged = dict(self.model)
            try:
                with self.ks.transaction() as tx:
                    for op in ops:
                        self.run(tx, op)
                        self.apply(staged, op)
                        # reads inside see the transaction's own writes, scope by scope
                        kind, path, arg, _ = op
                        touched = path if kind in ("put", "discard") else self.cut(path, arg)
                        self.remember(touched)
                        self.check_scope(tx, staged, self.mpath(touched), touched)
                    self.check_subtree(tx, staged, (), ())
                    if abort:
                        raise _Abort
            except _Abort:
                return
            self.model = staged

    ScopeModel.__name__ = f"ScopeModel_{scheme_name}_{store_name}"
    return ScopeModel


class _Abort(Exception):
    """Raised inside a transaction to abort it."""


def _available(store_name: str) -> bool:
    module = {"leveldb": "plyvel", "rocksdb": "rocksdict", "lmdb": "lmdb"}.get(store_name)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


CASES = list(itertools.product(SCHEMES, STORES))


@pytest.mark.parametrize(("scheme_name", "store_name"), CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_scopes_are_isolated(scheme_name: str, store_name: str, tmp_path: Path) -> None:
    if not _available(store_name):
        pytest.skip(f"the {store_name} driver is not installed")
    _, examples, steps = STORES[store_name]
    machine = make_machine(scheme_name, store_name, tmp_path)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


def test_empty_composite_key_reads_back_in_a_tuple_scope() -> None:
    """The key ``()`` is stored as the bare scope prefix (found by the machine above)."""
    with keyspace.open("memory:") as ks:
        scope = ks.scope("t")
        scope[()] = b"empty"
        scope[b"a\x00"] = b"a"
        ks.scope("t", "u")[()] = b"child"
        assert list(scope.items()) == [((), b"empty"), (b"a\x00", b"a")]
        assert list(scope.keys(reverse=True)) == [b"a\x00", ()]
        assert len(scope) == 2 and scope[()] == b"empty"
