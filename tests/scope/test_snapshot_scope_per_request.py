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
from keyspace.errors import NotEntered
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
