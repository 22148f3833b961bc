"""Pages of an engine iterator cut at a bound (``take_until``, C and its Python
reference) and the LMDB reads built on them (``cursor_page``, ``cursor_pages``,
the views' ``read_pages``): the same items as a sorted model, for keys and
pairs, ascending and descending, any bound and size, with no item read past
the bound; errors of the items' own code pass through."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import lmdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.stores import ReadView, _base
from keyspace.stores._base import PAGE_FIRST, PAGE_MOST, pages_of
from keyspace.stores._take import take_until, take_until_py
from keyspace.stores.lmdb import _cursor as _lmdb_cursor

keys = st.binary(max_size=3)
TAKES = [take_until_py] if take_until is None else [take_until_py, take_until]


def _model(items: list[Any], bound: bytes | None, size: int, descending: bool) -> tuple[list[Any], int]:
    """What a take returns, and how many items it consumes."""
    out = []
    for item in items[: max(size, 0)]:
        key = item[0] if isinstance(item, tuple) else item
        if bound is not None and (key < bound if descending else key >= bound):
            return out, len(out) + 1
        out.append(item)
    return out, len(out)


@pytest.mark.parametrize("take", TAKES)
@given(
    content=st.lists(keys, unique=True, max_size=30),
    bound=st.one_of(st.none(), keys),
    size=st.integers(-2, 40),
    descending=st.booleans(),
    pairs=st.booleans(),
)
def test_a_take_matches_the_model(
    take: Any, content: list[bytes], bound: bytes | None, size: int, descending: bool, pairs: bool
) -> None:
    content.sort(reverse=descending)
    items: list[Any] = [(k, b"v" + k) for k in content] if pairs else content
    source = iter(items)
    want, consumed = _model(items, bound, size, descending)
    assert take(source, bound, size, descending) == want
    assert list(source) == items[consumed:]  # the item past the bound is consumed, no more


@pytest.mark.parametrize("take", TAKES)
def test_keys_of_other_kinds_compare_as_python_does(take: Any) -> None:
    class Key(bytes):
        pass

    items = [(Key(b"a"), 1), (Key(b"b"), 2), (Key(b"c"), 3)]
    assert take(iter(items), b"c", 10, False) == items[:2]
    assert take(iter(items[::-1]), b"b", 10, True) == [items[2], items[1]]
    with pytest.raises(TypeError):
        take(iter([(1, b"x")]), b"b", 10, False)


@pytest.mark.parametrize("take", TAKES)
def test_an_error_of_the_items_passes_through(take: Any) -> None:
    def failing() -> Iterator[bytes]:
        yield b"a"
        raise ValueError("the engine failed")

    with pytest.raises(ValueError, match="the engine failed"):
        take(failing(), b"z", 10, False)


@pytest.mark.parametrize("take", TAKES)
@given(
    content=st.lists(st.binary(min_size=2, max_size=4), unique=True, max_size=30),
    bound=st.one_of(st.none(), keys),
    size=st.integers(-2, 40),
    descending=st.booleans(),
    cut=st.integers(0, 2),
    dropped=st.sets(st.integers(0, 29)),
)
def test_a_take_with_cut_and_is_record_matches_the_model(
    take: Any,
    content: list[bytes],
    bound: bytes | None,
    size: int,
    descending: bool,
    cut: int,
    dropped: set[int],
) -> None:
    """A record left out takes no place of ``size`` (the take reads on past it),
    the item past the bound is still the only one read beyond the answer, and
    the pairs the caller holds keep their whole keys."""
    content.sort(reverse=descending)
    items = [(k, b"rec" if i in dropped else b"val"[: 1 + i % 3]) for i, k in enumerate(content)]
    gone = {items[i][0] for i in dropped if i < len(items)}
    want: list[tuple[bytes, bytes]] = []
    consumed = 0
    for key, value in items:  # the model: the bound first, then the record test, then the cut
        if len(want) >= size:
            break
        consumed += 1
        if bound is not None and (key < bound if descending else key >= bound):
            break
        if not (len(value) == 3 and 0 not in key and key in gone):
            want.append((key[cut:], value))
    source = iter(items)
    assert take(source, bound, size, descending, cut, lambda k, v: k in gone, 3) == want
    assert list(source) == items[consumed:]
    assert [k for k, _ in items] == content  # the pairs the caller holds keep their whole keys


@pytest.mark.parametrize("take", TAKES)
def test_a_take_passes_the_errors_of_is_record_and_refuses_a_short_key(take: Any) -> None:
    def failing(key: bytes, value: bytes) -> bool:
        raise OSError("the engine broke")

    with pytest.raises(OSError, match="the engine broke"):
        take(iter([(b"ab", b"12")]), None, 5, False, 0, failing, 2)
    assert take(iter([(b"a\x00", b"12")]), None, 5, False, 0, failing, 2) == [(b"a\x00", b"12")]  # not asked
    with pytest.raises(ValueError, match="bytes to cut"):
        take(iter([(b"ab", b"1")]), None, 5, False, 3)
    with pytest.raises(ValueError, match="cut=-1 is negative"):
        take(iter([(b"ab", b"1")]), None, 5, False, -1)


@pytest.mark.skipif(take_until is None, reason="the C module was not built")
def test_the_c_take_refuses_arguments_of_the_wrong_kind() -> None:
    assert take_until is not None
    with pytest.raises(TypeError, match="take_until"):
        take_until([b"a"], None, 1, False)  # type: ignore[arg-type]  # a list, not an iterator
    with pytest.raises(TypeError, match="take_until"):
        take_until(iter([b"a"]), "b", 1, False)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        take_until(iter([b"a"]), None, "1", False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is_record must be callable"):
        take_until(iter([b"a"]), None, 1, False, 0, 5, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="take_until"):
        take_until(iter([b"a"]), None, 1, False, 0, None, 3, 4)  # type: ignore[call-arg]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    made = lmdb.open(str(tmp_path_factory.mktemp("pages") / "db"), map_size=1 << 24)
    try:
        yield made
    finally:
        made.close()


CURSOR_TAKES = (
    [_lmdb_cursor.cursor_take_py]
    if _lmdb_cursor.cursor_take is _lmdb_cursor.cursor_take_py
    else [_lmdb_cursor.cursor_take_py, _lmdb_cursor.cursor_take]
)

_CONTENTS = st.lists(st.binary(min_size=1, max_size=2), unique=True, max_size=400)
_STOPS = st.one_of(st.none(), keys)


def _fill(env: Any, content: list[bytes]) -> None:
    """The environment's unnamed database holding ``content``, each key's value its reverse."""
    with env.begin(write=True) as txn:
        txn.drop(env.open_db(), delete=False)
        txn.cursor().putmulti([(k, k[::-1]) for k in content])


def _range(content: list[bytes], start: bytes, stop: bytes | None, reverse: bool) -> list[bytes]:
    inside = sorted(k for k in content if k >= start and (stop is None or k < stop))
    return inside[::-1] if reverse else inside


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=_CONTENTS,
    start=keys,
    stop=_STOPS,
    reverse=st.booleans(),
    limit=st.one_of(st.none(), st.integers(-1, 500)),
)
def test_lmdb_pages_hold_the_range(
    env: Any, content: list[bytes], start: bytes, stop: bytes | None, reverse: bool, limit: int | None
) -> None:
    _fill(env, content)
    want = _range(content, start, stop, reverse)[: None if limit is None else max(limit, 0)]
    with env.begin() as txn:
        size = 10**6 if limit is None else limit
        assert _lmdb_cursor.cursor_page(txn, start, stop, reverse, size) == [(k, k[::-1]) for k in want]
        assert _lmdb_cursor.cursor_page(txn, start, stop, reverse, size, values=False) == want
        assert list(_lmdb_cursor.cursor_scan(txn, None, None, start, stop, reverse, limit)) == [
            (k, k[::-1]) for k in want
        ]
        for cursor_take in CURSOR_TAKES:  # the C one and its reference: one seek, at most size pairs
            assert cursor_take(txn, None, start, stop, max(size, 0), reverse) == [(k, k[::-1]) for k in want]
            # with cut and is_record: the keys of one byte and no NUL left out (as records), the rest
            # cut, read on past them
            inside = _range(content, start, stop, reverse)
            kept = [k for k in inside if len(k) == 2 or 0 in k][: max(size, 0)]
            assert cursor_take(txn, None, start, stop, max(size, 0), reverse, 1, lambda k, v: True, 1) == [
                (k[1:], k[::-1]) for k in kept
            ]
        got = list(_lmdb_cursor.cursor_pages(txn, start, stop, reverse, limit))
        assert all(got), "a page is never empty"
        assert list(chain.from_iterable(got)) == [(k, k[::-1]) for k in want]
        cut = list(_lmdb_cursor.cursor_pages(txn, start, stop, reverse, limit, cut=1))
        assert list(chain.from_iterable(cut)) == [(k[1:], k[::-1]) for k in want]
        sizes = [len(p) for p in got]
        assert all(s == min(PAGE_FIRST * 4**i, PAGE_MOST) for i, s in enumerate(sizes[:-1]))


def test_the_c_cursor_take_refuses_arguments_of_the_wrong_kind_and_passes_engine_errors(env: Any) -> None:
    if _lmdb_cursor.cursor_take is _lmdb_cursor.cursor_take_py:
        pytest.skip("keyspace.stores._pairs_accel was not built")
    take = _lmdb_cursor.cursor_take
    with env.begin() as txn:
        with pytest.raises(TypeError, match="cursor_take"):
            take(txn, None, "a", None, 1, False)
        with pytest.raises(TypeError, match="cursor_take"):
            take(txn, None, b"a", 5, 1, False)
    txn = env.begin()
    txn.abort()
    with pytest.raises(lmdb.Error):  # the engine's own error: the caller translates it
        take(txn, None, b"a", None, 1, False)


@pytest.mark.parametrize("c_take", [False, True] if take_until is not None else [False])
@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.lists(st.binary(min_size=1, max_size=2), unique=True, max_size=1500),
    bounds=st.lists(st.tuples(keys, st.one_of(st.none(), keys)), max_size=6),
    reverse=st.booleans(),
    limit=st.one_of(st.none(), st.integers(0, 1600)),
)
def test_lmdb_ranges_read_in_turn_as_pages(
    env: Any,
    monkeypatch: pytest.MonkeyPatch,
    c_take: bool,
    content: list[bytes],
    bounds: list[tuple[bytes, bytes | None]],
    reverse: bool,
    limit: int | None,
) -> None:
    """``cursor_ranges_pages``: the items of each range in the order given (a range
    read descending with ``reverse``), at most ``limit``, as non-empty pages whose
    sizes grow as ``pages_of``'s do (small ranges share a page), with the C take
    and its Python reference."""
    if not c_take:
        monkeypatch.setattr(_lmdb_cursor, "take_until", None)
    _fill(env, content)
    want = [(k, k[::-1]) for lo, hi in bounds for k in _range(content, lo, hi, reverse)]
    want = want[: None if limit is None else limit]
    with env.begin() as txn:
        got = list(_lmdb_cursor.cursor_ranges_pages(txn, bounds, reverse, limit))
    assert all(got), "a page is never empty"
    assert list(chain.from_iterable(got)) == want
    assert all(len(p) == min(PAGE_FIRST * 4**i, PAGE_MOST) for i, p in enumerate(got[:-1]))
    assert all(len(p) <= PAGE_MOST for p in got)


@pytest.mark.parametrize("c_take", [False, True] if take_until is not None else [False])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the same patch for every example
@given(
    content=st.lists(keys, unique=True, max_size=300),
    bound=st.one_of(st.none(), keys),
    descending=st.booleans(),
    limit=st.one_of(st.none(), st.integers(-1, 400)),
)
def test_pages_of_hold_the_items_up_to_the_bound(
    monkeypatch: pytest.MonkeyPatch,
    c_take: bool,
    content: list[bytes],
    bound: bytes | None,
    descending: bool,
    limit: int | None,
) -> None:
    """With the C take and with the itertools chain that serves without it;
    ``check`` is called before each page is read."""
    if not c_take:
        monkeypatch.setattr(_base, "take_until", None)
    content.sort(reverse=descending)
    items = [(k, b"v" + k) for k in content]
    want, _ = _model(items, bound, len(items) if limit is None else limit, descending)
    checks: list[None] = []
    got = list(pages_of(iter(items), bound, descending, limit, lambda: checks.append(None)))
    assert all(got) and list(chain.from_iterable(got)) == want
    assert len(got) <= len(checks) <= len(got) + 1


@pytest.mark.parametrize("c_take", [False, True] if take_until is not None else [False])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the same patch for every example
@given(
    content=st.lists(st.binary(min_size=2, max_size=4), unique=True, max_size=300),
    limit=st.one_of(st.none(), st.integers(0, 400)),
    dropped=st.sets(st.integers(0, 299)),
    cut=st.integers(0, 2),
)
def test_pages_of_leave_out_what_is_record_answers_and_count_only_the_rest(
    monkeypatch: pytest.MonkeyPatch,
    c_take: bool,
    content: list[bytes],
    limit: int | None,
    dropped: set[int],
    cut: int,
) -> None:
    """``is_record`` (an engine's own entries, asked only of pairs whose value
    has ``record_size`` bytes and whose key holds no NUL) and ``cut``: the pages
    hold the other items, each key without its first ``cut`` bytes, none empty,
    at most ``limit`` of them in all; a pair with a NUL in its key or a value of
    another size is never asked."""
    if not c_take:
        monkeypatch.setattr(_base, "take_until", None)
    content.sort()
    items = [(k, b"v" * 3 if i % 3 else b"vv") for i, k in enumerate(content)]
    gone = {items[i][0] for i in dropped if i < len(items)}
    asked: list[bytes] = []

    def is_record(key: bytes, value: bytes) -> bool:
        asked.append(key)
        return key in gone

    def candidate(key: bytes, value: bytes) -> bool:
        return len(value) == 3 and 0 not in key

    want = [(k[cut:], v) for k, v in items if not (candidate(k, v) and k in gone)][:limit]
    got = list(pages_of(iter(items), None, False, limit, cut=cut, is_record=is_record, record_size=3))
    assert all(got) and list(chain.from_iterable(got)) == want
    assert all(candidate(k, dict(items)[k]) for k in asked)


def test_pages_of_translate_the_engine_errors_of_their_reads() -> None:
    """``translate``: an engine error of a read comes out as its answer, the
    engine's chained; a KeyspaceError (a check's StoreClosed) as it is."""
    from keyspace.errors import StoreClosed, StoreError

    def failing() -> Iterator[tuple[bytes, bytes]]:
        yield (b"a", b"1")
        raise OSError("the engine broke")

    def translate(exc: BaseException) -> StoreError:
        return StoreError(f"translated: {exc}")

    pages = pages_of(failing(), translate=translate)
    with pytest.raises(StoreError, match="translated: the engine broke") as caught:
        list(pages)
    assert isinstance(caught.value.__cause__, OSError)
    with pytest.raises(OSError, match="the engine broke"):  # no translate: the engine's own
        list(pages_of(failing()))

    def closed() -> None:
        raise StoreClosed("ended")

    with pytest.raises(StoreClosed, match="ended"):
        list(pages_of(iter([(b"a", b"1")]), check=closed, translate=translate))


def test_views_read_their_scans_in_pages(tmp_path: Path) -> None:
    """The store, its snapshots and its transactions scan through pages, and each
    gives what a scope reads."""
    import keyspace

    ks = keyspace.open(f"lmdb://{tmp_path / 'db'}")
    scope = ks.scope("t")
    scope.update({bytes([i, j]): b"v" for i in range(40) for j in range(40)})
    ks.scope("u")[b"after"] = b"other"
    want = sorted(scope.keys())
    assert len(want) == 1600
    with ks.snapshot() as snap:
        view = snap.view
        assert type(view).read_pages is not ReadView.read_pages  # the cursors' pages
        assert list(snap.scope("t").keys()) == want
        assert list(snap.scope("t").keys(reverse=True)) == want[::-1]
    with ks.transaction() as tx:
        assert type(tx.view).read_pages is not ReadView.read_pages
        tx.scope("t")[b"\xff"] = b"new"
        assert list(tx.scope("t").keys()) == [*want, b"\xff"]
        assert list(tx.scope("t").items(start=want[5], limit=3)) == [(k, b"v") for k in want[5:8]]
    ks.close()


def test_without_the_c_module_lmdb_scans_take_their_chains(tmp_path: Path) -> None:
    """Built without ``_pairs_accel``, the views' pages and scans are read by
    ``itertools`` chains, with the same items."""
    program = """
