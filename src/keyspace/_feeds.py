"""Durable consumers of a keyspace's changes: ``ks.feed(name, scope_path)``.

A feed is a named cursor kept in the store (``B 03 name`` of :mod:`keyspace._changes`:
``pack((cursor, subtree, path))``) over the changes of one scope (or its subtree):
:meth:`Feed.read` gives the changes after the cursor in batches of whole commits
(decoded :class:`~keyspace.WatchEvent`, in commit order, each once), :meth:`Feed.ack`
moves the cursor, and a feed opened again (another process, after a crash) goes
on after the last change acknowledged: a change is read again until it is
acknowledged, never lost. The change log keeps every change a feed has not
acknowledged unless its retention trims it first; a feed whose next change was
trimmed raises :class:`~keyspace.errors.FeedBehind` (never a silent gap).

Runs on a keyspace opened with ``changes=True`` (the change log), and on etcd,
whose revisions and compaction play the log's part. Cost: a feed is a watch from
its cursor (:meth:`Scope.watch` with ``start_revision``); an ack is one put.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._bytes import prefix_end
from ._changes import _FEEDS, ChangeLog, changes_base
from ._closing import Closing
from ._watch import ScopeWatch, WatchEvent
from ._write_hooks import native_changes
from .errors import (
    FeedBehind,
    FeedMoved,
    FeedRemoved,
    InvalidArgument,
    WatchCompacted,
    WatchUnsupported,
    show_bytes,
)
from .stores._base import WriteView
from .tuples import pack, unpack

__all__ = ["Feed", "FeedInfo", "list_feeds", "open_feed", "remove_feed"]

_NAME_LIMIT = 256


@dataclass(frozen=True, slots=True)
class FeedInfo:
    """A feed as the store records it: ``cursor`` its last acknowledged revision."""

    name: str
    path: tuple[Any, ...]
    subtree: bool
    cursor: int


def _log(ks: Any) -> ChangeLog | None:
    hook = getattr(ks.store, "hook", None)
    got = hook("changes") if hook is not None else None
    return got if isinstance(got, ChangeLog) else None


def _native(ks: Any) -> bool:
    return native_changes(ks.store.capabilities)


def _check(ks: Any) -> ChangeLog | None:
    log = _log(ks)
    if log is None and not _native(ks):
        raise WatchUnsupported(
            f"feeds read the change log, which {ks.url} does not keep: open it with changes=True "
            "(keyspace.open(url, changes=True))"
        )
    return log


def _last(ks: Any, log: ChangeLog | None) -> int:
    """The last committed revision: the log's counter, or the etcd store's revision."""
    if log is not None:
        return log.last()
    return int(ks.store.status()["revision"])


def _feed_key(ks: Any, name: str) -> bytes:
    if type(name) is not str or not name:
        raise InvalidArgument(f"a feed name must be a non-empty str, not {show_bytes(name)}")
    if not name.isprintable():  # `keyspace feed ls` prints one feed a line, its fields apart by tabs
        raise InvalidArgument(f"a feed name must be printable characters, not {name[:40]!r}")
    try:
        raw = name.encode()
    except UnicodeEncodeError:
        raise InvalidArgument(f"a feed name must be valid Unicode (UTF-8), not {name[:40]!r}") from None
    if len(raw) > _NAME_LIMIT:
        raise InvalidArgument(
            f"feed name {name[:40]!r}… is {len(raw)} UTF-8 bytes, over the limit of {_NAME_LIMIT}"
        )
    return changes_base(ks.scheme) + _FEEDS + raw


def _info(name: str, raw: bytes) -> FeedInfo:
    cursor, subtree, path = unpack(raw)
    return FeedInfo(name, tuple(path), bool(subtree), int(cursor))


def list_feeds(ks: Any) -> list[FeedInfo]:
    """Every feed recorded for ``ks``, by name. Cost: one scan of the feed records."""
    start = changes_base(ks.scheme) + _FEEDS
    stop = prefix_end(start)
    return [_info(key[len(start) :].decode(), raw) for key, raw in ks.store.scan(start, stop)]


def remove_feed(ks: Any, name: str) -> bool:
    """Remove the feed ``name`` (its cursor: the log no longer keeps changes for
    it); False when there is none."""
    key = _feed_key(ks, name)
    if ks.store.get(key) is None:
        return False
    ks.store.delete(key)
    return True


def open_feed(ks: Any, name: str, path: Any, subtree: bool) -> Feed:
    """:meth:`Keyspace.feed`: the feed ``name``, made at the current revision when
    the store has none (recorded at once), else resumed after its cursor; a
    recorded feed of another scope or ``subtree`` raises :class:`InvalidArgument`,
    one another consumer made meanwhile :class:`FeedMoved` (nothing written)."""
    log = _check(ks)
    if type(subtree) is not bool:
        raise InvalidArgument(f"subtree must be True or False, not {show_bytes(subtree)}")
    if not isinstance(path, tuple):
        raise InvalidArgument(f"scope_path must be a tuple of path components, not {show_bytes(path)}")
    key = _feed_key(ks, name)
    raw = ks.store.get(key)
    if raw is not None:
        info = _info(name, raw)
        if (pack(info.path), info.subtree) != (pack(path), subtree):  # packed: (1,) is not (True,)
            raise InvalidArgument(
                f"feed {name!r} of {ks.url} follows scope {show_bytes(info.path)} (subtree={info.subtree}), "
                f"not {show_bytes(path)} (subtree={subtree}): give its own scope, or remove it first"
            )
        return Feed(ks, name, key, path, subtree, info.cursor)
    cursor = _last(ks, log)
    feed = Feed(ks, name, key, path, subtree, cursor)  # a path the scheme refuses raises here
    catalog = ks.catalog

    def make(tx: WriteView) -> None:
        if not catalog.recorded:  # the keyspace's scheme record comes with its first record
            catalog._claim_record(tx)
        if tx.get(key) is not None:
            raise FeedMoved(
                f"feed {name!r} of {ks.url} was made by another consumer since this one looked for it (a "
                "feed is one consumer's); nothing was written: open it again to go on after its cursor"
            )
        tx.put(key, pack((cursor, subtree, path)))

    try:
        catalog._atomically(make)
    except BaseException:
        feed.close()
        raise
    return feed


def _behind(name: str, exc: WatchCompacted) -> FeedBehind:
    return FeedBehind(
        f"feed {name!r} is behind the change log: its next change (revision {exc.revision}) was trimmed "
        f"by the log's retention before it was acknowledged (the oldest kept is {exc.compact_revision}); "
        "remove the feed and make it again to go on from now",
        exc.revision,
        exc.compact_revision,
    )


class Feed(Closing):
    """A durable consumer (module docstring). ``cursor``: the last acknowledged
    revision; ``position``: the last revision :meth:`read` handed out."""

    def __init__(
        self, ks: Any, name: str, key: bytes, path: tuple[Any, ...], subtree: bool, cursor: int
    ) -> None:
        self.keyspace = ks
        self.name = name
        self._key = key
        self.path = path
        self.subtree = subtree
        self.cursor = cursor
        self.position = cursor
        self._held: WatchEvent | None = None
        try:
            self._watch: ScopeWatch = ks.scope(*path).watch(subtree=subtree, start_revision=cursor + 1)
        except WatchCompacted as exc:
            raise _behind(name, exc) from None

    def __repr__(self) -> str:
        return f"Feed({self.name!r}, path={self.path!r}, cursor={self.cursor})"

    def _next(self, timeout: float | None) -> WatchEvent | None:
        held = self._held
        if held is not None:
            self._held = None
            return held
        try:
            return self._watch.get(timeout)
        except WatchCompacted as exc:
            raise _behind(self.name, exc) from None

    def read(self, limit: int = 1000, timeout: float | None = 0.0) -> list[WatchEvent]:
        """The next changes, in commit order: waits at most ``timeout`` seconds
        (``None``: until one comes) for the first, then takes those already
        there, up to ``limit`` and always whole commits (a commit of more than
        ``limit`` changes comes whole). An empty list when none came in time.
        Acknowledge them with :meth:`ack` once handled. A feed removed since it
        was opened (``keyspace feed rm``) raises :class:`FeedRemoved`: it hands
        out no change it could not acknowledge. Cost: the watch's queue and one
        point read (the feed's record)."""
        if type(limit) is not int or limit < 1:
            raise InvalidArgument(f"limit must be an int of 1 or more, not {show_bytes(limit)}")
        first = self._next(timeout)
        if self.keyspace.store.get(self._key) is None:
            raise self._removed("its changes can no longer be acknowledged")
        if first is None:
            return []
        out = [first]
        while True:
            event = self._next(0)
            if event is None:
                break
            if len(out) >= limit and event.revision != out[-1].revision:
                self._held = event
                break
            out.append(event)
        self.position = out[-1].revision
        return out

    def ack(self, cursor: int | None = None, tx: Any = None) -> None:
        """Acknowledge every change up to revision ``cursor`` (default: the last
        one read): recorded in the store, so the feed opened again goes on after
        it. With ``tx`` (a ``ks.transaction()`` handle) the cursor is written in
        that transaction, so that what the consumer writes for the changes and
        their acknowledgement commit together (exactly-once processing); if that
        transaction does not commit, open the feed again. A cursor past what was
        read, or before the one acknowledged, raises :class:`InvalidArgument`;
        a feed removed since it was opened, :class:`FeedRemoved`, and one whose
        recorded cursor another consumer moved since this one read it (or an
        ``ack(tx=...)`` of this one that did not commit), :class:`FeedMoved`
        (nothing written). Cost: one point read and one put, in one atomic write."""
        if cursor is None:
            cursor = self.position
        if type(cursor) is not int or not self.cursor <= cursor <= self.position:
            raise InvalidArgument(
                f"feed {self.name!r}: ack takes a revision from {self.cursor} (acknowledged) to "
                f"{self.position} (read), not {show_bytes(cursor)}"
            )
        if cursor == self.cursor:
            return
        record = pack((cursor, self.subtree, self.path))
        if tx is not None:
            self._acknowledge(tx.view, record)
        else:
            self.keyspace.catalog._atomically(lambda view: self._acknowledge(view, record))
        self.cursor = cursor

    def _acknowledge(self, view: WriteView, record: bytes) -> None:
        """Inside the write: the feed's record replaced by ``record``, where the
        feed is still recorded (else :class:`FeedRemoved`) at the cursor this
        consumer left it at (else :class:`FeedMoved`); else nothing written."""
        raw = view.get(self._key)
        if raw is None:
            raise self._removed("this acknowledgement was not recorded")
        recorded = _info(self.name, raw).cursor
        if recorded != self.cursor:
            raise FeedMoved(
                f"feed {self.name!r} of {self.keyspace.url} is at revision {recorded} in the store, not "
                f"at {self.cursor}, where this consumer left it: another consumer acknowledged meanwhile "
                "(a feed is one consumer's), or an acknowledgement in a transaction did not commit; "
                "nothing was written: open the feed again to go on after its recorded cursor"
            )
        view.put(self._key, record)

    def _removed(self, so: str) -> FeedRemoved:
        return FeedRemoved(
            f"feed {self.name!r} of {self.keyspace.url} was removed since it was opened, so {so}: open "
            "the feed again to make it anew from now"
        )

    def close(self) -> None:
        """Stop reading (the feed stays recorded; :func:`remove_feed` removes it)."""
        self._watch.close()
