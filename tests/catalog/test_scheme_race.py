"""Two keyspaces of different schemes racing for one fresh store: exactly one wins.

Each round opens a fresh store in two real processes (forked; threads over one
store object for memory), each with its own scheme, both opened before either
writes (so each is a stale open for the other); a barrier releases their first
writes at the same moment. Exactly one write succeeds, the other raises
:class:`SchemeMismatch`, and the store then holds only the winner's record and
keys. Repeated for many rounds per engine, so that a lost race would show.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import queue
import sys
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from _contend import contend
from _etcd import etcd_cluster

import keyspace
from keyspace import AsciiHex, LengthPrefixed, ScopeHash, TupleScheme
from keyspace._metadata import LAYOUT_START
from keyspace.errors import SchemeMismatch, TransactionTooLarge
from keyspace.schemes import Scheme, scheme_from_name
from keyspace.stores import MemoryStore, open_store

ROUNDS = 20
WAIT_S = 90
"""How long the parent waits for a round's reports."""
STUCK_S = 60
"""How long a contender may run before it dumps its stacks and exits."""
PAIRS = [
    ("tuple", "asciihex"),
    ("asciihex", "scopehash"),
    ("scopehash", "tuple"),
    ("length-prefixed", "tuple"),  # no scheme record, but a layout record
]


def _contender(url: str, name: str, barrier: Any, results: Any) -> None:
    """Open ``url`` with scheme ``name``, wait for the other contender, write.
    Every outcome, an exception's traceback included, is sent back; a contender
    stuck for :data:`STUCK_S` writes its threads' stacks to stderr and exits."""
    faulthandler.dump_traceback_later(STUCK_S, exit=True, file=sys.__stderr__)
    try:
        contend(url, name, name, barrier, results, partial(_write, name))
    finally:
        faulthandler.cancel_dump_traceback_later()


def _write(name: str, ks: keyspace.Keyspace) -> str:
    try:
        ks.scope("race")[b"k"] = name.encode()
    except SchemeMismatch:
        return "mismatch"
    return "won"


def _check_store(items: list[tuple[bytes, bytes]], winner: str) -> None:
    """Only the winner's record and keys: every key is the winner's record, its
    registry entry, or the one key it wrote."""
    scheme: Scheme = scheme_from_name(winner)
    expected = {scheme.encode(("race",), b"k")}
    if scheme.metadata_key is not None:
        expected.add(scheme.metadata_key)
    if isinstance(scheme, LengthPrefixed):
        expected.add(LAYOUT_START + scheme.prefix(("race",)))
    if isinstance(scheme, ScopeHash):
        expected.add(scheme.prefix(("race",)))
    assert {k for k, _ in items} == expected
    assert dict(items)[scheme.encode(("race",), b"k")] == winner.encode()


def _outcomes(results: Any, procs: dict[str, Any], round_: int) -> dict[str, str]:
    """Each contender's reported outcome; fails the test, naming the contender and
    its exit code, when one exits without reporting or is still running (without
    reporting) after :data:`WAIT_S` seconds."""
    outcome: dict[str, str] = {}
    deadline = time.monotonic() + WAIT_S
    while len(outcome) < len(procs):
        try:
            name, result = results.get(timeout=0.5)
            outcome[name] = result
            continue
        except queue.Empty:
            pass
        # a contender's report is in the pipe before it exits (its queue is flushed at exit)
        silent = {n: p.exitcode for n, p in procs.items() if n not in outcome and p.exitcode is not None}
        if silent and results.empty():
            pytest.fail(
                f"round {round_}: contenders exited without reporting (exit codes {silent}); {outcome}"
            )
        if time.monotonic() > deadline:
            stuck = sorted(n for n in procs if n not in outcome)
            pytest.fail(f"round {round_}: no report from {stuck} in {WAIT_S} s (stacks on stderr); {outcome}")
    return outcome


