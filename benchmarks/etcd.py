"""etcd: single puts against transactional batches (and ``EtcdStore.put_many``).

Runs on the cluster ``KEYSPACE_ETCD_ENDPOINTS`` names (``host:port,...``), or on
one started for the workload alone where etcd is installed
(:func:`~benchmarks._engines.etcd_endpoints`); otherwise the report says it was
not run and why. Every round writes to a scope of
its own and drops it afterwards, so the cluster is left as it was.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import keyspace

from . import _data
from ._engines import etcd_endpoints
from ._harness import Comparison, Context, Ratio, Target, Trial, workload

_V = _data.VALUE
_BATCH = 128  # etcd's default limit of operations per transaction
_rounds = itertools.count()

Factory = Callable[[], Trial]


@workload("etcd")
def etcd(ctx: Context) -> Iterator[Comparison]:
    """Single puts vs atomic batches (``scope.update`` of 128 items: one etcd Txn each),
    vs the same inside ``ks.transaction()`` (one more round trip to pin the snapshot
    revision), vs ``put_many`` (informational)."""
    endpoints = etcd_endpoints(ctx)
    if endpoints is None:
        return
    ks = keyspace.open(f"etcd://{endpoints}")
    ctx.defer(ks.close)
    n = ctx.n(1_000, 100)
    keys = _data.keys(n)
    pairs = [(k, _V) for k in keys]

    def fresh_scope() -> keyspace.Scope:
        return ks.scope("bench", f"run{next(_rounds)}")

    def singles() -> Trial:
        scope = fresh_scope()

        def run() -> None:
            for k in keys:
                scope[k] = _V

        return Trial(run, n, scope.drop)

    def transactions() -> Trial:
        path = fresh_scope().path

        def run() -> None:
            for i in range(0, n, _BATCH):
                with ks.transaction() as tx:
                    tx.scope(*path).update(pairs[i : i + _BATCH])

        return Trial(run, n, ks.scope(*path).drop)

    def batches() -> Trial:
        scope = fresh_scope()

        def run() -> None:
            for i in range(0, n, _BATCH):
                scope.update(pairs[i : i + _BATCH])  # one atomic etcd Txn each

        return Trial(run, n, scope.drop)

    def put_many() -> Trial:
        scope = fresh_scope()
        put_many = getattr(ks.store, "put_many", None)
        assert put_many is not None
        prefix = scope.prefix
        encode = ks.scheme.encode_key
        stored = [(prefix + encode(k), v) for k, v in pairs]

        def run() -> None:
            put_many(stored)

        return Trial(run, n, scope.drop)

    variants: dict[str, Factory] = {
        "single puts": singles,
        "batches": batches,
        "transactions": transactions,
    }
    ratios = [
        Ratio(
            "etcd single puts vs atomic batches of 128",
            "single puts",
            "batches",
            Target(20.0, at_most=False, text="≥ 20 (batches ≥ 20× faster)"),
        ),
        Ratio("etcd single puts vs transactions of 128", "single puts", "transactions"),
    ]
    if hasattr(ks.store, "put_many"):
        variants["put_many"] = put_many
        ratios.append(Ratio("etcd atomic batches vs put_many", "batches", "put_many"))
    yield Comparison("etcd", "puts", variants, ratios, rounds=3 if not ctx.quick else 1)
