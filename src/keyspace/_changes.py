"""The change log of ``keyspace.open(url, changes=True)``: watches on every engine.

A keyspace with changes on keeps, inside the one atomic write of every commit
that changes a key (a :class:`~keyspace._write_hooks.WriteHook`), a log of what
it changed under a **commit sequence number**: a counter in the store, read and
incremented inside that write, so that it only grows and every process of the
store shares it (LMDB and SQLite write transactions exclude each other; the
one-process engines run their commits through one store object one at a time).
The entries of one commit share its number, one entry per changed key (its new
value, or a delete of a key that existed; a commit of puts alone may store a key
it put twice twice, which reads as one entry, see :func:`decode_part`). On etcd nothing of this is written:
the store's own revision and native watch do the job.

Reserved keys (all under ``ff "keyspace"``, which no scope key of any scheme can
reach, so every read of user data leaves them out), with ``B = ff
"keyspace-changes" 00 pack((raw_prefix,))``:

``B 00``                     u64be: the last sequence number trimmed away (0: none)
``B 01``                     u64be: the last sequence number committed
``B 02 u64be(seq) u32be(n)`` part ``n`` of commit ``seq`` (:func:`encode_part`: the commit time,
                             the puts and the deletes), at most :data:`PART_ENTRIES` entries a part
``B 03 name``                a durable feed: ``pack((cursor, subtree, path))`` (:mod:`keyspace._feeds`)
``B 04``                     u64be: the entries logged in all (kept where ``max_entries`` is set)
``B 05 u64be(seq)``          u64be: that total after commit ``seq``, a mark every :data:`TRIM_EVERY`
                             commits (where ``max_entries`` is set), until the trim passes it

Watches (:meth:`ChangeLog.watch`) read the log: a thread per watch reads the
counter (one point read) every :data:`POLL_SECONDS` (10 ms), or at once when a
commit through this process's store object wakes it, and hands out the entries
past the last one it gave, in sequence order, each once, reading at most
:data:`CATCH_UP_COMMITS` commits in one snapshot and decoding one part at a
time, and no further while :data:`QUEUED_COMMITS` commits' events wait for its
consumer (a watch far behind holds no more of the log at once); ``start_revision``
replays from the log, :class:`~keyspace.errors.WatchCompacted` when it was
trimmed (one point read tells, before the watch is made).

Trimming: every :data:`TRIM_EVERY` commits, inside the commit, at most
:data:`TRIM_BATCH` of the oldest commits are removed, each whole, in one range
delete (the oldest key read, and the part 0 of each commit only for its time
where ``max_age`` is set): those outside the
retention (``retention`` commits kept, default 100,000; ``max_entries`` entries
kept, default no limit; ``max_age`` seconds, default none) and those every feed
has acknowledged. ``max_entries`` keeps whole commits: at least the latest that
many entries, and those of fewer than ``2 * TRIM_EVERY`` commits more (as
``retention`` keeps fewer than ``TRIM_EVERY`` more). Each commit adds its number
of entries to a total inside it, and the trim reads marks of that total, not
the log. A feed whose next entry was trimmed gets
:class:`~keyspace.errors.FeedBehind`, never a gap.

Cost of a commit with changes on: one point read and one put of the counter,
one put per :data:`PART_ENTRIES` changed keys (the entries joined by C calls
alone), and a point read per deleted key (a delete of a missing key logs
nothing). On LMDB a transaction's puts reach the engine as they are made (the
seam's put route), and one of puts alone hands the log their keys and values
in two lists, no dict.
"""

from __future__ import annotations

import struct
import sys
import threading
import time
import weakref
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Final, cast

from ._write_hooks import Change, ChangeList, Previous, WriteHook, native_changes, register_feature
from .errors import DecodeError, InvalidArgument, KeyspaceError, StoreClosed, WatchCompacted
from .schemes._base import Scheme
from .stores._base import ReadView, Store, WriteView, keys_in
from .stores._events import StoreEvent, StoreWatch, check_start_revision
from .tuples import pack, unpack

