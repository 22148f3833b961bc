"""etcd: watch latency, and keyspace.aio throughput against the sync API.

Runs on the cluster ``KEYSPACE_ETCD_ENDPOINTS`` names (``host:port,...``), or on
one started for the workload alone where etcd is installed
(:func:`~benchmarks._engines.etcd_endpoints`); otherwise the report says it was
not run and why. Every round writes to a scope of
its own and drops it afterwards.

- ``watch``: a scope is watched while its keys are written one at a time; each
  write's latency is from just before the ``put`` to the moment the watcher hands
  out its event. Reported as ns per write against the same writes unwatched (the
  ratio), and as median and p99 milliseconds in the notes.
- ``aio``: the same puts from 64 concurrent tasks on one :mod:`keyspace.aio`
  keyspace (its worker pool), from one async task, and sequentially through the
  sync API on the same cluster.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from collections.abc import Iterator

import keyspace
import keyspace.aio

from . import _data
from ._engines import etcd_endpoints
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload

_V = _data.VALUE
_TASKS = 64
_rounds = itertools.count()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@workload("etcd-watch-aio")
def etcd_watch_aio(ctx: Context) -> Iterator[Comparison]:
    """Watch latency (write to event) and async vs sync throughput on one cluster."""
    endpoints = etcd_endpoints(ctx)
    if endpoints is None:
        return
    ks = keyspace.open(f"etcd://{endpoints}/bench-watch")
    aks = keyspace.aio.AsyncKeyspace(ks)
    ctx.defer(lambda: asyncio.run(aks.close()))  # closes ks too; runs last
    ctx.defer(lambda: ks.store.delete_range(b"", None))  # the scheme record too
    n = ctx.n(500, 50)
    keys = _data.keys(n)
    latencies: list[float] = []

    def fresh() -> keyspace.Scope:
        return ks.scope("bench", f"run{next(_rounds)}")

    def unwatched() -> Trial:
        scope = fresh()

        def run() -> None:
            for k in keys:
                scope[k] = _V

        return Trial(run, n, scope.drop)

    def watched() -> Trial:
        scope = fresh()
        watch = scope.watch()
        source = watch.store_watch
        wait = getattr(source, "wait_started", None)
        if wait is not None:
            wait(10)

        def run() -> None:
            for k in keys:
                t0 = time.perf_counter()
                scope[k] = _V
                event = watch.get(10)
                if event is None or event.key != k:
                    raise RuntimeError(f"watch: expected the event of {k!r}, got {event!r}")
                latencies.append(time.perf_counter() - t0)

        def close() -> None:
            watch.close()
            scope.drop()

        return Trial(run, n, close)

    yield Comparison(
        "etcd",
        "watch",
        {"watched": watched, "unwatched": unwatched},
        [Ratio("etcd put + its watch event vs put alone", "watched", "unwatched")],
        rounds=3 if not ctx.quick else 1,
    )
    if latencies:
        ms = [x * 1000 for x in latencies]
        ctx.note(
            f"watch latency (write to event), {len(ms)} writes: median {statistics.median(ms):.2f} ms, "
            f"p99 {_percentile(ms, 0.99):.2f} ms"
        )

    def sync_puts() -> Trial:
        scope = fresh()

        def run() -> None:
            for k in keys:
                scope[k] = _V

        return Trial(run, n, scope.drop)

    def async_puts(tasks: int) -> Factory:
        def factory() -> Trial:
            path = fresh().path

            async def main() -> None:
                scope = aks.scope(*path)
                queue = iter(keys)

                async def worker() -> None:
                    for k in queue:  # the tasks share one iterator: each key once
                        await scope.put(k, _V)

                await asyncio.gather(*(worker() for _ in range(tasks)))

            return Trial(lambda: asyncio.run(main()), n, ks.scope(*path).drop)

        return factory

    yield Comparison(
        "etcd",
        "aio",
        {
            "sync sequential": sync_puts,
            f"aio {_TASKS} tasks": async_puts(_TASKS),
            "aio 1 task": async_puts(1),
        },
        [
            Ratio(
                f"etcd puts: aio {_TASKS} tasks vs sync sequential",
                f"aio {_TASKS} tasks",
                "sync sequential",
                Target(1.0, text="< 1 (concurrent tasks beat one thread)"),
            ),
            Ratio("etcd puts: aio 1 task vs sync sequential", "aio 1 task", "sync sequential"),
        ],
        rounds=3 if not ctx.quick else 1,
    )
    how = "native grpc.aio client" if aks.workers == 0 else "sync client calls in workers"
    ctx.note(f"aio: {aks.workers} worker threads ({how}), {_TASKS} tasks")
