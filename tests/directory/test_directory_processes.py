"""The directory hazards across real processes: two processes that
``create_or_open`` one new path at once get one prefix and one node, and a
handle whose directory another process removed raises StaleDirectory, writing
nothing under the orphaned prefix (also while it is writing in a loop as the
remove commits)."""

from __future__ import annotations

import faulthandler
import multiprocessing
import queue
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _etcd import own_url

import keyspace
from keyspace.errors import StaleDirectory

pytestmark = pytest.mark.timeout(300)

ROUNDS = 6
WAIT_S = 60
STUCK_S = 50


def _context(url: str) -> Any:
    """How to start the processes of a test on ``url``: forked, except on etcd,
    where a child forked from a parent that has used gRPC may hang in its first
    channel on a lock a gRPC thread of the parent held at the fork: spawned."""
    return multiprocessing.get_context("spawn" if url.startswith("etcd:") else "fork")


@pytest.fixture(params=["lmdb", "sqlite", "etcd"])
def make_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "etcd":
        urls = own_url("directory-procs")
        base = next(urls)
        yield lambda i: f"{base}-{i}"
        return
    engine = request.param
    yield lambda i: f"{engine}://{tmp_path / f'db{i}'}"


def _create(url: str, barrier: Any, results: Any) -> None:
    faulthandler.dump_traceback_later(STUCK_S, exit=True, file=sys.__stderr__)
    try:
        with keyspace.open(url) as ks:
            ks.directories.exists(("tenants",))  # opened and read before either writes
            barrier.wait(timeout=30)
            made = ks.directories.create_or_open(("tenants", "acme"))
            made[b"k"] = b"v"
            results.put(("ok", made.prefix))
    except BaseException:
        results.put(("failed", traceback.format_exc()))
    finally:
        faulthandler.cancel_dump_traceback_later()


def _reports(results: Any, count: int) -> list[tuple[str, Any]]:
    got = []
    deadline = time.monotonic() + WAIT_S
    while len(got) < count and time.monotonic() < deadline:
        try:
            got.append(results.get(timeout=1))
        except queue.Empty:
            continue
    assert len(got) == count, f"only {got} reported within {WAIT_S} s"
    for outcome, detail in got:
        assert outcome == "ok", detail
    return got


def test_two_processes_create_or_open_one_new_path_get_one_prefix(make_url: Any) -> None:
    for i in range(ROUNDS):
        url = make_url(i)
        ctx = _context(url)
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_create, args=(url, barrier, results)) for _ in range(2)]
        for p in procs:
            p.start()
        try:
            got = _reports(results, 2)
        finally:
            for p in procs:
                p.join(timeout=WAIT_S)
                if p.is_alive():
                    p.kill()
        assert got[0][1] == got[1][1], f"round {i}: two prefixes {got}"
        with keyspace.open(url) as ks:
            items = dict(ks.store.scan(b"", None))
            layers = [k for k in items if k.startswith(b"\xfe") and k.endswith(b"\x01layer\x00")]
            assert len(layers) == 2, f"round {i}: nodes {layers}"  # tenants and tenants/acme
            assert ks.directories.open(("tenants", "acme")).prefix == got[0][1]


def _write_until_stale(url: str, ready: Any, results: Any) -> None:
    """Write keys through one handle until it raises StaleDirectory (at most
    20000 writes, 40 s); report how many writes succeeded and what ended it."""
    faulthandler.dump_traceback_later(STUCK_S, exit=True, file=sys.__stderr__)
    try:
        with keyspace.open(url) as ks:
            handle = ks.directories.open(("victim",))
            written, ended = 0, "limit"
            deadline = time.monotonic() + 40
            while written < 20000 and time.monotonic() < deadline:
                try:
                    handle[b"%08d" % written] = b"x"
                except StaleDirectory:
                    ended = "stale"
                    break
                written += 1
                if written == 50:
                    ready.set()
            stale_reads = []
            for op in (lambda: handle.get(b"00000000"), lambda: len(handle), lambda: list(handle.items())):
                try:
                    op()
                    stale_reads.append(False)
                except StaleDirectory:
                    stale_reads.append(True)
            results.put(("ok", (written, ended, stale_reads)))
    except BaseException:
        ready.set()
        results.put(("failed", traceback.format_exc()))
    finally:
        faulthandler.cancel_dump_traceback_later()