__all__ = ["POLL_SECONDS", "ChangeLog", "LogWatch", "changes_base"]

CHANGES_PREFIX: Final = b"\xffkeyspace-changes\x00"
POLL_SECONDS: Final = 0.01
"""How often a waiting watch reads the commit counter (a point read)."""
PART_ENTRIES: Final = 4096
TRIM_EVERY: Final = 32
TRIM_BATCH: Final = 64
DEFAULT_RETENTION: Final = 100_000
LogEntry = tuple[int, bytes, bytes | None]
"""An entry of the log: its commit's sequence number, the key, the value (``None``: a delete)."""
CATCH_UP_COMMITS: Final = 64
"""The most commits a watch reads from the log in one snapshot (decoded one
part at a time, and only its ranges' events kept)."""
QUEUED_COMMITS: Final = 256
"""A watch reads no further while this many commits' events wait for its
consumer (it goes on once half of them are taken)."""

_TRIMMED, _COUNTER, _LOG, _FEEDS, _ENTRIES, _MARKS = b"\x00", b"\x01", b"\x02", b"\x03", b"\x04", b"\x05"


_HEAD = struct.Struct("<QII")
_SIZE = struct.Struct("<I")
_SIZES = struct.Struct("<II")
_PART0 = (0).to_bytes(4, "big")


def encode_part_py(now: int, keys: list[bytes], values: list[bytes]) -> bytes:
    """A log part: ``u64le time_ns, u32le n, u32le puts``, the lengths of the ``n``
    keys and of the ``puts`` values (u32le each), the keys, the values: the first
    ``puts`` keys are puts of the values in order, the rest deletes. Made by C
    calls alone (no Python step per entry), about 2n + 3 objects joined: the
    reference of :func:`encode_part`.

    >>> encode_part_py(7, [b"k", b"gone"], [b"v"]).hex()
    '070000000000000002000000010000000100000004000000010000006b676f6e6576'
    """
    key_sizes, value_sizes = array("I", list(map(len, keys))), array("I", list(map(len, values)))
    if sys.byteorder == "big":
        key_sizes.byteswap()
        value_sizes.byteswap()
    return b"".join(
        (_HEAD.pack(now, len(keys), len(values)), key_sizes.tobytes(), value_sizes.tobytes(), *keys, *values)
    )


encode_part: Callable[[int, list[bytes], list[bytes]], bytes]
"""A log part (:func:`encode_part_py`), made by the C module where it is built:
one pass over the sizes, one bytes object filled (about 8x faster on 1,000
entries)."""
try:
    from ._changes_accel import encode_part
except ImportError:  # pragma: no cover - the optional C module is not built
    encode_part = encode_part_py


def one_entry_part(now: int, key: bytes, value: bytes | None) -> bytes:
    """:func:`encode_part` of the one entry of a single write (``value`` ``None``:
    a delete), made by two struct packs."""
    if value is None:
        return _HEAD.pack(now, 1, 0) + _SIZE.pack(len(key)) + key
    return _HEAD.pack(now, 1, 1) + _SIZES.pack(len(key), len(value)) + key + value


def part_time(raw: bytes) -> int:
    """The commit time (ns since the epoch) of a log part."""
    return int(_HEAD.unpack_from(raw)[0])


def decode_part(raw: bytes) -> list[tuple[bytes, bytes | None]]:
    """``(key, value)`` of a log part (``None``: a delete), in order, each key once:
    a key a part holds more than once (a commit that put it again) gives its last
    value in its first place. A part that is not one raises
    :class:`~keyspace.errors.DecodeError`.

    >>> decode_part(encode_part_py(7, [b"a", b"b", b"a"], [b"1", b"2", b"3"]))
    [(b'a', b'3'), (b'b', b'2')]
    """
    try:
        _, count, puts = _HEAD.unpack_from(raw)
        at = _HEAD.size
        key_sizes = array("I", raw[at : at + 4 * count])
        at += 4 * count
        value_sizes = array("I", raw[at : at + 4 * puts])
        at += 4 * puts
        if sys.byteorder == "big":
            key_sizes.byteswap()
            value_sizes.byteswap()
        if len(key_sizes) != count or len(value_sizes) != puts or puts > count:
            raise ValueError("short")
        keys: list[bytes] = []
        for size in key_sizes:
            keys.append(raw[at : at + size])
            at += size
        out: list[tuple[bytes, bytes | None]] = []
        for key, size in zip(keys[:puts], value_sizes, strict=True):
            out.append((key, raw[at : at + size]))
            at += size
        if at != len(raw):
            raise ValueError("size")
    except (ValueError, struct.error):
        raise DecodeError(
            f"a change log part of {len(raw)} bytes is not one this version writes", 0
        ) from None
    out.extend((key, None) for key in keys[puts:])
    if len(out) > 1:
        once = dict(out)
        if len(once) != len(out):
            return list(once.items())
    return out


