"""A keyspace that opens an empty store watches for a record written before its
own (another process may write first); once its own first write has recorded
its scheme, the record is known for good, and the scopes ``ks.scope(...)``
gives from then on read the store itself, with no check per read, whether the
first write was a single put, an ``update`` or a transaction, and whether the
scope was asked for before the write or not."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.stores._watched import WatchedReads

ENGINES = ["lmdb", "sqlite"]


def _url(engine: str, path: Path) -> str:
    return f"lmdb://{path}" if engine == "lmdb" else f"sqlite://{path / 'db.sqlite'}"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("first", ["put", "update", "transaction"])
def test_scopes_asked_for_after_the_first_write_read_the_store_itself(
    tmp_path: Path, engine: str, first: str
) -> None:
    with keyspace.open(_url(engine, tmp_path), scheme="tuple") as ks:
        before = ks.scope("t", "users")
        assert isinstance(before._data, WatchedReads)  # the record is watched for
        if first == "put":
            before["a"] = b"1"
        elif first == "update":
            before.update({"a": b"1"})
        else:
            with ks.transaction() as tx:
                tx.scope("t", "users")["a"] = b"1"
        assert ks.catalog.recorded
        for path in (("t", "users"), ("t", "other")):
            made = ks.scope(*path)
            assert made._data is ks.store, path
        assert ks.scope("t", "users")["a"] == b"1" and before["a"] == b"1"
        assert ks.scope("t", "users").get("missing") is None


def test_a_listener_runs_once_and_at_once_where_the_record_is_known(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path}", scheme="tuple") as ks:
        calls: list[str] = []
        ks.catalog.when_recorded(lambda: calls.append("later"))
        with ks.transaction() as tx:
            tx.scope("a")["k"] = b"v"
        ks.scope("a")["k2"] = b"v"
        assert calls == ["later"]
        ks.catalog.when_recorded(lambda: calls.append("now"))
        assert calls == ["later", "now"]


def test_a_rolled_back_first_write_records_nothing(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path}", scheme="tuple") as ks:
        with pytest.raises(RuntimeError), ks.transaction() as tx:
            tx.scope("a")["k"] = b"v"
            raise RuntimeError("rolled back")
        assert not ks.catalog.recorded
        assert isinstance(ks.scope("a")._data, WatchedReads)
