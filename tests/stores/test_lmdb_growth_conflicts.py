"""An LMDB transaction that grows a small map, with other processes writing.

A transaction that begins with less than ``FAST_HEADROOM`` free (any small
``map_size``) logs its writes; when the map fills it must end its LMDB
transaction to grow the map, which releases LMDB's writer lock between
processes. The tests hold that window open in one process (its first growth
waits for the other process's commit) and check that nothing it commits rests
on a read another process has changed: a transaction that read raises
``TransactionConflict`` (run again, it reads the other commit), one that only
wrote replays its writes, the catalog's first-write checks run again. And one
value over a doubling of the map is written whole on every write path, never a
raw ``lmdb.MapFullError``.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import lmdb
import pytest
from _growth_conflict_worker import COMMITTED, EMAIL, users
from _workers import run_together
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import KeyspaceError, TransactionConflict
from keyspace.stores.lmdb import LMDBStore

WORKER = str(Path(__file__).parent.parent / "_growth_conflict_worker.py")
MAP = 1 << 20
ONE_DOUBLING = 1_500_000
"""Bytes over the free space of a new 1 MiB map that one doubling makes room for."""
THREE_MIB = 3 << 20
TIMEOUT_S = 60.0


def _url(tmp_path: Path) -> str:
    return f"lmdb://{tmp_path / 'store'}?map_size={MAP}"


def _race(tmp_path: Path, mode: str, big: int) -> dict[str, Any]:
    """Run ``held`` and ``meanwhile`` of ``mode`` on the store at ``tmp_path``: the
    held process's first map growth waits until the other has committed."""
    url = _url(tmp_path)
    ready, done = str(tmp_path / "ready"), str(tmp_path / "done")
    held, meanwhile = run_together(
        [[WORKER, "held", mode, url, str(big), ready, done], [WORKER, "meanwhile", mode, url, ready, done]],
        timeout=TIMEOUT_S,
    )
    assert meanwhile.strip() == "done", meanwhile
    report: dict[str, Any] = json.loads(held)
    return report


def test_an_increment_never_overwrites_another_process_commit(tmp_path: Path) -> None:
    """Process A reads the counter, writes a value that fills the map, and while
    its map grows process B commits an increment: A's transaction is not
    replayed over B's commit (the lost update: the counter at 1 after two
    increments); it raises TransactionConflict, and run again it counts 2."""
    with keyspace.open(_url(tmp_path)) as ks:
        ks.scope("c")[b"n"] = b"0"
    report = _race(tmp_path, "increment", ONE_DOUBLING)
    assert report["outcome"] == "ok", report
    assert report["conflicts"] == 1, report
    with keyspace.open(_url(tmp_path)) as ks:
        assert ks.scope("c")[b"n"] == b"2"
        assert len(ks.scope("c")[b"big-held"]) == ONE_DOUBLING


def test_a_transaction_that_only_wrote_is_replayed_over_another_commit(tmp_path: Path) -> None:
    """A transaction that read nothing depends on nothing another writer changed:
    its writes are replayed on the grown map, no conflict, both commits stay."""
    with keyspace.open(_url(tmp_path)) as ks:
        ks.scope("c")[b"n"] = b"0"
    report = _race(tmp_path, "blind", THREE_MIB)
    assert report == {"outcome": "ok", "conflicts": 0, "message": ""}
    with keyspace.open(_url(tmp_path)) as ks:
        assert ks.scope("c")[b"other"] == b"1"
        assert len(ks.scope("c")[b"big"]) == THREE_MIB


def test_two_processes_never_both_hold_a_unique_value(tmp_path: Path) -> None:
    """A saves record "a" with an email inside ks.transaction(); while its map grows
    B saves record "b" with the same email: A, run again, gets UniqueViolation,
    and exactly one record holds the email, the one its index entry names."""
    with keyspace.open(_url(tmp_path)) as ks:
        users(ks).save("z", {"email": "z@example.com", "blob": ""})
    report = _race(tmp_path, "unique", ONE_DOUBLING)
    assert report["outcome"] == "UniqueViolation", report
    assert report["conflicts"] == 1, report
    with keyspace.open(_url(tmp_path)) as ks:
        indexed = users(ks)
        holders = sorted(key for key, user in indexed.items() if user["email"] == EMAIL)
        assert holders == ["b"]
        assert indexed.index("email").load(EMAIL)[0] == "b"


