"""Two processes opening one new store at the same moment, 50 rounds per
embedded engine that serves several processes (LMDB, SQLite; memory, LevelDB
and RocksDB serve one; etcd's first writes race in test_scheme_race.py, its
rounds being too slow for 50 here): with one scheme both succeed; with two, one
succeeds and the other gets :class:`SchemeMismatch`. Never another error (SQLite
answered the switch to WAL mode of a second process with ``SQLITE_BUSY`` at
once, which was reported as a busy timeout spent; test_sqlite_busy_waits.py
holds that lock on purpose).

Each engine gets two worker processes (``_first_open_worker.py``), started once;
for each round both are given a fresh URL, report ready, and are released by one
``go`` written to both pipes back to back. Afterwards the store holds the
winning scheme's record and the keys written with it, nothing else.
"""

from __future__ import annotations

import selectors
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import keyspace

ROUNDS = 50
REPLY_S = 60.0
"""The longest wait for one worker's line."""
WORKER = Path(__file__).resolve().parent.parent / "_first_open_worker.py"
SCHEMES = [("tuple", "tuple"), ("tuple", "asciihex"), ("scopehash", "scopehash"), ("asciihex", "tuple")]
"""Each round's two schemes, in turn: the same, then two different ones."""


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def reply(self) -> str:
        """The worker's next line; fails the test after :data:`REPLY_S` seconds or
        when the worker has exited."""
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(REPLY_S):
                pytest.fail(f"a worker gave no answer in {REPLY_S} s")
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"a worker exited (code {self.proc.wait(10)})")
        return line.strip()

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def _race(make_url: Callable[[int], str]) -> None:
    workers = [_Worker(), _Worker()]
    failures: list[str] = []
    try:
        for i in range(ROUNDS):
            url = make_url(i)
            schemes = SCHEMES[i % len(SCHEMES)]
            for n, (w, scheme) in enumerate(zip(workers, schemes, strict=True)):
                w.send(f"{url} {scheme} w{n}")
            assert [w.reply() for w in workers] == ["ready", "ready"]
            for w in workers:
                w.send("go")
            outcomes = [w.reply() for w in workers]
            failures.extend(_check_round(i, url, schemes, outcomes))
    finally:
        for w in workers:
            w.stop()
    assert not failures, f"{len(failures)} of {ROUNDS} rounds went wrong:\n" + "\n".join(failures[:5])


def _check_round(i: int, url: str, schemes: tuple[str, str], outcomes: list[str]) -> list[str]:
    """What went wrong in round ``i`` (nothing: an empty list), its store checked."""
    same = schemes[0] == schemes[1]
    expected = ["ok", "ok"] if same else ["mismatch", "ok"]
    if sorted(outcomes) != expected:
        return [f"round {i} {schemes}: {outcomes}"]
    winners = [n for n, o in enumerate(outcomes) if o == "ok"]
    scheme = schemes[winners[0]]
    ks = keyspace.open(url, create=False)  # the scheme it records
    try:
        items = dict(ks.scope("race").items())
        wrong = ks.scheme.name != scheme or items != {f"w{n}".encode(): scheme.encode() for n in winners}
        found = (ks.scheme.name, items)
    finally:
        ks.close()
    return [f"round {i} {schemes} {outcomes}: the store holds {found}"] if wrong else []


def test_lmdb_first_open_race(tmp_path: Path) -> None:
    _race(lambda i: f"lmdb://{tmp_path / f'l{i}'}")


def test_sqlite_first_open_race(tmp_path: Path) -> None:
    _race(lambda i: f"sqlite://{tmp_path / f's{i}.sqlite'}")
