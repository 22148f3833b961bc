"""``ks.snapshot()`` is a plain context manager over the store's snapshot: the
block gives the handle, ends the store's read transaction however it ends, lets
an error of the block through unchanged, and on LMDB counts itself so that a
growing map waits for it (and is woken when it ends, not at the end of the
growth's time limit)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed


def _open_views(ks: Any) -> int:
    return len(ks.store._shared.views)


def test_the_block_gives_the_handle_and_ends_the_read_transaction(tmp_path: Path) -> None:
    with keyspace.open(tmp_path / "s") as ks:
        ks.scope("a")[b"k"] = b"1"
        block = ks.snapshot()
        assert isinstance(block, keyspace.keyspace.Snapshot)
        with block as snap:
            assert _open_views(ks) == 1
            scope = snap.scope("a")
            ks.scope("a")[b"k"] = b"2"
            assert scope[b"k"] == b"1"  # the store as it was when the block was entered
        assert _open_views(ks) == 0
        with pytest.raises(StoreClosed):
            scope.get(b"k")


def test_an_error_of_the_block_goes_through_and_the_snapshot_ends(tmp_path: Path) -> None:
    with keyspace.open(tmp_path / "s") as ks:
        with pytest.raises(ZeroDivisionError), ks.snapshot() as snap:
            snap.scope("a").get(b"k")
            _ = 1 / 0
        assert _open_views(ks) == 0
        with ks.snapshot() as snap:  # the store goes on
            assert snap.scope("a").get(b"k") is None


def test_a_snapshot_that_cannot_begin_counts_nothing(tmp_path: Path, monkeypatch: Any) -> None:
    with keyspace.open(tmp_path / "s") as ks:
        catalog = ks.catalog

        def broken() -> Any:
            raise RuntimeError("no state")

        monkeypatch.setattr(catalog, "reading", broken)
        with pytest.raises(RuntimeError, match="no state"), ks.snapshot():
            pass
        assert _open_views(ks) == 0


def test_growth_waits_for_another_threads_snapshot_and_is_woken_when_it_ends(tmp_path: Path) -> None:
    with keyspace.open(tmp_path / "s", map_size=64 << 10) as ks:
        scope = ks.scope("a")
        scope[b"k"] = b"1"
        entered, errors, seen = threading.Event(), [], []

        def reader() -> None:
            try:
                with ks.snapshot() as snap:
                    entered.set()
                    time.sleep(0.5)
                    seen.append(snap.scope("a")[b"k"])  # not ended by the growth
            except BaseException as exc:  # reported below
                errors.append(exc)

        thread = threading.Thread(target=reader)
        thread.start()
        assert entered.wait(timeout=10)
        before = ks.store._env.info()["map_size"]  # type: ignore[attr-defined]
        started = time.monotonic()
        for i in range(64):  # 256 KiB: the map grows at least once
            scope[b"%03d" % i] = b"x" * 4096
        took = time.monotonic() - started
        thread.join(timeout=30)
        assert not errors, errors
        assert seen == [b"1"]
        assert ks.store._env.info()["map_size"] > before  # type: ignore[attr-defined]
        assert took < 5, f"the growth waited {took:.1f} s: not woken when the snapshot ended"
        assert _open_views(ks) == 0


def test_an_exit_without_a_snapshot_begun_does_nothing(tmp_path: Path) -> None:
    """As the generator-based block did: exiting a block whose entry failed (here
    LMDB's reader table is full) or that ended already changes nothing."""
    with keyspace.open(f"lmdb://{tmp_path / 'r'}?max_readers=1") as ks:
        first, second = ks.snapshot(), ks.snapshot()
        first.__enter__()
        with pytest.raises(keyspace.errors.StoreError, match="max_readers"):
            second.__enter__()
        assert second.__exit__(None, None, None) is None
        assert _open_views(ks) == 1
        first.__exit__(None, None, None)
        first.__exit__(None, None, None)  # ended already
        assert _open_views(ks) == 0
        never = ks.snapshot()
        assert never.__exit__(None, None, None) is None


@pytest.mark.parametrize(
    ("scheme", "shared"),
    [
        ("tuple", True),
        ("asciihex", True),
        ("sublevel", True),
        ("scopehash", False),
        ("length-prefixed", False),
    ],
)
def test_a_snapshot_reads_with_the_keyspace_catalog_only_where_reads_learn_nothing(
    tmp_path: Path, scheme: str, shared: bool
) -> None:
    """Reads of a keyspace whose scheme has no names and no leaf/branch layout,
    its record known, check and learn nothing, so a snapshot reads with the
    keyspace's catalog itself; elsewhere (ScopeHash names, LengthPrefixed
    layout, an unrecorded keyspace) with a child, whose facts stay its own."""
    with keyspace.open(tmp_path / "s", scheme=scheme) as ks:
        with ks.snapshot() as snap:
            assert snap.catalog is not ks.catalog  # nothing recorded yet: records are watched
        ks.scope("a")[b"k"] = b"1"
        with ks.snapshot() as snap:
            assert (snap.catalog is ks.catalog) is shared
            assert snap.scope("a")[b"k"] == b"1"
        learnt = (dict(ks.catalog.registered), dict(ks.catalog.layout))
        other = keyspace.open(tmp_path / "s", scheme=scheme)  # knows nothing of names or layout yet
        with other.snapshot() as snap:
            assert snap.scope("a")[b"k"] == b"1"
            assert (snap.catalog is other.catalog) is shared
        # the snapshot's facts stayed its own
        assert not other.catalog.registered and not other.catalog.layout
        other.close()
        assert (dict(ks.catalog.registered), dict(ks.catalog.layout)) == learnt