@pytest.mark.parametrize("mode", ["scheme", "aio-scheme"])
def test_a_first_write_checks_the_scheme_again_after_the_map_grew(mode: str, tmp_path: Path) -> None:
    """A tuple keyspace's first write (its scheme record and a value that fills
    the map) on an empty store, synchronous or through ``keyspace.aio``; while
    its map grows, a length-prefixed keyspace makes its first write there: A's
    first write runs again by itself, reads the other keyspace's record and
    raises SchemeMismatch, writing nothing (a replay would have recorded two
    overlapping keyspaces in one store)."""
    report = _race(tmp_path, mode, ONE_DOUBLING)
    assert report["outcome"] == "SchemeMismatch", report
    assert report["conflicts"] == 0, report  # the catalog ran it again itself
    with keyspace.open(_url(tmp_path), scheme="length-prefixed") as ks:
        stored = [key for key, _ in ks.store.scan()]
        assert not any(key.startswith(b"\xffkeyspace") for key in stored), stored
        assert ks.scope("c")[b"small"] == b"1"
        assert b"big" not in ks.scope("c")


# -- one value over a doubling of the map ------------------------------------

Reader = Callable[[keyspace.Keyspace], bytes | None]
Route = Callable[[keyspace.Keyspace, bytes], Reader]
"""Writes ``value`` into the keyspace one way; returns how to read it back."""


def _scoped(ks: keyspace.Keyspace) -> bytes | None:
    return ks.scope("c").get(b"k")


def _raw(ks: keyspace.Keyspace) -> bytes | None:
    return ks.store.get(b"\xfe-k")


def _first_write(ks: keyspace.Keyspace, value: bytes) -> Reader:
    ks.scope("c")[b"k"] = value
    return _scoped


def _later_put(ks: keyspace.Keyspace, value: bytes) -> Reader:
    ks.scope("c")[b"first"] = b"1"
    ks.scope("c")[b"k"] = value
    return _scoped


def _transaction_put(ks: keyspace.Keyspace, value: bytes) -> Reader:
    with ks.transaction() as tx:
        tx.scope("c")[b"k"] = value
        tx.scope("c")[b"after"] = b"1"
    return _scoped


def _transaction_update(ks: keyspace.Keyspace, value: bytes) -> Reader:
    ks.scope("c")[b"first"] = b"1"
    with ks.transaction() as tx:
        tx.scope("c").update({b"k": value, b"j": value[:1000]})
    return _scoped


def _update(ks: keyspace.Keyspace, value: bytes) -> Reader:
    ks.scope("c").update({b"k": value, b"j": value})
    return _scoped


def _store_put(ks: keyspace.Keyspace, value: bytes) -> Reader:
    ks.scope("c")[b"first"] = b"1"  # the keyspace's record, so that it opens again
    ks.store.put(b"\xfe-k", value)
    return _raw


def _store_write(ks: keyspace.Keyspace, value: bytes) -> Reader:
    ks.scope("c")[b"first"] = b"1"
    ks.store.write([(b"\xfe-k", value), (b"\xfe-j", value)])
    return _raw