def changes_base(scheme: Scheme) -> bytes:
    """``B``, where the change log of a keyspace of ``scheme`` lives."""
    return CHANGES_PREFIX + pack((scheme.raw_prefix,))


def _u64(raw: bytes | None) -> int:
    return 0 if raw is None else int.from_bytes(raw, "big")


def _params(params: dict[str, Any]) -> tuple[int | None, float | None, int | None]:
    unknown = set(params) - {"retention", "max_age", "max_entries"}
    if unknown:
        raise InvalidArgument(
            f"changes takes the parameters 'retention', 'max_entries' and 'max_age', not {sorted(unknown)!r}"
        )
    retention = params.get("retention", DEFAULT_RETENTION)
    max_age = params.get("max_age")
    max_entries = params.get("max_entries")
    for name, value, what in (("retention", retention, "commits"), ("max_entries", max_entries, "entries")):
        if value is not None and (type(value) is not int or value < 1):
            raise InvalidArgument(
                f"changes {name} must be an int of 1 or more ({what} kept) or None, not {value!r}"
            )
    if max_age is not None and (type(max_age) not in (int, float) or not max_age > 0):
        raise InvalidArgument(f"changes max_age must be a number of seconds over 0 or None, not {max_age!r}")
    return retention, max_age, max_entries


