"""Directories against tuple scopes on LMDB: ``move`` of a directory holding
100,000 keys against one holding 10, point operations and scans through a
:class:`~keyspace.Directory` against a tuple scope holding the same keys, and
the stored key of a three-level path of 20-character names.

Both sides are keyspace objects on one store each, built once per comparison
with the same keys; the directory's keys are stored ``prefix + pack((k,))``
(a prefix of 2 or 3 bytes), the scope's ``pack((path,)) + pack((k,))``.

Every row but the stored key's length again on a store another program wrote:
the gets, puts and scan on a directory and a tuple scope of 50,000 keys each,
the moves on the directories of 100,000 and 10 keys, their bytes
(FoundationDB's directory layer's nodes, allocator and version included)
loaded into LMDB by py-lmdb alone, with none of keyspace's own records, and the
keyspace opened with ``scheme="tuple"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import keyspace
from keyspace.keyspace import Keyspace

from . import _data
from ._engines import Fresh, load_raw
from ._harness import Comparison, Context, Factory, Ratio, Target, Trial, workload

_V = _data.VALUE
_PATH = ("tenant1", "users")
_LONG = ("a" * 20, "b" * 20, "c" * 20)


def _store(ctx: Context, fill: Callable[[Keyspace], None]) -> Keyspace:
    """A keyspace on a fresh LMDB store, filled by ``fill``, closed and removed when
    the workload ends."""
    d = Fresh()
    ks = keyspace.open(f"lmdb://{d.path}/db", sync=False)
    fill(ks)
    ctx.defer(d.remove)
    ctx.defer(ks.close)
    return ks


def _written_by_others(ctx: Context, fill: Callable[[Keyspace], None]) -> Keyspace:
    """The bytes ``fill`` writes, as FoundationDB's directory layer and a writer
    of tuple keys leave them: loaded into a fresh LMDB store by py-lmdb alone,
    without keyspace's own records (its scheme record and its directory record,
    all under ``ff``), and opened with ``scheme="tuple"``; closed and removed when
    the workload ends."""
    with keyspace.open("memory:") as made:
        fill(made)
        pairs = [(k, v) for k, v in made.store.scan(b"", None) if k[:1] != b"\xff"]
    d = Fresh()
    ks = keyspace.open(load_raw("lmdb", d.path, pairs), scheme="tuple", sync=False)
    ctx.defer(d.remove)
    ctx.defer(ks.close)
    return ks


def _handle(ks: Keyspace, how: str, directory: bool) -> tuple[Any, Callable[[], object]]:
    """The directory or the scope of ``_PATH`` on ``how`` (``store``,
    ``transaction``, ``snapshot``) and the function that ends that view."""
    if how == "store":
        return (ks.directory(*_PATH) if directory else ks.scope(*_PATH)), (lambda: None)
    cm = getattr(ks, how)()
    tx = cm.__enter__()
    made = tx.directories.open(_PATH) if directory else tx.scope(*_PATH)
    return made, lambda: cm.__exit__(None, None, None)


def _gets(ks: Keyspace, how: str, directory: bool, keys: list[bytes]) -> Factory:
    def make() -> Trial:
        made, end = _handle(ks, how, directory)

        def run() -> None:
            for k in keys:
                made[k]

        return Trial(run, len(keys), end)

    return make


def _puts(how: str, directory: bool, keys: list[bytes]) -> Factory:
    def make() -> Trial:
        d = Fresh()
        ks = keyspace.open(f"lmdb://{d.path}/db", sync=False)
        (ks.directory(*_PATH) if directory else ks.scope(*_PATH))[b"\x01first"] = _V
        made, end = _handle(ks, how, directory)

        def run() -> None:
            for k in keys:
                made[k] = _V

        def close() -> None:
            end()
            ks.close()
            d.remove()

        return Trial(run, len(keys), close)

    return make


def _inserts(ks: Keyspace, how: str, directory: bool, keys: list[bytes]) -> Factory:
    """``keys`` put into the directory or the scope of ``_PATH`` of ``ks`` (which
    hold other keys) on ``how``; each trial's close takes them out again
    (untimed, one transaction), so every round inserts new keys."""

    def make() -> Trial:
        made, end = _handle(ks, how, directory)

        def run() -> None:
            for k in keys:
                made[k] = _V

        def close() -> None:
            end()
            with ks.transaction() as tx:
                target = tx.directories.open(_PATH) if directory else tx.scope(*_PATH)
                for k in keys:
                    del target[k]

        return Trial(run, len(keys), close)

    return make


def _scan(ks: Keyspace, directory: bool, n: int) -> Factory:
    def make() -> Trial:
        made, end = _handle(ks, "store", directory)

        def run() -> None:
            for _key, _value in made.items():
                pass

        return Trial(run, n, end)

    return make


def _moves(ks: Keyspace, name: str, count: int) -> Factory:
    """``count`` moves of the directory ``name`` there and back (each one
    transaction of the store)."""

    def make() -> Trial:
        def run() -> None:
            here, there = (name,), (name + "-moved",)
            for _ in range(count // 2):
                ks.directories.move(here, there)
                ks.directories.move(there, here)

        return Trial(run, count)

    return make


@workload("directory")
def directory(ctx: Context) -> Iterator[Comparison]:
    """Directories on LMDB: move cost against the keys held, point operations and
    scans against a tuple scope, stored key length."""
    n = ctx.n(20_000, 300)
    keys = _data.keys(n)
    reads = _data.shuffled(keys)
    big = ctx.n(100_000, 500)

    def fill_moves(ks: Keyspace) -> None:
        ks.directory("big").update((k, _V) for k in _data.keys(big, seed=3))
        ks.directory("small").update((k, _V) for k in _data.keys(10, seed=4))

    moving = _store(ctx, fill_moves)
    moves = ctx.n(400, 4)
    yield Comparison(
        "directory",
        f"move of a directory of {big:,} keys vs of 10",
        {"big": _moves(moving, "big", moves), "small": _moves(moving, "small", moves)},
        [Ratio(f"move: {big:,} keys vs 10", "big", "small", Target(1.5))],
        rounds=ctx.fine,
    )

    def fill(ks: Keyspace) -> None:
        ks.directory(*_PATH).update((k, _V) for k in keys)
        ks.scope(*_PATH).update((k, _V) for k in keys)

    both = _store(ctx, fill)
    t110 = Target(1.10)
    for how in ("transaction", "snapshot", "store"):
        yield Comparison(
            "directory",
            f"get ({how})",
            {"directory": _gets(both, how, True, reads), "tuple scope": _gets(both, how, False, reads)},
            [Ratio(f"Directory get ({how}) vs tuple scope", "directory", "tuple scope", t110)],
            rounds=ctx.fine,
        )
    writes = keys[: ctx.n(5_000, 100)]
    for how in ("transaction", "store"):
        yield Comparison(
            "directory",
            f"put ({how})",
            {"directory": _puts(how, True, writes), "tuple scope": _puts(how, False, writes)},
            [Ratio(f"Directory put ({how}) vs tuple scope", "directory", "tuple scope", t110)],
            rounds=ctx.fine,
        )
    yield Comparison(
        "directory",
        "scan",
        {"directory": _scan(both, True, n), "tuple scope": _scan(both, False, n)},
        [Ratio("Directory scan per item vs tuple scope", "directory", "tuple scope", t110)],
        rounds=ctx.fine,
    )

    many = ctx.n(50_000, 500)
    held = _data.keys(many, seed=6)

    def fill_many(ks: Keyspace) -> None:
        ks.directory(*_PATH).update((k, _V) for k in held)
        ks.scope(*_PATH).update((k, _V) for k in held)

    others = _written_by_others(ctx, fill_many)
    asked = _data.shuffled(held)[:n]
    for how in ("transaction", "snapshot", "store"):
        yield Comparison(
            "directory",
            f"get ({how}), written by others",
            {"directory": _gets(others, how, True, asked), "tuple scope": _gets(others, how, False, asked)},
            [
                Ratio(
                    f"written by others: Directory get ({how}) vs tuple scope, {many:,} keys",
                    "directory",
                    "tuple scope",
                    t110,
                )
            ],
            rounds=ctx.fine,
        )
    fresh = _data.keys(ctx.n(5_000, 100), seed=8)
    for how in ("transaction", "store"):
        yield Comparison(
            "directory",
            f"put ({how}), written by others",
            {
                "directory": _inserts(others, how, True, fresh),
                "tuple scope": _inserts(others, how, False, fresh),
            },
            [
                Ratio(
                    f"written by others: Directory put ({how}) vs tuple scope, {many:,} keys",
                    "directory",
                    "tuple scope",
                    t110,
                )
            ],
            rounds=ctx.fine,
        )
    yield Comparison(
        "directory",
        "scan, written by others",
        {"directory": _scan(others, True, many), "tuple scope": _scan(others, False, many)},
        [
            Ratio(
                f"written by others: Directory scan per item vs tuple scope, {many:,} keys",
                "directory",
                "tuple scope",
                t110,
            )
        ],
    )

    moved = _written_by_others(ctx, fill_moves)
    yield Comparison(
        "directory",
        f"move of a directory of {big:,} keys vs of 10, written by others",
        {"big": _moves(moved, "big", moves), "small": _moves(moved, "small", moves)},
        [Ratio(f"written by others: move: {big:,} keys vs 10", "big", "small", Target(1.5))],
        rounds=ctx.fine,
    )

    ks = keyspace.open("memory:")
    d = ks.directory(*_LONG)
    d[b"k"] = _V
    ks.scope(*_LONG)[b"k"] = _V
    stored = {k for k, _ in ks.store.scan(b"", None)}
    dir_key = d.prefix + b"\x01k\x00"
    tuple_key = ks.scope(*_LONG).prefix + b"\x01k\x00"
    assert dir_key in stored and tuple_key in stored
    ks.close()
    ctx.note(
        f"the key k of a 3-level path of 20-character names: {len(dir_key)} bytes in a directory, "
        f"{len(tuple_key)} in a tuple scope ({len(tuple_key) - len(dir_key)} bytes shorter)"
    )
    limit = (len(tuple_key) - 50) / len(tuple_key)
    yield Comparison(
        "directory",
        "stored key of a 3-level path of 20-character names",
        {},
        [
            Ratio(
                "stored key bytes: directory / tuple scope",
                "directory",
                "tuple scope",
                Target(limit, text="≥ 50 bytes shorter"),
            )
        ],
        measured={"directory": float(len(dir_key)), "tuple scope": float(len(tuple_key))},
        unit="bytes",
    )