def test_a_handle_in_another_process_stops_writing_when_its_directory_is_removed(make_url: Any) -> None:
    url = make_url("stale")
    with keyspace.open(url) as ks:
        prefix = ks.directory("victim").prefix
        ks.directory("bystander")[b"b"] = b"1"
    ctx = _context(url)
    ready, results = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_write_until_stale, args=(url, ready, results))
    proc.start()
    try:
        assert ready.wait(timeout=WAIT_S), "the writer did not start"
        with keyspace.open(url) as ks:
            ks.directories.remove(("victim",))
        ((_, (written, ended, stale_reads)),) = _reports(results, 1)
    finally:
        proc.join(timeout=WAIT_S)
        if proc.is_alive():
            proc.kill()
    assert ended == "stale" and written >= 50
    assert stale_reads == [True, True, True]
    with keyspace.open(url) as ks:
        assert [
            k for k, _ in ks.store.scan(prefix, prefix + b"\xff")
        ] == []  # nothing landed after the remove
        assert ks.directories.list() == ["bystander"]


def _hold_then_write(url: str, ready: Any, go: Any, results: Any) -> None:
    faulthandler.dump_traceback_later(STUCK_S, exit=True, file=sys.__stderr__)
    try:
        with keyspace.open(url) as ks:
            handle = ks.directories.open(("victim",))
            handle[b"before"] = b"1"
            ready.set()
            if not go.wait(timeout=30):
                raise TimeoutError("no go")
            outcomes = []
            for op in (lambda: handle.__setitem__(b"after", b"2"), lambda: handle.update({b"a": b"1"})):
                try:
                    op()
                    outcomes.append("written")
                except StaleDirectory:
                    outcomes.append("stale")
            results.put(("ok", outcomes))
    except BaseException:
        ready.set()
        results.put(("failed", traceback.format_exc()))
    finally:
        faulthandler.cancel_dump_traceback_later()


def test_a_cached_handle_raises_stale_after_another_process_removed_its_directory(make_url: Any) -> None:
    url = make_url("cached")
    with keyspace.open(url) as ks:
        prefix = ks.directory("victim").prefix
    ctx = _context(url)
    ready, go, results = ctx.Event(), ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_hold_then_write, args=(url, ready, go, results))
    proc.start()
    try:
        assert ready.wait(timeout=WAIT_S)
        with keyspace.open(url) as ks:
            ks.directories.remove(("victim",))
            ks.directory("other")[b"x"] = b"1"  # the allocator never hands the removed prefix out again
        go.set()
        ((_, outcomes),) = _reports(results, 1)
    finally:
        proc.join(timeout=WAIT_S)
        if proc.is_alive():
            proc.kill()
    assert outcomes == ["stale", "stale"]
    with keyspace.open(url) as ks:
        assert [k for k, _ in ks.store.scan(prefix, prefix + b"\xff")] == []


def test_threads_of_one_process_create_one_new_path_once(tmp_path: Path) -> None:
    for url in ("memory:", f"leveldb://{tmp_path / 'lv'}", f"rocksdb://{tmp_path / 'r'}"):
        ks = keyspace.open(url)
        got: list[bytes] = []
        barrier = threading.Barrier(4)

        def make(
            ks: keyspace.Keyspace = ks, barrier: threading.Barrier = barrier, got: list[bytes] = got
        ) -> None:
            barrier.wait(timeout=30)
            got.append(ks.directories.create_or_open(("t", "x")).prefix)

        threads = [threading.Thread(target=make) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert len(got) == 4 and len(set(got)) == 1, (url, got)
        ks.close()