class ChangeLog(WriteHook):
    """The change log of one keyspace over ``store`` (the engine's store)."""

    name = "changes"
    old_values = "deletes"
    expand_ranges = True
    capabilities: ClassVar[dict[str, Any]] = {"watch": "log"}

    def __init__(self, store: Store, scheme: Scheme, params: dict[str, Any]) -> None:
        self.store = store
        self.url = store.url
        self.retention, self.max_age, self.max_entries = _params(params)
        base = self.base = changes_base(scheme)
        self.counter_key = self.cas_key = base + _COUNTER
        self.trimmed_key = base + _TRIMMED
        self.log_start = base + _LOG
        self.log_stop = base + b"\x03"
        self.feeds_start = base + _FEEDS
        self.feeds_stop = base + _ENTRIES
        self.entries_key = base + _ENTRIES
        self.marks_start = base + _MARKS
        self.marks_stop = base + b"\x06"
        self._watches: weakref.WeakSet[LogWatch] = weakref.WeakSet()
        self._watches_lock = threading.Lock()
        self._watched = False  # whether _watches may hold a watch (set with the first one)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"retention": self.retention, "max_age": self.max_age}
        if self.max_entries is not None:  # a record without it reads as none: as before it was made
            params["max_entries"] = self.max_entries
        return params

    def part_key(self, seq: int, part: int = 0) -> bytes:
        return self.log_start + seq.to_bytes(8, "big") + part.to_bytes(4, "big")

    # -- inside the write --------------------------------------------------------------

    def commit(
        self,
        view: WriteView,
        changes: Sequence[Change],
        ranges: Sequence[tuple[bytes, bytes | None]],
        latest: ReadView,
    ) -> None:
        columns = changes.columns() if isinstance(changes, ChangeList) else None
        if columns is not None and len(columns[0]) <= PART_ENTRIES:
            # puts alone, in the order made: the seam's lists, no dict (a key put twice is
            # in the one part twice; decode_part keeps its last value, in its first place)
            keys, values = columns
        else:
            # the seam leaves out deletes of keys that were not there (old values of deletes read)
            merged = changes.merged if isinstance(changes, ChangeList) else {c.key: c.new for c in changes}
            if getattr(changes, "deletes", True) and None in merged.values():  # a delete: C scan
                deletes = [k for k, v in merged.items() if v is None]
                puts: dict[bytes, bytes | None] = {k: v for k, v in merged.items() if v is not None}
            else:
                puts, deletes = merged, []
            keys, values = [*puts, *deletes], cast(list[bytes], list(puts.values()))
        if not keys:
            return
        now, step = time.time_ns(), PART_ENTRIES
        if len(keys) <= step:  # one part: the lists as they are, no copy
            parts = [encode_part(now, keys, values)]
        else:
            parts = [
                encode_part(now, keys[at : at + step], values[at : at + step])
                for at in range(0, len(keys), step)
            ]
        self._append(view, latest, now, len(keys), parts[0], parts[1:])

    def commit_one(
        self, view: WriteView, key: bytes, old: Previous, new: bytes | None, latest: ReadView
    ) -> None:
        """:meth:`commit` of a single write (the seam drops a delete of a key that
        was not there): its one-entry part, made by two struct packs."""
        now = time.time_ns()
        self._append(view, latest, now, 1, one_entry_part(now, key, new))

    def _append(
        self,
        view: WriteView,
        latest: ReadView,
        now: int,
        entries: int,
        first: bytes,
        more: Sequence[bytes] = (),
    ) -> None:
        """Log one commit of ``entries`` entries made at ``now`` (ns): its number
        (the counter, read from ``latest``, plus one), its parts (``first``, then
        ``more`` where it has more than :data:`PART_ENTRIES` keys) under it, the
        counter, where ``max_entries`` is set the total of entries (a point read
        and a put), and every :data:`TRIM_EVERY` commits a trim."""
        counter = self.counter_key
        seq = _u64(latest.get(counter)) + 1
        number = seq.to_bytes(8, "big")
        put, start = view.put, self.log_start + number
        put(start + _PART0, first)
        for part, raw in enumerate(more, 1):
            put(start + part.to_bytes(4, "big"), raw)
        put(counter, number)
        total = 0
        if self.max_entries is not None:
            total = _u64(latest.get(self.entries_key)) + entries
            put(self.entries_key, total.to_bytes(8, "big"))
        if seq % TRIM_EVERY == 0:
            if self.max_entries is not None:
                put(self.marks_start + number, total.to_bytes(8, "big"))
            self._trim(view, latest, seq, now, total)

    def next_commit(self, latest: ReadView) -> int | None:
        return _u64(latest.get(self.counter_key)) + 1

    def _trim(self, view: WriteView, latest: ReadView, seq: int, now: int, total: int) -> None:
        """Remove at most :data:`TRIM_BATCH` of the oldest commits no one needs,
        each whole (all its parts): as many commits as are made between two trims
        and more, whatever their size, so a log at its retention stays there.
        Commit numbers follow each other, so the commits to remove are those from
        the oldest logged up to a cut. Cost: a keys-only read of the oldest key
        and one range delete; where ``max_age`` may trim commits kept otherwise, a
        point read of the part 0 of each (its time) and of the first one kept."""
        keep_from = 1
        if self.retention is not None:
            keep_from = max(keep_from, seq - self.retention + 1)
        if self.max_entries is not None:
            keep_from = max(keep_from, self._entries_cut(latest, total) + 1)
        cursors = [unpack(raw)[0] for _, raw in latest.scan(self.feeds_start, self.feeds_stop)]
        if cursors:
            keep_from = max(keep_from, min(cursors) + 1)
        elif self.retention is None and self.max_age is None and self.max_entries is None:
            return
        old_before = now - int(self.max_age * 1e9) if self.max_age is not None else None
        trimmed = _u64(latest.get(self.trimmed_key))
        if old_before is None and keep_from <= trimmed + 1:
            return  # every commit before keep_from is trimmed already: no read of the log
        first = next(keys_in(latest, self.log_start, self.log_stop, limit=1), None)
        if first is None:
            return
        off = len(self.log_start)
        oldest = int.from_bytes(first[off : off + 8], "big")
        bound = oldest + TRIM_BATCH
        cut = max(oldest, min(keep_from, bound))  # the first commit kept
        if old_before is not None:
            # a part's value (a large commit's runs to megabytes) is read just for its
            # time, and only where an age limit may trim a commit kept otherwise
            while cut < bound:
                raw = latest.get(self.part_key(cut))
                if raw is None or part_time(raw) >= old_before:
                    break
                cut += 1
        if cut == oldest:
            return
        view.delete_range(self.part_key(oldest), self.part_key(cut))
        last = cut - 1
        if last > trimmed:
            view.put(self.trimmed_key, last.to_bytes(8, "big"))
            if self.max_entries is not None:  # the marks of commits trimmed: no cut needs them
                view.delete_range(self.marks_start, self.marks_start + (last + 1).to_bytes(8, "big"))

    def _entries_cut(self, latest: ReadView, total: int) -> int:
        """The last commit with at least ``max_entries`` entries after it, as the
        marks tell (0: none): the newest of the first :data:`TRIM_BATCH` marks
        whose total is ``max_entries`` or more below ``total``, the entries logged
        so far. Cost: a read of those marks and one more."""
        assert self.max_entries is not None
        cut, off, below = 0, len(self.marks_start), total - self.max_entries
        for key, raw in latest.scan(self.marks_start, self.marks_stop, limit=TRIM_BATCH):
            if _u64(raw) > below:
                break
            cut = int.from_bytes(key[off : off + 8], "big")
        return cut

    def committed(self) -> None:
        """After a commit through this process's store object: every watch of it
        reads the log now, in the committing thread, so that the commit's events
        are queued when the write returns (as the memory store's own watch does).
        Cost: nothing without watches (an attribute test); one snapshot and log
        scan per watch."""
        if not self._watched:
            return
        with self._watches_lock:
            watches = list(self._watches)
            if not watches:  # every watch has gone: no test of the weak set until the next one
                self._watched = False
        for watch in watches:
            watch.catch_up()

    def close(self) -> None:
        with self._watches_lock:
            watches = list(self._watches)
            self._watches.clear()
        for watch in watches:
            watch._fail(StoreClosed(f"the store {self.url} was closed while this watch ran"))
            watch.wake.set()

    # -- reads ---------------------------------------------------------------------------

    def last(self, view: ReadView | None = None) -> int:
        """The last committed sequence number (0: none)."""
        return _u64((self.store if view is None else view).get(self.counter_key))

    def trimmed(self, view: ReadView | None = None) -> int:
        """The last sequence number trimmed away (0: none)."""
        return _u64((self.store if view is None else view).get(self.trimmed_key))

    def entries(self, after: int, upto: int, view: ReadView) -> Iterator[LogEntry]:
        """``(seq, key, value)`` of the commits ``after < seq <= upto``, in order,
        read from ``view`` as they are iterated: one part decoded at a time."""
        off = len(self.log_start)
        for key, raw in view.scan(self.part_key(after + 1), self.part_key(upto + 1)):
            seq = int.from_bytes(key[off : off + 8], "big")
            for changed, value in decode_part(raw):
                yield seq, changed, value

    @contextmanager
    def reading(self, after: int, most: int | None = None) -> Iterator[tuple[int, Iterator[LogEntry]]]:
        """In one snapshot: the last sequence number read, and the entries after
        ``after`` up to it (:meth:`entries`, to be iterated inside the block):
        every commit up to the last, or the first ``most`` of them.
        :class:`WatchCompacted` when entries after ``after`` were trimmed."""
        with self.store.snapshot() as view:
            upto = self.last(view)
            if upto <= after:
                yield upto, iter(())
                return
            self.check_kept(after, view)
            if most is not None:
                upto = min(upto, after + most)
            yield upto, self.entries(after, upto, view)

    def read_since(self, after: int, most: int | None = None) -> tuple[int, list[LogEntry]]:
        """:meth:`reading`'s last sequence number and entries, as a list (what a
        look at the log wants whole; a watch iterates :meth:`reading`)."""
        with self.reading(after, most) as (upto, entries):
            return upto, list(entries)

    def check_kept(self, after: int, view: ReadView | None = None) -> None:
        """:class:`WatchCompacted` when the log no longer holds the commits after
        ``after`` (its retention trimmed some): one point read."""
        trimmed = self.trimmed(view)
        if after < trimmed:
            raise WatchCompacted(
                f"the change log of {self.url} no longer holds the changes after revision {after} "
                f"(trimmed up to {trimmed} by its retention): watch from revision {trimmed + 1} or later",
                after + 1,
                trimmed + 1,
            )

    def watch(self, ranges: Sequence[tuple[bytes, bytes | None]], start_revision: int | None) -> StoreWatch:
        check_start_revision(start_revision)
        after = self.last() if start_revision is None else start_revision - 1
        if start_revision is not None:
            self.check_kept(after)  # WatchCompacted now, not later
        watch = LogWatch(self, list(ranges), after)
        with self._watches_lock:
            self._watches.add(watch)
            self._watched = True
        watch.catch_up()  # a replay is queued before the watch is handed out
        watch.start()
        return watch


