"""Every scheme behaves as the default does, on every embedded store, through the
whole public scope API.

A differential test: Hypothesis draws a list of calls of the public scope API
(point reads and writes, ``pop``/``popitem``/``setdefault``/``update``, the views
and ``==``, ranged ``items``/``keys``/``values`` with start/stop/include_*/reverse/
limit/prefix, ``clear``/``clear_range``, ``drop``, ``scopes()``, ``len``/``bool``,
nested scope handles, transactions committed and aborted, snapshots taken before
later writes, and a reopen of the keyspace over the same store) on a few scope
paths, and runs the same list on every (scheme, store) pair and on a plain-Python
model. The model knows nothing of any scheme but its stored order (``encode``):
every scheme must give, for the same call, the answer the model gives, so no
scheme or store may differ from the default on it, and the raw store must hold
exactly the model's stored keys (plus the keyspace's own records), so no call of
one scope reaches another's keys.

Paths follow each scheme's rules: LengthPrefixed and ``Delimited(depth=2)`` keep
keys at depth 2 only (the model's scopes are all of depth 2 there), ScopeHash has
the default scope and named ones.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.catalog import LAYOUT_START
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._base import component_bytes

# -- schemes, their paths, stores ------------------------------------------------------

# scheme name -> (the scheme, the model's scope paths (keys live in these), the
# ancestors every scope-structure call is also made on)
DEPTH2 = [(b"a", b"b"), (b"a", b"bc"), (b"ab", b"b"), (b"", b"\x00")]
SCHEMES: dict[str, tuple[Callable[[], Scheme], list[tuple[Any, ...]]]] = {
    "tuple": (TupleScheme, [(), (b"a",), (b"a", b"b"), (b"ab",), (b"a\x00",), (b"",)]),
    "length-prefixed": (LengthPrefixed, DEPTH2),
    "asciihex": (AsciiHex, [(), (b"a",), (b"a", b"b"), (b"ab",), (b"a\x00",), (b"",)]),
    "sublevel": (Sublevel, [(), (b"a",), (b"a", b"b"), (b"ab",), (b"a~",), (b"",)]),
    "scopehash": (ScopeHash, [(), ("a",), ("ab",), ("b",)]),
    "delimited": (lambda: Delimited(":", depth=2), [(b"a", b"b"), (b"a", b"bc"), (b"ab", b"b"), (b"", b"")]),
    # variants: a raw prefix, another separator, deeper or shallower fixed depths
    "tuple-raw-prefix": (lambda: TupleScheme(raw_prefix=b"\xff"), [(), (b"a",), (b"a", b"b"), (b"",)]),
    "sublevel-hash": (lambda: Sublevel("#"), [(), (b"a",), (b"a", b"b"), (b"ab",), (b"a~",), (b"%",)]),
    "length-prefixed-3": (
        LengthPrefixed,
        [(b"a", b"b", b"c"), (b"a", b"b", b""), (b"a", b"", b"c"), (b"ab", b"b", b"c")],
    ),
    "delimited-nul": (
        lambda: Delimited("\x00", depth=2),
        [(b"a", b"b"), (b"a", b"bc"), (b"ab", b"b"), (b"", b"")],
    ),
    "delimited-1": (lambda: Delimited("|"), [(b"a",), (b"ab",), (b"",), (b"a:",)]),
    "length-prefixed-leaf-depth": (LengthPrefixed, DEPTH2),
}
LEAF_DEPTH = {"length-prefixed-leaf-depth": 2}
"""Keyspaces opened with ``leaf_depth=`` (LengthPrefixed: every leaf at that depth,
no layout records)."""

STORES: dict[str, Callable[[str], str]] = {
    "memory": lambda d: "memory:",
    "lmdb": lambda d: f"lmdb://{d}/store.lmdb",
    "sqlite": lambda d: f"sqlite://{d}/store.sqlite",
    "leveldb": lambda d: f"leveldb://{d}/store.leveldb",
}

KEYS = [
    b"\x00",
    b"\x00\xff",
    b"\x01",
    b"a",
    b"a\x00",
    b"a:b",
    b"ab",
    b"abc",
    b"b",
    b"\xff",
    b"\xff\xff",
    b"!a",
]
"""Adversarial keys: 00 and ff bytes, keys that prefix each other, the delimited
separator (keys may hold it). Sublevel refuses keys that start with its separator:
the model leaves ``!a`` out there."""


def _keys(scheme: Scheme) -> list[bytes]:
    """The keys the scheme stores: Sublevel refuses a key that starts with its separator."""
    if isinstance(scheme, Sublevel):
        return [k for k in KEYS if not k.startswith(scheme.separator.encode())]
    return KEYS


# -- the model ---------------------------------------------------------------------------


class Model:
    """``path -> {key: value}`` and the scheme's stored order: all it knows of a scheme."""

    def __init__(self, scheme: Scheme, paths: list[tuple[Any, ...]]) -> None:
        self.scheme = scheme
        self.paths = paths
        self.data: dict[tuple[Any, ...], dict[bytes, bytes]] = {p: {} for p in paths}

    def copy(self) -> Model:
        other = Model(self.scheme, self.paths)
        other.data = {p: dict(d) for p, d in self.data.items()}
        return other

    def stored(self, path: tuple[Any, ...], key: bytes) -> bytes:
        return self.scheme.encode(path, key)

    def own(self, path: tuple[Any, ...]) -> list[tuple[bytes, bytes]]:
        return sorted(self.data[path].items(), key=lambda kv: self.stored(path, kv[0]))

    def in_range(
        self, path: tuple[Any, ...], key: bytes, start: Any, stop: Any, inc_start: bool, inc_stop: bool
    ) -> bool:
        s = self.stored(path, key)
        if start is not None:
            b = self.stored(path, start)
            if s < b or (s == b and not inc_start):
                return False
        if stop is not None:
            b = self.stored(path, stop)
            if s > b or (s == b and not inc_stop):
                return False
        return True

    def selected(self, path: tuple[Any, ...], args: dict[str, Any]) -> list[tuple[bytes, bytes]]:
        """What ``items(**args)`` yields."""
        prefix = args.get("prefix")
        found = [
            (k, v)
            for k, v in self.own(path)
            if (prefix is None or self.has_prefix(k, prefix))
            and self.in_range(
                path,
                k,
                args.get("start"),
                args.get("stop"),
                args.get("include_start", True),
                args.get("include_stop", False),
            )
        ]
        if args.get("reverse"):
            found.reverse()
        limit = args.get("limit")
        return found if limit is None else found[:limit]

    def has_prefix(self, key: bytes, prefix: bytes) -> bool:
        """``prefix=`` in the tuple scheme is leading elements: a bytes key is one
        element, so only the key itself has it; elsewhere leading bytes."""
        if isinstance(self.scheme, TupleScheme):
            return key == prefix
        return key.startswith(prefix)

    def under(self, anc: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return [p for p in self.paths if p[: len(anc)] == anc]

    def children(self, anc: tuple[Any, ...]) -> set[Any]:
        return {p[len(anc)] for p in self.under(anc) if len(p) > len(anc) and self.data[p]}

    def raw(self) -> dict[bytes, bytes]:
        return {self.stored(p, k): v for p, d in self.data.items() for k, v in d.items()}


def ancestors(paths: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    found = {p[:cut] for p in paths for cut in range(len(p) + 1)}
    return sorted(found, key=lambda p: (len(p), repr(p)))


# -- the calls -------------------------------------------------------------------------------


def range_args(keys: list[bytes]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "start": st.sampled_from(keys),
            "stop": st.sampled_from(keys),
            "include_start": st.booleans(),
            "include_stop": st.booleans(),
            "reverse": st.booleans(),
            "limit": st.integers(0, 4) | st.just(2000),
        },
    )


PREFIX_ARGS = st.fixed_dictionaries(
    {"prefix": st.sampled_from([b"", b"a", b"ab", b"\x00", b"\xff", b"a:"])},
    optional={"reverse": st.booleans(), "limit": st.integers(0, 3)},
)


def calls(n_paths: int, n_ancestors: int, keys: list[bytes]) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    p = st.integers(0, n_paths - 1)
    a = st.integers(0, n_ancestors - 1)
    k = st.sampled_from(keys)
    ranged = range_args(keys)
    v = st.binary(max_size=3)
    point = st.one_of(
        st.tuples(st.just("put"), p, k, v),
        st.tuples(st.just("put"), p, k, v),
        st.tuples(st.just("put_nested"), p, k, v),
        st.tuples(st.just("read"), p, k),
        st.tuples(st.just("del"), p, k),
        st.tuples(st.just("discard"), p, k),
        st.tuples(st.just("pop"), p, k, st.booleans()),
        st.tuples(st.just("popitem"), p),
        st.tuples(st.just("setdefault"), p, k, v),
        st.tuples(st.just("update"), p, st.dictionaries(k, v, max_size=3), st.booleans()),
        st.tuples(st.just("clear"), p),
        st.tuples(st.just("clear_range"), p, ranged | PREFIX_ARGS),
        st.tuples(st.just("drop"), a),
    )
    reads = st.one_of(
        st.tuples(st.just("items"), p, ranged | PREFIX_ARGS, st.sampled_from(["items", "keys", "values"])),
        st.tuples(st.just("views"), p),
        st.tuples(st.just("scopes"), a),
        st.tuples(st.just("subtree"), a),
    )
    return st.lists(
        st.one_of(
            point,
            reads,
            st.tuples(st.just("tx"), st.lists(point | reads, max_size=6), st.booleans()),
            st.tuples(st.just("snapshot"), point, reads),
            st.tuples(st.just("reopen")),
        ),
        min_size=6,
        max_size=30,
    )


READS = {"items", "views", "scopes", "subtree"}


class _Abort(Exception):
    pass


def _nested(handle: Any, path: tuple[Any, ...]) -> Any:
    """The scope of ``path`` reached one name at a time from the root (Delimited
    makes scopes of its declared depth only: there, the whole path at once)."""
    if isinstance(handle.scope(*path).scheme, Delimited):
        return handle.scope(*path)
    scope = handle.scope()
    for name in path:
        scope = scope.scope(name)
    return scope


class Runner:
    def __init__(
        self,
        ks: keyspace.Keyspace,
        model: Model,
        ancestors: list[tuple[Any, ...]],
        keys: list[bytes],
        leaf_depth: int | None = None,
    ) -> None:
        self.ks = ks
        self.keys = keys
        self.leaf_depth = leaf_depth  # reopened with the depth it was opened with
        self.model = model
        self.ancestors = ancestors
        self.records = {
            k for k in (ks.scheme.metadata_key, TupleScheme().metadata_key, ScopeHash().metadata_key) if k
        }

    def store_raw(self) -> dict[bytes, bytes]:
        return {
            k: v
            for k, v in self.ks.store.scan(b"", None)
            if k not in self.records
            and not k.startswith((LAYOUT_START, b"\xffkeyspace"))
            and not (isinstance(self.ks.scheme, ScopeHash) and len(k) == 4)  # the hash registry
        }

    def check_scope(self, handle: Any, model: Model, path: tuple[Any, ...]) -> None:
        scope = handle.scope(*path)
        want = model.own(path)
        assert list(scope.items()) == want, path
        assert list(scope) == [k for k, _ in want], path
        assert len(scope) == len(want), path
        assert bool(scope) == bool(want), path
        assert scope == dict(want), path

    def check_all(self, handle: Any, model: Model) -> None:
        for path in model.paths:
            self.check_scope(handle, model, path)

    def run_point(self, handle: Any, model: Model, call: tuple[Any, ...]) -> None:
        kind, *args = call
        paths = model.paths
        if kind in ("put", "put_nested"):
            i, key, value = args
            path = paths[i]
            scope = handle.scope(*path) if kind == "put" else _nested(handle, path)
            scope[key] = value
            model.data[path][key] = value
        elif kind == "read":
            i, key = args
            path = paths[i]
            scope = handle.scope(*path)
            want = model.data[path].get(key)
            assert scope.get(key) == want
            assert scope.get(key, b"dflt") == (b"dflt" if want is None else want)
            assert (key in scope) == (want is not None)
            assert (key in scope.keys()) == (want is not None)  # noqa: SIM118 - the view's own `in`
            if want is None:
                with pytest.raises(KeyError):
                    scope[key]
            else:
                assert scope[key] == want
        elif kind == "del":
            i, key = args
            path = paths[i]
            scope = handle.scope(*path)
            if key in model.data[path]:
                del scope[key]
                del model.data[path][key]
            else:
                with pytest.raises(KeyError):
                    del scope[key]
        elif kind == "discard":
            i, key = args
            handle.scope(*paths[i]).discard(key)
            model.data[paths[i]].pop(key, None)
        elif kind == "pop":
            i, key, with_default = args
            path = paths[i]
            scope = handle.scope(*path)
            want = model.data[path].pop(key, None)
            if with_default:
                assert scope.pop(key, b"dflt") == (b"dflt" if want is None else want)
            elif want is None:
                with pytest.raises(KeyError):
                    scope.pop(key)
            else:
                assert scope.pop(key) == want
        elif kind == "popitem":
            (i,) = args
            path = paths[i]
            scope = handle.scope(*path)
            own = model.own(path)
            if not own:
                with pytest.raises(KeyError):
                    scope.popitem()
            else:
                assert scope.popitem() == own[-1]
                del model.data[path][own[-1][0]]
        elif kind == "setdefault":
            i, key, value = args
            path = paths[i]
            want = model.data[path].setdefault(key, value)
            assert handle.scope(*path).setdefault(key, value) == want
        elif kind == "update":
            i, pairs, as_list = args
            path = paths[i]
            handle.scope(*path).update(list(pairs.items()) if as_list else pairs)
            model.data[path].update(pairs)
        elif kind == "clear":
            (i,) = args
            handle.scope(*paths[i]).clear()
            model.data[paths[i]].clear()
        elif kind == "clear_range":
            i, range_args = args
            path = paths[i]
            range_args = {k: v for k, v in range_args.items() if k not in ("reverse", "limit")}
            doomed = model.selected(path, range_args)
            handle.scope(*path).clear_range(**range_args)
            for k, _ in doomed:
                del model.data[path][k]
        elif kind == "drop":
            (j,) = args
            anc = self.ancestors[j]
            handle.scope(*anc).drop()
            for path in model.under(anc):
                model.data[path].clear()
        else:  # pragma: no cover - the strategy makes no other
            raise AssertionError(kind)

    def run_read(self, handle: Any, model: Model, call: tuple[Any, ...]) -> None:
        kind, *args = call
        if kind == "items":
            i, range_args, which = args
            path = model.paths[i]
            want = model.selected(path, range_args)
            got = list(getattr(handle.scope(*path), which)(**range_args))
            if which == "keys":
                want = [k for k, _ in want]  # type: ignore[misc]
            elif which == "values":
                want = [v for _, v in want]  # type: ignore[misc]
            assert got == want, (path, range_args)
        elif kind == "views":
            (i,) = args
            path = model.paths[i]
            scope = handle.scope(*path)
            want = dict(model.own(path))
            keys, items, values = scope.keys(), scope.items(), scope.values()
            assert len(keys) == len(items) == len(values) == len(want)
            assert keys == want.keys() and items == want.items()
            assert sorted(values) == sorted(want.values())
            for k in self.keys:
                assert (k in keys) == (k in want)
        elif kind == "scopes":
            (j,) = args
            anc = self.ancestors[j]
            want = model.children(anc)
            got = handle.scope(*anc).scopes()
            norm = [component_bytes(c) for c in got]  # str names are their UTF-8 bytes
            assert sorted(norm) == sorted(component_bytes(c) for c in want), anc
            assert len(got) == len(set(norm)), anc
            # stored order: the order of the children's prefixes
            prefix = self.ks.scheme.prefix
            assert [prefix((*anc, c)) for c in got] == sorted(prefix((*anc, c)) for c in got), anc
        elif kind == "subtree":
            (j,) = args
            anc = self.ancestors[j]
            want = sorted(
                (model.stored(p, k), (p, k, v)) for p in model.under(anc) for k, v in model.data[p].items()
            )
            got = [
                (tuple(component_bytes(c) if not isinstance(c, str) else c for c in p), k, v)
                for p, k, v in handle.scope(*anc).subtree()
            ]
            assert got == [w for _, w in want], anc
        else:  # pragma: no cover - the strategy makes no other
            raise AssertionError(kind)

    def run(self, call: tuple[Any, ...]) -> None:
        kind, *args = call
        model = self.model
        if kind in READS:
            self.run_read(self.ks, model, call)
        elif kind == "tx":
            ops, abort = args
            staged = model.copy()
            try:
                with self.ks.transaction() as tx:
                    for op in ops:
                        if op[0] in READS:  # reads see the transaction's own writes
                            self.run_read(tx, staged, op)
                        else:
                            self.run_point(tx, staged, op)
                    self.check_all(tx, staged)
                    if abort:
                        raise _Abort
            except _Abort:
                pass
            else:
                self.model = staged
        elif kind == "snapshot":
            op, read = args
            before = model.copy()
            with self.ks.snapshot() as snap:
                self.run_point(self.ks, model, op)  # a write after the snapshot: unseen there
                self.check_all(snap, before)
                self.run_read(snap, before, read)
        elif kind == "reopen":
            self.ks = keyspace.attach(
                self.ks.store, scheme=self.ks.scheme, close_store=False, leaf_depth=self.leaf_depth
            )
        else:
            self.run_point(self.ks, model, call)
        self.check_all(self.ks, self.model)
        assert self.store_raw() == self.model.raw()


def _available(store: str) -> bool:
    module = {"leveldb": "plyvel", "lmdb": "lmdb"}.get(store)
    try:
        if module:
            __import__(module)
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="ks-audit-schemes-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("store", list(STORES))
@pytest.mark.parametrize("scheme_name", list(SCHEMES))
def test_every_scheme_answers_as_the_model(scheme_name: str, store: str, workdir: Path) -> None:
    if not _available(store):
        pytest.skip(f"the {store} driver is not installed")
    make_scheme, paths = SCHEMES[scheme_name]
    anc = ancestors(paths)
    made = make_scheme()
    if isinstance(made, Delimited):  # scopes of the declared depth only
        anc = [p for p in anc if len(p) == made.depth]
    keys = _keys(made)

    @settings(
        max_examples=30 if store == "memory" else 8,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(script=calls(len(paths), len(anc), keys))
    def check(script: list[tuple[Any, ...]]) -> None:
        d = tempfile.mkdtemp(dir=workdir)
        try:
            scheme = make_scheme()
            leaf_depth = LEAF_DEPTH.get(scheme_name)
            with keyspace.open(STORES[store](d), scheme=scheme, leaf_depth=leaf_depth) as ks:
                runner = Runner(ks, Model(scheme, paths), anc, keys, leaf_depth)
                for call in script:
                    runner.run(call)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    check()


# -- scopes larger than a chunk, among neighbours ------------------------------------------

BIG_KEYS = sorted(
    {bytes(p) for n in range(1, 5) for p in __import__("itertools").product(b"a\x00\xff!:", repeat=n)}
)
"""780 keys of 00, ff, separators and letters: more than the first chunks (16, 64,
256) and than a short scan (1024 with the neighbours' keys)."""

# scheme -> (scheme, the scope, its neighbours: children, siblings, the parent)
BIG: dict[str, tuple[Callable[[], Scheme], tuple[Any, ...], list[tuple[Any, ...]]]] = {
    "tuple": (TupleScheme, (b"a",), [(), (b"a", b""), (b"a", b"\x00"), (b"a", b"\xff"), (b"a\x00",)]),
    "tuple-root": (TupleScheme, (), [(b"",), (b"\x00",), (b"\xff",)]),
    "length-prefixed": (LengthPrefixed, (b"a", b"b"), [(b"a", b""), (b"a", b"bb"), (b"b", b"a")]),
    "asciihex": (AsciiHex, (b"a",), [(), (b"a", b""), (b"a", b"\x00"), (b"a", b"\xff"), (b"a\x00",)]),
    "asciihex-root": (AsciiHex, (), [(b"",), (b"\x00",), (b"\xff",)]),
    "sublevel": (Sublevel, (b"a",), [(), (b"a", b"#"), (b"a", b"~"), (b"a~",), (b"a", b"")]),
    "sublevel-root": (Sublevel, (), [(b"",), (b"#",), (b"~",)]),
    "scopehash": (ScopeHash, ("a",), [(), ("b",), ("ab",)]),
    "scopehash-root": (ScopeHash, (), [("a",), ("b",)]),
    "delimited": (
        lambda: Delimited(":", depth=2),
        (b"a", b"b"),
        [(b"a", b""), (b"a", b"bb"), (b"ab", b"b")],
    ),
}


@pytest.mark.parametrize("store", list(STORES))
@pytest.mark.parametrize("case", list(BIG))
def test_large_scopes_read_alike(case: str, store: str, tmp_path: Path) -> None:
    """Scans, counts and pops of a scope of several chunks, between neighbours whose
    keys lie around and among its own, answer as the model in every scheme: limits
    at and across chunk sizes, reverse, exclusive starts, ``prefix=``, in
    snapshots and transactions."""
    if not _available(store):
        pytest.skip(f"the {store} driver is not installed")
    make_scheme, path, neighbours = BIG[case]
    scheme = make_scheme()
    keys = [k for k in BIG_KEYS if not (isinstance(scheme, Sublevel) and k.startswith(b"!"))]
    with keyspace.open(STORES[store](str(tmp_path)), scheme=scheme) as ks:
        scope = ks.scope(*path)
        scope.update({k: k for k in keys})
        for other in neighbours:
            ks.scope(*other).update({k: b"not own" for k in keys[::7]})
        order = sorted(keys, key=lambda k: scheme.encode(path, k))
        assert list(scope) == order and len(scope) == len(order)
        middle = scheme.encode(path, order[len(order) // 3])
        for limit in (1, 15, 16, 17, 100, 1024, 1025, 2000):
            assert list(scope.keys(limit=limit)) == order[:limit]
            assert list(scope.items(limit=limit, reverse=True)) == [(k, k) for k in order[::-1][:limit]]
            assert list(scope.values(limit=limit, reverse=True)) == order[::-1][:limit]
            after = [k for k in order if scheme.encode(path, k) > middle][:limit]
            start = order[len(order) // 3]
            assert list(scope.keys(start=start, include_start=False, limit=limit)) == after
            if isinstance(scheme, TupleScheme):
                continue  # prefixes are leading elements there: the model above checks them
            for prefix in (b"a", b"\x00", b"\xff:", b"!"):
                if isinstance(scheme, Sublevel) and prefix == b"!":
                    continue
                want = [k for k in order if k.startswith(prefix)]
                assert list(scope.keys(prefix=prefix, limit=limit)) == want[:limit]
                assert list(scope.keys(prefix=prefix, limit=limit, reverse=True)) == want[::-1][:limit]
        with ks.snapshot() as snap:
            scope.discard(order[0])  # after the snapshot: unseen there
            assert len(snap.scope(*path)) == len(order)
            assert list(snap.scope(*path).keys(limit=50, reverse=True)) == order[::-1][:50]
        order = order[1:]
        with ks.transaction() as tx:
            inside = tx.scope(*path)
            inside[order[0]] = b"changed"
            del inside[order[-1]]
            assert len(inside) == len(order) - 1
            assert list(inside.keys(limit=50, reverse=True)) == order[-2::-1][:50]
            assert list(inside) == order[:-1]
            assert inside.popitem() == (order[-2], order[-2])
        assert scope[order[0]] == b"changed" and len(scope) == len(order) - 2
        for other in neighbours:
            assert dict(ks.scope(*other)) == {k: b"not own" for k in keys[::7]}


# -- typed scopes ----------------------------------------------------------------------------


@pytest.mark.parametrize("store", ["memory", "lmdb"])
@pytest.mark.parametrize("scheme_name", list(SCHEMES))
def test_typed_scopes_answer_alike(scheme_name: str, store: str, tmp_path: Path) -> None:
    """``str`` keys with ``json`` values and ``int`` keys with ``int`` values give the
    same answers in every scheme (``update`` with keyword arguments, ranges by
    typed bounds, ``prefix=``, ``pop``/``setdefault``/``popitem``, ``==``, child
    scopes keeping the parent's codecs) and never reach the bytes scope beside."""
    if not _available(store):
        pytest.skip(f"the {store} driver is not installed")
    make_scheme, paths = SCHEMES[scheme_name]
    path = max(paths, key=len)
    with keyspace.open(STORES[store](str(tmp_path)), scheme=make_scheme()) as ks:
        texts = ks.scope(*path, key="str", value="json")
        texts.update({"b": [1]}, a={"x": 1}, c=None)
        assert list(texts.items()) == [("a", {"x": 1}), ("b", [1]), ("c", None)]
        assert list(texts.items(start="b")) == [("b", [1]), ("c", None)]
        assert list(texts.keys(stop="b", include_stop=True, reverse=True)) == ["b", "a"]
        assert list(texts.keys(reverse=True, limit=2)) == ["c", "b"]
        assert texts.pop("a") == {"x": 1}
        assert texts.setdefault("d", 5) == 5
        assert texts.popitem() == ("d", 5)
        assert texts == {"b": [1], "c": None}
        assert list(texts.keys(prefix="b")) == ["b"]
        raw = ks.scope(*path)  # the same scope without codecs (tuple: str keys are typed)
        assert sorted(component_bytes(k) for k in raw) == [b"b", b"c"]
        if len(path) < (ks.scheme.max_depth or 9) and not isinstance(ks.scheme, (LengthPrefixed, Delimited)):
            child = texts.scope("kid")  # the parent's codecs
            child.update(k=[2])
            assert dict(child) == {"k": [2]} and texts == {"b": [1], "c": None}
        numbers = ks.scope(*path[:-1], "n", key="int", value="int") if path else ks.scope("n", key="int")
        numbers.update({-1: 5, 0: 6, 300: 7, 2: 8, -(2**40): 9})
        assert list(numbers.keys()) == [-(2**40), -1, 0, 2, 300]
        assert list(numbers.items(start=0, stop=300)) == [(0, 6), (2, 8)]
        assert list(numbers.keys(start=-1, include_start=False, reverse=True)) == [300, 2, 0]
        assert texts == {"b": [1], "c": None}
