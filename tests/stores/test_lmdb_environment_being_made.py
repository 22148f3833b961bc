"""A new LMDB environment whose first pages another process is still writing is
not taken for a truncated store: ``data.mdb`` holding a new environment's header
(no transaction committed) but shorter than that header says is read again for
up to a second before it is refused; a store with committed transactions that
is short is refused at once, and a new one that stays short after the wait is
refused as truncated (two processes making one store at once met the first
case once in 50 rounds of ``tests/stores/test_first_open_race.py``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import lmdb
import pytest

from keyspace.errors import StoreError
from keyspace.stores.lmdb import _files


def _new_environment(path: Path) -> bytes:
    """The bytes of a new environment's ``data.mdb`` (its two meta pages), as LMDB writes them."""
    env = lmdb.open(str(path), map_size=1 << 20)
    env.close()
    data = (path / "data.mdb").read_bytes()
    assert len(data) >= 8192
    return data


def test_a_new_environment_being_written_is_waited_for(tmp_path: Path) -> None:
    whole = _new_environment(tmp_path / "model")
    made = tmp_path / "made"
    made.mkdir()
    (made / "data.mdb").write_bytes(whole[:4096])  # the first page written, the second not yet

    def finish() -> None:
        time.sleep(0.1)
        with open(made / "data.mdb", "ab") as file:
            file.write(whole[4096:])

    writer = threading.Thread(target=finish)
    writer.start()
    started = time.monotonic()
    try:
        _files.check_environment(str(made), f"lmdb://{made}", readonly=False)
    finally:
        writer.join()
    assert time.monotonic() - started < 1.0


def test_a_new_environment_that_stays_short_is_truncated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_files, "_BEING_MADE_WAIT", 0.001)
    whole = _new_environment(tmp_path / "model")
    short = tmp_path / "short"
    short.mkdir()
    (short / "data.mdb").write_bytes(whole[:4096])
    with pytest.raises(StoreError, match="truncated or corrupt"):
        _files.check_environment(str(short), f"lmdb://{short}", readonly=False)


def test_a_short_store_with_commits_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s"
    env = lmdb.open(str(path), map_size=8 << 20)
    with env.begin(write=True) as txn:
        for i in range(3000):
            txn.put(b"k%05d" % i, b"v" * 100)
    env.close()
    data = path / "data.mdb"
    data.write_bytes(data.read_bytes()[:8192])
    started = time.monotonic()
    with pytest.raises(StoreError, match="truncated or corrupt"):
        _files.check_environment(str(path), f"lmdb://{path}", readonly=False)
    assert time.monotonic() - started < 0.5  # no wait: a committed store does not grow into its header
