"""A writer killed (SIGKILL) while its LMDB map keeps growing leaves whole
transactions only.

The writer of test_crash_atomicity (``_crash_writer.py``: multi-scope
transactions with a checksum, deleting older ones) runs here on a store whose
map starts at 64 KiB, so that the map doubles again and again while it writes
and a kill can land during a growth or in a transaction replayed after one.
After each kill the store reopens (adopting the grown map) with every
transaction whole or absent and every acknowledged one kept.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from test_crash_atomicity import kill_runs


def test_sigkill_while_the_lmdb_map_grows(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}?map_size=64KiB"
    total_acked, _runs = kill_runs(url, random.Random("growth-kill"), kills=8)
    assert total_acked > 0
    assert (tmp_path / "data.mdb").stat().st_size > 64 << 10  # the map grew
