"""LevelDB on a disk that fills: every batch lands whole or not at all.

On a small tmpfs (the fixture of ``test_disk_full``: root only, skipped elsewhere)
nearly filled by a ballast file, a LevelDB keyspace writes 20-key ``update``
batches and two-scope transactions until the disk refuses one. The refusal is a
:class:`StoreError` that says the disk is full; reads still answer; once the
ballast is gone, the reopened store holds every batch that returned, whole, and
no key of the refused one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_disk_full import _fill, disk  # noqa: F401 - the tmpfs fixture

import keyspace
from keyspace.errors import StoreError
from keyspace.schemes import Sublevel, TupleScheme


@pytest.mark.parametrize("scheme", [TupleScheme(), Sublevel()], ids=["tuple", "sublevel"])
@pytest.mark.parametrize("route", ["update", "transaction"])
def test_leveldb_batches_on_a_full_disk_are_whole(disk: Path, scheme: object, route: str) -> None:  # noqa: F811
    url = f"leveldb://{disk / 'db'}"
    ks = keyspace.open(url, scheme=scheme)  # type: ignore[arg-type]
    ks.scope("a").update({b"k%03d" % i: b"v" for i in range(100)})
    ballast = _fill(disk, leave=1_500_000)
    done = 0
    with pytest.raises(StoreError, match="full"):
        for i in range(10_000):  # bounded: the disk holds far less
            batch = {b"b%05d-%02d" % (i, j): os.urandom(1000) for j in range(20)}
            if route == "update":
                ks.scope("a").update(batch)
            else:
                with ks.transaction() as tx:
                    tx.scope("a").update(batch)
                    tx.scope("log")[b"%05d" % i] = b"batch"
            done += 1
    assert done > 0  # batches landed before the disk filled
    assert ks.scope("a").get(b"k001") == b"v" and len(ks.scope("a")) == 100 + 20 * done
    ks.close()
    os.remove(ballast)
    with keyspace.open(url, scheme=scheme) as again:  # type: ignore[arg-type]
        scope = again.scope("a")
        groups: dict[bytes, int] = {}
        for key in scope.keys(start=b"b", stop=b"c"):
            groups[key[:6]] = groups.get(key[:6], 0) + 1
        assert sorted(groups) == [b"b%05d" % i for i in range(done)]
        assert set(groups.values()) <= {20}
        assert len(scope) == 100 + 20 * done
        if route == "transaction":
            assert list(again.scope("log").keys()) == [b"%05d" % i for i in range(done)]
