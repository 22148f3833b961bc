"""The LMDB store's point read in C (``PointRead``)
against its reference, the method ``LMDBStore.get``: the same answers on data,
missing keys and LMDB's records of named databases; the slow route where the
store is closed (while another store of the path keeps the environment open),
the map is being resized, or py-lmdb raises; the transaction ended on every
path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lmdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import SchemeMismatch, StaleDirectory, StoreClosed
from keyspace.keyspace import Keyspace
from keyspace.schemes import AsciiHex, LengthPrefixed, Sublevel, TupleScheme
from keyspace.stores import LMDBStore
from keyspace.stores.lmdb._records import RECORD_SIZE

accel = pytest.importorskip("keyspace.stores._pairs_accel")

NAMES = ("a", "m", "orders")


def _store(path: Path) -> LMDBStore:
    for name in NAMES:
        with LMDBStore(path, db=name) as named:
            named.put(b"inside", name.encode())
    store = LMDBStore(path, max_dbs=len(NAMES))
    store.write([(b"b", b"x" * RECORD_SIZE), (b"m\x00", b"y" * RECORD_SIZE), (b"n", b"v")])
    return store


def test_every_database_reads_in_c(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        assert isinstance(store.get, accel.PointRead)
        with LMDBStore(tmp_path, db="a") as named:  # a named database: its own, no record test
            assert isinstance(named.get, accel.PointRead)
            assert named.get(b"inside") == b"a" == LMDBStore.get(named, b"inside")
            assert named.get(b"missing") is None
        with pytest.raises(StoreClosed):
            named.get(b"inside")
    finally:
        store.close()


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stored=st.dictionaries(
        st.sampled_from([b"c", b"d", b"e\x00", b"zz", b"q"]),
        st.binary(min_size=RECORD_SIZE - 1, max_size=RECORD_SIZE + 1),
        max_size=4,
    ),
    asked=st.lists(st.binary(min_size=1, max_size=3), max_size=6),
)
def test_the_c_read_answers_as_the_method(
    tmp_path_factory: pytest.TempPathFactory, stored: dict[bytes, bytes], asked: list[bytes]
) -> None:
    store = _store(tmp_path_factory.mktemp("env"))
    try:
        if stored:
            store.write(list(stored.items()))
        for key in [b"a", b"m", b"orders", b"b", b"m\x00", b"n", b"none", *stored, *asked]:
            assert store.get(key) == LMDBStore.get(store, key), key
        assert store.get(b"orders") is None  # a named database's record is no data
    finally:
        store.close()


def test_a_closed_store_raises_while_another_keeps_the_environment(tmp_path: Path) -> None:
    first = _store(tmp_path)
    second = LMDBStore(tmp_path, max_dbs=len(NAMES))  # the same environment, shared in the process
    try:
        scope_get = Keyspace(first, Sublevel(), recorded=False).scope("t").get
        first.close()
        with pytest.raises(StoreClosed):
            first.get(b"n")
        with pytest.raises(StoreClosed):
            scope_get(b"k")
        assert second.get(b"n") == b"v"
    finally:
        second.close()


class _Txn:
    def __init__(self, get: Any, aborts: list[str], abort_fails: bool = False) -> None:
        self._get, self._aborts, self._abort_fails = get, aborts, abort_fails

    def get(self, key: bytes) -> Any:
        return self._get(key)

    def abort(self) -> None:
        self._aborts.append("abort")
        if self._abort_fails:
            raise RuntimeError("abort failed")


class _Shared:
    resizing = False


def _read(get: Any, aborts: list[str], shared: Any = None, **txn: Any) -> tuple[Any, list[bytes]]:
    slow_keys: list[bytes] = []

    def slow(key: bytes) -> bytes:
        slow_keys.append(key)
        return b"slow"

    def is_record(key: bytes, value: bytes) -> bool:
        return key == b"rec"

    read = accel.PointRead(
        lambda: _Txn(get, aborts, **txn), shared or _Shared(), is_record, 3, slow, lmdb.Error
    )
    return read, slow_keys


def test_the_c_read_takes_the_slow_route_where_the_method_does() -> None:
    aborts: list[str] = []
    read, slow = _read({b"k": b"v", b"rec": b"abc", b"r\x00c": b"abc"}.get, aborts)
    assert [read(b"k"), read(b"rec"), read(b"r\x00c"), read(b"no")] == [b"v", None, b"abc", None]
    assert slow == [] and aborts == ["abort"] * 4
    resizing = _Shared()
    resizing.resizing = True
    read, slow = _read({b"k": b"v"}.get, aborts, resizing)
    assert read(b"k") == b"slow" and slow == [b"k"]
    read, slow = _read({b"k": b"v"}.get, aborts)
    read.close()
    assert read(b"k") == b"slow" and slow == [b"k"]

    def engine_error(key: bytes) -> bytes:
        raise lmdb.BadTxnError("closed/deleted/dropped")

    aborts.clear()
    read, slow = _read(engine_error, aborts)
    assert read(b"k") == b"slow" and slow == [b"k"] and aborts == ["abort"]

    def other_error(key: bytes) -> bytes:
        raise KeyError(key)

    aborts.clear()
    read, slow = _read(other_error, aborts)
    with pytest.raises(KeyError):
        read(b"k")
    assert slow == [] and aborts == ["abort"]
    read, slow = _read({b"k": b"v"}.get, aborts, abort_fails=True)
    with pytest.raises(RuntimeError, match="abort failed"):
        read(b"k")


def test_a_failed_begin_takes_the_slow_route() -> None:
    def begin() -> Any:
        raise lmdb.ReadersFullError("full")

    read = accel.PointRead(begin, _Shared(), None, RECORD_SIZE, lambda key: b"slow", lmdb.Error)
    assert read(b"k") == b"slow"
    with pytest.raises(TypeError):
        read(b"k", b"two")


@pytest.mark.parametrize("scheme", [LengthPrefixed(), Sublevel()])
def test_a_scope_reads_others_data_through_it(tmp_path: Path, scheme: Any) -> None:
    layout = scheme.layout(("t", "users"))
    env = lmdb.open(str(tmp_path))
    with env.begin(write=True) as txn:
        txn.put(layout.prefix + b"k", b"v")
    env.close()
    ks = keyspace.open(f"lmdb://{tmp_path}", scheme=scheme, leaf_depth=2)
    try:
        users = ks.scope("t", "users")
        assert users.get(b"k") == b"v" and users.get(b"j") is None
        assert isinstance(ks.store.get, accel.PointRead)
    finally:
        ks.close()


class _CheckedTxn:
    """A transaction of state ``state`` whose check key reads ``check`` (its
    reads of it counted in ``asked``)."""

    def __init__(self, state: int, check: bytes | None, data: dict[bytes, bytes], asked: list[int]) -> None:
        self._state, self._check, self._data, self._asked = state, check, data, asked

    def id(self) -> int:
        return self._state

    def get(self, key: bytes, db: Any = None) -> bytes | None:
        if db == "check-db":
            self._asked.append(self._state)
            return self._check if key == b"node" else None
        return self._data.get(key)

    def abort(self) -> None:
        pass


def test_a_checked_read_in_c_reads_where_the_check_holds_once_per_state() -> None:
    world: dict[str, Any] = {"state": 1, "check": b"expected"}
    asked: list[int] = []
    data = {b"k": b"v"}

    def begin() -> _CheckedTxn:
        return _CheckedTxn(world["state"], world["check"], data, asked)

    store_read = accel.PointRead(begin, _Shared(), None, RECORD_SIZE, lambda key: b"store-slow", lmdb.Error)
    slow_keys: list[bytes] = []

    def slow(key: bytes) -> bytes:
        slow_keys.append(key)
        return b"slow"

    def check(txn: _CheckedTxn) -> bool:
        return txn.get(b"node", db="check-db") == b"expected"

    checked = store_read.checked(check, slow)
    assert [checked(b"k"), checked(b"k"), checked(b"j")] == [b"v", b"v", None]
    assert asked == [1]  # the check read once in state 1
    world["state"] = 2
    assert checked(b"k") == b"v" and asked == [1, 2]
    world["state"], world["check"] = 3, b"another"
    assert checked(b"k") == b"slow" and slow_keys == [b"k"]
    world["state"], world["check"] = 4, None
    assert checked(b"k") == b"slow" and slow_keys == [b"k", b"k"]
    world["check"] = b"expected"
    assert checked(b"k") == b"v"
    store_read.close()  # the store's read closed: its checked reads take their slow route
    assert checked(b"k") == b"slow"
    with pytest.raises(TypeError):
        store_read.checked(b"no callable", slow)

    def refusing(txn: _CheckedTxn) -> bool:
        raise lmdb.MapResizedError("grown")  # the engine's error: the slow route decides

    assert (
        accel.PointRead(begin, _Shared(), None, 48, slow, lmdb.Error).checked(refusing, slow)(b"k") == b"slow"
    )


def test_a_directory_reads_through_the_checked_read_in_c(tmp_path: Path) -> None:
    ks = keyspace.open(f"lmdb://{tmp_path}")
    try:
        users = ks.directory("app", "users")
        users[b"k"] = b"v"
        assert isinstance(users._get, accel.PointRead)
        assert users.get(b"k") == b"v"
        ks.directories.move(("app", "users"), ("app", "people"))
        assert users.get(b"k") == b"v"  # moved: the same node, the check holds
        ks.directories.remove(("app", "people"))
        with pytest.raises(StaleDirectory):  # removed: the check fails, the snapshot route says so
            users.get(b"k")
    finally:
        ks.close()


def test_a_scope_on_others_data_reads_through_the_watched_read_in_c(tmp_path: Path) -> None:
    layout = TupleScheme().layout(("t",))
    env = lmdb.open(str(tmp_path))
    with env.begin(write=True) as txn:
        txn.put(layout.stored(b"k"), b"v")
    env.close()
    ks = keyspace.open(f"lmdb://{tmp_path}", scheme=TupleScheme())
    other = keyspace.open(f"lmdb://{tmp_path}", scheme=AsciiHex())
    try:
        scope = ks.scope("t")
        assert scope.get(b"k") == b"v"
        assert isinstance(scope._get, accel.PointRead)  # the record watch's read, in C
        other.scope("x")[b"k"] = b"w"  # another scheme's keyspace records itself: the watch refuses
        with pytest.raises(SchemeMismatch):
            scope.get(b"k")
    finally:
        other.close()
        ks.close()
