"""Asking LMDB whether a key of the unnamed database is a database's record,
inside a write transaction, while another thread of the process opens a new
named database (and so waits for that writer): neither waits for the other."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_SCENARIO = textwrap.dedent(
    """
    import sys, threading, time
    from keyspace.stores import LMDBStore
    from keyspace.stores.lmdb._records import RECORD_SIZE

    path = sys.argv[1]
    main = LMDBStore(path, max_dbs=4)
    main.put(b"candidate", b"x" * RECORD_SIZE)  # no NUL, a record's size: LMDB is asked
    opened = []

    def opener():
        store = LMDBStore(path, db="fresh")  # waits for the write transaction below
        opened.append(store.db_name)
        store.close()

    with main.transaction() as tx:
        thread = threading.Thread(target=opener, daemon=True)
        thread.start()
        time.sleep(0.3)  # the opener now waits for this writer
        assert tx.get(b"candidate") == b"x" * RECORD_SIZE
        tx.put(b"more", b"1")
    thread.join(10)
    assert opened == ["fresh"], opened
    assert main.get(b"fresh") is None and main.databases() == ["fresh"]
    print("ok")
    """
)


def test_a_question_in_a_write_transaction_does_not_wait_for_an_opening_thread(tmp_path: Path) -> None:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _SCENARIO, str(tmp_path)], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("the write transaction and the opening thread waited for each other") from None
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
