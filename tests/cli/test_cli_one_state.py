"""The commands that read a whole store read one state of it, however long they
run: ``keyspace scan`` (a writer adds and removes keys while the command is
blocked on its output: a reader slower than the scan) prints none of those
changes; ``keyspace migrate`` copies the keys its check saw (a writer between
its check of the source and its copy changes nothing of what it copies);
``keyspace inspect`` counts one state (a writer that moves keys between scopes
while it runs changes none of its counts). On local engines that a second
writer may change meanwhile."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import keyspace

migrate_cmd = importlib.import_module("keyspace.cli.migrate")  # the module, not the command it exports

N = 20_000  # far more than the pipe holds and than the scan reads ahead
WRITER = """
import sys, keyspace
with keyspace.open(sys.argv[1]) as ks:
    scope = ks.scope("a")
    scope[b"new"] = b"n"
    del scope[b"k0000"]
"""


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])  # LevelDB: one process per store
def test_a_scan_blocked_on_its_output_prints_one_state(tmp_path: Path, engine: str) -> None:
    url = f"sqlite:///{tmp_path}/store.sqlite" if engine == "sqlite" else f"{engine}://{tmp_path}/store"
    before = {b"k%05d" % i: b"v" * 40 for i in range(N)}
    with keyspace.open(url) as ks:
        ks.scope("s").update(before)
    proc = subprocess.Popen(
        [sys.executable, "-m", "keyspace.cli", "scan", url, "s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the command runs, then blocks on the full pipe
        assert first.startswith("k00000")
        with keyspace.open(url) as ks:  # meanwhile: keys after the scan's position change
            scope = ks.scope("s")
            scope.update({b"z%03d" % i: b"new" for i in range(10)})
            del scope[b"k%05d" % (N - 1)]
        rest = proc.stdout.read()  # through the same buffer as the first line
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait(timeout=10)
    keys = [line.split("\t", 1)[0] for line in [first, *rest.splitlines()]]
    assert keys == [k.decode() for k in before]  # the store as it was when the scan began


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
def test_migrate_copies_the_state_it_checked(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"sqlite:///{tmp_path}/src.sqlite" if engine == "sqlite" else f"lmdb://{tmp_path}/src"
    dst = f"sqlite:///{tmp_path}/dst.sqlite"
    before = {b"k%04d" % i: b"v" for i in range(500)}
    with keyspace.open(src) as ks:
        ks.scope("a").update(before)
    checked = migrate_cmd.check_no_merge

    def then_write(*args: Any, **kwargs: Any) -> int:
        count = checked(*args, **kwargs)
        # between the check and the copy, another process writes the source
        subprocess.run([sys.executable, "-c", WRITER, src], check=True, timeout=60)
        return count

    monkeypatch.setattr(migrate_cmd, "check_no_merge", then_write)
    migrate_cmd.migrate.main(["--batch", "100", src, dst], standalone_mode=False)
    with keyspace.open(dst) as copy:
        assert dict(copy.scope("a").items()) == before
    with keyspace.open(src) as source:  # the writes themselves went through
        assert source.scope("a").get(b"new") == b"n" and source.scope("a").get(b"k0000") is None


def test_inspect_counts_the_state_it_began_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite reads a store scan a page at a time, each page a statement of its
    own: ``inspect`` reads a snapshot instead, so a writer that moves keys from
    one scope to another while it runs changes none of its counts."""
    inspect_cmd = importlib.import_module("keyspace.cli.inspect_cmd")
    url = f"sqlite:///{tmp_path}/store.sqlite"
    with keyspace.open(url) as ks:
        ks.scope("a").update({b"k%04d" % i: b"v" for i in range(2000)})
        ks.scope("b").update({b"k%04d" % i: b"v" for i in range(2000)})
    ticker = inspect_cmd.Ticker
    wrote: list[bool] = []

    class WritingTicker(ticker):  # type: ignore[misc,valid-type]
        def advance(self, n: int = 1) -> None:
            if not wrote:  # the scan has begun: another process writes
                wrote.append(True)
                subprocess.run([sys.executable, "-c", MOVER, url], check=True, timeout=60)
            super().advance(n)

    monkeypatch.setattr(inspect_cmd, "Ticker", WritingTicker)
    with keyspace.open(url, readonly=True) as ks:
        tree, _ = inspect_cmd.scope_tree(ks)
    assert wrote
    counts = {node.path: node.keys for node, _ in tree.nodes() if node.keys}
    assert counts == {("a",): 2000, ("b",): 2000}
    with keyspace.open(url) as ks:  # the move itself went through
        assert len(ks.scope("a")) == 1000 and len(ks.scope("b")) == 3000


MOVER = """
import sys, keyspace
with keyspace.open(sys.argv[1]) as ks, ks.transaction() as tx:
    a, b = tx.scope("a"), tx.scope("b")
    for i in range(1000):  # keys the scan has read already, to keys it has not
        del a[b"k%04d" % i]
        b[b"m%04d" % i] = b"v"
"""
