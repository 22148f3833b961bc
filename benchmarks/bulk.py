"""Bulk load: ``scope.update(pairs)`` inside one transaction against the engine's
plain put loop and its fastest batch path, all storing the same bytes and all
timed up to and including the commit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import _data
from ._engines import PATH, Fresh, open_keyspace, open_raw
from ._harness import Comparison, Context, Ratio, Target, Trial, workload
from .stores import _P1

_Z, _ZF = b"\x00", b"\x00\xff"
_V = _data.VALUE

Factory = Callable[[], Trial]


def _ks_update(engine: str, pairs: list[tuple[bytes, bytes]]) -> Factory:
    def make() -> Trial:
        d = Fresh()
        ks = open_keyspace(engine, d.path)

        def run() -> None:
            with ks.transaction() as tx:
                tx.scope(*PATH).update(pairs)

        def close() -> None:
            ks.close()
            d.remove()

        return Trial(run, len(pairs), close)

    return make


def _raw(engine: str, body: Callable[[Any], None], n: int) -> Factory:
    def make() -> Trial:
        d = Fresh()
        handle, close_handle = open_raw(engine, d.path)

        def close() -> None:
            close_handle()
            d.remove()

        return Trial(lambda: body(handle), n, close)

    return make


def _bodies(engine: str, keys: list[bytes]) -> tuple[Callable[[Any], None], Callable[[Any], None], str]:
    """The plain put loop and the fastest batch path of ``engine`` (and its name)."""
    if engine == "lmdb":

        def loop(h: Any) -> None:
            with h.begin(write=True) as txn:
                for k in keys:
                    txn.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        def batch(h: Any) -> None:
            with h.begin(write=True) as txn:
                txn.cursor().putmulti([(_P1 + k.replace(_Z, _ZF) + _Z, _V) for k in keys])

        return loop, batch, "putmulti"
    if engine == "leveldb":

        def loop(h: Any) -> None:
            for k in keys:
                h.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        def batch(h: Any) -> None:
            with h.write_batch() as wb:
                for k in keys:
                    wb.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        return loop, batch, "write_batch"
    if engine == "rocksdb":
        from rocksdict import WriteBatch

        def loop(h: Any) -> None:
            for k in keys:
                h.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)

        def batch(h: Any) -> None:
            wb = WriteBatch(raw_mode=True)
            for k in keys:
                wb.put(_P1 + k.replace(_Z, _ZF) + _Z, _V)
            h.write(wb)

        return loop, batch, "WriteBatch"
    if engine == "sqlite":
        sql = "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)"

        def loop(h: Any) -> None:
            h.execute("BEGIN IMMEDIATE")
            for k in keys:
                h.execute(sql, (_P1 + k.replace(_Z, _ZF) + _Z, _V))
            h.execute("COMMIT")

        def batch(h: Any) -> None:
            h.execute("BEGIN IMMEDIATE")
            h.executemany(sql, [(_P1 + k.replace(_Z, _ZF) + _Z, _V) for k in keys])
            h.execute("COMMIT")

        return loop, batch, "executemany"
    raise ValueError(f"unknown engine {engine!r}")


@workload("bulk")
def bulk(ctx: Context) -> Iterator[Comparison]:
    """Target: keyspace's bulk load at least as fast as the raw plain put loop
    (keyspace / put loop ≤ 1.0); the batch path is reported for reference."""
    n = ctx.n(100_000, 2_000)
    keys = _data.keys(n)
    pairs = [(k, _V) for k in keys]
    for engine in ("lmdb", "leveldb", "rocksdb", "sqlite"):
        loop, batch, batch_name = _bodies(engine, keys)
        yield Comparison(
            "bulk",
            f"{engine} bulk load",
            {
                "keyspace": _ks_update(engine, pairs),
                "put loop": _raw(engine, loop, n),
                batch_name: _raw(engine, batch, n),
            },
            [
                Ratio(f"{engine} bulk load vs put loop", "keyspace", "put loop", Target(1.0)),
                Ratio(f"{engine} bulk load vs {batch_name}", "keyspace", batch_name),
            ],
        )
