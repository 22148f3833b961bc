"""docs/command-line.md: "every component `inspect` prints names that
component again". Into a pipe (the way scripts read it) a long scope name is
printed whole on its row, never folded over several lines."""

from __future__ import annotations

from pathlib import Path

from _cli import run

import keyspace


def test_inspect_prints_long_names_whole_into_a_pipe(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    long_name = "tenant-" + "0123456789" * 12  # 127 characters: wider than 80 columns
    with keyspace.open(url) as ks:
        ks.scope(long_name, "users")[b"alice"] = b"1"
        ks.scope("short")[b"k"] = b"2"
    lines = run("inspect", url).stdout.splitlines()
    rows = [line.split() for line in lines]
    assert ["└─", long_name, "0", "0", "B", "1"] in [r[:6] for r in rows]  # whole, with its counts
    assert ["└─", "users", "1"] in [r[:3] for r in rows]
    assert not [line for line in lines if long_name[:20] not in line and long_name[-20:] in line]
    # the printed name is a PATH component again
    assert run("scan", url, long_name, "users").stdout == "alice\t1\n"
