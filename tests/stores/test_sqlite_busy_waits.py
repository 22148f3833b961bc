"""SQLite: a store opened while another connection holds the write lock of its
new file waits for it (up to the busy timeout), and an error that says the busy
timeout was spent comes only once it was.

Making a new store switches the file to WAL mode: a read of its header, then a
write of it. When another connection holds the write lock in between, SQLite
answers ``SQLITE_BUSY`` at once, without its busy handler; that answer was
reported as "stayed locked … for the whole busy timeout (30.0 s …)" a few
milliseconds after the open began, and two processes making one store at once
met it (tests/stores/test_first_open_race.py races them).
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.errors import StoreError
from keyspace.stores.sqlite import SQLiteStore

_SPENT = re.compile(r"for the whole busy timeout \(([0-9.]+) s")


@contextmanager
def _write_lock_held(path: Path, seconds: float) -> Iterator[None]:
    """Another connection holds the write lock (``RESERVED``) of the empty
    database file ``path`` for ``seconds``, from before the block begins."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(seconds, holder.execute, ("ROLLBACK",))
    release.start()
    try:
        yield
    finally:
        release.join(seconds + 10)
        holder.close()


def _open(path: Path, timeout: float) -> tuple[SQLiteStore | StoreError, float]:
    started = time.monotonic()
    try:
        store: SQLiteStore | StoreError = SQLiteStore(path, timeout=timeout)
    except StoreError as exc:
        store = exc
    return store, time.monotonic() - started


def test_a_new_store_waits_for_a_write_lock_held_by_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    with _write_lock_held(path, 0.4):
        store, took = _open(path, 5.0)
    assert not isinstance(store, StoreError), f"refused after {took:.3f} s: {store}"
    try:
        store.put(b"k", b"v")
        assert store.get(b"k") == b"v"
    finally:
        store.close()
    assert took >= 0.3  # it waited for the lock


def test_the_busy_timeout_is_spent_before_an_error_says_so(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    with _write_lock_held(path, 1.5):
        error, took = _open(path, 0.3)
    assert isinstance(error, StoreError), "opened while another connection held the write lock"
    spent = _SPENT.search(str(error))
    assert spent is not None and float(spent.group(1)) == 0.3, str(error)
    assert took >= 0.3, f"the error says 0.3 s were waited, after {took:.3f} s: {error}"


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hold=st.sampled_from([0.0, 0.05, 0.15, 0.3]),
    timeout=st.sampled_from([0.0, 0.05, 0.1, 0.2]),
)
def test_an_open_succeeds_or_names_a_wait_that_happened(tmp_path: Path, hold: float, timeout: float) -> None:
    """Whatever the lock's holding time and the busy timeout: the open succeeds,
    or it raises after waiting at least the busy timeout its message names."""
    path = tmp_path / f"new-{time.monotonic_ns()}.sqlite"
    with _write_lock_held(path, hold):
        store, took = _open(path, timeout)
    if isinstance(store, StoreError):
        spent = _SPENT.search(str(store))
        assert spent is not None, str(store)
        assert took >= float(spent.group(1)) == timeout, (took, str(store))
    else:
        store.close()


@pytest.mark.parametrize("existing", [False, True])
def test_waits_of_a_write_are_the_busy_handlers(tmp_path: Path, existing: bool) -> None:
    """A write while another process's transaction holds the store (its
    ``BEGIN IMMEDIATE`` waits under the busy handler) raises only after the
    timeout, and then says so."""
    path = tmp_path / "store.sqlite"
    if existing:
        SQLiteStore(path).close()
    first = SQLiteStore(path)
    second = SQLiteStore(path, timeout=0.2)
    try:
        with first.transaction() as tx:
            tx.put(b"a", b"1")
            started = time.monotonic()
            with pytest.raises(StoreError, match=r"whole busy timeout \(0\.2 s") as caught:
                second.write([(b"b", b"2")])
            took = time.monotonic() - started
        assert took >= 0.2, f"{caught.value} after {took:.3f} s"
    finally:
        second.close()
        first.close()