def _race_processes(make_url: Callable[[int], str], rounds: int = ROUNDS, start_method: str = "fork") -> None:
    """The parent opens no store until every round has run: a forked child then
    inherits no engine state (LMDB environments). ``start_method="forkserver"``
    forks the contenders from a clean server process instead (etcd: the test
    process may hold gRPC channels of earlier tests, which a fork must not inherit)."""
    ctx = multiprocessing.get_context(start_method)
    if start_method == "forkserver":  # the server imports (one thread, gRPC not started), forks fast
        ctx.set_forkserver_preload(["keyspace", "keyspace.stores.etcd", __name__])
    winners: list[tuple[str, str]] = []
    for i in range(rounds):
        url = make_url(i)
        first, second = PAIRS[i % len(PAIRS)]
        barrier = ctx.Barrier(2)
        results = ctx.Queue()
        procs = {n: ctx.Process(target=_contender, args=(url, n, barrier, results)) for n in (first, second)}
        for p in procs.values():
            p.start()
        try:
            outcome = _outcomes(results, procs, i)
        finally:
            for p in procs.values():
                p.join(timeout=STUCK_S)  # a stuck contender has dumped its stacks by then
                if p.exitcode is None:
                    p.kill()
                    p.join(timeout=5)
        assert {n: p.exitcode for n, p in procs.items()} == dict.fromkeys(procs, 0), (i, outcome)
        assert sorted(outcome.values()) == ["mismatch", "won"], (i, outcome)
        winners.append((url, next(n for n, r in outcome.items() if r == "won")))
    for url, winner in winners:
        store = open_store(url)
        try:
            _check_store(list(store.scan(b"", None)), winner)
        finally:
            store.close()


def test_race_lmdb(tmp_path: Path) -> None:
    _race_processes(lambda i: f"lmdb://{tmp_path / f'r{i}'}")


def test_race_sqlite(tmp_path: Path) -> None:
    def make_url(i: int) -> str:
        url = f"sqlite:///{tmp_path / f'r{i}.sqlite'}"
        open_store(url).close()  # the file exists: the race is the first writes', not the opens'
        return url  # (SQLite keeps no state across a fork once the store is closed)

    _race_processes(make_url)


@pytest.mark.etcd
def _wipe(urls: list[str]) -> None:
    """Delete every key of the stores at ``urls`` (etcd prefixes a test used)."""
    for url in urls:
        store = open_store(url)
        try:
            store.delete_range(b"", None)
        finally:
            store.close()


def test_race_etcd() -> None:
    endpoints = os.environ.get("KEYSPACE_ETCD_ENDPOINTS") or ",".join(etcd_cluster().endpoints)
    run = uuid.uuid4().hex
    urls: list[str] = []

    def make_url(i: int) -> str:
        urls.append(f"etcd://{endpoints}/race-{run}-{i}%2F")
        return urls[-1]

    try:
        # gRPC does not survive fork(): a child forked from a process whose etcd
        # client has run can deadlock in gRPC's locks and threads, copied mid-use;
        # the contenders fork from a server process that has not used gRPC
        _race_processes(make_url, start_method="forkserver")
    finally:
        _wipe(urls)


def _memory_round(i: int) -> None:
    store = MemoryStore()
    first, second = PAIRS[i % len(PAIRS)]
    spaces = {n: keyspace.attach(store, scheme=n, close_store=False) for n in (first, second)}
    barrier = threading.Barrier(2)
    outcome: dict[str, str] = {}

    def write(name: str) -> None:
        barrier.wait(timeout=30)
        try:
            spaces[name].scope("race")[b"k"] = name.encode()
            outcome[name] = "won"
        except SchemeMismatch:
            outcome[name] = "mismatch"

    threads = [threading.Thread(target=write, args=(n,)) for n in spaces]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(outcome.values()) == ["mismatch", "won"], (i, outcome)
    winner = next(n for n, r in outcome.items() if r == "won")
    _check_store(list(store.scan(b"", None)), winner)


def test_race_memory_threads() -> None:
    """Two keyspace objects over one store object, first writes in two threads."""
    for i in range(ROUNDS):
        _memory_round(i)


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_stale_open_is_refused_at_its_first_write(tmp_path: Path, engine: str) -> None:
    """Both open an empty store; one writes; the other's first write (stale open)
    raises SchemeMismatch and writes nothing."""
    memory = MemoryStore()
    urls = {"lmdb": f"lmdb://{tmp_path / 's'}", "sqlite": f"sqlite:///{tmp_path / 's.sqlite'}"}

    def opened(scheme: Scheme) -> keyspace.Keyspace:
        if engine == "memory":
            return keyspace.attach(memory, scheme=scheme, close_store=False)
        return keyspace.open(urls[engine], scheme=scheme)

    if engine == "lmdb":  # one LMDB environment per path per process: share the store
        store = open_store(urls["lmdb"])
        a = keyspace.attach(store, scheme=TupleScheme(), close_store=False)
        b = keyspace.attach(store, scheme=AsciiHex(), close_store=False)
    else:
        a, b = opened(TupleScheme()), opened(AsciiHex())
    a.scope("x")[b"k"] = b"tuple"
    before = list(a.store.scan(b"", None))
    with pytest.raises(SchemeMismatch):
        b.scope("x")[b"k"] = b"asciihex"
    with pytest.raises(SchemeMismatch):
        b.scope("x").update({b"k1": b"1", b"k2": b"2"})
    with pytest.raises(SchemeMismatch):
        b.scope().drop()  # nor does a stale open delete the other's keys
    with pytest.raises(SchemeMismatch), b.transaction() as tx:
        tx.scope("y")[b"k"] = b"v"
    assert list(a.store.scan(b"", None)) == before
    a.scope("x")[b"k2"] = b"still fine"


