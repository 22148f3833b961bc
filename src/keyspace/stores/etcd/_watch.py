"""One native etcd Watch, resumed across member failures: :class:`EtcdWatch`.

A reader thread holds one ``Watch`` stream (gRPC bidirectional streaming) on the
connection's channel, with ``hasleader`` set so that a member cut off from its
leader ends the stream instead of going silent, and with progress notifications on.
It remembers the last revision it has delivered completely (etcd sends every event
of one revision in one response); when the stream breaks (member killed,
``UNAVAILABLE``, no leader) it opens a new one from the next revision, with
backoff, within the connection's retry budget per outage. So every event is
delivered once, in revision order, whichever member serves the stream.

A start revision that the cluster has compacted away ends the watch with
:class:`~keyspace.errors.WatchCompacted`; a range the credentials may not read ends
it with :class:`~keyspace.errors.AccessDenied`. Closing the store ends it with
:class:`~keyspace.errors.StoreClosed`, as on every engine (never with the gRPC
``CANCELLED`` of the channel going away).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc

from ...errors import AccessDenied, StoreClosed, StoreError, WatchCompacted
from .._events import StoreEvent, StoreWatch, check_start_revision
from ._proto import watch_auth_pb2 as wa
from ._rpc import EtcdConnection, EtcdUnavailable, retryable, translate

__all__ = ["EtcdWatch"]

_RESUMABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL}
)


class EtcdWatch(StoreWatch):
    """Changes of the etcd range ``hull`` (``(key, range_end)``; ``None``: empty)
    whose store keys (etcd key less ``cut`` prefix bytes) fall in ``ranges``;
    ``url``: the store's, for the error that ends the watch when it closes."""

    def __init__(
        self,
        conn: EtcdConnection,
        hull: tuple[bytes, bytes] | None,
        cut: int,
        ranges: list[tuple[bytes, bytes | None]],
        start_revision: int | None,
        url: str = "etcd",
    ) -> None:
        super().__init__()
        check_start_revision(start_revision)
        self._conn = conn
        self._url = url
        self._hull = hull
        self._cut = cut
        self._ranges = ranges
        self._next = start_revision or 0
        """Revision the next stream starts at (0: "now", only before the first)."""
        self._call: Any = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self.started = threading.Event()
        """Set once the first stream is established (events after it are seen)."""
        self.reconnects = 0
        self._thread = threading.Thread(target=self._run, name="keyspace-etcd-watch", daemon=True)
        if hull is None:
            self.started.set()
        else:
            self._thread.start()

    def wait_started(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until the watch is established on the server:
        every change committed after that is reported."""
        return self.started.wait(timeout)

    def store_closed(self) -> None:
        """End the watch with :class:`~keyspace.errors.StoreClosed` (its store is
        closing) and stop its stream: a consumer waiting for an event wakes up,
        one reading on gets the events queued before, then the error."""
        self._fail(self._closed_error())
        self._cancel()

    def _closed_error(self) -> StoreClosed:
        return StoreClosed(f"the store {self._url} was closed while this watch ran")

    def _gone(self) -> bool:
        """Whether the stream has ended for good: the watch was closed (nothing more
        to report) or its store was (then ended with :class:`StoreClosed`, here in
        the reader: the store's close may not have come to its watches yet)."""
        if self._conn.closed:
            self._fail(self._closed_error())
        return self._closed.is_set() or self._conn.closed

    def _wanted(self, key: bytes) -> bool:
        return any(start <= key and (stop is None or key < stop) for start, stop in self._ranges)

    # -- the reader thread ------------------------------------------------------

    def _requests(self, create: wa.WatchCreateRequest, done: threading.Event) -> Iterator[wa.WatchRequest]:
        yield wa.WatchRequest(create_request=create)
        done.wait()  # keep the request side open until this stream ends

    def _run(self) -> None:
        opts = self._conn.options
        delay = 0.05
        outage_since: float | None = None
        refreshed = False
        while not self._gone():
            assert self._hull is not None
            key, end = self._hull
            create = wa.WatchCreateRequest(
                key=key, range_end=end, start_revision=self._next, progress_notify=True
            )
            metadata = (("hasleader", "true"), *(self._conn.metadata() or ()))
            done = threading.Event()  # ends this stream's request side (no thread left behind)
            try:
                with self._lock:
                    if self._gone():
                        return
                    self._done = done
                    self._call = self._conn.watch.Watch(self._requests(create, done), metadata=metadata)
                for response in self._call:
                    if self._handle(response):
                        return
                    outage_since = None
                    delay = 0.05
                if self._gone():
                    return
                error: StoreError | None = None  # the server ended the stream: open a new one
            except grpc.RpcError as exc:
                if self._gone():  # CANCELLED by the channel's close, or by close()
                    return
                if not refreshed and self._conn.tokens.expired(exc):
                    refreshed = True
                    try:
                        self._conn.tokens.refresh(self._conn)
                    except StoreError as failure:
                        self._fail(failure)
                        return
                    continue
                if exc.code() not in _RESUMABLE and not retryable(exc):
                    self._fail(translate(exc, "watch"))
                    return
                error = translate(exc, "watch")
            except StoreError as exc:  # StoreClosed from a closed channel
                if not self._gone():
                    self._fail(exc)
                return
            except Exception as exc:  # the reader must not end silently
                # (a ValueError: gRPC's for a channel closed under the call)
                if not self._gone():
                    self._fail(StoreError(f"watch: the reader of the etcd watch failed: {exc!r}"))
                return
            finally:
                done.set()
            now = time.monotonic()
            outage_since = now if outage_since is None else outage_since
            if now - outage_since > opts.retry_budget:
                self._fail(
                    EtcdUnavailable(
                        f"watch: the etcd cluster could not be reached for {opts.retry_budget} s "
                        f"(resuming from revision {self._next}): {error}"
                    )
                )
                return
            self.reconnects += 1
            self._closed.wait(delay * (0.5 + random.random()))
            delay = min(delay * 2, 1.0)

    def _handle(self, response: wa.WatchResponse) -> bool:
        """Deliver one response; True when the watch has ended."""
        if response.canceled:
            reason = response.cancel_reason
            if response.compact_revision:
                self._fail(
                    WatchCompacted(
                        f"watch: revision {self._next} has been compacted away; the oldest revision "
                        f"still kept is {response.compact_revision} (start from it or later, or read "
                        "the scope again and watch from now)",
                        self._next,
                        int(response.compact_revision),
                    )
                )
            elif "permission denied" in reason:
                self._fail(
                    AccessDenied(
                        f"watch: refused by the etcd server: the credentials in use may not read "
                        f"these keys ({reason})"
                    )
                )
            else:
                self._fail(StoreError(f"watch: etcd cancelled the watch: {reason or 'no reason given'}"))
            return True
        if response.created:
            if self._next == 0:
                self._next = int(response.header.revision) + 1
            self.started.set()
            return False
        events = response.events
        if not events:  # a progress notification: everything up to its revision was sent
            self._next = max(self._next, int(response.header.revision) + 1)
            return False
        cut = self._cut
        last = self._next - 1
        wanted: list[StoreEvent] = []
        for event in events:
            kv = event.kv
            revision = int(kv.mod_revision)
            if revision < self._next:
                continue  # already delivered before a reconnect
            last = max(last, revision)
            key = bytes(kv.key)[cut:]
            if not self._wanted(key):
                continue
            if event.type == wa.Event.DELETE:
                wanted.append(StoreEvent("delete", key, None, revision))
            else:
                wanted.append(StoreEvent("put", key, bytes(kv.value), revision))
        self._push_commits(wanted)  # a response's events of one revision, queued together
        self._next = last + 1
        return False

    def _cancel(self) -> None:
        with self._lock:
            call, done = self._call, self._done
        done.set()
        if call is not None:
            call.cancel()
