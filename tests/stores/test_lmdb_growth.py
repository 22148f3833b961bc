"""LMDB's map grows while other processes and threads use the store."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from _workers import run_together

import keyspace

WORKER = str(Path(__file__).parent.parent / "_growth_worker.py")


@pytest.mark.slow
def test_map_growth_across_processes(tmp_path: Path) -> None:
    """4 writers grow a 256 KiB map to megabytes while 2 readers read and reopen:
    the readers adopt every new size (MDB_MAP_RESIZED is never surfaced)."""
    path = str(tmp_path / "store")
    writers, count = 4, 150
    keyspace.open(path, map_size=256 << 10).close()
    go = str(tmp_path / "go")
    outputs = run_together(
        [[WORKER, "writer", path, str(i), str(count), go] for i in range(writers)]
        + [[WORKER, "reader", path, str(writers), str(count), go]] * 2,
        timeout=120,
        go=go,
    )
    for out in outputs[:writers]:
        assert out.strip() == f"done {count}"
    for out in outputs[writers:]:
        assert " errors 0" in out.splitlines()[0], out
    with keyspace.open(path, map_size=256 << 10) as ks:  # LMDB takes the recorded size when larger
        for i in range(writers):
            assert len(list(ks.scope("w", i).keys())) == count  # no acknowledged write lost
        grown = ks.store._env.info()["map_size"]  # type: ignore[attr-defined]
        assert grown > 256 << 10
    reads = sum(int(out.split()[1]) for out in outputs[writers:])
    print(
        f"lmdb growth across processes: {writers * count} writes acknowledged, 0 lost; map 256 KiB -> "
        f"{grown >> 10} KiB; {reads} scope reads by 2 readers (reopening every 5th), 0 errors"
    )


@pytest.mark.slow
def test_map_growth_with_threads(tmp_path: Path) -> None:
    """8 threads share one keyspace whose 64 KiB map must grow many times: puts,
    reads, scans and transactions all succeed; growth waits for open transactions."""
    threads, rounds = 8, 60
    errors: list[BaseException] = []
    with keyspace.open(tmp_path / "store", map_size=64 << 10) as ks:
        start = threading.Barrier(threads)

        def work(index: int) -> None:
            try:
                start.wait(timeout=30)
                scope = ks.scope("t", index)
                for n in range(rounds):
                    scope[b"%05d" % n] = b"v" * 2048
                    assert scope[b"%05d" % n] == b"v" * 2048
                    if n % 10 == 9:
                        with ks.transaction() as tx:
                            mine = tx.scope("tx", index)
                            for m in range(5):
                                mine[b"%05d-%d" % (n, m)] = b"t" * 1024
                        assert len(list(scope.keys())) == n + 1
                    if n % 15 == 0:
                        with ks.snapshot() as snap:
                            assert len(list(snap.scope("t", index).keys())) == n + 1
            except BaseException as exc:  # reported below
                errors.append(exc)

        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
        assert not errors, [f"{type(e).__name__}: {e}" for e in errors]
        for index in range(threads):
            assert len(list(ks.scope("t", index).keys())) == rounds
            assert len(list(ks.scope("tx", index).keys())) == rounds // 10 * 5


def test_open_adopts_a_map_another_process_grew(tmp_path: Path) -> None:
    """Opening a database begins an LMDB transaction: when another process grew
    the map after this process mapped the environment (MDB_MAP_RESIZED there),
    the open adopts the new size instead of raising, for the unnamed and a named
    database, and databases() lists the named ones."""
    from keyspace.stores.lmdb import LMDBStore

    path = str(tmp_path / "store")
    named = LMDBStore(path, map_size=256 << 10, max_dbs=4, db="n")  # keeps the environment mapped
    try:
        named.put(b"a", b"1")
        grow = (
            "import lmdb, sys\n"
            "env = lmdb.open(sys.argv[1], map_size=256 << 10, max_dbs=4)\n"
            "env.set_mapsize(16 << 20)\n"
            "with env.begin(write=True) as txn:\n"
            "    for i in range(2000):\n"
            "        txn.put(b'k%d' % i, b'x' * 2000)\n"
        )
        subprocess.run([sys.executable, "-c", grow, path], check=True, timeout=60)
        unnamed = LMDBStore(path, map_size=256 << 10, max_dbs=4)
        try:
            assert unnamed.get(b"k1999") == b"x" * 2000
            assert named.databases() == ["n"]
            assert named.get(b"a") == b"1"
        finally:
            unnamed.close()
    finally:
        named.close()


def _copy_growing(ks: keyspace.Keyspace, how: str) -> list[bytes]:
    """A transaction that reads one scope while its writes to another fill the
    small map, so that LMDB's transaction is replaced under the scan."""
    seen: list[bytes] = []
    with ks.transaction() as tx:
        src, dst = tx.scope("src"), tx.scope("dst")
        if how == "items":
            for k, v in src.items():
                seen.append(k)
                dst[k] = v * 20
        elif how == "keys":
            for k in src:  # the keys-only scan
                seen.append(k)
                dst[k] = b"w" * 2000
        else:
            for k, v in src.items(reverse=True, limit=900):
                seen.append(k)
                dst[k] = v * 20
    return seen


@pytest.mark.parametrize("how", ["items", "keys", "reverse, limited"])
def test_a_scan_reads_on_while_its_transaction_grows_the_map(tmp_path: Path, how: str) -> None:
    """With a small map a transaction logs its writes and replays them on a new
    LMDB transaction when the map is full; a scan of that transaction read a
    cursor of the old one and ended with StoreClosed. It reads on from its last
    key in the new one."""
    ks = keyspace.open(f"lmdb://{tmp_path / 'db'}?map_size=1MiB")
    keys = [b"k%05d" % i for i in range(1000)]
    ks.scope("src").update({k: b"v" * 100 for k in keys})
    seen = _copy_growing(ks, how)
    expected = keys if how != "reverse, limited" else keys[::-1][:900]
    assert seen == expected
    assert sorted(ks.scope("dst").keys()) == sorted(expected)
    assert ks.store._live().info()["map_size"] > 1 << 20  # it grew
    ks.close()


def test_a_joined_scan_reads_on_while_the_joint_transaction_grows_the_map(tmp_path: Path) -> None:
    a = keyspace.open(f"lmdb://{tmp_path / 'db'}?db=a&map_size=1MiB")
    b = keyspace.open(f"lmdb://{tmp_path / 'db'}?db=b")
    keys = [b"k%05d" % i for i in range(1000)]
    b.scope("src").update({k: b"v" * 100 for k in keys})
    seen = []
    with a.transaction() as ta, b.transaction() as tb:
        dst = ta.scope("dst")
        for k, v in tb.scope("src").items():
            seen.append(k)
            dst[k] = v * 20
    assert seen == keys and len(a.scope("dst")) == 1000
    a.close()
    b.close()