@pytest.mark.etcd
def test_hidden_records_on_etcd() -> None:
    """On etcd (at most 128 operations per transaction): a first write of 128
    operations succeeds although the scheme record and the name registry entry
    come with it, in a batch or in a transaction; a first write of 129 is refused
    and records nothing."""
    endpoints = os.environ.get("KEYSPACE_ETCD_ENDPOINTS") or ",".join(etcd_cluster().endpoints)
    run = uuid.uuid4().hex
    urls = [f"etcd://{endpoints}/hidden-{run}-{i}%2F" for i in range(4)]
    try:
        for url, scheme in zip(urls, ("tuple", "scopehash"), strict=False):
            with keyspace.open(url, scheme=scheme) as ks:
                limit = ks.store.capabilities.max_batch_ops
                assert limit == 128
                with pytest.raises(TransactionTooLarge):
                    ks.scope("t").update({b"k%04d" % i: b"v" for i in range(limit + 1)})
                assert list(ks.store.scan(b"", None)) == []  # no record, no registry entry
                # few enough operations that the records commit apart, too many bytes
                # for one request: refused before the records (they were left behind)
                with pytest.raises(TransactionTooLarge, match="bytes"):
                    ks.scope("t").update({b"k%04d" % i: b"x" * 80_000 for i in range(126)})
                assert list(ks.store.scan(b"", None)) == []
                ks.scope("t").update({b"k%04d" % i: b"v" for i in range(limit)})
                assert len(ks.scope("t")) == limit
        for url, scheme in zip(urls[2:], ("tuple", "scopehash"), strict=False):
            with keyspace.open(url, scheme=scheme) as ks:
                with ks.transaction() as tx:
                    for i in range(128):
                        tx.scope("t")[b"k%04d" % i] = b"v"
                assert len(ks.scope("t")) == 128
    finally:
        _wipe(urls)


@pytest.mark.parametrize(
    ("first", "second"), [("tuple", "sublevel"), ("asciihex", "sublevel"), ("scopehash", "delimited")]
)
def test_a_keyspace_that_found_the_store_empty_refuses_keys_no_record_accounts_for(
    tmp_path: Path, first: str, second: str
) -> None:
    """A keyspace of a recorded scheme opens an empty store; before it writes, a
    program with a scheme that keeps no record writes there. The first write then
    raises SchemeMismatch with nothing written: the other program's scopes would
    take this keyspace's keys for their own (a Sublevel root's own keys are every
    key outside its children's ranges). It was written, and the store mixed."""
    url = f"lmdb://{tmp_path}/db"
    waiting = keyspace.open(url, scheme=first)
    with keyspace.open(url, scheme=second) as other:
        other.scope("x")[b"k"] = b"theirs"
        before = list(other.store.scan(b"", None))
    for write in (
        lambda: waiting.scope("x").__setitem__(b"k", b"mine"),
        lambda: waiting.scope("y").update({b"a": b"1"}),
    ):
        with pytest.raises(SchemeMismatch, match="was empty when this keyspace opened it"):
            write()
    assert list(waiting.store.scan(b"", None)) == before
    waiting.close()


def test_keyspaces_that_found_the_store_empty_still_share_it_by_their_records(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    root, app, again = (
        keyspace.open(url, scheme=TupleScheme()),
        keyspace.open(url, scheme=TupleScheme(raw_prefix=b"app/")),
        keyspace.open(url, scheme=TupleScheme()),
    )
    app.scope("a")[b"k"] = b"app"  # recorded in the footprint registry
    again.scope("a")[b"k"] = b"root"  # records the root keyspace
    root.scope("b")[b"k"] = b"root too"  # its record is there: nothing to refuse
    assert app.scope("a")[b"k"] == b"app" and root.scope("a")[b"k"] == b"root"
    for ks in (root, app, again):
        ks.close()
