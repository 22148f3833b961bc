"""A RocksDB scan keeps the read options its iterator points into: rocksdict's
iterator reads its upper bound from them, and once they were freed (their
memory used again by later reads) a scan read past its ``stop`` or ended
before it. Found by the expiring-keys state machine on RocksDB: this is its
shortest failing run, as steps; every bounded read must end exactly at its
stop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import keyspace
from keyspace import _expiry

pytest.importorskip("rocksdict")


@pytest.fixture
def clock() -> Iterator[list[float]]:
    now = [1000.0]
    saved = _expiry.clock
    _expiry.clock = lambda: now[0]
    yield now
    _expiry.clock = saved


def test_bounded_scans_end_at_their_stop_among_the_reads_of_expiring_keys(
    tmp_path: Path, clock: list[float]
) -> None:
    ks = keyspace.open(f"rocksdb:///{tmp_path}/db", ttl=True, accounting=True, changes=True)
    try:
        scope = ks.scope("t", "x")
        clock[0] += 0.5
        scope.put(b"b", b"v2", ttl=1.0)
        scope.put(b"b", b"v3", ttl=0.25)
        scope.put(b"b", b"v4")
        scope.put(b"c\x00", b"v5")
        scope.discard(b"")
        clock[0] += 1.5
        scope.put(b"ab", b"v9")
        for _ in range(20):
            assert list(scope.items(start=b"a", stop=b"c")) == [(b"ab", b"v9"), (b"b", b"v4")]
            assert list(scope.items(start=b"a", stop=b"c", reverse=True)) == [(b"b", b"v4"), (b"ab", b"v9")]
            assert list(scope.keys(start=b"b", stop=b"d")) == [b"b", b"c\x00"]
    finally:
        ks.close()
