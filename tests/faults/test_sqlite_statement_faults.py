"""SQLite statements failing part way, on every public write path, for every scheme.

The faults come from SQLite itself: triggers added to the store's file (by
another connection, as a user's tool could) abort an ``INSERT`` whose value or key
holds a marker, or a ``DELETE`` of a row whose value holds one, with
``RAISE(ABORT)`` — a statement-level error that SQLite undoes for that one
statement and that leaves the transaction open, as it does for an I/O error it
can recover from, a blob over the connection's length limit or an interrupt.
Every write path (``__setitem__``, ``update`` with pairs and keywords,
``setdefault``, ``pop``, ``popitem``, ``del``, ``clear``, ``clear_range``,
``drop``, the collections) meets a fault after some of its statements ran:

- outside a transaction: the operation raises a :class:`StoreError` and the raw
  store is exactly as before, scheme records and registries included;
- inside a caller's transaction that catches the error and carries on: either
  the commit raises a :class:`StoreError` and the raw store is exactly as before
  the transaction, or the commit succeeds and the store holds exactly the
  transaction's other writes. Never a part of the failed operation.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _schemes import SCOPE_AND_SIBLING
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.collections import (
    COSMWASM,
    TUPLE,
    Deque,
    IndexedMap,
    Layout,
    MultiIndex,
    SnapshotItem,
    SnapshotMap,
    UniqueIndex,
)
from keyspace.errors import StoreError
from keyspace.stores import open_store

SCHEMES = SCOPE_AND_SIBLING
POISON = b"POISON"  # an INSERT of a value (or key) holding it fails
FRAGILE = b"FRAGILE"  # a DELETE of a row whose value holds it fails

_TRIGGERS = (
    f"CREATE TRIGGER IF NOT EXISTS fault_put BEFORE INSERT ON kv "
    f"WHEN instr(NEW.v, X'{POISON.hex()}') > 0 OR instr(NEW.k, X'{POISON.hex()}') > 0 "
    "BEGIN SELECT RAISE(ABORT, 'injected fault: the write failed'); END",
    f"CREATE TRIGGER IF NOT EXISTS fault_delete BEFORE DELETE ON kv "
    f"WHEN instr(OLD.v, X'{FRAGILE.hex()}') > 0 "
    "BEGIN SELECT RAISE(ABORT, 'injected fault: the delete failed'); END",
)


_NTH = (
    "CREATE TABLE IF NOT EXISTS fault (n INTEGER NOT NULL)",
    "INSERT INTO fault SELECT -1 WHERE NOT EXISTS (SELECT 1 FROM fault)",
    "CREATE TRIGGER IF NOT EXISTS fault_nth BEFORE INSERT ON kv WHEN (SELECT n FROM fault) = 0 "
    "BEGIN SELECT RAISE(ABORT, 'injected fault: the write failed'); END",
    "CREATE TRIGGER IF NOT EXISTS fault_count AFTER INSERT ON kv WHEN (SELECT n FROM fault) > 0 "
    "BEGIN UPDATE fault SET n = n - 1; END",
)


def _fail_insert(path: Path, n: int) -> None:
    """From now on, let ``n`` inserts into the store at ``path`` pass and fail the
    next ones (``n < 0``: none fails). The count is part of the writing
    transaction: a rolled-back insert does not count."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        for sql in _NTH:
            conn.execute(sql)
        conn.execute("UPDATE fault SET n = ?", (n,))
        conn.commit()
    finally:
        conn.close()


