"""One LMDB environment per path per process, shared by every store on it.

LMDB allows a process one open environment per path; opening the same path twice
breaks its locks. So every :class:`~keyspace.stores.LMDBStore` of a path (the
unnamed database and each named database, ``lmdb:///p?db=NAME``) holds the one
:class:`SharedEnv` of that path, counted; the environment closes with the last
store. The shared object also knows which thread holds the environment's write
transaction, so that a transaction begun on another database of the same
environment in that thread joins it instead of waiting for it forever.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import StoreError
from ._records import Records

__all__ = ["PROBE_SLOTS", "NotADatabase", "SharedEnv", "acquire", "check_room", "db_name_bytes", "release"]

PROBE_SLOTS = 1
"""Database slots an environment is opened with beyond ``max_dbs``: kept free for
asking LMDB whether a key of the unnamed database is a database's record
(:class:`~keyspace.stores.lmdb._records.Records`), never taken by a store."""

NAME_MOST = 511
"""The longest database name, in UTF-8 bytes: a name is a key of the unnamed
database, and LMDB's keys are at most 511 bytes (its default build, py-lmdb's)."""


def db_name_bytes(name: str, url: str) -> bytes:
    """The UTF-8 bytes LMDB is given for the database name ``name``, checked before
    any environment is opened or created: a name holding a NUL character (LMDB
    reads a name up to its first NUL, so ``"cache\x00x"`` would open the database
    ``"cache"``), one with no UTF-8 form (a lone surrogate) or one longer than
    :data:`NAME_MOST` bytes raises :class:`StoreError` naming it."""
    if "\x00" in name:
        cut = name.index("\x00")
        raise StoreError(
            f"database name {name!r} of {url} holds a NUL character at offset {cut}; LMDB names end at "
            f"the first NUL, so it would open the database {name[:cut]!r}"
        )
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(
            f"database name {name!r} of {url} has no UTF-8 form ({exc.reason} at offset {exc.start}); "
            "LMDB is given database names as UTF-8"
        ) from None
    if len(raw) > NAME_MOST:
        raise StoreError(
            f"database name of {len(raw)} bytes of {url} is over LMDB's limit of {NAME_MOST} bytes "
            f"(a name is a key of the unnamed database): {name[:40]!r}…"
        )
    return raw


class NotADatabase(StoreError):
    """A key of the unnamed database that is no named database."""


class SharedEnv:
    """An open LMDB environment and what its stores share: the database handles
    opened so far; the writer lock (``wlock``: growing the map needs no write
    transaction open in this process); the thread holding the write transaction
    and that transaction (``joint``); the open snapshots (``views``: the thread
    that opened each, one ``append`` or ``remove`` of the list each, which are
    atomic) and whether the map is being resized (``resizing``, set under
    ``cond``, which a growth waits on); which keys of its unnamed database are
    records of named databases (``records``); until when a write transaction
    may take the fast path without asking LMDB how full the map is
    (``roomy_until``, a :func:`time.monotonic` time) and for which fast-path
    headroom that was decided (``roomy_for``): see
    :meth:`~keyspace.stores.lmdb._growth.MapGrowth._roomy`."""

    __slots__ = (
        "cond",
        "dbs",
        "env",
        "joint",
        "key",
        "max_dbs",
        "pid",
        "readonly",
        "records",
        "refs",
        "resizing",
        "roomy_for",
        "roomy_until",
        "sync",
        "views",
        "wlock",
        "writer",
    )

    def __init__(self, env: Any, key: str, max_dbs: int, readonly: bool, sync: bool = True) -> None:
        self.env = env
        self.key = key
        self.max_dbs = max_dbs
        self.readonly = readonly
        self.sync = sync
        self.pid = os.getpid()  # LMDB forbids using an environment in a forked child
        self.refs = 0
        self.dbs: dict[str, Any] = {}
        self.writer: int | None = None
        self.joint: Any = None
        self.wlock = threading.Lock()
        self.cond = threading.Condition()
        self.views: list[int] = []
        self.resizing = False
        self.roomy_until = 0.0
        self.roomy_for = 0
        self.records = Records(env, _ASKING)

    def check_room(self, names: Iterable[str], url: str) -> None:
        """Raise :class:`StoreError` unless every named database of ``names`` can
        be opened: those not open in this process yet must fit in the slots
        ``max_dbs`` leaves. A caller that creates several databases asks first,
        so that a refusal creates none of them."""
        with _LOCK:
            check_room(names, self.dbs, self.max_dbs, url)

    def open_db(self, name: str, *, create: bool, url: str) -> Any:
        """The handle of the named database ``name`` (created if missing and
        ``create``; ``""``: the unnamed database). Cost: one LMDB transaction the
        first time, a dict lookup after. A name LMDB cannot be given raises
        :class:`StoreError` before LMDB sees it (:func:`db_name_bytes`)."""
        import lmdb

        raw = db_name_bytes(name, url)
        with _LOCK:
            handle = self.dbs.get(name)
            if handle is not None:
                return handle
            if not name:  # the unnamed database: no slot, no transaction
                handle = self.dbs[name] = self.env.open_db(None)
                return handle
            if self.max_dbs < 1:
                raise StoreError(
                    f"{url} is open in this process with max_dbs=0, which allows no named database; "
                    f"open the first store of that environment with max_dbs >= 1 to use db={name!r}"
                )
            full = StoreError(
                f"cannot open database {name!r} of {url}: the environment was opened in this process "
                f"with max_dbs={self.max_dbs} and that many named databases are open; open its first "
                "store with a larger max_dbs"
            )
            if sum(1 for held in self.dbs if held) >= self.max_dbs:
                raise full  # the slots beyond max_dbs are for the records' questions (PROBE_SLOTS)
            try:
                if self.readonly:  # a read transaction of py-lmdb's: it waits for nothing
                    with _ASKING:
                        handle = self.env.open_db(raw, create=False)
                else:
                    # begun before taking _ASKING: a write transaction may wait for another
                    # thread's, which may be asking LMDB whether a key is a database
                    txn = self.env.begin(write=True)
                    with _ASKING:
                        try:
                            handle = self.env.open_db(raw, txn=txn, create=create)
                        except BaseException:
                            txn.abort()
                            raise
                        txn.commit()  # the handle stays open in the environment
            except lmdb.NotFoundError:
                raise StoreError(f"{url} has no named database {name!r}") from None
            except lmdb.DbsFullError:
                raise full from None
            except lmdb.IncompatibleError:
                raise NotADatabase(
                    f"{name!r} in {url} is a key of the unnamed database, not a named database"
                ) from None
            self.dbs[name] = handle
            if create:
                self.records.forget()  # it may be new: a key of that name is a record now
            return handle


_OPEN: dict[str, SharedEnv] = {}
_LOCK = threading.RLock()
_ASKING = threading.RLock()
"""Held around each LMDB ``open_db`` of the process and the end of its transaction
(LMDB allows one transaction at a time to open databases): by
:meth:`SharedEnv.open_db` and by the records' questions, never while waiting for
LMDB's writer lock."""


