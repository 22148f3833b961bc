"""close() of an LMDB store and the transactions running on it: one another
thread holds commits as usual, the close waiting for its block to end; one of
the closing thread's own commits nothing, also when another store of the path
keeps the environment open."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreClosed


@pytest.mark.timeout(30)
@pytest.mark.parametrize("write_after", [False, True])
def test_close_from_another_thread_waits_for_the_transaction(tmp_path: Path, write_after: bool) -> None:
    """The close released the environment under the running transaction, whose
    commit then raised StoreClosed: nothing of a block that ended normally was
    written."""
    path = tmp_path / "db"
    ks = keyspace.open(path)
    ks.scope("a")[b"seed"] = b"0"
    inside, outcome = threading.Event(), []

    def worker() -> None:
        try:
            with ks.transaction() as tx:
                tx.scope("a")[b"k1"] = b"v1"
                inside.set()
                time.sleep(0.3)
                if write_after:
                    tx.scope("a")[b"k2"] = b"v2"
            outcome.append("committed")
        except Exception as exc:
            outcome.append(repr(exc))

    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(10)
    ks.close()
    assert outcome == ["committed"]  # the close returned after the block's commit
    thread.join(10)
    expected = {b"seed": b"0", b"k1": b"v1", **({b"k2": b"v2"} if write_after else {})}
    with keyspace.open(path) as again:
        assert dict(again.scope("a").items()) == expected


def test_a_transaction_closed_in_its_own_thread_commits_nothing_beside_another_store(tmp_path: Path) -> None:
    """With another store of the path open (sharing the environment), a close
    inside this thread's transaction left the transaction running: its block
    ended without error and committed the writes made after the close."""
    path = tmp_path / "db"
    with keyspace.open(path) as other:
        ks = keyspace.open(path)
        ks.scope("a")[b"x"] = b"before"
        with pytest.raises(StoreClosed, match="closed inside this transaction"), ks.transaction() as tx:
            tx.scope("a")[b"x"] = b"in the transaction"
            ks.close()
            tx.scope("a")[b"z"] = b"after the close"
        assert dict(other.scope("a").items()) == {b"x": b"before"}
