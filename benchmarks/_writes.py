"""The timed bodies of the write workloads that compare a keyspace feature on
and off (accounting, the change log): keys put into one scope, in one
transaction or each its own commit; and the same single puts with the
feature's records written by hand with py-lmdb (the floor of the design)."""

from __future__ import annotations

import marshal
import struct
import time
from collections.abc import Callable, Iterator

import keyspace
from keyspace.keyspace import Keyspace
from keyspace.schemes import TupleScheme

from ._data import VALUE, hand_stored
from ._engines import Fresh
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial

__all__ = [
    "hand_written_single_puts",
    "hand_written_transactions",
    "inserts",
    "put_all",
    "single_puts_into_others",
]


def put_all(
    ks: Keyspace, path: tuple[str, ...], keys: list[bytes], transaction: bool, size: int | None = None
) -> Callable[[], None]:
    """A function putting :data:`VALUE` at each of ``keys`` in the scope ``path``
    of ``ks``: in one transaction, or in transactions of ``size`` keys each, one
    after the other (a trial of several transactions: a median that one
    transaction's brief stall moves less); or (not ``transaction``) each its own
    commit through a scope made once here."""
    if transaction:
        step = size or len(keys) or 1
        batches = [keys[at : at + step] for at in range(0, len(keys), step)]

        def in_transactions() -> None:
            for batch in batches:
                with ks.transaction() as tx:
                    scope = tx.scope(*path)
                    for k in batch:
                        scope[k] = VALUE

        return in_transactions
    scope = ks.scope(*path)

    def each() -> None:
        for k in keys:
            scope[k] = VALUE

    return each


def inserts(ks: Keyspace, path: tuple[str, ...], keys: list[bytes], transaction: bool = True) -> Factory:
    """Trials of ``keys`` put into the scope ``path`` of ``ks`` (a store shared by
    the rounds, whose scope holds other keys), in one transaction or each its
    own commit (:func:`put_all`): each trial's close takes them out again
    (untimed, one transaction), so every round inserts new keys into the same
    scope."""
    run = put_all(ks, path, keys, transaction)

    def remove() -> None:
        with ks.transaction() as tx:
            scope = tx.scope(*path)
            for k in keys:
                del scope[k]

    return lambda: Trial(run, len(keys), remove)


_COUNTS = struct.Struct("<6q")
_CHANGES_COUNTER = b"\xffkeyspace-changes\x00\x01"
"""The by-hand change log's commit counter (where the change log keeps its own)."""
_CHANGES_LOG = b"\xffkeyspace-changes\x00\x02"
"""The start of the by-hand change log's records (a commit's number after it)."""


def _stored_keys(path: tuple[str, ...], keys: list[bytes]) -> list[bytes]:
    """The tuple scheme's stored keys of ``keys`` in the scope ``path``, written out
    by hand (:func:`~benchmarks._data.hand_stored`)."""
    stored = hand_stored("tuple", TupleScheme().layout(path).prefix)
    return [stored(k) for k in keys]


def hand_written_single_puts(path: tuple[str, ...], keys: list[bytes], extra: str | None) -> Factory:
    """The floor of a single put with a feature's records, written by hand with
    py-lmdb (``sync=False``, on a fresh environment each trial): each key its own
    write transaction holding the put and, with ``extra``, what the feature adds
    to every commit: ``"counters"``, three 48-byte counter records read and
    written (a scope, its parent, the root: accounting's records of a path of two
    names); ``"log"``, a counter read and written and one log record of the key
    and value (the change log's). ``None``: the plain put. The stored keys are
    the tuple scheme's of the scope ``path``, the keyspace side's."""
    import lmdb

    stored = _stored_keys(path, keys)
    records = [b"\xffkeyspace-counts\x00" + bytes([i]) * 24 for i in range(3)]
    counter, log = _CHANGES_COUNTER, _CHANGES_LOG
    pack, unpack = _COUNTS.pack, _COUNTS.unpack

    def make() -> Trial:
        d = Fresh()
        env = lmdb.open(f"{d.path}/db", map_size=1 << 30, sync=False, max_dbs=0)
        with env.begin(write=True) as txn:
            for record in records:
                txn.put(record, pack(0, 0, 0, 0, -1, -1))

        def run() -> None:
            begin = env.begin
            for key in stored:
                with begin(write=True) as txn:
                    if extra is None:
                        txn.put(key, VALUE)
                    elif extra == "counters":
                        old = txn.replace(key, VALUE)
                        size = len(key) + len(VALUE)
                        added = 1 if old is None else 0
                        grown = size if old is None else len(VALUE) - len(old)
                        for record in records:
                            a, b, c, e, f, g = unpack(txn.get(record, b""))
                            txn.put(record, pack(a + added, b + grown, c + added, e + grown, f, g))
                    else:
                        txn.put(key, VALUE)
                        seq = int.from_bytes(txn.get(counter) or bytes(8), "big") + 1
                        number = seq.to_bytes(8, "big")
                        txn.put(log + number + bytes(4), struct.pack("<QII", 0, 1, 1) + key + VALUE)
                        txn.put(counter, number)

        def close() -> None:
            env.close()
            d.remove()

        return Trial(run, len(stored), close)

    return make


