"""The C memo of paths (``keyspace._scope_accel.path_memo``) that hands out a
transaction's scopes: for every path, with and without keywords, it returns
exactly what its reference (the fallback) returns, the kept object only for an
exact str and bytes path kept, and raises what the reference raises; a
transaction's ``scope`` is that memo over :func:`keyspace.keyspace._transaction_scope`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidName
from keyspace.keyspace import _transaction_scope

path_memo: Callable[..., Callable[..., Any]] | None
try:
    from keyspace._scope_accel import path_memo
except ImportError:  # pragma: no cover - built without a C compiler
    path_memo = None

pytestmark = pytest.mark.skipif(path_memo is None, reason="keyspace._scope_accel was not built")


class _Unhashable:
    __hash__ = None  # type: ignore[assignment]


class _RaisingHash:
    def __hash__(self) -> int:
        raise ValueError("a component's own fault")


class _Fatal(BaseException):
    pass


class _FatalHash:
    def __hash__(self) -> int:
        raise _Fatal


_COMPONENTS = st.one_of(
    st.sampled_from(["a", "b", b"a", b"b", 1, True, 1.0, None]),
    st.text(max_size=3),
    st.binary(max_size=3),
)


def _reference(memo: dict[tuple[Any, ...], Any]) -> Any:
    """A fallback that reports its call and keeps exact paths as the transaction's does."""

    def made(*path: Any, **kw: Any) -> Any:
        got = ("made", path, tuple(sorted(kw.items())))
        if not kw and all(type(c) in (str, bytes) for c in path):
            memo.setdefault(path, got)
        return got

    return made


@given(calls=st.lists(st.tuples(st.lists(_COMPONENTS, max_size=3).map(tuple), st.booleans()), max_size=30))
def test_the_memo_returns_what_its_reference_returns(calls: list[tuple[tuple[Any, ...], bool]]) -> None:
    assert path_memo is not None
    memo: dict[tuple[Any, ...], Any] = {}
    c = path_memo(memo, _reference(memo))
    model: dict[tuple[Any, ...], Any] = {}
    for path, keyword in calls:
        got = c(*path, key="k") if keyword else c(*path)
        exact = all(type(x) in (str, bytes) for x in path)
        if keyword:
            assert got == ("made", path, (("key", "k"),))
        elif exact and path in model:
            assert got is model[path]
        else:
            assert got == ("made", path, ())
            if exact:
                model.setdefault(path, got)
                assert memo[path] is model[path]


def test_an_equal_path_of_another_type_is_not_the_kept_one() -> None:
    assert path_memo is not None
    memo: dict[tuple[Any, ...], Any] = {(1,): "kept for (1,)"}
    c = path_memo(memo, lambda *path, **kw: ("made", path))
    assert (True,) == (1,) and c(True) == ("made", (True,))
    assert c(1) == ("made", (1,))  # not exact either: the reference decides


def test_a_lookup_that_raises_goes_to_the_reference_but_fatal_errors_propagate() -> None:
    assert path_memo is not None
    c = path_memo({("a",): 1}, lambda *path, **kw: ("made", len(path)))
    assert c(_Unhashable()) == ("made", 1)
    assert c("a", _RaisingHash()) == ("made", 2)
    with pytest.raises(_Fatal):
        c(_FatalHash())


def test_bad_arguments_are_refused_by_name() -> None:
    assert path_memo is not None
    with pytest.raises(TypeError, match="memo must be a dict"):
        path_memo([], print)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fallback must be callable"):
        path_memo({}, 1)  # type: ignore[arg-type]


def test_a_transactions_scope_is_the_memo_over_its_reference(tmp_path: Path) -> None:
    with keyspace.open(tmp_path / "s") as ks:
        with ks.transaction() as tx:
            assert type(tx.scope).__name__ == "PathMemo"
            reference = tx.scope.__wrapped__  # type: ignore[attr-defined]
            assert reference.func is _transaction_scope
            tx.scope("t", "users")[b"k"] = b"v"
            assert tx.scope("t", "users") is tx.scope("t", "users")
            assert tx.scope("t", "users", key="str") is not tx.scope("t", "users", key="str")
            assert tx.scope("t", "users", value="str")[b"k"] == "v"
            with pytest.raises(InvalidName):
                tx.scope("t", object())
        with ks.snapshot() as snap:
            assert type(snap.scope).__name__ == "PathMemo"
            assert snap.scope("t", "users")[b"k"] == b"v"
            assert snap.scope("t", "users") is snap.scope("t", "users")