import sys
sys.modules["keyspace.stores._pairs_accel"] = None  # as if it had not been built
import keyspace
from keyspace.stores import _base, _take
assert _take.take_until is None and _base.take_until is None
with keyspace.open(sys.argv[1]) as ks:
    scope = ks.scope("t")
    scope.update({bytes([i, j]): bytes([j]) for i in range(30) for j in range(30)})
    ks.scope("u")[b"after"] = b"x"
    out = [list(scope.keys()), list(scope.items(reverse=True, limit=5))]
    out.append(list(scope.items(start=b"\\x03", limit=40)))
    with ks.snapshot() as snap:
        assert len(list(snap.view.read_pages([(b"", None)]))) > 1  # pages of itertools chains
        out.append(list(snap.scope("t").keys()))
    with ks.transaction() as tx:
        assert len(list(tx.view.read_pages([(b"", None)]))) > 1
        out.append(list(tx.scope("t").items(start=b"\\x05", stop=b"\\x07")))
    print(repr(out))
"""
    got = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path / "db")], capture_output=True, text=True, timeout=60
    )
    assert got.returncode == 0, got.stderr
    import keyspace

    with keyspace.open(str(tmp_path / "db")) as ks:
        scope = ks.scope("t")
        keys = sorted(bytes([i, j]) for i in range(30) for j in range(30))
        want = [
            keys,
            [(k, k[1:]) for k in keys[::-1][:5]],
            [(k, k[1:]) for k in keys if k >= b"\x03"][:40],
            keys,
            [(k, k[1:]) for k in keys if b"\x05" <= k < b"\x07"],
        ]
        assert got.stdout.strip() == repr(want)
        assert list(scope.keys()) == keys  # and with the C module, the same