def hand_written_transactions(
    directory: str,
    path: tuple[str, ...],
    keys: list[bytes],
    log: bool,
    sync: bool,
    times: int,
    kept: int | None = None,
) -> tuple[Factory, Callable[[], None]]:
    """The floor of a transaction of puts with a change log record, written by
    hand with py-lmdb on one environment in ``directory`` shared by the rounds
    (``sync``: an fsync per commit): a trial is ``times`` write transactions one
    after the other, each putting :data:`VALUE` at every key of ``keys`` (the
    tuple scheme's stored keys of the scope ``path``: after the first, keys the
    store holds) and, with ``log``, reading and writing a counter and putting
    one log record of the keys and values (``marshal``: one C call). The
    record's values are objects of their own, as a log of different values has:
    ``marshal`` writes an object it meets again as a reference, which would
    make the record of ``VALUE`` repeated far shorter than any log of real
    values. ``kept``: the log held at that many records, each commit deleting
    the record ``kept`` commits before its own (the log filled to it before the
    timing), so that records reuse the pages of those deleted rather than
    growing the file. Each transaction is one operation. Returns the trial
    factory and the close of the environment."""
    import lmdb

    stored = _stored_keys(path, keys)
    values = [bytes(bytearray(VALUE)) for _ in stored]  # distinct objects: written in full
    counter, records = _CHANGES_COUNTER, _CHANGES_LOG
    env = lmdb.open(f"{directory}/db", map_size=1 << 32, sync=sync, max_dbs=0)

    def run(times: int = times) -> None:
        begin = env.begin
        for _ in range(times):
            with begin(write=True) as txn:
                put = txn.put
                for key in stored:
                    put(key, VALUE)
                if log:
                    seq = int.from_bytes(txn.get(counter) or bytes(8), "big") + 1
                    number = seq.to_bytes(8, "big")
                    put(records + number, marshal.dumps((time.time_ns(), stored, values)))
                    put(counter, number)
                    if kept is not None and seq > kept:
                        txn.delete(records + (seq - kept).to_bytes(8, "big"))

    if kept is not None:
        run(kept)
    return (lambda: Trial(run, times)), env.close


def single_puts_into_others(
    ctx: Context,
    group: str,
    what: str,
    opened: dict[str, Keyspace],
    urls: dict[str, str],
    path: tuple[str, ...],
    keys: list[bytes],
    target: float,
) -> Iterator[Comparison]:
    """Single puts of ``keys`` into the scope ``path`` of a store another program
    wrote, each keyspace of ``opened`` (the feature on, then off: the ratio's
    two sides) against the other (:func:`inserts`), with ``sync=False`` (no
    target: without the fsync the feature's records cost more than the target
    allows even written by hand), then 200 of them with each keyspace opened
    again at ``urls[name]`` with LMDB's default fsync per commit (``target``).
    ``opened`` then holds the keyspaces opened again."""
    (on, off) = opened
    for sync, puts in ((False, keys), (True, keys[: ctx.n(200, 50)])):
        if sync:
            for name, ks in opened.items():
                ks.close()
                opened[name] = keyspace.open(urls[name], scheme="tuple")
                ctx.defer(opened[name].close)
        tail = " (fsync)" if sync else " (sync=False)"
        yield Comparison(
            group,
            f"single puts into a scope written by others{', fsync' if sync else ''}",
            {name: inserts(ks, path, puts, False) for name, ks in opened.items()},
            [Ratio(f"written by others: {what}{tail}", on, off, Target(target) if sync else None)],
            rounds=ctx.fine,
        )
