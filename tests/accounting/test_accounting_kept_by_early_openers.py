"""Accounting and programs that opened the store before accounting was recorded.

Accounting is recorded in the store with the first write of a keyspace opened
with ``accounting=True``; a program that opened the store before that holds no
hook. Its writes must never leave keys that no counter counts behind counters
that claim to be exact: either side's write is refused, and nothing is written.

- A writer without accounting writes first, then the accounting one: the
  accounting one's write is refused (AccountingUnavailable), nothing is
  written, accounting is not recorded, and ``accounting enable`` counts the
  store later.
- The accounting one writes first, then the one without: the latter's first
  write is refused (SchemeMismatch: the store now records a feature it does not
  run), nothing is written, and a reopen keeps the counts, as does a process
  that opens the store later without asking for accounting.
- Two keyspaces with accounting, each opened before either wrote: both count.

The other program is a real process on LMDB (and two keyspace objects over one
memory store, which take the same routes)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace._accounting import accounting_of, enable
from keyspace.errors import AccountingUnavailable, SchemeMismatch
from keyspace.stores import MemoryStore

_WORKER = r"""
import sys, keyspace
url, asked = sys.argv[1], sys.argv[2] == "acc"
ks = keyspace.open(url, accounting=True) if asked else keyspace.open(url)
print("opened", flush=True)
for line in sys.stdin:
    name, key = line.split()
    try:
        ks.scope(name)[key.encode()] = b"v"
        print("ok", flush=True)
    except Exception as exc:
        print(type(exc).__name__, flush=True)