class LogWatch(StoreWatch):
    """A watch read from a :class:`ChangeLog` by a thread of its own (module docstring)."""

    def __init__(self, log: ChangeLog, ranges: list[tuple[bytes, bytes | None]], after: int) -> None:
        super().__init__()
        self._log = log
        self._ranges = ranges
        self.after = after
        self.wake = threading.Event()
        self._stop = threading.Event()
        self._reading = threading.Lock()
        self._paused = False  # the last read stopped at QUEUED_COMMITS waiting
        self._thread = threading.Thread(target=self._run, name="keyspace-change-log-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _in(self, key: bytes) -> bool:
        return any(lo <= key and (hi is None or key < hi) for lo, hi in self._ranges)

    def catch_up(self) -> bool:
        """Queue the entries committed since the last read, each once, in order
        (the watch's thread and committing threads of this process call it, one
        at a time), reading :data:`CATCH_UP_COMMITS` commits at a time, and no
        further while :data:`QUEUED_COMMITS` commits' events wait: a watch far
        behind (a feed's consumer after a long stop) decodes one such run of the
        log at once, not all of it, keeps only its ranges' events, and holds no
        more of them than its consumer is about to take. False once the stream
        ended (an error is queued)."""
        log, stop, waiting = self._log, self._stop, self._queue.qsize
        with self._reading:
            if stop.is_set():
                return False
            try:
                while log.last() > self.after and not stop.is_set():
                    if waiting() >= QUEUED_COMMITS:
                        self._paused = True  # taking half of them wakes the thread (_taken)
                        break
                    with log.reading(self.after, CATCH_UP_COMMITS) as (upto, entries):
                        self._push_commits(
                            StoreEvent("delete" if value is None else "put", key, value, seq)
                            for seq, key, value in entries
                            if self._in(key)
                        )
                    if upto <= self.after:
                        break
                    self.after = upto
            except KeyspaceError as exc:
                if not stop.is_set():
                    stop.set()
                    self._fail(exc)
                return False
            return True

    def _run(self) -> None:
        stop, wake = self._stop, self.wake
        while not stop.is_set():
            wake.clear()
            if not self.catch_up():
                return
            wake.wait(POLL_SECONDS)

    def _taken(self) -> None:
        if self._paused and self._queue.qsize() < QUEUED_COMMITS // 2:
            self._paused = False
            self.wake.set()

    def _cancel(self) -> None:
        self._stop.set()
        self.wake.set()


def _factory(store: Store, scheme: Scheme, params: dict[str, Any]) -> WriteHook | None:
    if native_changes(store.capabilities):
        _params(params)  # etcd: its own revisions and watch; the parameters are still checked
        return None
    return ChangeLog(store, scheme, params)


register_feature("changes", _factory)
