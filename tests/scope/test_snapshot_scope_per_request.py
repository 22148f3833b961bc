"""A scope asked of a snapshot per request (``snap.scope(t, "users").get(k)``, a
store another program wrote): every scope read in the block sees the store as it
was when the block was entered, whatever is written meanwhile and whichever path
is asked first, and the handle used before the block says so for the view and
catalog it has not got yet. The handle's attribute reads are the plain ones (no
``__getattr__`` hook on the class, which slows every read of the per-request
path)."""

from __future__ import annotations

from pathlib import Path

import lmdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import NotEntered, StoreClosed
from keyspace.keyspace import Snapshot
from keyspace.schemes import TupleScheme

_TENANTS = [f"t{i}" for i in range(4)]
_KEYS = [b"a", b"b\x00", b"c"]


def _written_by_others(path: Path) -> str:
    """An LMDB store of the tuple layout written by py-lmdb alone (no record)."""
    scheme = TupleScheme()
    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for t in _TENANTS:
            for k in _KEYS:
                txn.put(scheme.encode((t, "users"), k), b"old " + t.encode() + k)
    env.close()
    return f"lmdb://{path}"


def test_an_entered_snapshot_reads_its_attributes_without_a_hook(tmp_path: Path) -> None:
    assert "__getattr__" not in {name for cls in Snapshot.__mro__ for name in vars(cls)}
    with keyspace.open(tmp_path / "s") as ks, ks.snapshot() as snap:
        assert snap.keyspace is ks and snap.scope("a") is snap.scope("a")


def test_the_handle_before_the_block_names_what_it_lacks(tmp_path: Path) -> None:
    with keyspace.open(tmp_path / "s") as ks:
        block = ks.snapshot()
        for name in ("view", "catalog"):
            with pytest.raises(NotEntered, match=repr(name)):
                getattr(block, name)
        with pytest.raises(NotEntered, match="'view'"):
            block.scope("a")
        assert not hasattr(block, "no_such_attribute")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    asks=st.lists(st.tuples(st.sampled_from(_TENANTS), st.sampled_from(_KEYS)), min_size=1, max_size=30),
    writes=st.lists(st.tuples(st.sampled_from(_TENANTS), st.sampled_from(_KEYS)), max_size=10),
)
def test_per_request_scopes_of_a_snapshot_read_its_state(
    tmp_path_factory: pytest.TempPathFactory, asks: list[tuple[str, bytes]], writes: list[tuple[str, bytes]]
) -> None:
    url = _written_by_others(tmp_path_factory.mktemp("foreign") / "db")
    with keyspace.open(url, scheme="tuple") as ks:
        with ks.snapshot() as snap:
            for i, (t, k) in enumerate(asks):
                if i < len(writes):  # written after the block began, read around
                    wt, wk = writes[i]
                    ks.scope(wt, "users")[wk] = b"new"
                    ks.scope(wt, "users", "child")[wk] = b"new"
                assert snap.scope(t, "users").get(k) == b"old " + t.encode() + k
                assert snap.scope(t, "users", "child").get(k) is None
        for wt, wk in writes[: len(asks)]:  # the writes made in the block are there after it
            assert ks.scope(wt, "users").get(wk) == b"new"


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "memory"])
def test_scopes_of_snapshots_in_turn_each_read_their_own(tmp_path: Path, engine: str) -> None:
    """A snapshot's scope of a path that an earlier snapshot asked for too (its
    binding copied from that one's, the view replaced) reads its own snapshot:
    point reads, scans and counts, while the earlier one, still open, reads its
    own; each ends with its block; what is kept to copy holds no view."""
    url = "memory://" if engine == "memory" else f"{engine}://{tmp_path}/db"
    path = ("t0", "users")
    with keyspace.open(url, scheme="tuple") as ks:
        ks.scope(*path)[b"k"] = b"0"
        for round_ in range(3):
            with ks.snapshot() as first:
                one = first.scope(*path)
                assert one.get(b"k") == str(round_).encode()
                ks.scope(*path)[b"k"] = str(round_ + 1).encode()
                with ks.snapshot() as second:
                    two = second.scope(*path)
                    assert two is not one and two is second.scope(*path)
                    assert two.get(b"k") == two[b"k"] == str(round_ + 1).encode()
                    assert list(two.items()) == [(b"k", str(round_ + 1).encode())] and len(two) == 1
                    assert one.get(b"k") == str(round_).encode() and list(one.values()) == [one[b"k"]]
                with pytest.raises(StoreClosed):
                    two.get(b"k")
                assert one.get(b"k") == str(round_).encode()
            with pytest.raises(StoreClosed):
                one.get(b"k")
        kept = ks._rebinds[path]
        assert kept[2]._view is None and kept[2]._data is None and kept[2]._get is None
