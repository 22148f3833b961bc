"""First writes that exclude each other, made by two processes at the same moment.

Two ScopeHash names with one xxh32 hash, or a LengthPrefixed scope made a leaf
while its child is made a leaf (which makes the scope a branch): each process
opens the fresh store before either writes (each is a stale open for the
other), a barrier releases both writes together. Exactly one wins; the other
gets :class:`HashCollision` or :class:`LayoutError`, and no key of the loser is
stored (nor its registry entry or layout record). Then a fresh open reads the
winner's data and refuses the loser's scope, reads included.

Also, the ScopeHash name a process read (and found free) before another
process registered its twin is refused at its next read.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from _contend import contend
from _xxh32 import colliding_name

import keyspace
from keyspace.errors import HashCollision, KeyspaceError, LayoutError
from keyspace.stores import open_store

ROUNDS = 6
WAIT_S = 60.0
STORES = {
    "lmdb": "lmdb://{}",
    "sqlite": "sqlite:///{}.sqlite",
}
TWIN = colliding_name("a")

# contender name -> (scheme, write); each write's values end in " data"
_Write = Callable[[keyspace.Keyspace], None]


def _hash_plain(name: str) -> _Write:
    return lambda ks: ks.scope(name).update({b"k": f"{name} data".encode(), b"j": f"{name} data".encode()})


def _hash_in_transaction(name: str) -> _Write:
    def write(ks: keyspace.Keyspace) -> None:
        with ks.transaction() as tx:
            tx.scope()[f"root-{name}".encode()] = f"{name} data".encode()
            tx.scope(name)[b"k"] = f"{name} data".encode()

    return write


def _leaf(path: tuple[bytes, ...]) -> _Write:
    return lambda ks: ks.scope(*path).update({b"k": b"/".join(path) + b" data"})


SCENARIOS: dict[str, tuple[str, dict[str, _Write], type[KeyspaceError]]] = {
    "scopehash-update": ("scopehash", {"a": _hash_plain("a"), TWIN: _hash_plain(TWIN)}, HashCollision),
    "scopehash-transaction": (
        "scopehash",
        {"a": _hash_in_transaction("a"), TWIN: _hash_in_transaction(TWIN)},
        HashCollision,
    ),
    "length-prefixed-leaf-or-branch": (
        "length-prefixed",
        {"a/b": _leaf((b"a", b"b")), "a/b/c": _leaf((b"a", b"b", b"c"))},
        LayoutError,
    ),
    "length-prefixed-root-or-child": (
        "length-prefixed",
        {"root": _leaf(()), "a": _leaf((b"a",))},
        LayoutError,
    ),
}


def _contender(url: str, scenario: str, who: str, barrier: Any, results: Any) -> None:
    scheme, writes, _ = SCENARIOS[scenario]

    def write(ks: keyspace.Keyspace) -> str:
        try:
            writes[who](ks)
        except KeyspaceError as exc:
            return type(exc).__name__
        return "ok"

    contend(url, scheme, who, barrier, results, write)


def _race(url: str, scenario: str) -> dict[str, str]:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_contender, args=(url, scenario, who, barrier, results))
        for who in SCENARIOS[scenario][1]
    ]
    for p in procs:
        p.start()
    out: dict[str, str] = {}
    try:
        deadline = time.monotonic() + WAIT_S
        while len(out) < len(procs) and time.monotonic() < deadline:
            try:
                who, got = results.get(timeout=0.5)
            except queue.Empty:
                if all(p.exitcode is not None for p in procs) and results.empty():
                    break
                continue
            out[who] = got
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.exitcode is None:
                p.kill()
                p.join(timeout=5)
    return out


def _data_values(url: str) -> list[bytes]:
    with open_store(url) as store:
        return sorted(v for _, v in store.scan(b"", None) if v.endswith(b" data"))


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_one_of_two_processes_wins_a_first_write(scenario: str, engine: str, tmp_path: Path) -> None:
    scheme, writes, refusal = SCENARIOS[scenario]
    for round_ in range(ROUNDS):
        url = STORES[engine].format(tmp_path / f"r{round_}")
        if engine == "sqlite":
            open_store(url).close()  # the file exists: the race is the first writes'
        got = _race(url, scenario)
        assert sorted(got.values()) == sorted(["ok", refusal.__name__]), (round_, got)
        winner = next(w for w, r in got.items() if r == "ok")
        loser = next(w for w in writes if w != winner)
        # only the winner's data, whole: replay the winner's write on a memory store
        model = keyspace.open("memory:", scheme=scheme)
        writes[winner](model)
        expected = sorted(v for _, v in model.store.scan(b"", None) if v.endswith(b" data"))
        assert _data_values(url) == expected, (round_, winner)
        with keyspace.open(url, scheme=scheme) as ks:
            # a fresh open refuses the loser's scope, on reads too, and writes nothing
            before = list(ks.store.scan(b"", None))
            if scheme == "scopehash":
                assert set(ks.scope(winner).values()) == {f"{winner} data".encode()}
                with pytest.raises(HashCollision):
                    ks.scope(loser).get(b"k")
                with pytest.raises(HashCollision):
                    ks.scope(loser)[b"x"] = b"x"
            else:
                path = () if loser == "root" else tuple(loser.encode().split(b"/"))
                with pytest.raises(LayoutError):
                    ks.scope(*path)[b"x"] = b"x"
            assert list(ks.store.scan(b"", None)) == before


def _register_twin(url: str, done: Any) -> None:
    try:
        with keyspace.open(url, scheme="scopehash") as ks:
            ks.scope(TWIN)[b"k"] = b"twin data"
        done.put("ok")
    except BaseException:
        done.put(traceback.format_exc())


@pytest.mark.parametrize("engine", list(STORES))
def test_a_name_read_free_is_refused_once_another_process_takes_its_hash(engine: str, tmp_path: Path) -> None:
    url = STORES[engine].format(tmp_path / "s")
    ctx = multiprocessing.get_context("spawn")  # this process holds the store open
    with keyspace.open(url, scheme="scopehash") as ks:
        ks.scope("other")[b"x"] = b"y"  # recorded: only the name registry guards "a"
        a = ks.scope("a")
        assert a.get(b"k") is None and len(a) == 0  # free: nothing registered for its hash
        done = ctx.Queue()
        p = ctx.Process(target=_register_twin, args=(url, done))
        p.start()
        try:
            assert done.get(timeout=WAIT_S) == "ok"
        finally:
            p.join(timeout=10)
            if p.exitcode is None:
                p.kill()
                p.join(timeout=5)
        before = list(ks.store.scan(b"", None))
        for read in (lambda s: s.get(b"k"), len, lambda s: list(s.items()), lambda s: b"k" in s):
            for scope in (a, ks.scope("a")):
                with pytest.raises(HashCollision):
                    read(scope)
        with pytest.raises(HashCollision):
            a[b"k"] = b"a data"
        with pytest.raises(HashCollision):
            a.drop()
        assert list(ks.store.scan(b"", None)) == before
        assert dict(ks.scope(TWIN).items()) == {b"k": b"twin data"}
