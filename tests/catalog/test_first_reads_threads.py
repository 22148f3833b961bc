"""A read of a scope not settled yet, while another thread makes a first write
there, through the same keyspace or another keyspace object over the store.

Outside a transaction, the check before a read of a ScopeHash name asks the
committed store twice: the name's registry entry, then (none found) whether keys
lie under its hash. Another thread's first write of the name commits its entry
and its keys together between the two reads; the reader then found keys and no
entry, and raised :class:`HashCollision` saying the registry was changed outside
keyspace, on a store where nothing is wrong. LengthPrefixed reads did the same
with the layout records (below). The reader must answer as of one moment: the
value (or nothing), never an error.

Each test runs the reader in one thread and the first write in another; a
wrapper around the store's read widens the window by holding the reader right
after its first read until the writer's first write has committed (waits
bounded).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.catalog import LAYOUT_START
from keyspace.catalog.leaves import _layout_key

URLS = {"memory": "memory:", "lmdb": "lmdb://{}/db", "sqlite": "sqlite://{}/db.sqlite"}
WAIT = 10.0


def _open(engine: str, tmp_path: Path, scheme: str) -> keyspace.Keyspace:
    """A keyspace of ``scheme`` on a store holding one key of another scope (so
    the scheme is recorded and the scope read below is new)."""
    ks = keyspace.open(URLS[engine].format(tmp_path), scheme=scheme)
    ks.scope("seed")[b"k"] = b"v"
    return ks


def _second(ks: keyspace.Keyspace, engine: str, tmp_path: Path, share: bool) -> keyspace.Keyspace | None:
    """The writer's keyspace: ``None`` (``ks`` itself) when ``share``, else another
    keyspace object over the same store (as another process would write)."""
    if share:
        return None
    if engine == "memory":
        return keyspace.attach(ks.store, scheme=ks.scheme, close_store=False)
    return keyspace.open(URLS[engine].format(tmp_path), scheme=ks.scheme)


def _read_while_written(
    ks: keyspace.Keyspace,
    path: tuple[Any, ...],
    hold: Callable[[Any, Any], bool],
    method: str,
    other: keyspace.Keyspace | None = None,
) -> tuple[object, list[BaseException]]:
    """:func:`_read_while_written_at` of one path, read and written."""
    return _read_while_written_at(ks, path, path, hold, method, other)


def _read_while_written_at(
    ks: keyspace.Keyspace,
    path: tuple[Any, ...],
    written: tuple[Any, ...],
    hold: Callable[[Any, Any], bool],
    method: str,
    other: keyspace.Keyspace | None = None,
) -> tuple[object, list[BaseException]]:
    """Read ``path``'s key ``k`` in this thread while another thread writes key
    ``k`` of ``written`` through ``other`` (default: ``ks`` itself): the store's
    ``method`` (``get`` or ``scan``) is wrapped so that the first call for which
    ``hold(args, answer)`` is true waits until the writer's first write has
    committed. Returns what the read gave and what the
    writer raised."""
    store = ks.store
    real = getattr(store, method)
    go, done = threading.Event(), threading.Event()
    raised: list[BaseException] = []
    reader = threading.get_ident()

    def writer() -> None:
        try:
            assert go.wait(WAIT), "the reader never reached its first read"
            (ks if other is None else other).scope(*written)[b"k"] = b"written"
        except BaseException as exc:  # reported to the test
            raised.append(exc)
        finally:
            done.set()

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        answer = real(*args, **kwargs)
        if method == "scan":
            answer = list(answer)
        if threading.get_ident() == reader and not go.is_set() and hold(args, answer):
            go.set()
            assert done.wait(WAIT), "the writer's first write never ended"
        return iter(answer) if method == "scan" else answer

    thread = threading.Thread(target=writer)
    thread.start()
    setattr(store, method, wrapped)
    try:
        got = ks.scope(*path).get(b"k")
    finally:
        setattr(store, method, real)
        go.set()
        thread.join(WAIT)
    assert not thread.is_alive()
    assert done.is_set()
    return got, raised


@pytest.mark.parametrize("share", [True, False], ids=["one-keyspace", "two-keyspaces"])
@pytest.mark.parametrize("engine", list(URLS))
def test_a_scopehash_read_racing_the_names_first_write_sees_one_moment(
    engine: str, share: bool, tmp_path: Path
) -> None:
    ks = _open(engine, tmp_path, "scopehash")
    other = _second(ks, engine, tmp_path, share)
    entry = ks.scheme.prefix(("x",))  # the name's registry entry
    try:
        got, raised = _read_while_written(
            ks, ("x",), lambda args, answer: args[0] == entry and answer is None, "get", other
        )
        assert raised == []
        assert got in (None, b"written")
        assert ks.scope("x").get(b"k") == b"written"
        assert sorted(ks.scope().scopes()) == ["seed", "x"]
    finally:
        if other is not None:
            other.close()
        ks.close()


# LengthPrefixed: the check before a read asks the recorded layout (the path's
# ancestors, the records at and below it), then whether the store holds keys no
# record accounts for. A first write committing between those reads (its layout
# record with its keys) made the reader refuse the scope with LayoutError, saying
# the layout records were changed outside keyspace, or that which scopes hold
# keys is not known.


def _layout_scan(path: tuple[bytes, ...]) -> Callable[[Any, Any], bool]:
    """Hold the reader after its scan of ``path``'s layout records found none."""
    start = _layout_key(path)
    return lambda args, answer: args[0] == start and answer == []


@pytest.mark.parametrize("share", [True, False], ids=["one-keyspace", "two-keyspaces"])
@pytest.mark.parametrize("engine", list(URLS))
@pytest.mark.parametrize(
    ("read", "written", "expected"),
    [
        (("x",), ("x",), (None, b"written")),  # the scope read is made a leaf
        (("x",), ("x", "y"), (None,)),  # the scope read is made a branch: no own keys
    ],
)
def test_a_length_prefixed_read_racing_a_first_write_below_it_sees_one_moment(
    engine: str,
    read: tuple[str, ...],
    written: tuple[str, ...],
    expected: tuple[object, ...],
    share: bool,
    tmp_path: Path,
) -> None:
    ks = _open(engine, tmp_path, "length-prefixed")
    other = _second(ks, engine, tmp_path, share)
    try:
        held = _layout_scan(tuple(c.encode() for c in read))
        got, raised = _read_while_written_at(ks, read, written, held, "scan", other)
        assert raised == []
        assert got in expected
        assert ks.scope(*written).get(b"k") == b"written"
        assert ks.scope(*read).get(b"k") == (b"written" if read == written else None)
    finally:
        if other is not None:
            other.close()
        ks.close()


@pytest.mark.parametrize("engine", list(URLS))
def test_a_length_prefixed_read_racing_the_stores_first_write_sees_one_moment(
    engine: str, tmp_path: Path
) -> None:
    """On a fresh store: the reader finds no layout record, then the store holding
    keys (the writer's first write, with its records); it was refused as a store
    of keys written without a layout."""
    ks = keyspace.open(URLS[engine].format(tmp_path), scheme="length-prefixed")
    try:
        got, raised = _read_while_written_at(
            ks, ("x",), ("x",), lambda args, answer: args[0] == LAYOUT_START and answer == [], "scan"
        )
        assert raised == []
        assert got in (None, b"written")
        assert ks.scope("x").get(b"k") == b"written"
    finally:
        ks.close()