def check_room(names: Iterable[str], opened: Iterable[str], max_dbs: int, url: str) -> None:
    """Raise :class:`StoreError` unless the named databases ``names`` not among
    ``opened`` (the names an environment has open) fit in the slots ``max_dbs``
    leaves: the rule of :meth:`SharedEnv.check_room`, which a caller about to
    create an environment asks with nothing ``opened`` before creating anything."""
    held = set(opened)
    new = sorted({n for n in names if n and n not in held})
    used = sum(1 for n in held if n)
    if new and used + len(new) > max_dbs:
        raise StoreError(
            f"cannot open the databases {', '.join(map(repr, new))} of {url}: the environment is "
            f"opened in this process with max_dbs={max_dbs}, {used} of them in use, and these "
            f"need {len(new)} more; open its first store with a larger max_dbs"
        )


def acquire(
    path: str,
    *,
    max_dbs: int,
    readonly: bool,
    url: str,
    open_env: Callable[[], Any],
    sync: bool = True,
) -> SharedEnv:
    """The shared environment of ``path``, opened with ``open_env()`` if this process
    has none. A second store of the same path shares it as it is: with the
    ``max_dbs``, ``map_size`` (which grows as the data needs) and ``max_readers``
    of the first (LMDB fixes them when the environment opens; running out of
    slots is a :class:`StoreError` naming it); it cannot write when the first
    opened it read-only, nor ask another ``sync`` (LMDB syncs an environment's
    commits or not: a store asking for durable commits would silently get none)
    (:class:`StoreError`). An environment this process inherited across a
    ``fork`` (open in the parent when it forked) is refused with
    :class:`StoreError`: LMDB forbids using it in the child, where its readers
    are the parent's (a snapshot there read pages the parent's writes reused),
    and the binding refuses a second environment of the path in one process."""
    key = os.path.realpath(path)
    with _LOCK:
        shared = _OPEN.get(key)
        if shared is not None and shared.pid != os.getpid():
            raise StoreError(
                f"{url} was open in the parent of this forked process when it forked; LMDB forbids using "
                "an environment across fork(), and it cannot be opened again here while the inherited one "
                "exists: open LMDB stores after forking, or start the process with 'spawn'"
            )
        if shared is None:
            shared = SharedEnv(open_env(), key, max_dbs, readonly, sync)
            _OPEN[key] = shared
        elif shared.readonly and not readonly:
            raise StoreError(
                f"{url} is already open read-only in this process; LMDB allows one environment "
                "per path per process, so close the read-only store before opening it for writing"
            )
        elif shared.sync != sync and not readonly:
            raise StoreError(
                f"{url} is already open in this process with sync={shared.sync}, and LMDB syncs the "
                f"commits of one environment alike; open every store of this path with the same sync "
                f"(this one asked sync={sync})"
            )
        shared.refs += 1
        return shared


def release(shared: SharedEnv) -> None:
    """Drop one store's hold on ``shared``; the last one closes the environment
    (in the process that opened it: closing an inherited one in a forked child
    would free the parent's readers)."""
    with _LOCK:
        shared.refs -= 1
        if shared.refs > 0:
            return
        if _OPEN.get(shared.key) is shared:
            del _OPEN[shared.key]
    if shared.pid == os.getpid():
        shared.env.close()
