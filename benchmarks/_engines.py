"""Opening stores for the benchmarks: a keyspace on each engine, and the engine's
raw binding on a directory of its own, with the same settings the adapter uses."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import keyspace
from keyspace.keyspace import Keyspace

if TYPE_CHECKING:
    from ._harness import Context

__all__ = [
    "PATH",
    "Fresh",
    "etcd_endpoints",
    "load_raw",
    "open_keyspace",
    "open_raw",
    "scope_written_by_others",
]

PATH = ("tenant1", "users")
"""The scope every store workload writes to."""

SQLITE_SCHEMA = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID"


def etcd_endpoints(ctx: Context) -> str | None:
    """The ``host:port,…`` of an etcd cluster for an etcd workload, or ``None``
    (with a note saying why it was not run).

    ``KEYSPACE_ETCD_ENDPOINTS``, when set, names a running cluster. Otherwise a
    3-member cluster is started on 127.0.0.1 for this workload alone and stopped
    when it ends (ports ``KEYSPACE_ETCD_CLIENT_BASE``/``KEYSPACE_ETCD_PEER_BASE``
    + 1…3 when set, else free ones): an idle cluster's heartbeats take about 5 %
    of a core, which every other workload would otherwise share the machine
    with."""
    from keyspace.testing.etcd_cluster import ClusterUnavailable, start_cluster

    endpoints = os.environ.get("KEYSPACE_ETCD_ENDPOINTS")
    if endpoints:
        return endpoints
    reason = os.environ.get("KEYSPACE_ETCD_UNAVAILABLE")
    if reason is None:
        try:
            cluster = start_cluster(port_env=("KEYSPACE_ETCD_CLIENT_BASE", "KEYSPACE_ETCD_PEER_BASE"))
        except ClusterUnavailable as exc:
            reason = str(exc)
        except (OSError, TimeoutError, subprocess.SubprocessError) as exc:
            reason = f"could not start a local etcd cluster: {exc}"
        else:
            ctx.defer(cluster.stop)
            return ",".join(cluster.endpoints)
    ctx.note(f"not run: {reason}")
    return None


class Fresh:
    """A new temporary directory; :meth:`remove` deletes it."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="ksbench-")

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def open_keyspace(engine: str, directory: str) -> Keyspace:
    """A keyspace (TupleScheme) on a new store of ``engine`` inside ``directory``."""
    urls = {
        "lmdb": f"lmdb://{directory}/db",
        "leveldb": f"leveldb://{directory}/db",
        "rocksdb": f"rocksdb://{directory}/db",
        "sqlite": f"sqlite://{directory}/db.sqlite",
    }
    return keyspace.open(urls[engine])


def open_raw(engine: str, directory: str) -> tuple[Any, Callable[[], None]]:
    """The raw binding's handle on a new store of ``engine`` and its close function.
    Settings match the adapter's: LMDB with fsync at commit, LevelDB and RocksDB
    without sync, SQLite in WAL mode with ``synchronous=FULL``."""
    if engine == "lmdb":
        import lmdb

        env = lmdb.open(f"{directory}/db", map_size=4 << 30, max_dbs=0)
        return env, env.close
    if engine == "leveldb":
        import plyvel

        db = plyvel.DB(f"{directory}/db", create_if_missing=True)
        return db, db.close
    if engine == "rocksdb":
        from rocksdict import Options, Rdict

        options = Options(raw_mode=True)
        options.create_if_missing(True)
        rdb = Rdict(f"{directory}/db", options)
        return rdb, rdb.close
    if engine == "sqlite":
        conn = sqlite3.connect(f"{directory}/db.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute(SQLITE_SCHEMA)
        return conn, conn.close
    raise ValueError(f"unknown engine {engine!r}")


def load_raw(engine: str, directory: str, pairs: list[tuple[bytes, bytes]]) -> str:
    """A store of ``engine`` (``lmdb`` or ``sqlite``) made in ``directory`` by the
    engine's own binding alone, holding ``pairs`` (sorted here) and nothing of
    keyspace's: a store another program wrote. Returns its URL."""
    pairs.sort()
    if engine == "lmdb":
        import lmdb

        env = lmdb.open(f"{directory}/db", map_size=4 << 30, max_dbs=0)
        with env.begin(write=True) as txn:
            txn.cursor().putmulti(pairs)
        env.close()
        return f"lmdb://{directory}/db"
    if engine == "sqlite":
        conn = sqlite3.connect(f"{directory}/db.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(SQLITE_SCHEMA)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO kv VALUES (?, ?)", pairs)
        conn.execute("COMMIT")
        conn.close()
        return f"sqlite://{directory}/db.sqlite"
    raise ValueError(f"unknown engine {engine!r}")


def scope_written_by_others(directory: str, path: tuple[str, ...], n: int, seed: int = 5) -> str:
    """An LMDB store in ``directory`` loaded by py-lmdb alone with ``n`` keys of the
    tuple-scheme scope ``path`` (the bytes written out by hand, no record of
    keyspace's), as a program writing that layout without keyspace leaves it.
    Returns its URL; open it with ``scheme="tuple"``."""
    from keyspace.schemes import TupleScheme

    from ._data import VALUE, hand_stored, keys

    stored = hand_stored("tuple", TupleScheme().layout(path).prefix)
    return load_raw("lmdb", directory, [(stored(k), VALUE) for k in keys(n, seed)])
