"""Scope watches on etcd across a compaction of the cluster's history.

- A watch that is streaming keeps streaming: events before and after a
  compaction of everything up to now each arrive once, in revision order.
- A watch whose stream breaks (a member lost, ``UNAVAILABLE``) resumes from the
  revision after the last it delivered; when the cluster has compacted that
  revision away meanwhile, the events in between are gone, and the watch says so
  with :class:`WatchCompacted` (naming the revision and the oldest one kept)
  instead of resuming past them as if none were missed. Where nothing was
  compacted, it resumes with no event lost or repeated.
- Another scope's events never appear, before or after.

The broken stream is made by wrapping the connection's Watch stub: the wrapped
stream ends with ``UNAVAILABLE`` instead of delivering a chosen response, and the
next stream opens only once the test has compacted (or not)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from _etcd import etcd_cluster, own_url

import keyspace
from keyspace import WatchEvent
from keyspace.errors import StoreError, WatchCompacted
from keyspace.stores.etcd._watch import EtcdWatch

pytestmark = [pytest.mark.etcd, pytest.mark.timeout(60)]


@pytest.fixture
def ks() -> Iterator[keyspace.Keyspace]:
    for url in own_url("watch-compaction"):
        with keyspace.open(url) as opened:
            yield opened


def _compact(revision: int) -> None:
    etcdctl = shutil.which("etcdctl")
    if etcdctl is None:
        pytest.fail("etcdctl (package etcd-client) is needed to compact the test cluster")
    subprocess.run(
        [etcdctl, "--endpoints", ",".join(etcd_cluster().endpoints), "compact", str(revision)],
        check=True,
        capture_output=True,
        timeout=20,
    )


def _revision(ks: keyspace.Keyspace) -> int:
    """The cluster's current revision, read linearizably (a member's ``Status`` may
    lag behind the last write)."""
    snapshot = ks.store.snapshot()  # type: ignore[attr-defined]
    try:
        return int(snapshot.revision())
    finally:
        snapshot.end()


def _events(w: Any, count: int, timeout: float = 10.0) -> list[WatchEvent]:
    deadline = time.monotonic() + timeout
    out: list[WatchEvent] = []
    while len(out) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"only {len(out)} of {count} events within {timeout} s: {out}"
        event = w.get(left)
        if event is not None:
            out.append(event)
    return out


def _started(w: Any) -> Any:
    source = w.store_watch
    assert isinstance(source, EtcdWatch)
    assert source.wait_started(10), "the watch was not established within 10 s"
    return w


def test_a_streaming_watch_outlives_a_compaction(ks: keyspace.Keyspace) -> None:
    s, other = ks.scope("live"), ks.scope("live0")
    with _started(s.watch()) as w:
        s[b"a"] = b"1"
        other[b"x"] = b"no"
        s[b"b"] = b"2"
        _compact(_revision(ks))
        s[b"c"] = b"3"
        other[b"y"] = b"no"
        del s[b"a"]
        got = _events(w, 4)
        assert [(e.kind, e.key, e.value) for e in got] == [
            ("put", b"a", b"1"),
            ("put", b"b", b"2"),
            ("put", b"c", b"3"),
            ("delete", b"a", None),
        ]
        assert [e.revision for e in got] == sorted({e.revision for e in got})
        assert w.get(0.3) is None


class _Unavailable(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "injected: the member serving the watch went away"


class _BreakingStub:
    """The Watch stub of a connection whose first stream ends with UNAVAILABLE in
    place of the first response holding a put of ``trigger``; later streams open
    only once ``resume`` is set."""

    def __init__(self, real: Any, trigger: bytes) -> None:
        self._real = real
        self._trigger = trigger
        self.broken = threading.Event()
        self.resume = threading.Event()
        self.streams = 0

    def Watch(self, requests: Any, metadata: Any = None) -> Any:  # the stub method etcd names
        self.streams += 1
        if self.streams > 1:
            assert self.resume.wait(20), "the test did not let the watch resume"
        call = self._real.Watch(requests, metadata=metadata)
        return _BreakingCall(call, self) if self.streams == 1 else call


class _BreakingCall:
    def __init__(self, call: Any, stub: _BreakingStub) -> None:
        self._call = call
        self._stub = stub

    def __iter__(self) -> Iterator[Any]:
        for response in self._call:
            if any(self._stub._trigger in bytes(e.kv.key) for e in response.events):
                self._call.cancel()
                self._stub.broken.set()
                raise _Unavailable()
            yield response

    def cancel(self) -> None:
        self._call.cancel()


@pytest.mark.parametrize("compacted", [True, False])
def test_a_watch_resumed_past_a_compaction_says_events_were_lost(
    ks: keyspace.Keyspace, compacted: bool
) -> None:
    s, other = ks.scope("resume"), ks.scope("resume0")
    conn = ks.store._conn  # type: ignore[attr-defined]
    stub = _BreakingStub(conn.watch, b"lost")
    conn.watch = stub
    try:
        with _started(s.watch()) as w:
            s[b"seen"] = b"1"
            (seen,) = _events(w, 1)
            s[b"lost"] = b"2"  # its response breaks the stream: not delivered
            assert stub.broken.wait(10)
            other[b"x"] = b"no"
            s[b"after"] = b"3"
            if compacted:
                _compact(_revision(ks))
            stub.resume.set()
            if compacted:
                with pytest.raises(
                    WatchCompacted, match=f"revision {seen.revision + 1} has been compacted"
                ) as info:
                    _events(w, 1)
                assert info.value.revision == seen.revision + 1
                assert info.value.compact_revision >= seen.revision + 2
            else:
                got = _events(w, 2)
                assert [(e.key, e.value) for e in got] == [(b"lost", b"2"), (b"after", b"3")]
                assert w.get(0.3) is None
    finally:
        conn.watch = stub._real


def test_a_snapshot_or_transaction_whose_revision_was_compacted_says_so(ks: keyspace.Keyspace) -> None:
    s = ks.scope("snap")
    s.update({b"k%d" % i: b"v" for i in range(5)})
    with ks.snapshot() as snap:
        assert len(snap.scope("snap")) == 5
        s[b"x"] = b"1"
        _compact(_revision(ks))
        with pytest.raises(StoreError, match=r"compacted away by the etcd cluster.*nothing was changed"):
            list(snap.scope("snap").keys())
    with pytest.raises(StoreError, match="compacted away"), ks.transaction() as tx:
        assert tx.scope("snap").get(b"k1") == b"v"
        s[b"y"] = b"2"
        _compact(_revision(ks))
        tx.scope("snap")[b"z"] = tx.scope("snap").get(b"k2") or b""
    assert s.get(b"z") is None