ROUTES: dict[str, Route] = {
    "first write": _first_write,
    "put": _later_put,
    "transaction put": _transaction_put,
    "transaction update": _transaction_update,
    "update": _update,
    "store put": _store_put,
    "store write": _store_write,
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_three_mib_into_a_one_mib_map(route: str, tmp_path: Path) -> None:
    """The promise of docs/stores.md, the map grows on demand, holds for one
    value that needs more than one doubling, on every write path: never a raw
    lmdb.MapFullError."""
    value = bytes(range(256)) * (THREE_MIB // 256)
    with keyspace.open(_url(tmp_path)) as ks:
        read = ROUTES[route](ks, value)
        assert read(ks) == value
    with keyspace.open(_url(tmp_path)) as ks:
        assert read(ks) == value


@settings(max_examples=15)
@given(
    route=st.sampled_from(sorted(ROUTES)),
    size=st.integers(min_value=1, max_value=8 << 20),
    map_kib=st.sampled_from([64, 256, 1024]),
)
def test_any_value_fits_after_growth(route: str, size: int, map_kib: int, tmp_path_factory: Any) -> None:
    """Property: a value of any size up to 8 MiB written through any route into a
    map of 64 KiB to 1 MiB reads back whole; no error at all, raw or named."""
    path = tmp_path_factory.mktemp("grow")
    value = (b"v" * 251 + b"w") * (size // 252) + b"u" * (size % 252)
    try:
        with keyspace.open(f"lmdb://{path}?map_size={map_kib << 10}") as ks:
            read = ROUTES[route](ks, value)
            assert read(ks) == value
    except lmdb.Error as exc:  # pragma: no cover - the failure this test exists for
        raise AssertionError(f"a raw engine error escaped: {exc!r}") from exc
    except KeyspaceError as exc:  # pragma: no cover
        raise AssertionError(f"{route} of {size} bytes into a {map_kib} KiB map: {exc!r}") from exc


# -- any transaction program, another process committing while its map grows --

Op = tuple[str, bytes, int]
"""``("incr", key, 0)``: read the key and write it plus one; ``("get", key, 0)``;
``("put", key, size)``: write ``size`` bytes; ``("delete", key, 0)``."""

KEYS = [b"k0", b"k1"]
OPS = st.one_of(
    st.tuples(st.sampled_from(["incr", "get", "delete"]), st.sampled_from(KEYS), st.just(0)),
    st.tuples(st.just("put"), st.sampled_from([b"big", b"big2"]), st.integers(1, 300_000)),
)


def _run(view: Any, program: list[Op]) -> None:
    for op, key, size in program:
        if op == "incr":
            view.put(key, str(int(view.get(key) or b"0") + 1).encode())
        elif op == "get":
            view.get(key)
        elif op == "put":
            view.put(key, b"p" * size)
        else:
            view.delete(key)


class _Committer:
    """A process that commits ``COMMITTED`` to a store when asked, and the hook
    that asks it at the first growth of a map in this process (per store)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, WORKER, "committer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.pending: str | None = None  # the path to commit to at the next growth

    def commit(self, path: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(path + "\n")
        self.proc.stdin.flush()
        ready = select.select([self.proc.stdout], [], [], TIMEOUT_S)[0]
        assert ready, "the committer did not answer"
        assert self.proc.stdout.readline().strip() == "ok"

    def held_grow(self, grow: Callable[..., None]) -> Callable[..., None]:
        def held(store: Any, *args: Any, **kwargs: Any) -> None:
            path, self.pending = self.pending, None
            if path is not None:
                self.commit(path)
            grow(store, *args, **kwargs)

        return held

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def committer() -> Any:
    helper = _Committer()
    yield helper
    helper.close()


@settings(max_examples=40)
@given(program=st.lists(OPS, min_size=1, max_size=8))
def test_a_transaction_is_serial_with_a_commit_made_while_it_grew_the_map(
    program: list[Op], committer: _Committer, tmp_path_factory: Any
) -> None:
    """Property: a transaction program on a 64 KiB map, another process committing
    (``k0`` := 10) at the program's first growth of the map: the store ends as
    the other commit followed by the program (run again where it raised
    TransactionConflict), never with the other commit's ``k0`` lost under an
    increment read before it. A program that reads nothing never conflicts."""
    path = str(tmp_path_factory.mktemp("prog"))
    start = {b"k0": b"0", b"k1": b"0"}
    conflicts = 0
    with mock.patch.object(LMDBStore, "_grow", committer.held_grow(LMDBStore._grow)):
        store = LMDBStore(path, map_size=64 << 10)
        try:
            store.write(list(start.items()))
            committer.pending = path
            for _attempt in range(3):
                try:
                    with store.transaction() as tx:
                        _run(tx, program)
                    break
                except TransactionConflict:
                    conflicts += 1
            final = dict(store.scan())
        finally:
            store.close()
    other_committed = committer.pending is None
    committer.pending = None
    model = dict(start)
    if other_committed:
        model.update(COMMITTED)
    _run(_Model(model), program)
    assert {k: v if len(v) < 64 else len(v) for k, v in final.items()} == {
        k: v if len(v) < 64 else len(v) for k, v in model.items()
    }
    assert conflicts <= 1
    if all(op == "put" or op == "delete" for op, _, _ in program):
        assert conflicts == 0


class _Model:
    """A dict as the view a transaction program runs on."""

    def __init__(self, data: dict[bytes, bytes]) -> None:
        self.data = data

    def get(self, key: bytes) -> bytes | None:
        return self.data.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.data[key] = value

    def delete(self, key: bytes) -> None:
        self.data.pop(key, None)


def test_a_named_database_is_created_in_a_full_map(tmp_path: Path) -> None:
    """Creating a named database writes its record: on a map filled to the last
    page the map grows and the database is made (it was a StoreError claiming
    that a transaction had outgrown 1 GiB of free space)."""
    env = lmdb.open(str(tmp_path), map_size=64 << 10, max_dbs=4)
    filled = 0
    for filled in range(1000):
        txn = env.begin(write=True)
        try:
            txn.put(b"k%d" % filled, b"v" * 1000)
            txn.commit()
        except lmdb.MapFullError:
            txn.abort()
            break
    env.close()
    assert 0 < filled < 1000
    store = LMDBStore(tmp_path, db="named", map_size=64 << 10)
    try:
        store.put(b"a", b"b")
        assert store.get(b"a") == b"b"
        assert store.databases() == ["named"]
    finally:
        store.close()


def test_a_conflicted_transaction_stays_ended(committer: _Committer, tmp_path: Path) -> None:
    """A block that catches the TransactionConflict and goes on: every later
    read, write and scan of the transaction, and its end, raise it again, and
    nothing of it is committed (the other process's commit stays)."""
    path = str(tmp_path)
    with mock.patch.object(LMDBStore, "_grow", committer.held_grow(LMDBStore._grow)):
        store = LMDBStore(path, map_size=64 << 10)
        try:
            store.put(b"k0", b"0")
            committer.pending = path
            ended = pytest.raises(TransactionConflict, match="another writer committed")
            with ended, store.transaction() as tx:
                assert tx.get(b"k0") == b"0"
                tx.put(b"k0", b"1")
                with pytest.raises(TransactionConflict, match="running the whole transaction again is safe"):
                    tx.put(b"big", b"x" * 300_000)
                for use in (
                    lambda: tx.get(b"k0"),
                    lambda: tx.put(b"k1", b"1"),
                    lambda: tx.delete(b"k0"),
                    lambda: tx.delete_range(b"a", b"z"),
                    lambda: list(tx.scan()),
                    lambda: tx.count(),
                ):
                    with pytest.raises(TransactionConflict):
                        use()
            assert committer.pending is None  # the other process did commit
            assert dict(store.scan()) == {b"k0": b"10", b"other": b"B"}
        finally:
            store.close()


@pytest.mark.parametrize("read", ["joined get", "joined scan", "none"])
def test_a_read_through_a_joined_database_counts(read: str, committer: _Committer, tmp_path: Path) -> None:
    """A transaction that read only through another database of the environment
    joined to it (LMDBStore.join) conflicts as one that read its own; one that
    read nothing is replayed over the other commit."""
    path = str(tmp_path)
    with mock.patch.object(LMDBStore, "_grow", committer.held_grow(LMDBStore._grow)):
        store = LMDBStore(path, map_size=64 << 10, max_dbs=4)
        named = LMDBStore(path, db="j")
        try:
            store.put(b"k0", b"0")
            named.put(b"n", b"1")
            committer.pending = path
            conflicts = 0
            try:
                with store.transaction() as tx:
                    joined = named.join(tx)
                    if read == "joined get":
                        joined.get(b"n")
                    elif read == "joined scan":
                        list(joined.scan())
                    joined.put(b"m", b"2")
                    tx.put(b"big", b"x" * 300_000)
            except TransactionConflict:
                conflicts += 1
            assert committer.pending is None
            assert conflicts == (0 if read == "none" else 1)
            assert (named.get(b"m") is None) == (read != "none")
            assert store.get(b"k0") == b"10"  # the other process's commit stays
        finally:
            named.close()
            store.close()
