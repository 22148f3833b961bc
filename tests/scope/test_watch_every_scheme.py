"""A watch sees the same changes in every scheme.

On the memory store (its own watch) and on every embedded engine with the
change log on (``changes=True``), a watch of a scope's
own keys and a watch of its subtree (``subtree=True``) are made before any write;
then the scope, a child scope made after the watch started (where the scheme
nests: a named scope below the ScopeHash root), a sibling whose name extends the
scope's and the parent are written. Every scheme must report exactly the events
the default scheme reports for the same calls: own keys only for the own watch,
the scope and every scope below it, made before or after the watch, for the
subtree watch, and never a sibling's or the parent's key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_keyspace, engine_options
from _etcd import own_url

import keyspace
from keyspace import ScopeWatch
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.stores.etcd._watch import EtcdWatch

# scheme -> (the scheme, the watched scope, its children, scopes beside or above it)
CASES: dict[
    str, tuple[Callable[[], Scheme], tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]
] = {
    "tuple": (TupleScheme, (b"a",), [(b"a", b"x"), (b"a", b"")], [(b"ab",), (b"a\x00",), ()]),
    "tuple-root": (TupleScheme, (), [(b"x",), (b"x", b"y")], []),
    "asciihex": (AsciiHex, (b"a",), [(b"a", b"x"), (b"a", b"")], [(b"ab",), (b"a\x00",), ()]),
    "asciihex-root": (AsciiHex, (), [(b"x",), (b"x", b"y")], []),
    "sublevel": (Sublevel, (b"a",), [(b"a", b"x"), (b"a", b"")], [(b"ab",), (b"a~",), ()]),
    "sublevel-root": (Sublevel, (), [(b"x",), (b"x", b"y")], []),
    "length-prefixed": (LengthPrefixed, (b"a", b"b"), [], [(b"a", b"bb"), (b"a", b""), (b"ab", b"b")]),
    # a branch holds no keys of its own: only its children's are written
    "length-prefixed-branch": (
        LengthPrefixed,
        (b"a",),
        [(b"a", b"x"), (b"a", b"")],
        [(b"ab", b"x"), (b"", b"a")],
    ),
    "length-prefixed-root": (LengthPrefixed, (), [(b"a", b"x"), (b"b", b"y")], []),
    "scopehash": (ScopeHash, ("a",), [], [("ab",), ()]),
    "scopehash-root": (ScopeHash, (), [("x",), ("y",)], []),
    "delimited": (lambda: Delimited(":", depth=2), (b"a", b"b"), [], [(b"a", b"bb"), (b"ab", b"b")]),
}


def _events(watch: ScopeWatch) -> list[tuple[str, tuple[Any, ...], bytes]]:
    """Every event the writes above made (they are all in before this is called)."""
    found = []
    for _ in range(100):  # bounded: the writes above make far fewer
        event = watch.get(0.2)
        if event is None:
            break
        found.append((event.kind, tuple(event.path), event.key))
    return found


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(CASES))
def test_watches_report_alike_in_every_scheme(case: str, engine: str) -> None:
    make_scheme, path, children, others = CASES[case]
    scheme = make_scheme()
    leaf = scheme.separates_own_keys or not children  # LengthPrefixed: a branch has no own keys
    with engine_keyspace(engine, scheme=scheme) as ks:
        scope = ks.scope(*path)
        with scope.watch() as own, scope.watch(subtree=True) as below:
            if leaf:
                scope[b"k1"] = b"1"
            for child in children:  # scopes made after the watches started
                ks.scope(*child)[b"c"] = b"2"
            for other in others:
                ks.scope(*other)[b"o"] = b"3"
            if leaf:
                del scope[b"k1"]
            for child in children:
                ks.scope(*child).discard(b"c")
            if leaf:
                scope[b"k2"] = b"4"
            want_own = [("put", path, b"k1"), ("delete", path, b"k1"), ("put", path, b"k2")] if leaf else []
            want_below = [
                *want_own[:1],
                *[("put", child, b"c") for child in children],
                *want_own[1:2],
                *[("delete", child, b"c") for child in children],
                *want_own[2:],
            ]
            assert _events(own) == want_own
            assert _events(below) == want_below


@pytest.fixture(params=[*ENGINES, "etcd"])
def store_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    engine = request.param
    if engine == "etcd":
        for url in own_url("audit-schemes-watch"):
            yield url, {"changes": True}
    else:
        yield (
            ("memory:" if engine.startswith("memory") else f"{engine}:///{tmp_path}/db"),
            engine_options(engine),
        )


def test_scopehash_root_subtree_watch_sees_names_registered_after_it(
    store_url: tuple[str, dict[str, Any]],
) -> None:
    """The ScopeHash root's named scopes lie beside it, each in the block of its
    hash: a subtree watch of the root reports the keys of a name registered before
    it started and of one registered after, and nothing of the registry or the
    scheme record. On memory and on etcd (a native watch)."""
    url, options = store_url
    with keyspace.open(url, scheme=ScopeHash(), **options) as ks:
        ks.scope("before")[b"k0"] = b"0"
        with ks.scope().watch(subtree=True) as watch:
            source = watch.store_watch
            if isinstance(source, EtcdWatch):
                assert source.wait_started(10), "the watch was not established within 10 s"
            ks.scope()[b"k"] = b"root"
            ks.scope("before")[b"k1"] = b"1"
            ks.scope("after")[b"k2"] = b"2"  # registers "after" in the same batch
            ks.scope("after").drop()
            events = [watch.get(5) for _ in range(4)]
            assert watch.get(0.2) is None
            assert [(e.kind, e.path, e.key, e.value) for e in events if e is not None] == [
                ("put", (), b"k", b"root"),
                ("put", ("before",), b"k1", b"1"),
                ("put", ("after",), b"k2", b"2"),
                ("delete", ("after",), b"k2", None),
            ]