ks.close()
"""


class _Worker:
    """A process holding a keyspace open on ``url``, writing when told."""

    def __init__(self, url: str, accounting: bool) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, url, "acc" if accounting else "plain"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._line() == "opened"

    def _line(self) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        line = self.proc.stdout.readline().strip()
        assert line and time.monotonic() < deadline, "the worker gave no answer"
        return line

    def put(self, name: str, key: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{name} {key}\n")
        self.proc.stdin.flush()
        return self._line()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _exact(ks: keyspace.Keyspace) -> None:
    counts = accounting_of(ks.store)
    assert counts is not None
    with ks.store.snapshot() as view:
        assert counts.differences(view) == []


def _enable_and_check(url: str, path: tuple[str, ...], keys: int) -> None:
    """``accounting enable`` on the store at ``url`` (which keeps no counts), then
    the counts exact, ``path`` holding ``keys`` keys."""
    from keyspace.stores import open_store

    store = open_store(url)
    try:
        assert enable(store, keyspace.TupleScheme())
    finally:
        store.close()
    ks = keyspace.open(url)
    try:
        assert len(ks.scope(*path)) == keys
        _exact(ks)
    finally:
        ks.close()


def test_an_accounting_write_after_an_uncounted_one_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    counting = _Worker(url, accounting=True)  # opened on an empty store: accounting asked
    try:
        plain = keyspace.open(url)  # opened before any write too: no accounting
        plain.scope("a")[b"x"] = b"1"
        plain.close()
        assert counting.put("a", "y") == "AccountingUnavailable"
        assert counting.put("b", "z") == "AccountingUnavailable"
    finally:
        counting.close()
    ks = keyspace.open(url)
    try:
        assert accounting_of(ks.store) is None  # never recorded
        assert list(ks.scope("a").keys()) == [b"x"] and not list(ks.scope("b").keys())
    finally:
        ks.close()
    with pytest.raises(AccountingUnavailable, match="no counter counts"):
        keyspace.open(url, accounting=True)
    _enable_and_check(url, ("a",), 1)


def test_an_uncounted_first_write_after_accounting_was_recorded_is_refused(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    plain = _Worker(url, accounting=False)  # opened on an empty store, no accounting
    try:
        ks = keyspace.open(url, accounting=True)
        ks.scope("a")[b"x"] = b"1"  # records accounting
        ks.close()
        assert plain.put("a", "y") == "SchemeMismatch"
    finally:
        plain.close()
    later = _Worker(url, accounting=False)  # opened after the record: counts without asking
    try:
        assert later.put("b", "z") == "ok"
    finally:
        later.close()
    ks = keyspace.open(url)
    try:
        assert list(ks.scope("a").keys()) == [b"x"]
        assert len(ks.scope("a")) == 1 and len(ks.scope("b")) == 1
        _exact(ks)
    finally:
        ks.close()


def test_two_accounting_openers_before_any_write_both_count(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    other = _Worker(url, accounting=True)
    try:
        ks = keyspace.open(url, accounting=True)
        ks.scope("a")[b"x"] = b"1"
        assert other.put("a", "y") == "ok"
        ks.scope("a")[b"z"] = b"1"
        assert other.put("b", "w") == "ok"
        assert len(ks.scope("a")) == 3 and len(ks.scope("b")) == 1
        _exact(ks)
        ks.close()
    finally:
        other.close()


def test_one_memory_store_under_two_keyspaces_takes_the_same_routes() -> None:
    store = MemoryStore()
    counting = keyspace.attach(store, accounting=True, close_store=False)
    plain = keyspace.attach(store, close_store=False)
    plain.scope("a")[b"x"] = b"1"
    with pytest.raises(AccountingUnavailable, match="no counter counts"):
        counting.scope("a")[b"y"] = b"2"
    with pytest.raises(AccountingUnavailable, match="no counter counts"):
        counting.set_quota(("a",), keys=5)
    assert list(store.scan(b"", None)) == list(plain.store.scan(b"", None))
    assert [k for k, _ in store.scan(b"", None) if not k.startswith(b"\xff")] == [
        keyspace.TupleScheme().encode(("a",), b"x")
    ]

    store = MemoryStore()
    plain = keyspace.attach(store, close_store=False)
    counting = keyspace.attach(store, accounting=True, close_store=False)
    counting.scope("a")[b"x"] = b"1"
    with pytest.raises(SchemeMismatch, match="accounting"):
        plain.scope("a")[b"y"] = b"2"
    _exact(counting)
    assert len(counting.scope("a")) == 1


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["plain", "counting", "other"]),
            st.sampled_from(["a", "b"]),
            st.binary(max_size=2),
        ),
        max_size=8,
    )
)
def test_any_order_of_writers_opened_before_the_record_leaves_exact_counts_or_none(
    steps: list[tuple[str, str, bytes]],
) -> None:
    """Keyspaces opened on one empty store before any write (one without
    accounting, two with it) write in any order: a refused write changes
    nothing, and whenever the store records accounting its counts are exact."""
    store = MemoryStore()
    opened = {
        "plain": keyspace.attach(store, close_store=False),
        "counting": keyspace.attach(store, accounting=True, close_store=False),
        "other": keyspace.attach(store, accounting=True, close_store=False),
    }
    for who, name, key in steps:
        before = list(store.scan(b"", None))
        try:
            opened[who].scope(name)[key] = b"v"
        except (AccountingUnavailable, SchemeMismatch):
            assert list(store.scan(b"", None)) == before
        fresh = keyspace.attach(store, close_store=False)
        if accounting_of(fresh.store) is not None:
            _exact(fresh)


def test_accounting_recorded_by_a_commit_of_no_counted_key_is_checked_too() -> None:
    """A keyspace with accounting and changes whose first write is a feed's cursor
    (a reserved key: no counter changes) would record accounting over the keys a
    writer without it wrote first; it is refused instead, and nothing is recorded."""
    store = MemoryStore()
    counting = keyspace.attach(store, accounting=True, changes=True, close_store=False)
    plain = keyspace.attach(store, close_store=False)
    plain.scope("a")[b"x"] = b"1"
    before = list(store.scan(b"", None))
    with pytest.raises(AccountingUnavailable, match="no counter counts"):
        counting.feed("f")
    assert list(store.scan(b"", None)) == before
    assert accounting_of(keyspace.attach(store, close_store=False).store) is None


@pytest.mark.parametrize("first_write", ["a put and its delete", "a directory"])
@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
@pytest.mark.parametrize("counting_opened", ["before", "after"])
def test_a_store_a_keyspace_without_accounting_wrote_and_emptied_is_no_new_store(
    tmp_path: Path, engine: str, first_write: str, counting_opened: str
) -> None:
    """A program without accounting whose first write left no counted key (a put
    and its delete, or a directory's keys) may write more: accounting asked by
    another keyspace is refused (nothing written), whether that one opened the
    store before the other program's write or after it, until ``enable``."""
    url = f"{engine}:///{tmp_path}/db"
    counting = keyspace.open(url, accounting=True) if counting_opened == "before" else None
    plain = keyspace.open(url)
    if first_write == "a directory":
        plain.directory("d")[b"k"] = b"v"
    else:
        plain.scope("t")[b"tmp"] = b"x"
        del plain.scope("t")[b"tmp"]
    before = sorted(plain.store.scan(b"", None))
    with pytest.raises(AccountingUnavailable, match="no counter counts"):
        if counting is None:
            counting = keyspace.open(url, accounting=True)
        counting.scope("t")[b"k1"] = b"v1"
    assert sorted(plain.store.scan(b"", None)) == before
    plain.scope("t")[b"k2"] = b"v2"  # the store keeps no counts: its writes go on
    if counting is not None:
        counting.close()
    plain.close()
    _enable_and_check(url, ("t",), 1)
