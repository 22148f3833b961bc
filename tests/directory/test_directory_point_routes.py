"""The point operations of a directory handle on the committed store: on LMDB a
put is one write transaction that reads the node and puts the key (``put_if``),
a get one read transaction that reads the node (once per state) and the key,
each in as many Python calls as a tuple scope's, the node still checked in that
write or read; and a directory's writes outside a transaction reach the
keyspace's write hooks as every other write does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _frames import python_calls

import keyspace
from keyspace._write_hooks import Change, WriteHook, register_feature
from keyspace.errors import StaleDirectory
from keyspace.schemes import Scheme
from keyspace.stores import LMDBStore
from keyspace.stores._base import ReadView, Store, WriteView
from keyspace.stores._checked import CheckFailed


def test_put_if_puts_only_where_the_check_holds(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "db", sync=False) as store:
        store.put(b"check", b"yes")
        store.put_if(b"check", b"yes", b"a", b"1")
        with pytest.raises(CheckFailed):
            store.put_if(b"check", b"no", b"b", b"2")
        with pytest.raises(CheckFailed):
            store.put_if(b"missing", b"", b"c", b"3")
        assert dict(store.scan(b"", None)) == {b"a": b"1", b"check": b"yes"}


@pytest.mark.parametrize("key", [b"k\x00ey", "text"])
def test_a_committed_directorys_put_and_get_cost_a_tuple_scopes_pythonpython_calls(
    tmp_path: Path, key: Any
) -> None:
    with keyspace.open(f"lmdb://{tmp_path / 'db'}", sync=False) as ks:
        d, s = ks.directory("t", "u"), ks.scope("t", "u")
        for h in (d, s):  # the first writes and reads behind them
            h[b"first"] = b"v"
            h[key] = b"v"
            h[key]

        def put_dir() -> None:
            d[key] = b"w"

        def put_scope() -> None:
            s[key] = b"w"

        def get_dir() -> None:
            d[key]

        def get_scope() -> None:
            s[key]

        # the route of a bytes key adds the Python __setitem__, a str key _set too
        puts = python_calls(put_dir)
        assert "put_if" in puts and len(puts) <= len(python_calls(put_scope)) + 2, puts
        get_dir()  # the node read once in this state of the store
        gets = python_calls(get_dir)
        assert len(gets) <= len(python_calls(get_scope)), gets
        assert d[key] == s[key] == b"w"


def test_a_bound_directory_handle_checks_its_node_in_each_put_and_get(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url, sync=False) as ks, keyspace.open(url, sync=False) as other:
        d = ks.directory("t")
        for i in range(20):  # past the first write: the bound routes
            d[b"%d" % i] = b"v"
            d[f"s{i}"] = b"v"
            assert d[b"%d" % i] == b"v"
        prefix = d.prefix
        other.directories.remove(("t",))
        for write in (lambda: d.__setitem__(b"late", b"v"), lambda: d.__setitem__("late", b"v")):
            with pytest.raises(StaleDirectory, match="was removed"):
                write()
        for read in (lambda: d[b"1"], lambda: d.get(b"1"), lambda: d["s1"]):
            with pytest.raises(StaleDirectory, match="was removed"):
                read()
        assert list(ks.store.scan(prefix, prefix + b"\xff")) == []


class _Seen(WriteHook):
    """Keeps every change it is shown (a test's record of what the hooks saw)."""

    name = "directory_changes_seen"
    old_values = "none"
    expand_ranges = False
    seen: ClassVar[list[bytes]] = []

    def __init__(self, store: Store, scheme: Scheme, params: dict[str, Any]) -> None:
        pass

    def params(self) -> dict[str, Any]:
        return {}

    def commit(
        self,
        view: WriteView,
        changes: Sequence[Change],
        ranges: Sequence[tuple[bytes, bytes | None]],
        latest: ReadView,
    ) -> None:
        _Seen.seen.extend(change.key for change in changes)


register_feature(_Seen.name, _Seen)


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_directory_writes_outside_a_transaction_reach_the_write_hooks(engine: str, tmp_path: Path) -> None:
    url = "memory:" if engine == "memory" else f"{engine}:///{tmp_path / 'db'}"
    with keyspace.open(url, **{_Seen.name: True}) as ks:
        d = ks.directory("t")
        _Seen.seen.clear()
        d[b"a"] = b"1"
        d[b"b"] = b"2"
        d["c"] = b"3"
        d.update({b"d": b"4"})
        del d[b"a"]
        stored = [d.prefix + suffix for suffix in (b"\x01a\x00", b"\x01b\x00", b"\x02c\x00", b"\x01d\x00")]
        assert _Seen.seen == [*stored, stored[0]]
