"""What a trim of the change log reads and writes: commit numbers follow each
other, so the commits it removes (at most ``TRIM_BATCH``, each whole) go in
one range delete after one keys-only read of the oldest key, however many
there are; with ``max_age`` set, one point read more per commit it may trim
by age. A trim used to read a key and make a range delete for each commit it
removed: 11 µs a commit at the log's retention in a transaction of 1,000
puts (LMDB, ``sync=False``), 4 µs in one range delete."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _changes_engines import ENGINES, engine_url

import keyspace
from keyspace import _changes
from keyspace._changes import TRIM_EVERY, ChangeLog

LOG_ENGINES = [e for e in ENGINES if e != "memory-native"]


class _Counting:
    """A view of the engine's transaction that counts the calls a trim makes."""

    def __init__(self, view: Any, calls: dict[str, int]) -> None:
        self._view, self._calls = view, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._view, name)
        if name in ("get", "scan", "read_pages", "delete_range", "put", "delete"):

            def counted(*args: Any, **kwargs: Any) -> Any:
                self._calls[name] = self._calls.get(name, 0) + 1
                return attr(*args, **kwargs)

            return counted
        return attr


def _trims(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """Each trim's calls, counted (one dict a trim)."""
    trims: list[dict[str, int]] = []
    trim = ChangeLog._trim

    def counted(self: ChangeLog, view: Any, latest: Any, *args: Any) -> None:
        calls: dict[str, int] = {}
        trims.append(calls)
        shared = _Counting(view, calls)
        trim(self, shared, shared if latest is view else _Counting(latest, calls), *args)

    monkeypatch.setattr(ChangeLog, "_trim", counted)
    return trims


def _commits(ks: keyspace.Keyspace, n: int) -> Iterator[None]:
    for i in range(n):
        with ks.transaction() as tx:
            scope = tx.scope("t")
            for k in range(5):
                scope[b"k%d" % k] = b"%d" % i
        yield None


@pytest.mark.parametrize("engine", LOG_ENGINES)
def test_a_trim_removes_its_commits_in_one_range_delete(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setattr(_changes, "PART_ENTRIES", 2)  # three parts a commit
    trims = _trims(monkeypatch)
    with keyspace.open(engine_url(engine, str(tmp_path)), changes={"retention": 3}) as ks:
        log = ks.store.hook("changes")  # type: ignore[attr-defined]
        assert isinstance(log, ChangeLog)
        for _ in _commits(ks, 3 * TRIM_EVERY):
            pass
        assert len(trims) == 3
        for calls in trims:
            reads = sum(calls.get(name, 0) for name in ("get", "scan", "read_pages"))
            # the feeds' cursors, the trimmed mark and the oldest key; one range delete of
            # the commits and the new trimmed mark
            assert (reads, calls.get("delete_range"), calls.get("put")) == (3, 1, 1), calls
        last, trimmed = log.last(), log.trimmed()
        assert last == 3 * TRIM_EVERY and trimmed == last - 3
        upto, entries = log.read_since(trimmed)  # the commits kept read whole, nothing before
        assert upto == last and [seq for seq, _, _ in entries] == [
            s for s in range(trimmed + 1, last + 1) for _ in range(5)
        ]
        held = {
            key[len(log.log_start) : len(log.log_start) + 8]
            for key, _ in ks.store.inner.scan(log.log_start, log.log_stop)
        }
        assert len(held) == 3