def _arm(path: Path) -> None:
    """Add the fault triggers to the SQLite file at ``path`` (its store open or not)."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        for sql in _TRIGGERS:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "store.sqlite"
    open_store(f"sqlite://{path}").close()
    _arm(path)
    yield path


def _raw(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b"", None))


# Each write path, with the fault part way through it. The scope holds
# a=1, b=FRAGILE, c=3 (and, for drop, a child scope); the failing write comes after
# writes of the same operation that succeed, where the operation makes several.
WRITES: dict[str, Callable[[Any], object]] = {
    "setitem": lambda s: s.__setitem__(b"n", POISON),
    "setitem-over": lambda s: s.__setitem__(b"a", POISON),
    "update-pairs": lambda s: s.update([(b"x", b"1"), (b"y", b"2"), (b"z", POISON)]),
    "update-mapping": lambda s: s.update({b"x": b"1", b"a": b"new", b"z": POISON}),
    "update-kwargs": lambda s: s.scope(key="str").update({"x": b"1"}, y=b"2", z=POISON),
    "update-long": lambda s: s.update((b"k%05d" % i, POISON if i == 5000 else b"v") for i in range(5001)),
    "setdefault": lambda s: s.setdefault(b"n", POISON),
    "pop": lambda s: s.pop(b"b"),
    "popitem": lambda s: s.popitem(),
    "delitem": lambda s: s.__delitem__(b"b"),
    "clear": lambda s: s.clear(),
    "clear_range": lambda s: s.clear_range(start=b"a", stop=b"z"),
    "drop": lambda s: s.drop(),
}
FIRST_WRITES: dict[str, Callable[[Any], object]] = {
    "setitem": lambda s: s.__setitem__(b"n", POISON),
    "update": lambda s: s.update({b"x": b"1", b"y": b"2", b"z": POISON}),
    "update-kwargs": lambda s: s.scope(key="str").update(x=b"1", z=POISON),
    "setdefault": lambda s: s.setdefault(b"n", POISON),
}


def _fill(ks: keyspace.Keyspace, path: tuple[Any, ...], sibling: tuple[Any, ...]) -> None:
    scope = ks.scope(*path)
    scope.update({b"a": b"1", b"b": FRAGILE, b"c": b"3"})
    ks.scope(*sibling)[b"s"] = b"sibling"
    if len(path) > 1 and ks.scheme.separates_own_keys:  # a child beside its own keys
        ks.scope(*path, "c")[b"k"] = FRAGILE + b" child"


def _keyspace(db: Path, name: str) -> keyspace.Keyspace:
    make = SCHEMES[name][0]
    return keyspace.open(f"sqlite://{db}", scheme=make())


def _prepare(ks: keyspace.Keyspace, name: str, op: str) -> tuple[Any, ...]:
    _, path, sibling = SCHEMES[name]
    _fill(ks, path, sibling)
    if op == "popitem":  # whichever end it takes, its delete fails
        ks.scope(*path).update({b"a": FRAGILE, b"c": FRAGILE})
    return path


def _expect_refused(call: Callable[[], object]) -> None:
    with pytest.raises(StoreError, match="injected fault"):
        call()


@pytest.mark.parametrize("op", list(WRITES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_write_failing_part_way_changes_nothing(db: Path, name: str, op: str) -> None:
    with _keyspace(db, name) as ks:
        path = _prepare(ks, name, op)
        before = _raw(ks)
        _expect_refused(lambda: WRITES[op](ks.scope(*path)))
        assert _raw(ks) == before


@pytest.mark.parametrize("op", list(FIRST_WRITES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_first_write_failing_leaves_no_record(db: Path, name: str, op: str) -> None:
    _, path, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:
        _expect_refused(lambda: FIRST_WRITES[op](ks.scope(*path)))
        assert _raw(ks) == []  # no scheme record, registration or leaf either
        ks.scope(*sibling)[b"s"] = b"fine"
        before = _raw(ks)
        _expect_refused(lambda: FIRST_WRITES[op](ks.scope(*path)))
        assert _raw(ks) == before
        ks.scope(*path)[b"k"] = b"the scope works"
        assert dict(ks.scope(*path).items()) == {b"k": b"the scope works"}


def _in_transaction(ks: keyspace.Keyspace, path: tuple[Any, ...], sibling: tuple[Any, ...], op: Any) -> None:
    """A transaction that writes, meets the fault, catches it and writes on; the
    store is as before it or as after its other writes, never in between."""
    before = _raw(ks)
    committed = True
    try:
        with ks.transaction() as tx:
            tx.scope(*sibling)[b"before"] = b"1"
            _expect_refused(lambda: op(tx.scope(*path)))
            # a transaction that refuses to go on must not commit either
            with contextlib.suppress(StoreError):
                tx.scope(*sibling)[b"after"] = b"2"
    except StoreError:
        committed = False
    if not committed:
        assert _raw(ks) == before
        return
    encode = ks.scheme.encode
    expected = dict(before) | {encode(sibling, b"before"): b"1", encode(sibling, b"after"): b"2"}
    assert dict(_raw(ks)) == expected


@pytest.mark.parametrize("op", list(WRITES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_write_failing_part_way_in_a_transaction_never_half_commits(db: Path, name: str, op: str) -> None:
    _, _, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:
        path = _prepare(ks, name, op)
        _in_transaction(ks, path, sibling, WRITES[op])


@pytest.mark.parametrize("op", list(FIRST_WRITES))
@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_first_write_failing_in_a_transaction_never_half_commits(db: Path, name: str, op: str) -> None:
    _, path, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:
        ks.scope(*sibling)[b"s"] = b"fine"
        _in_transaction(ks, path, sibling, FIRST_WRITES[op])


# -- collections: several writes per operation, the fault on a later one ----------------


LAYOUTS = [pytest.param(TUPLE, id="tuple"), pytest.param(COSMWASM, id="cosmwasm")]


@pytest.fixture
def app(db: Path) -> Iterator[keyspace.Keyspace]:
    ks = keyspace.open(f"sqlite://{db}")
    ks.scope("app")[b"seed"] = b"1"
    try:
        yield ks
    finally:
        ks.close()


def _collection_op(ks: keyspace.Keyspace, op: Callable[[keyspace.Transaction | None], object]) -> None:
    """``op`` alone (its own transaction) and inside a caller's transaction that
    catches the fault and goes on: never a part of it in the store."""
    before = _raw(ks)
    _expect_refused(lambda: op(None))
    assert _raw(ks) == before
    try:
        with ks.transaction() as tx:
            _expect_refused(lambda: op(tx))
    except StoreError:
        pass
    assert _raw(ks) == before


@pytest.mark.parametrize("layout", LAYOUTS)
def test_indexed_map_save_failing_at_an_index_entry(app: keyspace.Keyspace, layout: Layout) -> None:
    users = IndexedMap(
        app.scope("app"),
        "users",
        key="str",
        layout=layout,
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "team", key="str"),
        },
    )
    users.save("alice", {"email": "a@x", "team": "red"})

    def save(tx: keyspace.Transaction | None) -> None:  # the record, then an index key with the marker
        (users if tx is None else users.using(tx)).save("alice", {"email": "a@x", "team": "POISON"})

    _collection_op(app, save)
    assert users.load("alice") == {"email": "a@x", "team": "red"}
    assert list(users.index("team").prefix("red").keys()) == ["alice"]


def _swept(ks: keyspace.Keyspace, db: Path, op: Callable[[keyspace.Transaction | None], object]) -> int:
    """``op`` with its 1st, 2nd, … insert failing, alone and in a caller's
    transaction, until it passes; returns how many inserts it makes."""
    for n in range(20):  # bounded: the operations here make a few inserts
        _fail_insert(db, n)
        before = _raw(ks)
        try:
            op(None)
        except StoreError as exc:
            assert "injected fault" in str(exc)
            assert _raw(ks) == before, f"insert {n + 1} failed: the operation wrote part of itself"
            try:
                with ks.transaction() as tx:
                    _expect_refused(lambda: op(tx))
            except StoreError:
                pass
            assert _raw(ks) == before, f"insert {n + 1} failed in a transaction: part of it committed"
            continue
        _fail_insert(db, -1)
        return n
    raise AssertionError("the operation failed at every insert")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("end", ["back", "front"])
def test_deque_push_failing_at_each_write(app: keyspace.Keyspace, db: Path, layout: Layout, end: str) -> None:
    q = Deque(app.scope("app"), "q", layout=layout)
    q.push_back(1)

    def push(tx: keyspace.Transaction | None) -> None:  # the item, then the head or tail
        getattr(q if tx is None else q.using(tx), f"push_{end}")(7)

    assert _swept(app, db, push) == 2
    assert len(q) == 2 and sorted(q) == [1, 7]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_indexed_map_save_failing_at_each_write(app: keyspace.Keyspace, db: Path, layout: Layout) -> None:
    users = IndexedMap(
        app.scope("app"),
        "users",
        key="str",
        layout=layout,
        indexes={
            "email": UniqueIndex(lambda u: u["email"], "email", key="str"),
            "team": MultiIndex(lambda u: u["team"], "team", key="str"),
        },
    )
    users.save("alice", {"email": "a@x", "team": "red"})

    def save(tx: keyspace.Transaction | None) -> None:
        (users if tx is None else users.using(tx)).save("alice", {"email": "b@x", "team": "blue"})

    assert _swept(app, db, save) == 3
    assert users.index("email").load("b@x") == ("alice", {"email": "b@x", "team": "blue"})
    assert list(users.index("team").prefix("blue").keys()) == ["alice"]
    assert list(users.index("team").prefix("red").keys()) == []


@pytest.mark.parametrize("name", list(SCHEMES))
def test_update_failing_at_each_pair(db: Path, name: str) -> None:
    _, path, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:

        def update(tx: keyspace.Transaction | None) -> None:
            scope = (ks if tx is None else tx).scope(*path)
            scope.update({b"k%d" % i: b"v" for i in range(5)})

        inserts = _swept(ks, db, update)  # the first write: records, registrations with it
        assert len(ks.scope(*path)) == 5 and inserts >= 5
        ks.scope(*sibling)[b"s"] = b"sibling"
        assert _swept(ks, db, update) == 5  # a later write: the pairs alone


def test_the_cli_put_and_delete_change_nothing_on_a_fault(db: Path) -> None:
    from _cli import run

    url = f"sqlite://{db}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = FRAGILE
        before = _raw(ks)
    put = run("put", url, "a", "--key", "n", "--value", POISON.decode(), ok=False)
    delete = run("delete", url, "a", "--key", "k", ok=False)
    drop = run("delete", url, "a", "--drop", ok=False)
    for proc in (put, delete, drop):
        assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "injected fault" in proc.stderr
        assert "Traceback" not in proc.stderr
    with keyspace.open(url) as ks:
        assert _raw(ks) == before


@pytest.mark.parametrize("name", [n for n in SCHEMES if n != "delimited"])  # (a delimited root: LayoutError)
def test_a_root_drop_failing_part_way_changes_nothing(db: Path, name: str) -> None:
    """The root's drop spans every scope (ScopeHash: one range per registered name);
    a delete that fails in the last scope leaves every scope as it was."""
    _, path, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:
        ks.scope(*path).update({b"a": b"1", b"b": b"2"})
        ks.scope(*sibling).update({b"y": b"1", b"z": FRAGILE})
        before = _raw(ks)
        _expect_refused(lambda: ks.scope().drop())
        assert _raw(ks) == before
        with contextlib.suppress(StoreError), ks.transaction() as tx:
            _expect_refused(lambda: tx.scope().drop())
            tx.scope(*path)[b"c"] = b"3"
        assert _raw(ks) == before


@pytest.mark.parametrize("layout", LAYOUTS)
def test_snapshot_map_save_and_remove_failing_at_each_write(
    app: keyspace.Keyspace, db: Path, layout: Layout
) -> None:
    m = SnapshotMap(app.scope("app"), "primary", "cp", "cl", key="str", layout=layout)
    m.save("k", 1, height=1)

    def save(tx: keyspace.Transaction | None) -> None:  # the change set, then the value
        (m if tx is None else m.using(tx)).save("k", 2, height=5)

    assert _swept(app, db, save) >= 2
    assert m.load("k") == 2 and m.may_load_at_height("k", 5) == 1

    item = SnapshotItem(app.scope("app"), "item", "icp", "icl", layout=layout)

    def save_item(tx: keyspace.Transaction | None) -> None:
        (item if tx is None else item.using(tx)).save(3, height=7)

    assert _swept(app, db, save_item) >= 2
    assert item.load() == 3


@pytest.mark.parametrize("layout", LAYOUTS)
def test_indexed_map_remove_failing_at_its_index_entries(app: keyspace.Keyspace, layout: Layout) -> None:
    users = IndexedMap(
        app.scope("app"),
        "users",
        key="str",
        layout=layout,
        indexes={"email": UniqueIndex(lambda u: u["email"], "email", key="str")},
    )
    users.save("alice", {"email": "a@x", "team": FRAGILE.decode()})  # the record's delete fails
    users.save("bob", {"email": "b@x", "team": "red"})

    def remove(tx: keyspace.Transaction | None) -> None:  # the index entry first, or the record
        (users if tx is None else users.using(tx)).remove("alice")

    _collection_op(app, remove)
    assert users.index("email").load("a@x") == ("alice", {"email": "a@x", "team": FRAGILE.decode()})


# -- another writer holds the lock: every write waits its busy timeout, then fails whole -----

LOCKED_WRITES = {**WRITES, **{f"first-{op}": call for op, call in FIRST_WRITES.items()}}


@pytest.mark.parametrize("op", list(LOCKED_WRITES))
@pytest.mark.parametrize("name", ["tuple", "scopehash"])
def test_a_write_while_another_process_holds_the_lock_changes_nothing(db: Path, name: str, op: str) -> None:
    make, path, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:
        _fill(ks, path, sibling)
        ks.store.write([(k, b"plain") for k, v in _raw(ks) if FRAGILE in v])  # no injected fault here
        target = path if not op.startswith("first-") else (*sibling[:-1], "new")
        before = _raw(ks)
    holder = sqlite3.connect(db, isolation_level=None, timeout=30)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with keyspace.open(f"sqlite://{db}", scheme=make(), timeout=0.05) as ks:
            with pytest.raises(StoreError, match="stayed locked"):
                LOCKED_WRITES[op](ks.scope(*target))
            with pytest.raises(StoreError, match="stayed locked"), ks.transaction() as tx:
                tx.scope(*sibling)[b"x"] = b"1"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with _keyspace(db, name) as ks:
        assert _raw(ks) == before


# -- the asyncio face runs the same transactions ------------------------------------------


@pytest.mark.parametrize("name", ["tuple", "scopehash", "length-prefixed"])
def test_async_writes_failing_part_way_never_half_commit(db: Path, name: str) -> None:
    import asyncio

    import keyspace.aio

    make, path, sibling = SCHEMES[name]
    with _keyspace(db, name) as ks:
        _fill(ks, path, sibling)
        before = _raw(ks)

    async def main() -> None:
        aks = await keyspace.aio.open(f"sqlite://{db}", scheme=make())
        try:
            scope = aks.scope(*path)
            for call in (
                lambda s: s.update({b"x": b"1", b"y": b"2", b"z": POISON}),
                lambda s: s.clear(),
                lambda s: s.pop(b"b"),
                lambda s: s.drop(),
            ):
                with pytest.raises(StoreError, match="injected fault"):
                    await call(scope)
                with contextlib.suppress(StoreError):
                    async with aks.transaction() as tx:
                        await tx.scope(*sibling).put(b"before", b"1")
                        with pytest.raises(StoreError, match="injected fault"):
                            await call(tx.scope(*path))
        finally:
            await aks.close()

    asyncio.run(main())
    with _keyspace(db, name) as ks:
        assert _raw(ks) == before


# -- any transaction of writes, with its n-th insert failing ---------------------------------

_OP = st.one_of(
    st.tuples(st.just("set"), st.integers(0, 1), st.binary(min_size=1, max_size=3), st.binary(max_size=3)),
    st.tuples(
        st.just("update"),
        st.integers(0, 1),
        st.dictionaries(st.binary(min_size=1, max_size=3), st.binary(max_size=3), max_size=4),
    ),
    st.tuples(st.just("discard"), st.integers(0, 1), st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("pop"), st.integers(0, 1), st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("clear"), st.integers(0, 1)),
)


def _run_op(scope: Any, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "set":
        scope[op[2]] = op[3]
    elif kind == "update":
        scope.update(op[2])
    elif kind == "discard":
        scope.discard(op[2])
    elif kind == "pop":
        scope.pop(op[2], None)
    else:
        scope.clear()


@settings(max_examples=40)
@given(
    name=st.sampled_from(["tuple", "scopehash", "length-prefixed", "asciihex"]),
    ops=st.lists(_OP, min_size=1, max_size=8),
    fail_at=st.one_of(st.none(), st.integers(0, 12)),
)
def test_any_transaction_with_a_failing_insert_commits_all_or_nothing(
    name: str, ops: list[tuple[Any, ...]], fail_at: int | None
) -> None:
    """A transaction of random writes over two scopes, whose ``fail_at``-th insert
    fails while the caller catches every error and goes on: the store holds
    either exactly what it held before or (no insert failed) exactly what the
    same transaction leaves in a memory store."""
    make, path, sibling = SCHEMES[name]
    paths = (path, sibling)
    seed = {b"a": b"1", b"b": b"2"}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "store.sqlite"
        reference = keyspace.open("memory:", scheme=make())
        with keyspace.open(f"sqlite://{db}", scheme=make()) as ks:
            for p in paths:
                ks.scope(*p).update(seed)
                reference.scope(*p).update(seed)
            before = _raw(ks)
            _fail_insert(db, -1 if fail_at is None else fail_at)
            failed = False
            try:
                with ks.transaction() as tx:
                    for op in ops:
                        try:
                            _run_op(tx.scope(*paths[op[1]]), op)
                        except StoreError:
                            failed = True
            except StoreError:
                failed = True
            _fail_insert(db, -1)
            if failed:
                assert _raw(ks) == before
            else:
                with reference.transaction() as tx:
                    for op in ops:
                        _run_op(tx.scope(*paths[op[1]]), op)
                assert _raw(ks) == _raw(reference)
        reference.close()
